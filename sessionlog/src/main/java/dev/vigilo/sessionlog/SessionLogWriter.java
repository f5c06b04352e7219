package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.concurrent.GroupCommit;
import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import dev.vigilo.common.io.AtomicFiles;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Appends batches to one session log as a write-ahead log. Every append returns only when its batch is durable
 * (frame written and fsynced; then, with P2, the manifest replaced). With group commit, appenders that arrive
 * while a batch is being written share the next frame and its single fsync (common's {@link GroupCommit}: the
 * appender that finds no write under way writes for the others; without group commit every append is a frame of its
 * own). Seqs are assigned here, contiguous across appenders; each caller's events are contiguous; an append the
 * surface rules refuse fails alone, and a failed frame fails every append of it.
 * <p>Thread-safe. A failed write is truncated back; an {@link UnavailableException} leaves durability
 * unknown. After {@link FencedException} the writer is unusable.
 */
public final class SessionLogWriter implements AutoCloseable {
    private final Path log;
    private final WriterOptions options;
    private final WriterLease lease;
    private final FileChannel ch;
    /** the log's encoding: one zstd frame per batch, or plain lines */
    private final Compression compression;

    /** Appends waiting for, or sharing, a frame; the committing thread owns the fields below. */
    private final GroupCommit<List<ObjectNode>, AppendResult> appends;
    /** Set once a batch was fenced: every later append fails with it. */
    private volatile FencedException broken;
    /** Guarded by this writer's monitor (close only). */
    private boolean closed;
    // owned by the committing thread
    private long nextSeq;
    private long frames;
    private long size;
    private final List<Manifest.EpochStart> history;
    private volatile HighWatermark hw;
    /** the log's current surface, so an append that the readers would reject is refused instead of written */
    private final SurfaceFold surface;

    private SessionLogWriter(
            Path log,
            WriterOptions options,
            WriterLease lease,
            FileChannel ch,
            long nextSeq,
            long frames,
            List<Manifest.EpochStart> history,
            SurfaceFold surface,
            Compression compression)
            throws IOException {
        this.log = log;
        this.compression = compression;
        this.surface = surface;
        this.options = options;
        this.lease = lease;
        this.ch = ch;
        this.nextSeq = nextSeq;
        this.frames = frames;
        this.size = ch.size();
        this.history = new ArrayList<>(history);
        this.hw = new HighWatermark(nextSeq - 1, size);
        GroupCommit.Builder<List<ObjectNode>, AppendResult> b = GroupCommit.<List<ObjectNode>, AppendResult>builder(
                        "writer for " + log, this::writeBatch)
                .failures(this::appendFailed);
        this.appends = (options.groupCommit() ? b : b.maxItems(1)).build();
    }

