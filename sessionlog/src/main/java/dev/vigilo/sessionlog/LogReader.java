package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import dev.vigilo.common.input.InputFiles;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The streaming reader of both encodings ({@link Compression}, detected from the bytes). Pass 1 applies the
 * published read path (fallback identity) and records per-unit metadata (a unit is a zstd frame, or for an
 * uncompressed log a stretch of lines ending at a commit record or a manifest offset: offsets, first/last seq,
 * commit record, checksum). If protocol metadata exists (an intact P1 commit unit, or a P2 manifest consistent
 * with the file) the protocol's rules decide a per-unit plan:
 * <ol>
 * <li>HW = last intact commit (P1) / the manifest's claim checked against the file (P2) / the smaller of both;
 * every unit after HW is uncommitted and dropped; damage before HW rejects.</li>
 * <li>a batch whose epoch is lower than the highest seen is fenced (skipped).</li>
 * <li>a higher epoch switches: prior-epoch rows at seq >= the new batch's first seq are dropped.</li>
 * <li>same epoch with a conflicting seq fails closed (the ordinary contiguity check in pass 2).</li>
 * </ol>
 * and pass 2 re-reads only the planned units with the same row rules. Without metadata, pass 1 is the verdict.
 * Memory is O(units) for the plan plus a few chunks of plaintext in flight.
 */
final class LogReader {
    /**
     * One frame's plaintext (or one line of an uncompressed log) is held in memory (a frame must decode completely
     * before any of its records count); cap it at a quarter of the heap so a decompression bomb is a clear error,
     * not an OutOfMemoryError.
     */
    static final long MAX_FRAME_PLAINTEXT =
            Math.min(Integer.MAX_VALUE - 16, Runtime.getRuntime().maxMemory() / 4);

    static final long MAX_TORN_PLAINTEXT = MAX_FRAME_PLAINTEXT;

    /** A protocol unit: a zstd frame, or a stretch of lines of an uncompressed log. */
    static final class FrameMeta {
        long start, end, checksum = -1;
        /** position in file order, the header being 0 (locators of fast-folded events name it) */
        int ordinal;

        boolean intact;
        long firstSeq = -1, lastSeq = -1, lines;
        /** uncompressed: lines from the header's end up to this unit's end */
        long cumulativeLines;

        Epoch commitEpoch;
        // plan
        boolean fenced, dropped;
        long keepBelow = Long.MAX_VALUE;

        long rows() {
            return firstSeq >= 0 && lastSeq >= firstSeq ? lastSeq - firstSeq + 1 : lines;
        }
    }

    /** Everything a caller (verify, cat, repair, compact, writer) needs from one read. */
    record Outcome(
            VerifyReport report,
            long headerEnd,
            List<ObjectNode> closers,
            Epoch maxEpoch,
            Manifest manifest,
            long nextSeq,
            long lastTime,
            SurfaceFold surface,
            Compression compression) {}

    private LogReader() {}

    /** The result of pass 1. */
    static final class Pass {
        final List<FrameMeta> frames = new ArrayList<>();
        RowScanner rows;
        VigiloException error;
        VigiloException structural;
        long tornStart = -1;
        long headerEnd;
        String sessionId;
        long completeEnd;
        /** uncompressed: complete lines, header included */
        long lineCount;
        /**
         * where the bytes after the last complete unit start (a torn final frame, or a line without newline), or
         * -1; for a zstd log the same as {@link #tornStart}, while an uncompressed log's published truncation
         * point also moves back to the first unparsable line or seq gap
         */
        long fragmentStart = -1;
    }

    static Outcome read(Path file, RowScanner.RowSink sink) {
        checkReadable(file);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            return read(file, ch, sink);
        } catch (IOException e) {
            throw new UnavailableException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * The input-file rule ({@link InputFiles}) for a log: checked before opening, because opening a named pipe
     * blocks until a writer appears.
     *
     * @throws NotFoundException     when nothing is there
     * @throws InvalidInputException when it is not a readable regular file
     */
    static void checkReadable(Path file) {
        Optional<String> problem = InputFiles.problem(file);
        if (problem.isEmpty()) {
            return;
        }
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            throw new NotFoundException(file + ": no such session log file; check the path");
        }
        throw new InvalidInputException(
                file + " " + problem.get() + "; give the session log file (session.jsonl.zstd or session.jsonl)");
    }

