package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The streaming reader. Pass 1 applies the published read path (fallback identity) and records per-frame
 * metadata (offsets, first/last seq, commit record, checksum). If protocol metadata exists (an intact P1 commit
 * frame, or a P2 manifest consistent with the file) the protocol's rules decide a per-frame plan:
 * <ol>
 * <li>HW = last intact commit (P1) / the manifest's claim checked against the file (P2) / the smaller of both;
 * every frame after HW is uncommitted and dropped; damage before HW rejects.</li>
 * <li>a batch whose epoch is lower than the highest seen is fenced (skipped).</li>
 * <li>a higher epoch switches: prior-epoch rows at seq >= the new batch's first seq are dropped.</li>
 * <li>same epoch with a conflicting seq fails closed (the ordinary contiguity check in pass 2).</li>
 * </ol>
 * and pass 2 re-reads only the planned frames with the same row rules. Without metadata, pass 1 is the verdict.
 * Memory is O(frames) for the plan plus one frame's plaintext.
 */
final class LogReader {
    /**
     * One frame's plaintext is held in memory (a frame must decode completely before any of its records
     * count); cap it at a quarter of the heap so a decompression bomb is a clear error, not an OutOfMemoryError.
     */
    static final long MAX_FRAME_PLAINTEXT =
            Math.min(Integer.MAX_VALUE - 16, Runtime.getRuntime().maxMemory() / 4);

    static final long MAX_TORN_PLAINTEXT = MAX_FRAME_PLAINTEXT;

    static final class FrameMeta {
        long start, end, checksum = -1;
        boolean intact;
        long firstSeq = -1, lastSeq = -1, lines;
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
            SurfaceFold surface) {}

    private LogReader() {}

    private static final class Pass {
        final List<FrameMeta> frames = new ArrayList<>();
        RowScanner rows;
        VigiloException error;
        VigiloException structural;
        long tornStart = -1;
        long headerEnd;
        String sessionId;
        long completeEnd;
    }

