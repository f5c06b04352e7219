package dev.vigilo.sessionlog;

import static dev.vigilo.sessionlog.LogBuilder.*;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The differential corpus of the uncompressed channel ({@code session.jsonl}): the uncompressed twin of every
 * zstd shape that has one, shapes only an uncompressed log can have (partial and half-written lines, garbage
 * lines, an issue followed or not by a turn/end), and seeded mutations (cuts, bit flips, splices, duplicated
 * lines).
 */
final class PlainCorpus {
    private PlainCorpus() {}

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The uncompressed log holding what a zstd log's frames decode to: complete frames, then what a torn final
     * frame yields, then (after a structural error) the remaining raw bytes as they are.
     *
     * @return null when a complete frame does not decode (checksum or block damage has no uncompressed twin)
     */
    static byte[] twin(byte[] zstd) {
        try {
            Path t = Files.createTempFile("twin", ".zst");
            try {
                Files.write(t, zstd);
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                try (FileChannel ch = FileChannel.open(t)) {
                    FrameScanner sc = new FrameScanner(ch, ch.size(), 0);
                    long pos = 0;
                    for (; ; ) {
                        FrameScanner.Frame f;
                        try {
                            f = sc.next();
                        } catch (CorruptSessionLogException e) {
                            out.write(Arrays.copyOfRange(zstd, (int) pos, zstd.length));
                            break;
                        }
                        if (f == null) {
                            if (sc.tornStart() >= 0) {
                                out.write(FrameCodec.decodePrefix(
                                        Arrays.copyOfRange(zstd, (int) sc.tornStart(), zstd.length), 1 << 30));
                            }
                            break;
                        }
                        try {
                            FrameCodec.decodeComplete(
                                    Arrays.copyOfRange(zstd, (int) f.start(), (int) f.end()),
                                    out::write,
                                    new byte[1 << 16]);
                        } catch (IOException e) {
                            return null;
                        }
                        pos = f.end();
                    }
                }
                return out.toByteArray();
            } finally {
                Files.deleteIfExists(t);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The twins of a zstd corpus, named like it. */
    static Map<String, byte[]> twins(Map<String, byte[]> zstd) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        zstd.forEach((name, b) -> {
            byte[] t = twin(b);
            if (t != null) {
                m.put(name, t);
            }
        });
        return m;
    }

    static byte[] clean(long seed, int turns, boolean chunks) {
        return bytes(header() + "\n" + lines(turns(seed, turns, chunks)));
    }

    /** Shapes only an uncompressed log has. */
    static Map<String, byte[]> shapes() {
        Map<String, byte[]> m = new LinkedHashMap<>();
        List<String> ev = turns(1, 4, false);
        String h = header() + "\n";
        String all = h + lines(ev);
        m.put("header-without-newline", bytes(header()));
        m.put("header-crlf", bytes(header() + "\r\n" + lines(ev)));
        m.put("header-leading-space", bytes(" " + all));
        m.put("only-newline", bytes("\n"));
        m.put("blank-first-line", bytes("\n" + all));
        m.put("header-then-partial-line", bytes(h + ev.get(0).substring(0, 20)));
        // a partial (torn) last line, and lines half-written at every kind of point
        String last = ev.get(ev.size() - 1);
        m.put(
                "partial-final-line",
                bytes(h + lines(ev.subList(0, ev.size() - 1)) + last.substring(0, last.length() / 2)));
        m.put("final-line-without-newline", bytes(h + lines(ev.subList(0, ev.size() - 1)) + last));
        for (int cut : new int[] {1, 2, 17, 101, 555, 1003}) {
            int at = Math.min(all.length() - 1, h.length() + cut * 3);
            m.put("half-written-at-" + at, Arrays.copyOf(bytes(all), at));
        }
        m.put("trailing-newline-twice", bytes(all + "\n"));
        m.put("trailing-garbage-line", bytes(all + "garbage!\n"));
        m.put("trailing-garbage-no-newline", bytes(all + "garbage!"));
        m.put("trailing-spaces-line", bytes(all + "   \n"));
        m.put("trailing-nul-bytes", concat(List.of(bytes(all), new byte[16])));
        // an issue in the middle: accepted with the prefix when no turn/end follows, rejected when one does
        {
            List<String> x = new ArrayList<>(ev);
            x.add(7, "{not json");
            m.put("garbage-line-then-turn-end", bytes(h + lines(x)));
            List<String> y = new ArrayList<>(ev.subList(0, 12));
            y.add(7, "{not json");
            y.removeIf(s -> s.contains("\"turn/end\""));
            m.put("garbage-line-no-turn-end-after", bytes(h + lines(y)));
            List<String> z = new ArrayList<>(ev);
            z.remove(5);
            m.put("seq-gap-then-turn-end", bytes(h + lines(z)));
            List<String> w = new ArrayList<>(ev.subList(0, 9));
            w.remove(5);
            w.removeIf(s -> s.contains("\"turn/end\""));
            m.put("seq-gap-no-turn-end-after", bytes(h + lines(w)));
            List<String> v = new ArrayList<>(ev);
            v.add(3, "");
            m.put("blank-line-middle", bytes(h + lines(v)));
            List<String> u = new ArrayList<>(ev.subList(0, 6));
            u.add("");
            m.put("blank-line-at-end", bytes(h + lines(u)));
        }
        // CRLF everywhere, a lone CR line, a BOM on an event line, NUL inside a line
        {
            StringBuilder sb = new StringBuilder(header() + "\r\n");
            for (String s : ev) {
                sb.append(s).append("\r\n");
            }
            m.put("crlf-everywhere", bytes(sb.toString()));
            List<String> x = new ArrayList<>(ev);
            x.set(4, x.get(4) + "\r\r");
            m.put("double-cr", bytes(h + lines(x)));
            List<String> y = new ArrayList<>(ev);
            y.set(2, "\uFEFF" + y.get(2));
            m.put("bom-on-event-line", bytes(h + lines(y)));
            byte[] z = bytes(h + lines(ev));
            int at = h.length() + ev.get(0).length() / 2;
            z[at] = 0;
            m.put("nul-inside-line", z);
        }
        // duplicate keys, escapes, unicode, numbers, deep nesting in a line
        {
            int n = ev.size();
            List<String> x = new ArrayList<>(ev);
            x.add("{\"type\":\"todo/write\",\"seq\":999,\"time\":1,\"data\":{},\"seq\":" + n + "}");
            m.put("duplicate-seq-last-wins", bytes(h + lines(x)));
            List<String> y = new ArrayList<>(ev);
            y.add("{\"type\":\"todo/wri\\u0074e\",\"seq\":" + n + ",\"time\":1,\"data\":{\"t\":\"\\u00e9\\n\"}}");
            m.put("escaped-type", bytes(h + lines(y)));
            List<String> z = new ArrayList<>(ev);
            z.add("{\"type\":\"todo/write\",\"seq\":" + n
                    + ",\"time\":1,\"data\":{\"t\":\"h\u00e9llo \u4e16\u754c \ud83d\ude00\"}}");
            m.put("unicode-text", bytes(h + lines(z)));
            List<String> w = new ArrayList<>(ev);
            w.add("{\"type\":\"todo/write\",\"seq\":" + n + ".0,\"time\":-0,\"data\":[1e400,-0.0,1E-7]}");
            m.put("number-forms", bytes(h + lines(w)));
            List<String> d = new ArrayList<>(ev);
            d.add("{\"type\":\"todo/write\",\"seq\":" + n + ",\"time\":1,\"data\":" + "[".repeat(300) + "]".repeat(300)
                    + "}");
            m.put("nesting-300", bytes(h + lines(d)));
            List<String> k = new ArrayList<>(ev);
            k.add("{\"type\":\"todo/write\",\"seq\":" + n + ",\"time\":1,\"data\":{},\"seq\":" + n + ",\"x\":1}");
            m.put("duplicate-and-extra-key", bytes(h + lines(k)));
            List<String> s = new ArrayList<>(ev);
            s.set(1, s.get(1).replace("\"role\":\"user\"", "\"role\":\"user\",\"role\":\"user\""));
            m.put("duplicate-role", bytes(h + lines(s)));
            List<String> q = new ArrayList<>(ev);
            q.set(1, s.get(1).replace("\"role\":\"user\"", "\"role\":\"us\\u0065r\""));
            m.put("escaped-role", bytes(h + lines(q)));
        }
        // the spec's shapes without protocol metadata
        {
            List<String> a = turns(3, 1, false);
            List<String> b = new ArrayList<>(a.subList(0, Math.min(10, a.size())));
            for (int i = 4; i <= 8 && i < a.size(); i++) {
                b.add(a.get(i));
            }
            m.put("two-writer-interleave", bytes(h + lines(b)));
            LogBuilder.Events e = new LogBuilder.Events(9, ev.size());
            e.turnStart(5).user(5, "hello").stepStart(5, 1);
            List<String> ids = e.assistant(5, 1, 2, "calling");
            e.toolCall(5, 1, ids.get(0));
            List<String> open = new ArrayList<>(ev);
            open.addAll(e.rows());
            String openText = h + lines(open);
            m.put("open-turn-closers", bytes(openText));
            m.put("open-turn-torn", Arrays.copyOf(bytes(openText), openText.length() - 3));
        }
        // a header-only log in its forms
        m.put("header-only-crlf", bytes(header() + "\r\n"));
        m.put("header-only-then-spaces", bytes(h + "  "));
        return m;
    }

    /** Seeded mutations of two uncompressed base logs. */
    static Map<String, byte[]> mutations(long[] seeds) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        byte[][] bases = {clean(11, 3, false), clean(12, 3, true)};
        for (long seed : seeds) {
            Random r = new Random(seed * 0x9E3779B97F4A7C15L + 29);
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
                    List<int[]> ls = lineBounds(base);
                    int[] f = ls.get(1 + r.nextInt(ls.size() - 1));
                    int[] g = ls.get(r.nextInt(ls.size()));
                    out = concat(List.of(
                            Arrays.copyOf(base, g[1]),
                            Arrays.copyOfRange(base, f[0], f[1]),
                            Arrays.copyOfRange(base, g[1], base.length)));
                }
            }
            m.put("plain-mut-" + seed + "-" + new String[] {"truncate", "bitflip", "splice", "dupline"}[kind], out);
        }
        return m;
    }

    /** [start, end) of each line, newline included. */
    static List<int[]> lineBounds(byte[] b) {
        List<int[]> out = new ArrayList<>();
        int s = 0;
        for (int i = 0; i < b.length; i++) {
            if (b[i] == '\n') {
                out.add(new int[] {s, i + 1});
                s = i + 1;
            }
        }
        return out;
    }
}
