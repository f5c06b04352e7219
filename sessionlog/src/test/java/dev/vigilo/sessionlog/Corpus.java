package dev.vigilo.sessionlog;

import static dev.vigilo.sessionlog.LogBuilder.*;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** The differential corpus: every shape named in the spec and the format notes, plus seeded mutations. */
final class Corpus {
    private Corpus() {}

    static byte[] clean(long seed, int turns, boolean chunks) {
        List<String> ev = turns(seed, turns, chunks);
        return concat(frames(header(), batch(ev, 7, 13, 5, 20, 9, 11, 30)));
    }

    static Map<String, byte[]> shapes() {
        Map<String, byte[]> m = new LinkedHashMap<>();
        List<String> ev = turns(1, 4, false);
        List<List<String>> b = batch(ev, 7, 13, 5, 20);
        m.put("clean", concat(frames(header(), b)));
        m.put("clean-packed-rows", clean(2, 4, true));
        m.put("header-only", concat(List.of(frame(header() + "\n"))));
        m.put("empty-file", new byte[0]);
        // partial tail inside a complete frame: the last batch's final record lacks its newline
        {
            List<byte[]> f = frames(header(), b.subList(0, b.size() - 1));
            String last = lines(b.get(b.size() - 1));
            f.add(frame(last.substring(0, last.length() - 10)));
            m.put("partial-tail-in-complete-frame", concat(f));
        }
        // a complete frame that ends mid-record, continued by the next frame (records may span frames)
        {
            List<byte[]> f = frames(header(), b.subList(0, 2));
            String s = lines(b.get(2)) + lines(b.get(3));
            f.add(frame(s.substring(0, 50)));
            f.add(frame(s.substring(50)));
            m.put("record-spanning-frames", concat(f));
        }
        // raw-mode partial tail: final frame is a raw block cut mid-block (complete lines recoverable)
        {
            List<byte[]> f = frames(header(), b.subList(0, 2));
            byte[] raw = rawFrame(lines(b.get(2)));
            f.add(Arrays.copyOf(raw, raw.length - 40));
            m.put("raw-partial-tail", concat(f));
            List<byte[]> g = frames(header(), b.subList(0, 2));
            g.add(raw);
            m.put("raw-frame-complete", concat(g));
        }
        byte[] full = concat(frames(header(), b));
        int lastLen = frame(lines(b.get(b.size() - 1))).length;
        m.put("torn-final-at-checksum", Arrays.copyOf(full, full.length - 2));
        m.put("torn-final-mid-block", Arrays.copyOf(full, full.length - lastLen / 2));
        m.put("torn-final-after-magic", Arrays.copyOf(full, full.length - lastLen + 4));
        m.put("torn-final-after-magic-plus1", Arrays.copyOf(full, full.length - lastLen + 5));
        m.put("torn-final-3-bytes", Arrays.copyOf(full, full.length - lastLen + 3));
        // torn final frame whose recovered lines leave a turn open: closers needed
        {
            List<String> open = new ArrayList<>(ev);
            LogBuilder.Events e = new LogBuilder.Events(9, ev.size());
            e.turnStart(5).user(5, "hello").stepStart(5, 1);
            List<String> ids = e.assistant(5, 1, 2, "calling");
            e.toolCall(5, 1, ids.get(0));
            open.addAll(e.rows());
            m.put("open-turn-closers", concat(frames(header(), batch(open, 7, 13, 5, 20))));
            List<List<String>> bb = batch(open, 7, 13, 5, 20);
            byte[] all = concat(frames(header(), bb));
            m.put("open-turn-torn", Arrays.copyOf(all, all.length - 3));
        }
        // torn middle frame: cut a middle frame, later frames follow
        {
            List<byte[]> f = frames(header(), b);
            f.set(2, Arrays.copyOf(f.get(2), f.get(2).length / 2));
            m.put("torn-middle-frame", concat(f));
        }
        // checksum mismatch: flip a checksum byte
        {
            List<byte[]> f = frames(header(), b);
            byte[] mid = f.get(2).clone();
            mid[mid.length - 1] ^= 0x55;
            f.set(2, mid);
            m.put("checksum-mismatch-middle", concat(f));
            List<byte[]> g = frames(header(), b);
            byte[] fin = g.get(g.size() - 1).clone();
            fin[fin.length - 2] ^= 0x01;
            g.set(g.size() - 1, fin);
            m.put("checksum-mismatch-final", concat(g));
        }
        // two-writer interleave: writer B replays seqs 4..8 after A's 0..9 (no protocol metadata)
        {
            List<String> a = turns(3, 1, false);
            List<String> bw = new ArrayList<>();
            for (int i = 4; i <= 8 && i < a.size(); i++) {
                bw.add(a.get(i));
            }
            List<List<String>> bs = new ArrayList<>();
            bs.add(a.subList(0, Math.min(10, a.size())));
            bs.add(bw);
            m.put("two-writer-interleave", concat(frames(header(), bs)));
        }
        // recycled tail: closers written at 10..12 by a stale process, resumer restarts at 10
        {
            LogBuilder.Events e = new LogBuilder.Events(4, 0);
            e.turnStart(1).user(1, "a").stepStart(1, 1);
            while (e.seq < 10) {
                e.add("todo/write", "{\"todos\":[]}");
            }
            List<String> prefix = new ArrayList<>(e.rows());
            LogBuilder.Events cl = new LogBuilder.Events(5, 10);
            cl.stepEnd(1, 1).turnEnd(1).add("session/title", "{\"title\":\"t\"}");
            LogBuilder.Events res = new LogBuilder.Events(6, 10);
            res.stepEnd(1, 1).turnEnd(1);
            m.put("recycled-tail", concat(frames(header(), List.of(prefix, cl.rows(), res.rows()))));
        }
        // splices: a frame of another session spliced in; the same frame twice
        {
            List<byte[]> f = frames(header(), b);
            List<byte[]> other = frames(header("other", CWD), batch(turns(7, 2, false), 9, 9));
            List<byte[]> s = new ArrayList<>(f);
            s.add(2, other.get(1));
            m.put("splice-foreign-frame", concat(s));
            List<byte[]> d = new ArrayList<>(f);
            d.add(3, f.get(2));
            m.put("duplicated-frame", concat(d));
            List<byte[]> h = new ArrayList<>(f);
            h.add(other.get(0));
            m.put("splice-second-header", concat(h));
        }
        // unknown types
        {
            List<String> x = new ArrayList<>(ev);
            LogBuilder.Events e = new LogBuilder.Events(8, ev.size());
            e.ignorable("plugin/custom", "{\"k\":1}");
            x.addAll(e.rows());
            m.put("unknown-type-ignorable", concat(frames(header(), batch(x, 7, 13, 5, 20))));
            List<String> y = new ArrayList<>(ev);
            LogBuilder.Events e2 = new LogBuilder.Events(8, ev.size());
            e2.add("plugin/custom", "{\"k\":1}");
            y.addAll(e2.rows());
            m.put("unknown-type-not-ignorable", concat(frames(header(), batch(y, 7, 13, 5, 20))));
            List<String> z = new ArrayList<>(ev);
            z.add("{\"type\":\"plugin/custom\",\"seq\":" + ev.size() + ",\"time\":1,\"data\":{},\"ignorable\":false}");
            m.put("unknown-type-ignorable-false", concat(frames(header(), batch(z, 7, 13, 5, 20))));
            List<String> w = new ArrayList<>(ev);
            w.add("{\"type\":\"todo/write\",\"seq\":" + ev.size() + ",\"time\":1,\"data\":{},\"ts\":5}");
            m.put("envelope-extra-key", concat(frames(header(), batch(w, 7, 13, 5, 20))));
        }
        // header variants
        String h0 = header();
        m.put("header-version-1", concat(frames(h0.replace("\"version\":0", "\"version\":1"), b)));
        m.put("header-no-delegationDepth", concat(frames(h0.replace(",\"delegationDepth\":0", ""), b)));
        m.put(
                "header-origin-subagent",
                concat(frames(h0.replace("}", ",\"origin\":\"subagent\",\"parentSession\":\"p\"}"), b)));
        m.put("header-origin-bad", concat(frames(h0.replace("}", ",\"origin\":\"human\"}"), b)));
        m.put("header-sandboxMode", concat(frames(h0.replace("}", ",\"sandboxMode\":\"x\"}"), b)));
        m.put("header-unknown-key", concat(frames(h0.replace("}", ",\"zzz\":1}"), b)));
        m.put("header-no-cwd", concat(frames(header(ID, null), b)));
        m.put("header-relative-cwd", concat(frames(header(ID, "rel/dir"), b)));
        m.put("header-bom", concat(frames("\uFEFF" + h0, b)));
        m.put("header-not-json", concat(frames("{not json", b)));
        m.put("header-two-lines", concat(List.of(frame(h0 + "\n" + lines(b.get(0))))));
        m.put("header-seedLength", concat(frames(h0.replace("}", ",\"seedLength\":3}"), b)));
        // the published reader refuses a negative zero where it wants a non-negative number (Object.is(x, -0))
        m.put("header-createdAt-negative-zero", concat(frames(h0.replace("1760000000000", "-0"), b)));
        m.put(
                "header-depth-negative-zero-float",
                concat(frames(h0.replace("\"delegationDepth\":0", "\"delegationDepth\":-0.0"), b)));
        m.put("header-version-negative-zero", concat(frames(h0.replace("\"version\":0", "\"version\":-0"), b)));
        m.put("header-leading-space-negative-zero", concat(frames(" " + h0.replace("1760000000000", "-0"), b)));
        m.put("header-escaped-key", concat(frames(h0.replace("\"cwd\"", "\"\\u0063wd\""), b)));
        // blank line, CRLF, BOM on an event line
        {
            List<List<String>> bl = deep(b);
            bl.get(1).add(3, "");
            m.put("blank-line", concat(frames(h0, bl)));
            List<List<String>> cr = deep(b);
            for (List<String> x : cr) {
                x.replaceAll(s -> s + "\r");
            }
            m.put("crlf", concat(frames(h0, cr)));
            List<List<String>> bom = deep(b);
            bom.get(1).set(0, "\uFEFF" + bom.get(1).get(0));
            m.put("bom-event-line", concat(frames(h0, bom)));
        }
        // trailing garbage, skippable frame, frames without checksum
        m.put("trailing-garbage", concat(List.of(full, "garbage!".getBytes(StandardCharsets.US_ASCII))));
        m.put("trailing-zeros", concat(List.of(full, new byte[16])));
        m.put("skippable-frame", concat(List.of(full, new byte[] {0x50, 0x2A, 0x4D, 0x18, 0, 0, 0, 0})));
        {
            List<byte[]> f = new ArrayList<>();
            f.add(frameNoChecksum(h0 + "\n"));
            for (List<String> x : b) {
                f.add(frameNoChecksum(lines(x)));
            }
            m.put("no-checksum-frames", concat(f));
            byte[] nc = concat(f);
            m.put("no-checksum-torn", Arrays.copyOf(nc, nc.length - 7));
        }
        // seq problems
        {
            List<List<String>> g = deep(b);
            g.get(2).remove(1);
            m.put("seq-gap-middle", concat(frames(h0, g)));
            List<String> t = new ArrayList<>(ev);
            t.remove(t.size() - 2); // gap right before the final turn/end
            m.put("seq-gap-before-turn-end", concat(frames(h0, batch(t, 7, 13, 5, 20))));
            List<String> s1 = new ArrayList<>(ev);
            s1.replaceAll(s -> s.replaceFirst("\"seq\":(\\d+)", "\"seq\":$1.0"));
            m.put("seq-as-float", concat(frames(h0, batch(s1, 7, 13, 5, 20))));
            List<String> s2 = new ArrayList<>(ev.subList(0, 5));
            s2.add("null");
            m.put("null-record", concat(frames(h0, List.of(s2))));
            List<String> s3 = new ArrayList<>(ev.subList(0, 5));
            s3.add("[1,2]");
            m.put("array-record", concat(frames(h0, List.of(s3))));
        }
        // JSON details: invalid UTF-8 inside a string, escaped lone surrogate, duplicate keys, number spellings, deep
        // nesting
        {
            int n = ev.size();
            List<String> u = new ArrayList<>(ev);
            u.add("{\"type\":\"todo/write\",\"seq\":" + n + ",\"time\":1,\"data\":{\"t\":\"bad\u00ff\"}}");
            List<byte[]> uf = frames(h0, batch(u, 7, 13, 5, 20));
            // turn the U+00FF (C3 BF) of the last frame into a lone 0xFF byte: invalid UTF-8 inside a string
            List<String> tail = u.subList(25, u.size());
            byte[] plain = lines(tail).getBytes(StandardCharsets.UTF_8);
            byte[] bad = new String(plain, StandardCharsets.UTF_8)
                    .replace("\u00ff", "#")
                    .getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < bad.length; i++) {
                if (bad[i] == '#') {
                    bad[i] = (byte) 0xFF;
                }
            }
            uf.set(uf.size() - 1, com.github.luben.zstd.Zstd.compress(bad, 3));
            m.put("invalid-utf8-in-string", concat(uf));
            List<String> sur = new ArrayList<>(ev);
            sur.add("{\"type\":\"todo/write\",\"seq\":" + n + ",\"time\":1,\"data\":{\"t\":\"\\ud800 lone\"}}");
            m.put("lone-surrogate-escape", concat(frames(h0, batch(sur, 7, 13, 5, 20))));
            List<String> dup = new ArrayList<>(ev);
            dup.add("{\"type\":\"todo/write\",\"seq\":999,\"time\":1,\"data\":{},\"seq\":" + n + "}");
            m.put("duplicate-key-last-wins", concat(frames(h0, batch(dup, 7, 13, 5, 20))));
            List<String> num = new ArrayList<>(ev);
            num.add("{\"type\":\"todo/write\",\"seq\":" + n + "0E-1,\"time\":1e3,\"data\":{}}");
            m.put("number-spellings", concat(frames(h0, batch(num, 7, 13, 5, 20))));
            List<String> deepRow = new ArrayList<>(ev);
            deepRow.add("{\"type\":\"todo/write\",\"seq\":" + n + ",\"time\":1,\"data\":" + "[".repeat(20000)
                    + "]".repeat(20000) + "}");
            m.put("deep-nesting", concat(frames(h0, batch(deepRow, 7, 13, 5, 20))));
            List<String> big = new ArrayList<>(ev);
            big.add("{\"type\":\"todo/write\",\"seq\":9007199254740993,\"time\":1,\"data\":{}}");
            m.put("unsafe-seq", concat(frames(h0, batch(big, 7, 13, 5, 20))));
        }
        // a torn final frame whose recovered records have a seq gap (dropped, not rejected)
        {
            List<List<String>> g = deep(b);
            g.get(3).remove(2);
            List<byte[]> f = frames(h0, g);
            byte[] last = f.get(f.size() - 1);
            f.set(f.size() - 1, Arrays.copyOf(last, last.length - 1));
            m.put("torn-with-gap", concat(f));
        }
        // malformed packed row
        {
            List<String> p = new ArrayList<>(turns(2, 1, true));
            p.replaceAll(s -> s.startsWith("{\"type\":\"text-chunks\"") ? s.replace("\"index\":0,", "") : s);
            m.put("packed-row-malformed", concat(frames(h0, List.of(p))));
        }
        return m;
    }

    private static List<List<String>> deep(List<List<String>> b) {
        List<List<String>> out = new ArrayList<>();
        for (List<String> x : b) {
            out.add(new ArrayList<>(x));
        }
        return out;
    }

    /** Seeded random mutations (truncate, bit flip, splice, duplicated frame) of a few base logs. */
    static Map<String, byte[]> mutations(long[] seeds) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        byte[][] bases = {clean(11, 3, false), clean(12, 3, true)};
        for (long seed : seeds) {
            Random r = new Random(seed * 0x9E3779B97F4A7C15L + 17);
            byte[] base = bases[(int) (seed % bases.length)];
            int kind = r.nextInt(4);
            byte[] out;
            switch (kind) {
                case 0 -> out = Arrays.copyOf(base, 1 + r.nextInt(base.length - 1));
                case 1 -> {
                    out = base.clone();
                    int n = 1 + r.nextInt(3);
                    for (int i = 0; i < n; i++) {
                        out[r.nextInt(out.length)] ^= (byte) (1 << r.nextInt(8));
                    }
                }
                case 2 -> {
                    int a = r.nextInt(base.length), len = 1 + r.nextInt(Math.min(2000, base.length - a));
                    int at = r.nextInt(base.length);
                    out = concat(List.of(
                            Arrays.copyOf(base, at),
                            Arrays.copyOfRange(base, a, a + len),
                            Arrays.copyOfRange(base, at, base.length)));
                }
                default -> {
                    List<long[]> fr = frameBounds(base);
                    long[] f = fr.get(1 + r.nextInt(fr.size() - 1));
                    long[] g = fr.get(r.nextInt(fr.size()));
                    out = concat(List.of(
                            Arrays.copyOf(base, (int) g[1]),
                            Arrays.copyOfRange(base, (int) f[0], (int) f[1]),
                            Arrays.copyOfRange(base, (int) g[1], base.length)));
                }
            }
            m.put("mut-" + seed + "-" + new String[] {"truncate", "bitflip", "splice", "dupframe"}[kind], out);
        }
        return m;
    }

    static List<long[]> frameBounds(byte[] log) {
        try {
            java.nio.file.Path t = java.nio.file.Files.createTempFile("fb", ".zst");
            java.nio.file.Files.write(t, log);
            List<long[]> out = new ArrayList<>();
            try (var ch = java.nio.channels.FileChannel.open(t)) {
                FrameScanner sc = new FrameScanner(ch, ch.size(), 0);
                for (FrameScanner.Frame f; (f = sc.next()) != null; ) {
                    out.add(new long[] {f.start(), f.end()});
                }
            }
            java.nio.file.Files.delete(t);
            return out;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