    private static Outcome read(Path file, FileChannel ch, RowScanner.RowSink sink) throws IOException {
        long size = ch.size();
        Compression compression = Compression.detect(ch, file);
        String notALog = compression == Compression.NONE ? Compression.notASessionLog(ch, file) : null;
        if (notALog != null) {
            return reject(new CorruptSessionLogException(notALog, 0), 0, compression);
        }
        String mismatch = Compression.nameMismatch(file, compression);
        if (mismatch != null) {
            return reject(new CorruptSessionLogException(mismatch, 0), 0, compression);
        }
        boolean plain = compression == Compression.NONE;
        // Before any frame is judged: a zstd library that cannot load is unavailability (exit 5), not a REJECT.
        if (!plain) {
            ZstdNative.ensureLoaded();
        }
        Manifest manifest = null;
        String manifestState = "absent";
        VigiloException manifestError = null;
        try {
            manifest = ManifestCodec.read(file);
        } catch (CorruptSessionLogException e) {
            manifestState = "invalid";
        } catch (UnsupportedSessionFormatException e) {
            manifestError = e;
        }
        Pass p1;
        try {
            p1 = plain
                    ? PlainLog.pass1(file, ch, size, null, splits(manifest), true)
                    : ZstdLog.pass1(file, ch, size, null, true);
        } catch (VigiloException e) {
            return reject(e, 0, compression);
        }
        List<FrameMeta> fr = p1.frames;
        long units = plain ? p1.lineCount : fr.size() + 1L;
        if (manifestError != null) {
            return reject(manifestError, units, "absent", Channel.NONE, compression);
        }
        int p1Hw = -2;
        for (int i = fr.size() - 1; i >= 0; i--) {
            if (fr.get(i).intact && fr.get(i).commitEpoch != null) {
                p1Hw = i;
                break;
            }
        }
        int p2Hw = -2;
        if (manifest != null) {
            int j = -2;
            if (manifest.committedBytes() == p1.headerEnd && manifest.frames() == 1) {
                j = -1;
            } else {
                for (int i = 0; i < fr.size(); i++) {
                    if (fr.get(i).end == manifest.committedBytes()) {
                        j = i;
                    }
                }
            }
            // zstd: frames are counted with the header frame; uncompressed: lines, header line included
            boolean ok = j >= -1 && (plain ? (j < 0 ? 1 : fr.get(j).cumulativeLines + 1) : j + 2) == manifest.frames();
            for (int i = 0; ok && i <= j; i++) {
                ok = fr.get(i).intact;
            }
            if (ok && j >= 0) {
                ok = fr.get(j).checksum == manifest.lastFrameChecksum();
            }
            if (ok) {
                p2Hw = j;
                boolean atEnd = j == fr.size() - 1 && p1.fragmentStart < 0 && p1.structural == null;
                manifestState = atEnd ? "consistent" : "lags";
            } else {
                manifestState = manifest.committedBytes() > p1.completeEnd ? "ahead" : "invalid";
            }
        }
        Channel channel;
        int hw;
        if (p2Hw >= -1) {
            channel = Channel.P2;
            hw = p1Hw >= 0 ? Math.min(p1Hw, p2Hw) : p2Hw;
        } else if (p1Hw >= 0) {
            channel = Channel.P1;
            hw = p1Hw;
        } else {
            // no usable metadata: today's behaviour, exactly
            if (p1.error != null) {
                return reject(p1.error, units, manifestState, Channel.NONE, compression);
            }
            Pass out = p1;
            if (sink != null) {
                out = plain
                        ? PlainLog.pass1(file, ch, size, sink, new long[0], false)
                        : ZstdLog.pass1(file, ch, size, sink, false);
            }
            List<ObjectNode> cl = out.rows.closers().closers();
            long stored = out.rows.expected;
            VerifyReport r = new VerifyReport(
                    VerifyReport.ACCEPT,
                    stored + cl.size(),
                    stored,
                    cl.size(),
                    Channel.NONE,
                    compression,
                    stored == 0 ? null : out.rows.lastSeq,
                    p1.tornStart >= 0 ? p1.tornStart : p1.completeEnd,
                    0,
                    0,
                    p1.tornStart >= 0 ? p1.tornStart : null,
                    manifestState,
                    null,
                    units,
                    null,
                    null);
            return new Outcome(
                    r,
                    p1.headerEnd,
                    cl,
                    null,
                    manifest,
                    stored,
                    out.rows.closers().lastTime(),
                    out.rows.surface(),
                    compression);
        }
        // ---- protocol plan (rules 1-3); rule 4 is pass 2's contiguity check
        Epoch maxEpoch = null;
        long fenced = 0, truncated = 0;
        List<FrameMeta> kept = new ArrayList<>();
        for (int i = 0; i <= hw; i++) {
            FrameMeta f = fr.get(i);
            if (!f.intact) {
                return reject(
                        new CorruptSessionLogException(
                                "corrupt session log: committed frame at byte " + f.start
                                        + " failed validation (it lies before the high watermark, so it cannot be dropped as an uncommitted tail)",
                                f.start),
                        units,
                        manifestState,
                        channel,
                        compression);
            }
            Epoch e =
                    f.commitEpoch != null ? f.commitEpoch : (channel == Channel.P2 ? manifest.epochAt(f.start) : null);
            if (e != null && maxEpoch != null && e.compareTo(maxEpoch) < 0) {
                f.fenced = true;
                fenced += f.rows();
                continue;
            }
            if (e != null && maxEpoch != null && e.compareTo(maxEpoch) > 0 && f.firstSeq >= 0) {
                long s = f.firstSeq;
                for (int k = kept.size() - 1; k >= 0; k--) {
                    FrameMeta pk = kept.get(k);
                    if (pk.firstSeq >= s) {
                        pk.dropped = true;
                        truncated += pk.rows();
                    } else {
                        if (pk.lastSeq >= s) {
                            pk.keepBelow = s;
                            truncated += pk.lastSeq - s + 1;
                        }
                        break;
                    }
                }
                kept.removeIf(x -> x.dropped);
            }
            if (e != null && (maxEpoch == null || e.compareTo(maxEpoch) > 0)) {
                maxEpoch = e;
            }
            kept.add(f);
        }
        for (int i = hw + 1; i < fr.size(); i++) {
            truncated += fr.get(i).intact ? fr.get(i).rows() : 0;
        }
        long hwOffset = hw >= 0 ? fr.get(hw).end : p1.headerEnd;
        // ---- pass 2
        RowScanner rows = new RowScanner(sink, p1.sessionId, plain);
        try {
            if (plain) {
                rows.surface().resolver(PlainLog.resolver(file));
                PlainLog.pass2(ch, kept, rows);
            } else {
                rows.surface().resolver(ZstdLog.resolver(file, fr));
                ZstdLog.pass2(ch, fr, kept, rows);
            }
            if (rows.hasFragment() || rows.committedBytes != rows.inputBytes) {
                throw rows.issue != null
                        ? rows.issue
                        : new CorruptSessionLogException(
                                "corrupt session log: committed frame ends inside a JSONL record", hwOffset);
            }
        } catch (VigiloException e) {
            return reject(e, units, manifestState, channel, compression);
        }
        List<ObjectNode> cl = rows.closers().closers();
        long stored = rows.expected;
        VerifyReport r = new VerifyReport(
                VerifyReport.ACCEPT,
                stored + cl.size(),
                stored,
                cl.size(),
                channel,
                compression,
                stored == 0 ? null : rows.lastSeq,
                hwOffset,
                fenced,
                truncated,
                p1.fragmentStart >= 0 ? p1.fragmentStart : null,
                manifestState,
                maxEpoch == null ? null : maxEpoch.value(),
                units,
                null,
                null);
        return new Outcome(
                r,
                p1.headerEnd,
                cl,
                maxEpoch,
                manifest,
                stored,
                rows.closers().lastTime(),
                rows.surface(),
                compression);
    }

