package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * Streaming form of the published SessionLogScanner plus the coordinator's per-event checks: splits plaintext
 * into newline-terminated records (a record may span frames), expands packed rows, enforces seq contiguity
 * from 0, keeps the first issue (later rows are discarded, but a later turn/end throws it), upgrades legacy
 * event shapes, validates each stored event, folds it into the surface (Session.fromRestore's semantic checks) and
 * tracks closer state. Memory: the current partial line plus the {@link SurfaceFold}'s current surface.
 */
final class RowScanner {
    /** Receives each stored row that survives (raw bytes plus its expanded events, possibly cut). */
    interface RowSink {
        void row(byte[] buf, int off, int len, List<JsonNode> kept, boolean whole);
    }

    private final RowSink sink;
    private final CloserEvents closers = new CloserEvents();
    private final SurfaceFold surface = new SurfaceFold();
    private byte[] frag = new byte[256];
    private int fragLen = 0;
    long inputBytes;
    long committedBytes;
    long expected; // next seq == number of stored events
    long lastSeq = -1;
    long eventLine;
    CorruptSessionLogException issue;
    /** where the current frame starts (zstd); for an uncompressed log each line is its own place */
    private Where frame = Where.frame(0);
    /** rows whose first seq is >= this are dropped (epoch-switch truncation); Long.MAX_VALUE = no cut */
    long keepBelow = Long.MAX_VALUE;

    private boolean cutActive;
    long droppedByCut;

    private final String sessionId;
    private final boolean lines;

    /**
     * @param sessionId the header's id (legacy upgrades derive message ids from it)
     * @param lines     the input is an uncompressed log: offsets are file offsets, errors name the line
     */
    RowScanner(RowSink sink, String sessionId, boolean lines) {
        this.sink = sink;
        this.sessionId = sessionId;
        this.lines = lines;
    }

    /** @return true when rows may take the fast path (no sink needs the built events) */
    boolean fast() {
        return sink == null;
    }

    /** Starts counting input at file offset {@code offset} (an uncompressed log's rows start after its header). */
    void startAt(long offset) {
        inputBytes = offset;
        committedBytes = offset;
    }

    /** @return the surface fold after the rows read so far (the writer continues from it) */
    SurfaceFold surface() {
        return surface;
    }

    CloserEvents closers() {
        return closers;
    }

    /** Marks the start of a new frame (or, uncompressed, a new stretch of lines): resets the per-frame cut. */
    void beginFrame(long start, long keepBelow) {
        this.frame = Where.frame(start);
        this.keepBelow = keepBelow;
        this.cutActive = false;
    }

    /** Where the line that ends at {@code endByte} (exclusive of its newline, {@code len} bytes) was read. */
    private Where at(long endByte, int len) {
        return lines ? Where.line(endByte - len - 1) : frame;
    }

    void write(byte[] b, int off, int len) {
        long chunkStart = inputBytes;
        inputBytes += len;
        int lineStart = off;
        int end = off + len;
        for (int i = off; i < end; i++) {
            if (b[i] != '\n') {
                continue;
            }
            long endByte = chunkStart + (i - off) + 1;
            if (fragLen > 0) {
                append(b, lineStart, i - lineStart);
                byte[] line = java.util.Arrays.copyOf(frag, fragLen);
                fragLen = 0;
                consume(line, 0, line.length, endByte);
            } else {
                consume(b, lineStart, i - lineStart, endByte);
            }
            lineStart = i + 1;
        }
        if (lineStart < end) {
            append(b, lineStart, end - lineStart);
        }
    }

    /**
     * As {@link #write}{@code (b, 0, len)}, with the lines already split and summarized in {@code x}: summarized
     * lines take the fast path, the others (and a line continuing a fragment) the exact one.
     *
     * @param locatorBase added to a line's start in {@code b} to give the locator the surface fold keeps for a
     *                    tool/result (see {@link SurfaceFold.Resolver})
     */
    void write(byte[] b, int len, LineIndex x, long locatorBase) {
        long chunkStart = inputBytes;
        inputBytes += len;
        for (int i = 0; i < x.lines; i++) {
            int s = x.lineStart[i], e = x.lineEnd[i];
            long endByte = chunkStart + e + 1;
            if (fragLen > 0) { // only the first line can continue a fragment
                append(b, s, e - s);
                byte[] line = java.util.Arrays.copyOf(frag, fragLen);
                fragLen = 0;
                consume(line, 0, line.length, endByte);
            } else if (x.kind[i] == EventKinds.SLOW || !consumeFast(x, i, b, endByte, locatorBase)) {
                consume(b, s, e - s, endByte);
            }
        }
        if (x.tail < len) {
            append(b, x.tail, len - x.tail);
        }
    }

    boolean hasFragment() {
        return fragLen > 0;
    }

    private void append(byte[] b, int off, int len) {
        if (fragLen + len > frag.length) {
            frag = java.util.Arrays.copyOf(frag, Math.max(frag.length * 2, fragLen + len));
        }
        System.arraycopy(b, off, frag, fragLen, len);
        fragLen += len;
    }

    /**
     * The happy path of {@link #consume} for a summarized event: contiguous, no cut, no issue pending (or a
     * pending issue that it merely skips or throws).
     *
     * @return false when the exact path must take the line (nothing was changed then)
     */
    private boolean consumeFast(LineIndex x, int i, byte[] b, long endByte, long locatorBase) {
        byte kind = x.kind[i];
        if (issue != null) {
            eventLine++;
            if (kind == EventKinds.TURN_END) {
                throw issue;
            }
            return true;
        }
        long seq = x.seq[i];
        if (keepBelow != Long.MAX_VALUE || seq != expected || sink != null) {
            return false;
        }
        eventLine++;
        if (kind == EventKinds.TOOL_RESULT) {
            surface.appendFast(seq, true, locatorBase + x.lineStart[i]);
        } else if (kind == EventKinds.USER_MESSAGE || kind == EventKinds.ASSISTANT_MESSAGE) {
            surface.appendFast(seq, false, 0);
        }
        closers.acceptFast(x, i, b);
        expected++;
        lastSeq = seq;
        committedBytes = endByte;
        return true;
    }

    private void consume(byte[] b, int off, int len, long endByte) {
        eventLine++;
        Where at = at(endByte, len);
        JsonNode v = Json.parseLine(b, off, len);
        List<JsonNode> decoded = null;
        if (v != null) {
            if (v.isNull()) { // JS: reading .seq/.type of null throws a TypeError -> the whole read fails
                throw new CorruptSessionLogException(
                        "corrupt session log: record at line " + eventLine + " is null (" + at + ")", at.offset());
            }
            try {
                decoded = EventRules.decodeStorageRecord(v);
            } catch (EventRules.MalformedRow e) {
                decoded = null;
            }
        }
        if (decoded == null) {
            if (issue == null) {
                issue = new CorruptSessionLogException(
                        "corrupt session log: unparsable committed event at line " + eventLine + " (" + at + ")",
                        at.offset());
            }
            return;
        }
        if (issue != null) {
            if (hasTurnEnd(decoded)) {
                throw issue;
            }
            return;
        }
        int keep = decoded.size();
        if (keepBelow != Long.MAX_VALUE) {
            if (cutActive) {
                keep = 0;
            } else {
                for (int k = 0; k < decoded.size(); k++) {
                    JsonNode s = decoded.get(k).get("seq");
                    if (Json.isSafeInteger(s) && Json.safeLong(s) >= keepBelow) {
                        keep = k;
                        cutActive = true;
                        break;
                    }
                }
            }
            droppedByCut += decoded.size() - keep;
        }
        for (int k = 0; k < keep; k++) {
            JsonNode e = decoded.get(k);
            JsonNode s = e.isObject() ? e.get("seq") : null;
            if (!Json.numberEquals(s, expected + k)) {
                issue = new CorruptSessionLogException(
                        "corrupt session log: seq gap in committed region at line " + eventLine + " (expected "
                                + (expected + k) + ", got " + (s == null ? "undefined" : s.toString()) + ") in "
                                + at,
                        at.offset());
                if (hasTurnEnd(decoded)) {
                    throw issue;
                }
                return;
            }
        }
        if (keep == 0) {
            committedBytes = endByte;
            return;
        }
        List<JsonNode> kept = keep == decoded.size() ? decoded : decoded.subList(0, keep);
        boolean upgraded = false;
        for (int k = 0; k < kept.size(); k++) {
            JsonNode e = LegacyUpgrade.apply(kept.get(k), sessionId, surface, at);
            if (e != kept.get(k)) {
                if (!upgraded) {
                    kept = new java.util.ArrayList<>(kept);
                }
                upgraded = true;
                kept.set(k, e); // the reader reports the upgraded event, like the coordinator
            }
            EventRules.validateStored(e, at);
            surface.accept(e, at);
            closers.accept(e);
        }
        expected += keep;
        lastSeq = expected - 1;
        committedBytes = endByte;
        if (sink != null) {
            sink.row(b, off, len, kept, keep == decoded.size());
        }
    }

    private static boolean hasTurnEnd(List<JsonNode> decoded) {
        for (JsonNode e : decoded) {
            if (e.isObject() && "turn/end".equals(e.path("type").textValue())) {
                return true;
            }
        }
        return false;
    }
}