    /**
     * Creates a new log holding only the header (published without overwriting: temp file, fsync, link, fsync
     * directory) and opens it for appending, in the encoding {@link WriterOptions#compression} names.
     *
     * @throws UnavailableException when the file exists or cannot be written
     * @throws IllegalArgumentException when the file name claims the other encoding ({@code *.jsonl} is
     *                                  uncompressed, {@code *.zstd} zstd): readers would refuse the log
     */
    public static SessionLogWriter create(Path log, SessionHeader header, EpochSource epochs, WriterOptions options) {
        Objects.requireNonNull(log, "log");
        Objects.requireNonNull(header, "header");
        Objects.requireNonNull(epochs, "epochs");
        Objects.requireNonNull(options, "options");
        Compression claimed = Compression.claimedBy(log);
        if (claimed != null && claimed != options.compression()) {
            throw new IllegalArgumentException("cannot create " + log + " with compression "
                    + options.compression().jsonName() + ": the name says " + claimed.jsonName()
                    + " and readers decide by the name; name it session"
                    + options.compression().suffix());
        }
        WriterLease lease = epochs.acquire(log, new Epoch(0));
        try {
            if (Files.exists(log)) {
                throw new IOException(log + " already exists; open it instead");
            }
            byte[] h = (header.toJsonLine() + "\n").getBytes(StandardCharsets.UTF_8);
            byte[] frame = options.compression() == Compression.ZSTD ? FrameCodec.encode(h, 0, h.length) : h;
            Path tmp = AtomicFiles.tempBeside(log);
            CrashPoints.boundary("sessionlog.create");
            try (FileChannel t = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                AtomicFiles.writeFully(t, frame);
                t.force(true);
            }
            CrashPoints.boundary("sessionlog.publish");
            AtomicFiles.publish(tmp, log, AtomicFiles.Mode.CREATE_NEW);
            if (options.manifest()) {
                AtomicFiles.replace(
                        Manifest.pathFor(log),
                        ManifestCodec.write(new Manifest(
                                lease.epoch(), -1, 1, frame.length, checksum(frame, options.compression()), List.of())),
                        "sessionlog.replace");
            }
            FileChannel ch = FileChannel.open(log, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
            return new SessionLogWriter(
                    log, options, lease, ch, 0, 1, List.of(), new SurfaceFold(), options.compression());
        } catch (IOException e) {
            lease.close();
            throw new UnavailableException("cannot create session log " + log + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            lease.close();
            throw e;
        }
    }

    /**
     * Opens an existing log for appending: verifies it, acquires an epoch above every epoch in it, and with
     * protocol metadata truncates the uncommitted tail after the high watermark. The log keeps its own encoding
     * (detected from its bytes), whatever {@link WriterOptions#compression} says.
     *
     * @throws CorruptSessionLogException when the log is rejected, or has a torn tail without protocol metadata
     *                                    (run {@code vigilo session repair} first)
     * @throws FencedException      when the epoch source cannot grant an epoch above the log's
     */
    public static SessionLogWriter open(Path log, EpochSource epochs, WriterOptions options) {
        Objects.requireNonNull(log, "log");
        Objects.requireNonNull(epochs, "epochs");
        Objects.requireNonNull(options, "options");
        LogReader.Outcome o = LogReader.read(log, null);
        VerifyReport r = o.report();
        if (!r.accepted()) {
            throw new CorruptSessionLogException(
                    "cannot append to " + log + ": " + r.error(), r.errorOffset() == null ? -1 : r.errorOffset());
        }
        Epoch atLeast = o.maxEpoch() == null ? new Epoch(0) : o.maxEpoch().next();
        if (o.manifest() != null && o.manifest().epoch().compareTo(atLeast) >= 0) {
            atLeast = o.manifest().epoch().next();
        }
        WriterLease lease = epochs.acquire(log, atLeast);
        try {
            removeStaleTemps(log);
            long fileSize = Files.size(log);
            if (r.channel() == Channel.NONE && r.tornOffset() != null) {
                throw new CorruptSessionLogException(
                        log + " ends in a torn tail at byte " + r.tornOffset()
                                + "; run `vigilo session repair` first (it keeps the recovered events and adds closers)",
                        r.tornOffset());
            }
            FileChannel ch = FileChannel.open(log, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
            if (r.channel() != Channel.NONE && r.hwOffset() < fileSize) {
                CrashPoints.boundary("sessionlog.truncate");
                ch.truncate(r.hwOffset()); // rule 1: everything after HW is uncommitted
                ch.force(true);
            }
            List<Manifest.EpochStart> hist =
                    r.channel() == Channel.P2 ? o.manifest().epochs() : List.of();
            long frames = countUnits(log, r.hwOffset(), o.compression());
            return new SessionLogWriter(
                    log, options, lease, ch, o.nextSeq(), frames, hist, o.surface(), o.compression());
        } catch (IOException e) {
            lease.close();
            throw new UnavailableException("cannot open session log " + log + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            lease.close();
            throw e;
        }
    }

    /** Temp files of a crashed manifest replace or create (".<name>.tmp-*"); safe to delete while holding the lease. */
    private static void removeStaleTemps(Path log) throws IOException {
        Path dir = log.toAbsolutePath().getParent();
        Path manifest = Manifest.pathFor(log);
        try (var s = Files.list(dir)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                if (AtomicFiles.isTemporaryOf(p, log) || AtomicFiles.isTemporaryOf(p, manifest)) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** Complete zstd frames, or lines, in {@code [0, end)} of the log: what the manifest's {@code frames} counts. */
    private static long countUnits(Path log, long end, Compression compression) throws IOException {
        try (FileChannel c = FileChannel.open(log, StandardOpenOption.READ)) {
            long n = 0;
            if (compression == Compression.ZSTD) {
                FrameScanner sc = new FrameScanner(c, end, 0);
                while (sc.next() != null) {
                    n++;
                }
                return n;
            }
            ByteBuffer b = ByteBuffer.allocate(1 << 16);
            for (long pos = 0; pos < end; ) {
                b.clear().limit((int) Math.min(b.capacity(), end - pos));
                int r = c.read(b, pos);
                if (r < 0) {
                    break;
                }
                for (int i = 0; i < r; i++) {
                    if (b.get(i) == '\n') {
                        n++;
                    }
                }
                pos += r;
            }
            return n;
        }
    }

    /** @return the epoch this writer appends under */
    public Epoch epoch() {
        return lease.epoch();
    }

    /** @return the high watermark after the last durable batch of this writer */
    public HighWatermark highWatermark() {
        return hw;
    }

    /**
     * Appends events durably. Each event is a JSON object with {@code type} and {@code data} (and optionally
     * {@code time}, {@code surfaceOp}, {@code sourceEventSeqs}, {@code ignorable}); the writer sets {@code seq}
     * (and {@code time} when absent). Blocks until the shared batch is fsynced.
     *
     * @throws IllegalArgumentException when an event violates the published envelope or vocabulary, or the surface
     *                                  rules against the log so far (replace range, sourceEventSeqs, tool/result
     *                                  rewrite); nothing of this append is written then
     * @throws FencedException    when this writer's lease or epoch is no longer current
     * @throws UnavailableException    when the write or fsync failed (durability unknown)
     */
    public AppendResult append(List<? extends JsonNode> events) {
        Objects.requireNonNull(events, "events");
        if (events.isEmpty()) {
            throw new IllegalArgumentException("append needs at least one event");
        }
        List<ObjectNode> copies = new ArrayList<>(events.size());
        for (JsonNode e : events) {
            copies.add(normalize(e));
        }
        FencedException fenced = broken;
        if (fenced != null) {
            throw fenced;
        }
        return appends.submit(copies);
    }

    /** What an appender throws when the frame holding its events failed with a checked exception or an Error. */
    private RuntimeException appendFailed(Throwable t) {
        if (t instanceof IOException io) {
            return new UnavailableException(
                    "append to " + log + " failed; durability unknown, re-open the log: " + io.getMessage(), io);
        }
        return new UnavailableException("append to " + log + " failed; durability unknown, re-open the log: " + t, t);
    }

    /** A copy of {@code e} in the stored key order, checked like an append (shared with {@link SessionLogEncoder}). */
    static ObjectNode normalize(JsonNode e) {
        if (e == null || !e.isObject()) {
            throw new IllegalArgumentException("an event must be a JSON object, got " + e);
        }
        ObjectNode out = Json.MAPPER.createObjectNode();
        out.set("type", e.get("type"));
        out.put("seq", 0);
        if (e.has("time")) {
            out.set("time", e.get("time"));
        } else {
            out.put("time", System.currentTimeMillis());
        }
        out.set("data", e.get("data"));
        for (var it = e.fields(); it.hasNext(); ) {
            var f = it.next();
            if (!out.has(f.getKey())) {
                out.set(f.getKey(), f.getValue());
            }
        }
        try {
            EventRules.validateStored(out, Where.APPEND);
        } catch (VigiloException x) {
            throw new IllegalArgumentException("cannot append event " + e + ": " + x.getMessage(), x);
        }
        if (CommitRecord.TYPE.equals(out.path("type").textValue())) {
            throw new IllegalArgumentException(
                    "type " + CommitRecord.TYPE + " is reserved for the writer's commit records");
        }
        return out;
    }

    /** The committer of {@link #appends}: one frame (and fsync, and manifest) for every accepted append of the batch. */
    private void writeBatch(GroupCommit.Batch<List<ObjectNode>, AppendResult> batch) throws IOException {
        FencedException fenced = broken;
        if (fenced != null) {
            throw fenced;
        }
        try {
            writeAccepted(batch);
        } catch (FencedException f) {
            broken = f;
            throw f;
        }
    }

    private void writeAccepted(GroupCommit.Batch<List<ObjectNode>, AppendResult> batch) throws IOException {
        lease.checkCurrent();
        ByteArrayOutputStream plain = new ByteArrayOutputStream();
        long seq = nextSeq;
        long lastTime = 0;
        List<ObjectNode> all = new ArrayList<>();
        List<Integer> accepted = new ArrayList<>(batch.size());
        List<long[]> ranges = new ArrayList<>(batch.size());
        surface.begin();
        for (int i = 0; i < batch.size(); i++) {
            List<ObjectNode> events = batch.item(i);
            long first = seq;
            int mark = surface.mark();
            try {
                for (ObjectNode e : events) {
                    e.put("seq", seq++);
                    surface.accept(e, Where.APPEND); // the surface rules need the final seq and every earlier event
                }
            } catch (CorruptSessionLogException x) {
                // refuse this append only: its events would make the whole log unreadable for both readers
                surface.rollbackTo(mark);
                seq = first;
                batch.refuse(i, new IllegalArgumentException("cannot append: " + x.getMessage(), x));
                continue;
            }
            for (ObjectNode e : events) {
                lastTime = Json.safeLong(e.get("time"));
                all.add(e);
            }
            accepted.add(i);
            ranges.add(new long[] {first, seq - 1});
        }
        if (accepted.isEmpty()) {
            surface.commit();
            return;
        }
        HighWatermark now;
        try {
            now = writeFrame(all, seq, lastTime, plain);
            surface.commit();
        } catch (IOException | RuntimeException x) {
            surface.rollbackTo(0); // nothing of this batch is in the log
            surface.commit();
            throw x;
        }
        for (int k = 0; k < accepted.size(); k++) {
            long[] r = ranges.get(k);
            batch.complete(accepted.get(k), new AppendResult(new Seq(r[0]), new Seq(r[1]), now));
        }
    }

    /** Writes one frame of {@code all} (plus its commit record), fsyncs it, replaces the manifest; returns the new HW. */
    private HighWatermark writeFrame(List<ObjectNode> all, long seq, long lastTime, ByteArrayOutputStream plain)
            throws IOException {
        // like the published writer, runs are packed per written batch (a run split by a flush packs per part)
        for (ObjectNode r : options.packChunks() ? ChunkPacker.pack(all) : all) {
            plain.write(Json.MAPPER.writeValueAsBytes(r));
            plain.write('\n');
        }
        if (options.commitRecords()) {
            ObjectNode c = Json.MAPPER.createObjectNode();
            c.put("type", CommitRecord.TYPE).put("seq", seq).put("time", lastTime);
            c.putObject("data")
                    .put("v", CommitRecord.VERSION)
                    .put("epoch", lease.epoch().value())
                    .put("endSeq", seq);
            c.put("ignorable", true);
            plain.write(Json.MAPPER.writeValueAsBytes(c));
            plain.write('\n');
            seq++;
        }
        byte[] pb = plain.toByteArray();
        byte[] frame = compression == Compression.ZSTD ? FrameCodec.encode(pb, 0, pb.length) : pb;
        long start = ch.size();
        if (start != size) {
            frames = countUnits(log, start, compression); // another process appended (rare)
        }
        try {
            CrashPoints.boundary("sessionlog.append");
            AtomicFiles.writeFully(ch, frame);
            ch.force(false);
        } catch (IOException e) {
            try {
                ch.truncate(start); // like the official writer: a failed write is truncated back
            } catch (IOException ignored) {
                // durability unknown; reported below
            }
            throw e;
        }
        long end = start + frame.length;
        long firstSeqOfBatch = nextSeq;
        nextSeq = seq;
        frames += compression == Compression.ZSTD ? 1 : lines(pb);
        size = end;
        if (options.manifest()) {
            if (history.isEmpty() || !history.get(history.size() - 1).epoch().equals(lease.epoch())) {
                history.add(new Manifest.EpochStart(lease.epoch(), start, firstSeqOfBatch));
            }
            Manifest current = null;
            try {
                current = ManifestCodec.read(log);
            } catch (VigiloException ignored) {
                // an unreadable manifest is replaced
            }
            if (current != null && current.epoch().compareTo(lease.epoch()) > 0) {
                throw new FencedException("manifest of " + log + " is owned by epoch "
                        + current.epoch().value() + " > ours " + lease.epoch().value() + "; the batch at byte " + start
                        + " stays uncommitted");
            }
            AtomicFiles.replace(
                    Manifest.pathFor(log),
                    ManifestCodec.write(
                            new Manifest(lease.epoch(), seq - 1, frames, end, checksum(frame, compression), history)),
                    "sessionlog.replace");
        }
        CrashPoints.boundary("sessionlog.append.done");
        HighWatermark now = new HighWatermark(seq - 1, end);
        hw = now;
        return now;
    }

    private static long lines(byte[] b) {
        long n = 0;
        for (byte x : b) {
            if (x == '\n') {
                n++;
            }
        }
        return n;
    }

    /**
     * What a P2 manifest names as its last unit's checksum: a zstd frame's checksum trailer, or for an
     * uncompressed log the CRC-32C of its last line (newline included).
     */
    static long checksum(byte[] written, Compression compression) {
        if (compression == Compression.ZSTD) {
            return checksumTrailer(written);
        }
        int end = written.length - 1, start = end - 1;
        while (start >= 0 && written[start] != '\n') {
            start--;
        }
        return PlainLog.lineChecksum(written, start + 1, end - start);
    }

    static long checksumTrailer(byte[] frame) {
        return Integer.toUnsignedLong(ByteBuffer.wrap(frame, frame.length - 4, 4)
                .order(ByteOrder.LITTLE_ENDIAN)
                .getInt());
    }

    /**
     * Refuses later appends, waits for the appends already made (written or failed), then releases the file and the
     * lease. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        appends.close();
        try {
            ch.close();
        } catch (IOException e) {
            throw new UnavailableException("cannot close " + log + ": " + e.getMessage(), e);
        } finally {
            lease.close();
        }
    }
}