    /** Uncompressed units must end where the manifest's claims fall: its epoch starts and committed end. */
    private static long[] splits(Manifest m) {
        if (m == null) {
            return new long[0];
        }
        long[] out = new long[m.epochs().size() + 1];
        for (int i = 0; i < m.epochs().size(); i++) {
            out[i] = m.epochs().get(i).startOffset();
        }
        out[out.length - 1] = m.committedBytes();
        java.util.Arrays.sort(out);
        return out;
    }

    private static Outcome reject(VigiloException e, long frames, Compression compression) {
        return reject(e, frames, "absent", Channel.NONE, compression);
    }

    private static Outcome reject(
            VigiloException e, long frames, String manifestState, Channel channel, Compression compression) {
        Long off = null;
        if (e instanceof CorruptSessionLogException c && c.offset() >= 0) {
            off = c.offset();
        }
        if (e instanceof UnsupportedSessionFormatException u && u.offset() >= 0) {
            off = u.offset();
        }
        String name = e instanceof UnsupportedSessionFormatException ? "SessionFormatUnsupportedError: " : "Error: ";
        VerifyReport r = new VerifyReport(
                VerifyReport.REJECT,
                0,
                0,
                0,
                channel,
                compression,
                null,
                null,
                0,
                0,
                null,
                manifestState,
                null,
                frames,
                name + e.getMessage(),
                off);
        return new Outcome(r, 0, List.of(), null, null, 0, 0, null, compression);
    }

