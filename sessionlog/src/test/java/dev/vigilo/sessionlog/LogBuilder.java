package dev.vigilo.sessionlog;

import com.github.luben.zstd.ZstdOutputStreamNoFinalizer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Test helper: realistic event streams and hand-assembled logs (real zstd frames). */
final class LogBuilder {
    static final String ID = "corpus-session";
    static final String CWD = "/home/user/project";

    private LogBuilder() {}

    static String header(String id, String cwd) {
        return "{\"type\":\"session\",\"version\":0,\"id\":\"" + id + "\",\"createdAt\":1760000000000"
                + (cwd == null ? "" : ",\"cwd\":\"" + cwd + "\"") + ",\"delegationDepth\":0}";
    }

    static String header() {
        return header(ID, CWD);
    }

    static byte[] frame(String text) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        return FrameCodec.encode(b, 0, b.length);
    }

    static byte[] frameNoChecksum(String text) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (ZstdOutputStreamNoFinalizer z = new ZstdOutputStreamNoFinalizer(out, 3)) {
                z.setChecksum(false);
                z.write(text.getBytes(StandardCharsets.UTF_8));
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A frame whose content is one raw (uncompressed) block, no checksum: descriptor 0x00, window 0x58. */
    static byte[] rawFrame(String text) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        if (b.length >= 128 * 1024) {
            throw new IllegalArgumentException("raw block too large");
        }
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        o.write(0x28);
        o.write(0xB5);
        o.write(0x2F);
        o.write(0xFD);
        o.write(0x00);
        o.write(0x58);
        int bh = (b.length << 3) | (0 << 1) | 1; // raw, last
        o.write(bh & 0xff);
        o.write((bh >>> 8) & 0xff);
        o.write((bh >>> 16) & 0xff);
        o.write(b, 0, b.length);
        return o.toByteArray();
    }

    static byte[] concat(List<byte[]> parts) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            o.write(p, 0, p.length);
        }
        return o.toByteArray();
    }

    static String lines(List<String> rows) {
        StringBuilder sb = new StringBuilder();
        for (String r : rows) {
            sb.append(r).append('\n');
        }
        return sb.toString();
    }

    /** Frames for: header + batches (each batch's rows joined by \n, ending in \n). */
    static List<byte[]> frames(String header, List<List<String>> batches) {
        List<byte[]> out = new ArrayList<>();
        out.add(frame(header + "\n"));
        for (List<String> b : batches) {
            out.add(frame(lines(b)));
        }
        return out;
    }

    static List<List<String>> batch(List<String> events, int... sizes) {
        List<List<String>> out = new ArrayList<>();
        int i = 0;
        for (int s : sizes) {
            if (i >= events.size()) {
                break;
            }
            out.add(new ArrayList<>(events.subList(i, Math.min(events.size(), i + s))));
            i += s;
        }
        if (i < events.size()) {
            out.add(new ArrayList<>(events.subList(i, events.size())));
        }
        return out;
    }

    /** A generator of valid event rows, seqs from {@code seq}. */
    static final class Events {
        final Random rnd;
        long seq;
        long time = 1760000000000L;
        int callCounter;
        final List<String> out = new ArrayList<>();

        Events(long seed, long startSeq) {
            rnd = new Random(seed);
            seq = startSeq;
        }

        private String ev(String type, String data, String extra) {
            time += 1 + rnd.nextInt(40);
            return "{\"type\":\"" + type + "\",\"seq\":" + (seq++) + ",\"time\":" + time + ",\"data\":" + data
                    + (extra == null ? "" : "," + extra) + "}";
        }

        Events add(String type, String data) {
            out.add(ev(type, data, null));
            return this;
        }

        /** An event with extra envelope members ({@code extra} is raw JSON members, e.g. {@code "surfaceOp":"append"}). */
        Events with(String type, String data, String extra) {
            out.add(ev(type, data, extra));
            return this;
        }

        Events ignorable(String type, String data) {
            out.add(ev(type, data, "\"ignorable\":true"));
            return this;
        }

        Events turnStart(int turn) {
            out.add(ev("turn/start", "{\"turn\":" + turn + "}", null));
            return this;
        }

        Events user(int turn, String text) {
            out.add(ev(
                    "user/message",
                    "{\"id\":\"msg-u-" + turn
                            + "\",\"role\":\"user\",\"source\":{\"kind\":\"user\"},\"content\":[{\"type\":\"text\",\"text\":\""
                            + text + "\"}]}",
                    "\"surfaceOp\":\"append\""));
            return this;
        }

        Events stepStart(int turn, int step) {
            out.add(ev("step/start", "{\"turn\":" + turn + ",\"step\":" + step + "}", null));
            return this;
        }

        Events stepEnd(int turn, int step) {
            out.add(ev("step/end", "{\"turn\":" + turn + ",\"step\":" + step + "}", null));
            return this;
        }

        /** assistant message with {@code calls} tool-call blocks; returns the call ids. */
        List<String> assistant(int turn, int step, int calls, String text) {
            List<String> ids = new ArrayList<>();
            StringBuilder content = new StringBuilder("[{\"type\":\"reasoning\",\"text\":\"thinking "
                    + rnd.nextInt(1000) + "\"},{\"type\":\"text\",\"text\":\"" + text + "\"}");
            for (int i = 0; i < calls; i++) {
                String id = "call_" + (++callCounter) + "_" + rnd.nextInt(1_000_000);
                ids.add(id);
                content.append(",{\"type\":\"tool-call\",\"id\":\"")
                        .append(id)
                        .append("\",\"name\":\"bash\",\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}");
            }
            content.append(']');
            out.add(ev(
                    "assistant/message",
                    "{\"turn\":" + turn + ",\"step\":" + step + ",\"message\":{\"id\":\"msg-a-" + turn + "-" + step
                            + "\",\"role\":\"assistant\",\"source\":{\"kind\":\"model\",\"provider\":\"deepseek\",\"model\":\"deepseek-v4-pro\"},\"content\":"
                            + content
                            + "},\"usage\":{\"inputTokens\":1000,\"outputTokens\":50}}",
                    "\"surfaceOp\":\"append\""));
            return ids;
        }

        long toolCall(int turn, int step, String id) {
            long s = seq;
            out.add(ev(
                    "tool/call",
                    "{\"turn\":" + turn + ",\"step\":" + step + ",\"callId\":\"" + id
                            + "\",\"name\":\"bash\",\"arguments\":\"{}\"}",
                    null));
            return s;
        }

        Events toolResult(int turn, int step, String id, long callSeq, String text) {
            out.add(ev(
                    "tool/result",
                    toolResultData(turn, step, id, text),
                    "\"surfaceOp\":\"append\",\"sourceEventSeqs\":[" + callSeq + "]"));
            return this;
        }

        static String toolResultData(int turn, int step, String id, String text) {
            return "{\"turn\":" + turn + ",\"step\":" + step + ",\"message\":{\"id\":\"msg-t-" + id
                    + "\",\"role\":\"user\",\"source\":{\"kind\":\"tool\",\"callId\":\"" + id
                    + "\"},\"content\":[{\"type\":\"tool-result\",\"toolCallId\":\"" + id
                    + "\",\"content\":[{\"type\":\"text\",\"text\":\"" + text + "\"}]}]}}";
        }

        Events turnEnd(int turn) {
            out.add(ev("turn/end", "{\"turn\":" + turn + ",\"reason\":{\"kind\":\"completed\"}}", null));
            return this;
        }

        /** A packed text-chunks row of n >= 3 members (consumes n seqs). */
        Events textChunks(int turn, int step, int n) {
            StringBuilder texts = new StringBuilder("[");
            StringBuilder dt = new StringBuilder("[");
            for (int i = 0; i < n; i++) {
                if (i > 0) {
                    texts.append(',');
                    if (i > 1) {
                        dt.append(',');
                    }
                    dt.append(1 + rnd.nextInt(9));
                }
                texts.append("\"piece ").append(i).append(' ').append("\"");
            }
            texts.append(']');
            dt.append(']');
            time += 3;
            out.add("{\"type\":\"text-chunks\",\"seq0\":" + seq + ",\"time0\":" + time + ",\"data\":{\"turn\":" + turn
                    + ",\"step\":" + step + ",\"index\":0,\"dt\":" + dt + ",\"texts\":" + texts + "}}");
            seq += n;
            time += 50;
            return this;
        }

        /** One complete turn with 1..3 steps and tool calls. */
        Events turn(int turn, boolean chunks) {
            turnStart(turn).user(turn, "please do task " + turn + " " + "x".repeat(rnd.nextInt(200)));
            int steps = 1 + rnd.nextInt(3);
            for (int step = 1; step <= steps; step++) {
                stepStart(turn, step);
                if (chunks) {
                    textChunks(turn, step, 3 + rnd.nextInt(6));
                }
                boolean last = step == steps;
                List<String> ids =
                        assistant(turn, step, last ? 0 : 1 + rnd.nextInt(2), "answer " + rnd.nextInt(100000));
                for (String id : ids) {
                    long cs = toolCall(turn, step, id);
                    toolResult(turn, step, id, cs, "output " + "y".repeat(rnd.nextInt(300)));
                }
                stepEnd(turn, step);
            }
            return turnEnd(turn);
        }

        List<String> rows() {
            return out;
        }
    }

    /** n complete turns of valid events from seq 0. */
    static List<String> turns(long seed, int n, boolean chunks) {
        Events e = new Events(seed, 0);
        for (int t = 1; t <= n; t++) {
            e.turn(t, chunks);
        }
        return e.rows();
    }
}