    static Outcome read(Path file, RowScanner.RowSink sink) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            return read(file, ch, sink);
        } catch (IOException e) {
            throw new UnavailableException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    private static Outcome read(Path file, FileChannel ch, RowScanner.RowSink sink) throws IOException {
        long size = ch.size();
        Pass p1;
        try {
            p1 = fallbackPass(ch, size, null, true);
        } catch (VigiloException e) {
            return reject(e, 0);
        }
        Manifest manifest = null;
        String manifestState = "absent";
        try {
            manifest = ManifestCodec.read(file);
        } catch (CorruptSessionLogException e) {
            manifestState = "invalid";
        } catch (UnsupportedSessionFormatException e) {
            return reject(e, p1.frames.size() + 1);
        }
        List<FrameMeta> fr = p1.frames;
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
            if (manifest.committedBytes() == p1.headerEnd && manifest.frames() == 1) j = -1;
            else for (int i = 0; i < fr.size(); i++) if (fr.get(i).end == manifest.committedBytes()) j = i;
            boolean ok = j >= -1 && j + 2 == manifest.frames();
            for (int i = 0; ok && i <= j; i++) ok = fr.get(i).intact;
            if (ok && j >= 0) ok = fr.get(j).checksum == manifest.lastFrameChecksum();
            if (ok) {
                p2Hw = j;
                boolean atEnd = j == fr.size() - 1 && p1.tornStart < 0 && p1.structural == null;
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
            if (p1.error != null) return reject(p1.error, fr.size() + 1, manifestState);
            Pass out = p1;
            if (sink != null) out = fallbackPass(ch, size, sink, false);
            List<ObjectNode> cl = out.rows.closers().closers();
            long stored = out.rows.expected;
            VerifyReport r = new VerifyReport(
                    VerifyReport.ACCEPT,
                    stored + cl.size(),
                    stored,
                    cl.size(),
                    Channel.NONE,
                    stored == 0 ? null : out.rows.lastSeq,
                    p1.tornStart >= 0 ? p1.tornStart : p1.completeEnd,
                    0,
                    0,
                    p1.tornStart >= 0 ? p1.tornStart : null,
                    manifestState,
                    null,
                    fr.size() + 1L,
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
                    out.rows.surface());
        }
        // ---- protocol plan (rules 1-3); rule 4 is pass 2's contiguity check
        Epoch maxEpoch = null;
        long fenced = 0, truncated = 0;
        List<FrameMeta> kept = new ArrayList<>();
        for (int i = 0; i <= hw; i++) {
            FrameMeta f = fr.get(i);
            if (!f.intact)
                return reject(
                        new CorruptSessionLogException(
                                "corrupt session log: committed frame at byte " + f.start
                                        + " failed validation (it lies before the high watermark, so it cannot be dropped as an uncommitted tail)",
                                f.start),
                        fr.size() + 1,
                        manifestState,
                        channel);
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
            if (e != null && (maxEpoch == null || e.compareTo(maxEpoch) > 0)) maxEpoch = e;
            kept.add(f);
        }
        for (int i = hw + 1; i < fr.size(); i++)
            truncated += fr.get(i).intact ? fr.get(i).rows() : 0;
        long hwOffset = hw >= 0 ? fr.get(hw).end : p1.headerEnd;
        // ---- pass 2
        RowScanner rows = new RowScanner(sink, p1.sessionId);
        byte[] buf = new byte[1 << 16];
        Growable plain = new Growable();
        try {
            for (FrameMeta f : kept) {
                plain.len = 0;
                FrameCodec.decodeComplete(FrameCodec.readRange(ch, f.start, f.end), plain::write, buf);
                rows.beginFrame(f.start, f.keepBelow);
                rows.write(plain.buf, 0, plain.len);
                if (rows.issue != null) throw rows.issue;
            }
            if (rows.hasFragment() || rows.committedBytes != rows.inputBytes)
                throw rows.issue != null
                        ? rows.issue
                        : new CorruptSessionLogException(
                                "corrupt session log: committed frame ends inside a JSONL record", hwOffset);
        } catch (VigiloException e) {
            return reject(e, fr.size() + 1, manifestState, channel);
        } catch (IOException e) {
            return reject(
                    new CorruptSessionLogException(
                            "corrupt Zstandard session log: frame failed validation in pass 2: " + e.getMessage(), -1),
                    fr.size() + 1,
                    manifestState,
                    channel);
        }
        List<ObjectNode> cl = rows.closers().closers();
        long stored = rows.expected;
        VerifyReport r = new VerifyReport(
                VerifyReport.ACCEPT,
                stored + cl.size(),
                stored,
                cl.size(),
                channel,
                stored == 0 ? null : rows.lastSeq,
                hwOffset,
                fenced,
                truncated,
                p1.tornStart >= 0 ? p1.tornStart : null,
                manifestState,
                maxEpoch == null ? null : maxEpoch.value(),
                fr.size() + 1L,
                null,
                null);
        return new Outcome(
                r, p1.headerEnd, cl, maxEpoch, manifest, stored, rows.closers().lastTime(), rows.surface());
    }

    private static Outcome reject(VigiloException e, long frames) {
        return reject(e, frames, "absent");
    }

    private static Outcome reject(VigiloException e, long frames, String manifestState) {
        return reject(e, frames, manifestState, Channel.NONE);
    }

    private static Outcome reject(VigiloException e, long frames, String manifestState, Channel channel) {
        Long off = null;
        if (e instanceof CorruptSessionLogException c && c.offset() >= 0) off = c.offset();
        if (e instanceof UnsupportedSessionFormatException u && u.offset() >= 0) off = u.offset();
        String name = e instanceof UnsupportedSessionFormatException ? "SessionFormatUnsupportedError: " : "Error: ";
        VerifyReport r = new VerifyReport(
                VerifyReport.REJECT,
                0,
                0,
                0,
                channel,
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
        return new Outcome(r, 0, List.of(), null, null, 0, 0, null);
    }

    /** A growable byte buffer for one frame's plaintext. */
    static final class Growable {
        byte[] buf = new byte[1 << 16];
        int len;

        void write(byte[] b, int off, int n) {
            if (len + n > buf.length) {
                long need = (long) len + n;
                if (need > MAX_FRAME_PLAINTEXT)
                    throw new CorruptSessionLogException(
                            "a frame decompresses to more than " + MAX_FRAME_PLAINTEXT
                                    + " bytes, a quarter of this JVM's heap; raise -Xmx to read it",
                            -1);
                long want = Math.min(MAX_FRAME_PLAINTEXT, Math.max((long) buf.length * 2, need));
                buf = java.util.Arrays.copyOf(buf, (int) want);
            }
            System.arraycopy(b, off, buf, len, n);
            len += n;
        }
    }

    /**
     * The published read path over the whole file. Header problems throw; everything else is recorded in
     * {@link Pass#error} so frame metadata is still collected for the protocol rules.
     */
    private static Pass fallbackPass(FileChannel ch, long size, RowScanner.RowSink sink, boolean collect)
            throws IOException {
        Pass p = new Pass();
        FrameScanner sc = new FrameScanner(ch, size, 0);
        FrameScanner.Frame f0 = sc.next();
        if (f0 == null)
            throw new CorruptSessionLogException(
                    "empty or header-less Zstandard session log (no complete zstd frame)", 0);
        byte[] buf = new byte[1 << 16];
        Growable plain = new Growable();
        try {
            FrameCodec.decodeComplete(FrameCodec.readRange(ch, f0.start(), f0.end()), plain::write, buf);
        } catch (IOException e) {
            throw new CorruptSessionLogException(
                    "corrupt Zstandard session log: frame at byte 0 failed validation (" + e.getMessage() + ")", 0, e);
        }
        int nl = indexOf(plain.buf, 0, plain.len, (byte) '\n');
        if (plain.len == 0 || nl != plain.len - 1)
            throw new CorruptSessionLogException(
                    "corrupt Zstandard session log: first frame is not exactly one header line", 0);
        p.sessionId = EventRules.parseHeader(plain.buf, 0, plain.len - 1).id();
        p.headerEnd = f0.end();
        p.completeEnd = f0.end();
        p.rows = new RowScanner(sink, p.sessionId);
        for (; ; ) {
            FrameScanner.Frame f;
            try {
                f = sc.next();
            } catch (CorruptSessionLogException e) {
                p.structural = e;
                if (p.error == null) p.error = e;
                break;
            }
            if (f == null) break;
            p.completeEnd = f.end();
            FrameMeta m = new FrameMeta();
            m.start = f.start();
            m.end = f.end();
            m.checksum = FrameScanner.checksumOf(ch, f);
            plain.len = 0;
            try {
                FrameCodec.decodeComplete(FrameCodec.readRange(ch, f.start(), f.end()), plain::write, buf);
                m.intact = true;
            } catch (IOException | RuntimeException e) {
                if (e instanceof CorruptSessionLogException c && c.getMessage().contains("raise -Xmx")) {
                    if (p.error == null)
                        p.error = new CorruptSessionLogException(
                                c.getMessage() + " (frame at byte " + f.start() + ")", f.start());
                    break;
                }
                if (p.error == null)
                    p.error = new CorruptSessionLogException(
                            "corrupt Zstandard session log: frame at byte " + f.start() + " failed validation ("
                                    + e.getMessage() + ")",
                            f.start());
            }
            if (m.intact) {
                if (p.error == null) {
                    try {
                        p.rows.beginFrame(f.start(), Long.MAX_VALUE);
                        p.rows.write(plain.buf, 0, plain.len);
                    } catch (VigiloException e) {
                        p.error = e;
                    }
                }
                if (collect) describe(m, plain);
            }
            if (collect) p.frames.add(m);
        }
        if (p.structural == null) p.tornStart = sc.tornStart();
        if (p.error == null && p.rows.committedBytes != p.rows.inputBytes)
            p.error = p.rows.issue != null
                    ? p.rows.issue
                    : new CorruptSessionLogException(
                            "corrupt Zstandard session log: complete frame contains a torn JSONL record",
                            p.completeEnd);
        if (p.error == null && p.tornStart >= 0) {
            byte[] partial = FrameCodec.readRange(ch, p.tornStart, size);
            byte[] rec = FrameCodec.decodePrefix(partial, MAX_TORN_PLAINTEXT);
            try {
                p.rows.beginFrame(p.tornStart, Long.MAX_VALUE);
                p.rows.write(rec, 0, rec.length);
            } catch (VigiloException e) {
                p.error = e;
            }
        }
        return p;
    }

    private static int indexOf(byte[] b, int from, int to, byte x) {
        for (int i = from; i < to; i++) if (b[i] == x) return i;
        return -1;
    }

    /** Frame-local metadata: first seq, last seq, commit record (the last line), line count. */
    private static void describe(FrameMeta m, Growable plain) {
        // only the first and the last line matter; scan from both ends instead of over the whole frame
        int firstEnd = indexOf(plain.buf, 0, plain.len, (byte) '\n');
        if (firstEnd < 0) return;
        int lastNl = plain.len - 1;
        while (lastNl >= 0 && plain.buf[lastNl] != '\n') lastNl--;
        int lastStart = lastNl - 1;
        while (lastStart >= 0 && plain.buf[lastStart] != '\n') lastStart--;
        lastStart++;
        long[] fs = seqRange(Json.parseLine(plain.buf, 0, firstEnd));
        if (fs != null) m.firstSeq = fs[0];
        JsonNode last = Json.parseLine(plain.buf, lastStart, lastNl - lastStart);
        long[] ls = seqRange(last);
        if (ls != null) m.lastSeq = ls[1];
        CommitRecord c = commitOf(last);
        if (c != null && c.endSeq().value() == m.lastSeq) m.commitEpoch = c.epoch();
        if (m.firstSeq < 0 || m.lastSeq < m.firstSeq) {
            long lines = 0;
            for (int i = 0; i < plain.len; i++) if (plain.buf[i] == '\n') lines++;
            m.lines = lines;
        }
    }

    private static long[] seqRange(JsonNode v) {
        if (v == null || !v.isObject()) return null;
        try {
            List<JsonNode> d = EventRules.decodeStorageRecord(v);
            JsonNode a = d.get(0).get("seq"), b = d.get(d.size() - 1).get("seq");
            if (!Json.isSafeInteger(a) || !Json.isSafeInteger(b)) return null;
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
                || !v.path("ignorable").asBoolean(false)) return null;
        JsonNode d = v.get("data");
        if (d == null
                || !d.isObject()
                || !d.path("epoch").isIntegralNumber()
                || !Json.isSafeInteger(d.get("endSeq"))
                || !Json.isSafeInteger(v.get("seq"))
                || d.path("epoch").longValue() < 0
                || Json.safeLong(v.get("seq")) < 0) return null;
        if (Json.safeLong(d.get("endSeq")) != Json.safeLong(v.get("seq"))) return null;
        return new CommitRecord(new Epoch(d.get("epoch").longValue()), new Seq(Json.safeLong(v.get("seq"))));
    }
}
