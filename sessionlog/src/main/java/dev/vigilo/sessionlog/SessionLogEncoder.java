package dev.vigilo.sessionlog;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Encodes a whole session log in memory, byte for byte as {@link SessionLogWriter} writes it (the header frame, one
 * frame per {@link #append}, chunk packing and P1 commit records per the options, the same checks on every event),
 * for a log that is written once, whole, and stored elsewhere: no file, no lock, no fsync (the caller's store is the
 * durability point). {@link WriterOptions#manifest()} must be off (a sidecar needs a file); group commit has no
 * meaning for one caller. Not thread-safe.
 */
public final class SessionLogEncoder {
    private final WriterOptions options;
    private final Epoch epoch;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final SurfaceFold surface = new SurfaceFold();
    private long nextSeq;

    /**
     * @param epoch the writer epoch named by the commit records (with {@link WriterOptions#commitRecords()})
     * @throws IllegalArgumentException when {@code options} ask for a sidecar manifest
     */
    public SessionLogEncoder(SessionHeader header, Epoch epoch, WriterOptions options) {
        Objects.requireNonNull(header, "header");
        this.epoch = Objects.requireNonNull(epoch, "epoch");
        this.options = Objects.requireNonNull(options, "options");
        if (options.manifest()) {
            throw new IllegalArgumentException("an in-memory log has no sidecar manifest");
        }
        byte[] h = (header.toJsonLine() + "\n").getBytes(StandardCharsets.UTF_8);
        out.writeBytes(FrameCodec.encode(h, 0, h.length));
    }

    /**
     * Appends one batch frame, as {@link SessionLogWriter#append} does.
     *
     * @return the seqs given to the events; the watermark's offset is the encoded length so far
     * @throws IllegalArgumentException when an event violates the published envelope or vocabulary, or the surface
     *                                  rules against the log so far; nothing of this batch is encoded then
     */
    public AppendResult append(List<? extends JsonNode> events) {
        Objects.requireNonNull(events, "events");
        if (events.isEmpty()) {
            throw new IllegalArgumentException("append needs at least one event");
        }
        List<ObjectNode> rows = new ArrayList<>(events.size());
        for (JsonNode e : events) {
            rows.add(SessionLogWriter.normalize(e));
        }
        long seq = nextSeq;
        long lastTime = 0;
        surface.begin();
        try {
            for (ObjectNode e : rows) {
                e.put("seq", seq++);
                surface.accept(e, Where.APPEND);
                lastTime = Json.safeLong(e.get("time"));
            }
        } catch (CorruptSessionLogException x) {
            surface.rollbackTo(0);
            surface.commit();
            throw new IllegalArgumentException("cannot append: " + x.getMessage(), x);
        }
        surface.commit();
        long first = nextSeq;
        ByteArrayOutputStream plain = new ByteArrayOutputStream();
        // One generator for the batch's lines rather than a serialization per line (whose set-up cost more than the
        // line for a transcript's small events); no separator between root values, each line ends in '\n'.
        try (JsonGenerator g = Json.MAPPER.getFactory().createGenerator(plain)) {
            g.setRootValueSeparator(null);
            for (ObjectNode r : options.packChunks() ? ChunkPacker.pack(rows) : rows) {
                Json.MAPPER.writeValue(g, r);
                g.writeRaw('\n');
            }
            if (options.commitRecords()) {
                ObjectNode c = Json.MAPPER.createObjectNode();
                c.put("type", CommitRecord.TYPE).put("seq", seq).put("time", lastTime);
                c.putObject("data")
                        .put("v", CommitRecord.VERSION)
                        .put("epoch", epoch.value())
                        .put("endSeq", seq);
                c.put("ignorable", true);
                Json.MAPPER.writeValue(g, c);
                g.writeRaw('\n');
                seq++;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        byte[] pb = plain.toByteArray();
        out.writeBytes(FrameCodec.encode(pb, 0, pb.length));
        long lastOfCaller = options.commitRecords() ? seq - 2 : seq - 1;
        nextSeq = seq;
        return new AppendResult(new Seq(first), new Seq(lastOfCaller), new HighWatermark(seq - 1, out.size()));
    }

    /** @return the encoded log so far (a copy) */
    public byte[] toByteArray() {
        return out.toByteArray();
    }
}
