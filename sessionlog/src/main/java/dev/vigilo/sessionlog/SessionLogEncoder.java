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
 * frame per batch, chunk packing and P1 commit records per the options, the same checks on every event), for a log
 * that is written once, whole, and stored elsewhere: no file, no lock, no fsync (the caller's store is the durability
 * point). {@link WriterOptions#manifest()} must be off (a sidecar needs a file); group commit has no meaning for one
 * caller. Not thread-safe.
 *
 * <p>Two ways to give it events, with the same bytes for the same batches: {@link #append} encodes one batch frame at
 * once, as the writer's append does; {@link #add} checks, numbers and serializes events into the open batch as they
 * happen, and closes it into a frame every {@code batchEvents} events (or at {@link #closeBatch}, {@link #append}
 * and {@link #toByteArray}). The second keeps no event tree: what it holds between calls is the batch's JSON lines
 * (and, with chunk packing, a pending run of {@code assistant/chunk} deltas, which the packer needs whole).
 */
public final class SessionLogEncoder {
    private final WriterOptions options;
    private final Epoch epoch;
    private final int batchEvents;
    /** sized as written (a transcript's log lives as long as its call: no room to spare per call in flight) */
    private final ByteArrayOutputStream out = new ByteArrayOutputStream(0);

    private final SurfaceFold surface = new SurfaceFold(8, 8);
    private long nextSeq;
    /** the open batch's lines, or null when no batch is open */
    private ByteArrayOutputStream batch;
    /** the caller's events in the open batch */
    private int batchCount;
    /** the time of the open batch's last event (its commit record's time) */
    private long lastTime;
    /** packable deltas at the open batch's end, not serialized yet (chunk packing needs the whole run) */
    private final List<ObjectNode> run = new ArrayList<>(0);

    /**
     * An encoder for {@link #append}: batches are what the caller appends.
     *
     * @param epoch the writer epoch named by the commit records (with {@link WriterOptions#commitRecords()})
     * @throws IllegalArgumentException when {@code options} ask for a sidecar manifest
     */
    public SessionLogEncoder(SessionHeader header, Epoch epoch, WriterOptions options) {
        this(header, epoch, options, Integer.MAX_VALUE);
    }

    /**
     * An encoder whose {@link #add} closes a batch every {@code batchEvents} events: the bytes of {@link #append}ing
     * the events in slices of {@code batchEvents}.
     *
     * @param epoch the writer epoch named by the commit records (with {@link WriterOptions#commitRecords()})
     * @throws IllegalArgumentException when {@code options} ask for a sidecar manifest or {@code batchEvents < 1}
     */
    public SessionLogEncoder(SessionHeader header, Epoch epoch, WriterOptions options, int batchEvents) {
        Objects.requireNonNull(header, "header");
        this.epoch = Objects.requireNonNull(epoch, "epoch");
        this.options = Objects.requireNonNull(options, "options");
        if (options.manifest()) {
            throw new IllegalArgumentException("an in-memory log has no sidecar manifest");
        }
        if (batchEvents < 1) {
            throw new IllegalArgumentException("batchEvents must be at least 1, got " + batchEvents);
        }
        this.batchEvents = batchEvents;
        byte[] h = (header.toJsonLine() + "\n").getBytes(StandardCharsets.UTF_8);
        out.writeBytes(FrameCodec.encode(h, 0, h.length));
    }

    /**
     * Appends one batch frame, as {@link SessionLogWriter#append} does (closing the batch {@link #add} opened first).
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
        closeBatch();
        long first = nextSeq;
        record(events, Integer.MAX_VALUE);
        long lastOfCaller = nextSeq - 1;
        closeBatch();
        return new AppendResult(new Seq(first), new Seq(lastOfCaller), new HighWatermark(nextSeq - 1, out.size()));
    }

    /**
     * Checks {@code events} (envelope, vocabulary, surface rules against the log so far, as {@link #append}), gives
     * them their seqs and serializes them into the open batch, opening one when none is, and closing it into a frame
     * after every {@code batchEvents}th event of a batch. The events are not kept (nor modified).
     *
     * @throws IllegalArgumentException when an event violates the rules; nothing of {@code events} is encoded then
     */
    public void add(List<? extends JsonNode> events) {
        Objects.requireNonNull(events, "events");
        record(events, batchEvents);
    }

    /** Closes the open batch, if any, into a frame (with its commit record, per the options). */
    public void closeBatch() {
        if (batch == null) {
            return;
        }
        try (JsonGenerator g = generator(batch)) {
            flushRun(g);
            if (options.commitRecords()) {
                ObjectNode c = Json.MAPPER.createObjectNode();
                c.put("type", CommitRecord.TYPE).put("seq", nextSeq).put("time", lastTime);
                c.putObject("data")
                        .put("v", CommitRecord.VERSION)
                        .put("epoch", epoch.value())
                        .put("endSeq", nextSeq);
                c.put("ignorable", true);
                Json.MAPPER.writeValue(g, c);
                g.writeRaw('\n');
                nextSeq++;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        byte[] pb = batch.toByteArray();
        out.writeBytes(FrameCodec.encode(pb, 0, pb.length));
        batch = null;
        batchCount = 0;
    }

    /**
     * Checks and numbers every event first (so a refused one leaves nothing of the call encoded), then serializes
     * them, closing the batch where it reaches {@code limit} events: seqs count the commit record of every batch
     * closed on the way.
     */
    private void record(List<? extends JsonNode> events, int limit) {
        List<ObjectNode> rows = new ArrayList<>(events.size());
        for (JsonNode e : events) {
            rows.add(SessionLogWriter.normalize(e));
        }
        long seq = nextSeq;
        int count = batchCount;
        surface.begin();
        try {
            for (ObjectNode e : rows) {
                if (count == limit) {
                    count = 0;
                    seq += options.commitRecords() ? 1 : 0;
                }
                e.put("seq", seq++);
                count++;
                surface.accept(e, Where.APPEND);
            }
        } catch (CorruptSessionLogException x) {
            surface.rollbackTo(0);
            surface.commit();
            throw new IllegalArgumentException("cannot append: " + x.getMessage(), x);
        }
        surface.commit();
        int from = 0;
        while (from < rows.size()) {
            if (batchCount == limit) {
                closeBatch();
            }
            int to = (int) Math.min(rows.size(), (long) from + limit - batchCount);
            write(rows.subList(from, to));
            from = to;
        }
    }

    /** Serializes rows (numbered, all in the open batch) into the open batch, opening it when none is. */
    private void write(List<ObjectNode> rows) {
        if (batch == null) {
            batch = new ByteArrayOutputStream(0); // the first lines fill it exactly, then it doubles
        }
        // One generator per call rather than a serialization per line (whose set-up cost more than the line for a
        // transcript's small events); no separator between root values, each line ends in '\n'.
        try (JsonGenerator g = generator(batch)) {
            for (ObjectNode r : rows) {
                if (options.packChunks() && ChunkPacker.classify(r) != null) {
                    run.add(r);
                } else {
                    flushRun(g);
                    Json.MAPPER.writeValue(g, r);
                    g.writeRaw('\n');
                }
                lastTime = Json.safeLong(r.get("time"));
                nextSeq = Json.safeLong(r.get("seq")) + 1;
                batchCount++;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Packs and writes the pending run of deltas: a packed row or the deltas as they are, as the writer does. */
    private void flushRun(JsonGenerator g) throws IOException {
        if (run.isEmpty()) {
            return;
        }
        for (ObjectNode r : ChunkPacker.pack(run)) {
            Json.MAPPER.writeValue(g, r);
            g.writeRaw('\n');
        }
        run.clear();
    }

    private static JsonGenerator generator(ByteArrayOutputStream to) throws IOException {
        JsonGenerator g = Json.MAPPER.getFactory().createGenerator(to);
        g.setRootValueSeparator(null);
        return g;
    }

    /** @return the encoded log so far (a copy), after closing the open batch ({@link #closeBatch}) */
    public byte[] toByteArray() {
        closeBatch();
        return out.toByteArray();
    }
}
