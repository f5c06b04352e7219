package dev.vigilo.web;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.sessionlog.VerifyReport;
import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The transcript viewer: a session log's committed events as turns, steps, user and assistant messages (reasoning
 * collapsed), tool calls with their arguments and results, with timings; the log's verdict, commit high watermark,
 * fenced and truncated rows and any torn tail shown above. Logs are opened by path, confined by {@link SessionFiles},
 * through a {@link TranscriptSource}.
 */
final class SessionPages {
    static final int EVENTS_PER_PAGE = 200;
    static final int SHOWN_CHARS = 32 * 1024;

    private final SessionFiles files;
    private final Views views;

    SessionPages(SessionFiles files, Views views) {
        this.files = files;
        this.views = views;
    }

    void listPage(Context ctx) {
        Map<String, Object> m = views.page("Session logs", "sessions");
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Path f : files.files()) {
            rows.add(Map.of("path", f.toString(), "href", href(f.toString(), 0)));
        }
        m.put("files", rows);
        m.put("roots", files.roots().stream().map(Path::toString).toList());
        views.render(ctx, "sessions", m);
    }

    private static String href(String path, long from) {
        return "/sessions/view?path=" + URLEncoder.encode(path, StandardCharsets.UTF_8)
                + (from > 0 ? "&from=" + from : "");
    }

    private Transcript.Page read(Context ctx, Path[] file) {
        String path = Params.query(ctx, "path")
                .orElseThrow(() -> new InvalidInputException("give the session log as ?path=/absolute/path"));
        Path p;
        try {
            p = files.resolve(path);
        } catch (SessionFiles.Forbidden e) {
            throw new AccessGuard.Refused(HttpStatus.FORBIDDEN, e.getMessage());
        }
        file[0] = p;
        long from = Params.number(ctx, "from", 0, Long.MAX_VALUE / 2, 0);
        int limit = (int) Params.number(ctx, "limit", 1, 1000, EVENTS_PER_PAGE);
        try (TranscriptSource.Opened opened = TranscriptSource.file(p).open()) {
            return Transcript.read(opened.file(), from, limit);
        }
    }

    void viewApi(Context ctx) {
        Path[] file = new Path[1];
        Transcript.Page page = read(ctx, file);
        ObjectNode o = Dashboard.JSON.createObjectNode().put("path", file[0].toString());
        o.set("verify", parse(page.report().toJson()));
        putJson(o, page);
        Dashboard.json(ctx, o);
    }

    /** A page of events as the API gives it: {@code from}, {@code events}, {@code next_from}. */
    static void putJson(ObjectNode o, Transcript.Page page) {
        o.put("from", page.from());
        ArrayNode a = o.putArray("events");
        for (Transcript.Event e : page.events()) {
            if (e.json() != null) {
                a.add(e.json());
            } else {
                a.addObject().put("seq", e.seq()).put("oversized_bytes", e.bytes());
            }
        }
        if (page.nextFrom().isPresent()) {
            o.put("next_from", page.nextFrom().getAsLong());
        } else {
            o.putNull("next_from");
        }
    }

    void viewPage(Context ctx) {
        Path[] file = new Path[1];
        Transcript.Page page = read(ctx, file);
        Map<String, Object> m = views.page("Transcript " + file[0].getFileName(), "sessions");
        m.put("path", file[0].toString());
        put(m, page);
        page.nextFrom().ifPresent(n -> m.put("next", href(file[0].toString(), n)));
        if (page.from() > 0) {
            m.put("first", href(file[0].toString(), 0));
        }
        views.render(ctx, "session", m);
    }

    /**
     * Puts what the transcript partials show ({@code transcript-verify}: the log's verdict and accounting;
     * {@code transcript-events}: the page's events) into a page model.
     */
    static void put(Map<String, Object> m, Transcript.Page page) {
        VerifyReport r = page.report();
        m.put("verdict", r.verdict());
        m.put("accepted", r.accepted());
        m.put("channel", r.channel().jsonName());
        m.put("events_total", r.events());
        m.put("stored", r.stored());
        m.put("closers", r.closers());
        m.put("hw_seq", r.hwSeq() == null ? "none" : r.hwSeq().toString());
        m.put("hw_offset", r.hwOffset() == null ? "none" : r.hwOffset().toString());
        m.put("frames", r.frames());
        m.put("manifest", r.manifestState());
        m.put("fenced", r.fenced());
        m.put("truncated", r.truncated());
        m.put("has_fenced", r.fenced() > 0);
        m.put("has_truncated", r.truncated() > 0);
        m.put("torn", r.tornOffset() == null ? null : r.tornOffset().toString());
        m.put("error", r.error());
        m.put("error_offset", r.errorOffset() == null ? null : r.errorOffset().toString());
        m.put("events", rows(page.events()));
        m.put("from", page.from());
    }

    /** The events as the page shows them: consecutive streaming chunks folded into one collapsed row. */
    static List<Map<String, Object>> rows(List<Transcript.Event> events) {
        List<Map<String, Object>> out = new ArrayList<>();
        long previous = -1;
        Map<String, Object> chunks = null;
        // Tool calls already drawn inside their assistant message: the tool/call events that repeat them are skipped.
        java.util.Set<String> drawnCalls = new java.util.HashSet<>();
        for (Transcript.Event e : events) {
            if (e.json() == null) {
                Map<String, Object> r = base(e.seq(), "oversized", "event");
                r.put("summary", "event of " + e.bytes() + " bytes (shown cut)");
                r.put("body", Views.cut(e.cut(), 2_000));
                out.add(r);
                chunks = null;
                continue;
            }
            JsonNode j = e.json();
            String type = j.path("type").asText("?");
            long time = j.path("time").asLong(-1);
            String delta = previous >= 0 && time >= previous ? "+" + Views.millis(time - previous) : "";
            if (time >= 0) {
                previous = time;
            }
            if (type.equals("assistant/chunk")) {
                if (chunks == null) {
                    chunks = base(j.path("seq").asLong(), "chunk", type);
                    chunks.put("count", 0);
                    chunks.put("body", "");
                    chunks.put("time", time(time));
                    chunks.put("delta", delta);
                    out.add(chunks);
                }
                chunks.put("count", (int) chunks.get("count") + 1);
                chunks.put("summary", chunks.get("count") + " streamed chunks");
                String piece = j.path("data")
                        .path("text")
                        .asText(j.path("data").path("delta").asText(""));
                String sofar = (String) chunks.get("body");
                if (sofar.length() < SHOWN_CHARS) {
                    chunks.put("body", sofar + piece);
                }
                chunks.put("collapsed", true);
                continue;
            }
            chunks = null;
            if (type.equals("tool/call")
                    && drawnCalls.contains(j.path("data").path("callId").asText(""))) {
                continue; // drawn once: as a block of the assistant message that made it, just above
            }
            Map<String, Object> r = base(j.path("seq").asLong(), kind(type), type);
            r.put("time", time(time));
            r.put("delta", delta);
            JsonNode data = j.path("data");
            switch (type) {
                case "turn/start" ->
                    r.put("summary", "Turn " + data.path("turn").asText(""));
                case "turn/end" ->
                    r.put(
                            "summary",
                            "End of turn " + data.path("turn").asText("") + " ("
                                    + data.path("reason")
                                            .path("kind")
                                            .asText(data.path("kind").asText("")) + ")");
                case "step/start" ->
                    r.put("summary", "Step " + data.path("step").asText(""));
                case "step/end" ->
                    r.put("summary", "End of step " + data.path("step").asText(""));
                case "user/message" -> {
                    r.put("summary", "User");
                    r.put("blocks", blocks(data.path("content")));
                }
                case "assistant/message" -> {
                    JsonNode msg = data.path("message");
                    JsonNode usage = data.path("usage");
                    String model = msg.path("source").path("model").asText("");
                    r.put(
                            "summary",
                            "Assistant" + (model.isEmpty() ? "" : " (" + model + ")")
                                    + (usage.isObject()
                                            ? ", " + usage.path("inputTokens").asText("?") + " tokens in, "
                                                    + usage.path("outputTokens").asText("?") + " out"
                                            : ""));
                    r.put("blocks", blocks(msg.path("content")));
                    for (JsonNode b : msg.path("content")) {
                        if (b.path("type").asText("").equals("tool-call") && b.hasNonNull("id")) {
                            drawnCalls.add(b.path("id").asText());
                        }
                    }
                }
                case "tool/call" -> {
                    r.put(
                            "summary",
                            "Tool call " + data.path("name").asText("") + " ["
                                    + data.path("callId").asText("") + "]");
                    r.put("blocks", List.of(block("args", arguments(data.path("arguments")))));
                }
                case "tool/result" -> {
                    JsonNode msg = data.path("message");
                    r.put(
                            "summary",
                            "Tool result [" + msg.path("source").path("callId").asText("") + "]");
                    r.put("blocks", blocks(msg.path("content")));
                }
                default -> {
                    r.put("summary", type);
                    r.put("body", Views.cut(RunPages.pretty(data), SHOWN_CHARS));
                    r.put("collapsed", true);
                }
            }
            out.add(r);
        }
        return out;
    }

    private static Map<String, Object> base(long seq, String kind, String type) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("seq", seq);
        r.put("kind", kind);
        r.put("type", type);
        return r;
    }

    private static String kind(String type) {
        return switch (type) {
            case "turn/start", "turn/end" -> "turn";
            case "step/start", "step/end" -> "step";
            case "user/message" -> "user";
            case "assistant/message" -> "assistant";
            case "tool/call" -> "tool-call";
            case "tool/result" -> "tool-result";
            default -> "meta";
        };
    }

    private static String time(long epochMillis) {
        return epochMillis < 0 ? "" : Views.time(Instant.ofEpochMilli(epochMillis));
    }

    /** Content blocks: text, reasoning (collapsed), tool calls with arguments, tool results; others as JSON. */
    private static List<Map<String, Object>> blocks(JsonNode content) {
        List<Map<String, Object>> out = new ArrayList<>();
        if (content.isTextual()) {
            out.add(block("text", content.asText()));
            return out;
        }
        for (JsonNode b : content) {
            String t = b.path("type").asText("");
            switch (t) {
                case "text" -> out.add(block("text", b.path("text").asText("")));
                case "reasoning" -> out.add(block("reasoning", b.path("text").asText("")));
                case "tool-call" -> {
                    Map<String, Object> c = block("args", arguments(b.path("arguments")));
                    c.put(
                            "call",
                            b.path("name").asText("") + " [" + b.path("id").asText("") + "]");
                    out.add(c);
                }
                case "tool-result" -> {
                    Map<String, Object> c = block("result", "");
                    StringBuilder text = new StringBuilder();
                    for (JsonNode x : b.path("content")) {
                        text.append(
                                x.path("type").asText("").equals("text")
                                        ? x.path("text").asText("")
                                        : x.toString());
                    }
                    c.put("body", Views.cut(text.toString(), SHOWN_CHARS));
                    c.put("is_error", b.path("isError").asBoolean(false));
                    out.add(c);
                }
                default -> out.add(block("json", RunPages.pretty(b)));
            }
        }
        return out;
    }

    private static Map<String, Object> block(String kind, String text) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("kind_" + kind, true);
        m.put("body", Views.cut(text, SHOWN_CHARS));
        return m;
    }

    /** Tool arguments: a JSON string is shown pretty-printed when it parses. */
    private static String arguments(JsonNode args) {
        if (args.isTextual()) {
            try {
                return RunPages.pretty(StoredJson.read(args.asText()));
            } catch (java.io.IOException e) {
                return args.asText();
            }
        }
        return RunPages.pretty(args);
    }

    private static JsonNode parse(String json) {
        return DatagenPages.parse(json);
    }
}