    /**
     * A frame's plaintext is larger than the cap given to {@link Growable}; always caught by the reader (which
     * then decodes the frame alone, or reports a decompression bomb).
     */
    static final class TooLarge extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TooLarge() {
            super(
                    "a frame decompresses to more than " + MAX_FRAME_PLAINTEXT
                            + " bytes, a quarter of this JVM's heap; raise -Xmx to read it",
                    null,
                    false,
                    false);
        }
    }

    /** A growable byte buffer for one frame's plaintext, up to a cap. */
    static final class Growable {
        byte[] buf = new byte[1 << 16];
        int len;
        private final long cap;

        Growable(long cap) {
            this.cap = cap;
        }

        void write(byte[] b, int off, int n) {
            if (len + n > buf.length) {
                long need = (long) len + n;
                if (need > cap) {
                    throw new TooLarge();
                }
                long want = Math.min(cap, Math.max((long) buf.length * 2, need));
                buf = java.util.Arrays.copyOf(buf, (int) want);
            }
            System.arraycopy(b, off, buf, len, n);
            len += n;
        }
    }

    /** @return the first and last seq of a stored row (a packed row spans several), or null */
    static long[] seqRange(JsonNode v) {
        if (v == null || !v.isObject()) {
            return null;
        }
        try {
            List<JsonNode> d = EventRules.decodeStorageRecord(v);
            JsonNode a = d.get(0).get("seq"), b = d.get(d.size() - 1).get("seq");
            if (!Json.isSafeInteger(a) || !Json.isSafeInteger(b)) {
                return null;
            }
            return new long[] {Json.safeLong(a), Json.safeLong(b)};
        } catch (EventRules.MalformedRow e) {
            return null;
        }
    }

    /** @return the commit record carried by {@code v}, or null when {@code v} is not a well-formed one */
    static CommitRecord commitOf(JsonNode v) {
        if (v == null
                || !v.isObject()
                || !CommitRecord.TYPE.equals(v.path("type").textValue())
                || !v.path("ignorable").asBoolean(false)) {
            return null;
        }
        JsonNode d = v.get("data");
        if (d == null
                || !d.isObject()
                || !d.path("epoch").isIntegralNumber()
                || !Json.isSafeInteger(d.get("endSeq"))
                || !Json.isSafeInteger(v.get("seq"))
                || d.path("epoch").longValue() < 0
                || Json.safeLong(v.get("seq")) < 0) {
            return null;
        }
        if (Json.safeLong(d.get("endSeq")) != Json.safeLong(v.get("seq"))) {
            return null;
        }
        return new CommitRecord(new Epoch(d.get("epoch").longValue()), new Seq(Json.safeLong(v.get("seq"))));
    }
}
