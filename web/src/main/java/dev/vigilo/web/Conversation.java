package dev.vigilo.web;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * A page of transcript events (docs/formats/transcript.md) as a conversation, for the two-column rows of
 * {@code transcript-conversation.mustache}: who spoke (role, time, gap to the previous event, model, step, tokens) on
 * the left, what was said on the right. The system prompt, the user's message, each assistant message with its
 * reasoning (collapsed) and its tool calls, each call drawn once with its result under it (the {@code tool/call} and
 * {@code tool/result} events that repeat or answer it are not drawn again), the final answer ({@code vigilo/output}),
 * and the events that say something went wrong (a failed attempt, an HTTP answer that was not a completion, a limit).
 * Structural events (turn and step boundaries, request context, the case header) draw no row: the storage section
 * lists every event. Long texts show their first lines with the rest under "show all". Runs of at least
 * {@value #MIN_RUN} consecutive steps that only call the same tool are folded after their first step.
 *
 * <p>Every row and block map holds every key its template reads (false or empty when unused): Mustache looks a
 * missing key up in the enclosing context, which would show another row's value.
 */
final class Conversation {
    /** Characters of one text kept for the page; longer ones are cut, saying how much was left out. */
    static final int SHOWN_CHARS = 32 * 1024;
    /** A text is shown whole up to this many characters and lines; beyond, its head and "show all". */
    static final int HEAD_CHARS = 1_200;

    static final int HEAD_LINES = 16;
    /** Consecutive steps calling the same tool that are folded. */
    static final int MIN_RUN = 3;

    private static final Set<String> SILENT =
            Set.of("turn/start", "step/start", "step/end", "request/context", "vigilo/case");
    /** Events shown in the scoring section, not in the conversation. */
    static final Set<String> SCORING =
            Set.of("vigilo/evaluator", "vigilo/gates", "vigilo/limit", JudgeCalls.REQUEST, JudgeCalls.RESPONSE);

    private static final DateTimeFormatter CLOCK =
            DateTimeFormatter.ofPattern("HH:mm:ss.SSS", Locale.ROOT).withZone(ZoneOffset.UTC);

    private Conversation() {}

    /** The rows of a page of events, none marked. */
    static List<Map<String, Object>> rows(List<Transcript.Event> events) {
        return rows(events, OptionalLong.empty());
    }

    /**
     * The rows of a page of events; the row (or tool result) of the first event at or after {@code target}, when given,
     * is marked as the target (highlighted, and scrolled to by the page's script) and a fold holding it is open.
     */
    static List<Map<String, Object>> rows(List<Transcript.Event> events, OptionalLong target) {
        Map<String, Transcript.Event> results = new HashMap<>();
        for (Transcript.Event e : events) {
            if (e.json() != null && type(e).equals("tool/result")) {
                String id = e.json().at("/data/message/source/callId").asText("");
                if (!id.isEmpty()) {
                    results.putIfAbsent(id, e);
                }
            }
        }
        Builder b = new Builder(results, target);
        for (Transcript.Event e : events) {
            b.add(e);
        }
        return foldRuns(systemFirst(b.rows));
    }

    private static String type(Transcript.Event e) {
        return e.json().path("type").asText("?");
    }

    /** Walks a page's events in order. */
    private static final class Builder {
        private final Map<String, Transcript.Event> results;
        private final OptionalLong target;
        private final List<Map<String, Object>> rows = new ArrayList<>();
        /** Calls drawn in their assistant message: the {@code tool/call} events repeating them draw nothing. */
        private final Set<String> drawnCalls = new HashSet<>();
        /** Results drawn under their call: their own events draw nothing. */
        private final Set<Long> drawnResults = new HashSet<>();

        private boolean targetMarked;
        private long previous = -1;
        private Map<String, Object> chunks;
        private StringBuilder chunkText;

        Builder(Map<String, Transcript.Event> results, OptionalLong target) {
            this.results = results;
            this.target = target;
        }

        /** Whether the event at {@code seq} is the target (the first event at or after it that draws something). */
        private boolean isTarget(long seq) {
            if (targetMarked || target.isEmpty() || seq < target.getAsLong()) {
                return false;
            }
            targetMarked = true;
            return true;
        }

        void add(Transcript.Event e) {
            if (e.json() == null) {
                chunks = null;
                Map<String, Object> r = row(e.seq(), "Event", "other", -1, "");
                r.put(
                        "blocks",
                        List.of(notice("event of " + Views.bytes(e.bytes()) + ", shown cut", true), text(e.cut())));
                rows.add(r);
                return;
            }
            JsonNode j = e.json();
            String type = type(e);
            JsonNode data = j.path("data");
            long time = j.path("time").asLong(-1);
            String delta = previous >= 0 && time >= previous ? "+" + Views.millis(time - previous) : "";
            if (time >= 0) {
                previous = time;
            }
            if (type.equals("assistant/chunk")) {
                if (chunks == null) {
                    chunks = row(e.seq(), "Assistant", "assistant", time, delta);
                    chunkText = new StringBuilder();
                    rows.add(chunks);
                }
                if (chunkText.length() < SHOWN_CHARS) {
                    chunkText.append(data.path("text").asText(data.path("delta").asText("")));
                }
                chunks.put("meta", List.of("streamed"));
                chunks.put("blocks", List.of(text(chunkText.toString())));
                return;
            }
            chunks = null;
            if (SILENT.contains(type) || SCORING.contains(type) || drawnResults.contains(e.seq())) {
                return;
            }
            if (type.equals("tool/call")
                    && drawnCalls.contains(data.path("callId").asText(""))) {
                return;
            }
            Map<String, Object> r = switch (type) {
                case "request/header" -> system(e, data, time, delta);
                case "vigilo/messages" -> messages(e, data, time, delta);
                case "vigilo/tools" -> tools(e, data, time, delta);
                case "user/message" -> {
                    Map<String, Object> u = row(e.seq(), "User", "user", time, delta);
                    u.put("blocks", blocks(data.path("content")));
                    yield u;
                }
                case "assistant/message" -> assistant(e, data, time, delta);
                case "tool/call" -> {
                    Map<String, Object> c = row(e.seq(), "Tool call", "tool", time, delta);
                    c.put(
                            "blocks",
                            List.of(call(
                                    data.path("name").asText(""),
                                    data.path("callId").asText(""),
                                    data.path("arguments"),
                                    time)));
                    yield c;
                }
                case "tool/result" -> {
                    JsonNode msg = data.path("message");
                    Map<String, Object> t = row(e.seq(), "Tool result", "tool", time, delta);
                    t.put(
                            "meta",
                            List.of("call " + msg.path("source").path("callId").asText("")));
                    t.put("blocks", blocks(msg.path("content")));
                    yield t;
                }
                case "turn/end" -> turnEnd(e, data, time, delta);
                case "vigilo/attempt" -> attempt(e, data, time, delta);
                case "vigilo/output" -> {
                    Map<String, Object> o = row(e.seq(), "Final answer", "answer", time, delta);
                    o.put("meta", List.of(Views.bytes(data.path("length").asLong())));
                    o.put(
                            "blocks",
                            List.of(text(data.path("output")
                                    .asText(data.path("output").toString()))));
                    o.put("answer", true);
                    yield o;
                }
                case "vigilo/http-response" -> {
                    int status = data.path("status").asInt();
                    Map<String, Object> h = row(e.seq(), "HTTP answer", "notice", time, delta);
                    h.put("meta", List.of("attempt " + data.path("attempt").asText("")));
                    h.put(
                            "blocks",
                            List.of(
                                    notice("HTTP " + status + ": not a chat completion", status >= 400 || status == 0),
                                    json("body", data.path("body"))));
                    yield h;
                }
                case "vigilo/cached" -> {
                    Map<String, Object> c = row(e.seq(), "Cache", "notice", time, delta);
                    c.put("blocks", List.of(notice("answered from the answer cache: nothing was sent", false)));
                    yield c;
                }
                case "vigilo/agent-event" -> {
                    Map<String, Object> a = row(e.seq(), "Agent event", "other", time, delta);
                    a.put("blocks", List.of(json(data.path("event").path("type").asText("event"), data.path("event"))));
                    yield a;
                }
                default -> {
                    Map<String, Object> o = row(e.seq(), "Event", "other", time, delta);
                    o.put("blocks", List.of(json(type, data)));
                    yield o;
                }
            };
            if (r != null) {
                rows.add(r);
            }
        }

        private Map<String, Object> system(Transcript.Event e, JsonNode data, long time, String delta) {
            JsonNode config = data.path("header").path("config");
            JsonNode system = data.path("header").path("system");
            if (system.isMissingNode() || system.isNull()) {
                return null; // the model is named on each assistant message
            }
            Map<String, Object> r = row(e.seq(), "System", "system", time, delta);
            List<String> meta = new ArrayList<>();
            if (config.hasNonNull("model")) {
                meta.add(config.path("model").asText());
            }
            if (config.hasNonNull("temperature")) {
                meta.add("temperature " + config.path("temperature").asText());
            }
            if (config.hasNonNull("maxTokens")) {
                meta.add("max " + config.path("maxTokens").asText() + " tokens");
            }
            r.put("meta", meta);
            r.put("blocks", List.of(text(system.isTextual() ? system.asText() : RunPages.pretty(system))));
            return r;
        }

        private Map<String, Object> messages(Transcript.Event e, JsonNode data, long time, String delta) {
            Map<String, Object> r = row(e.seq(), "Prompt", "system", time, delta);
            StringBuilder b = new StringBuilder();
            for (JsonNode m : data.path("messages")) {
                if (!b.isEmpty()) {
                    b.append("\n\n");
                }
                JsonNode c = m.path("content");
                b.append(m.path("role").asText("?")).append(": ").append(c.isTextual() ? c.asText() : c.toString());
            }
            int n = data.path("messages").size();
            r.put("meta", List.of("as sent"));
            Map<String, Object> block = block();
            block.put("kind_json", true);
            block.put("summary", n + (n == 1 ? " message" : " messages") + " sent to the model");
            block.put("json", fold(b.toString()));
            r.put("blocks", List.of(block));
            return r;
        }

        private Map<String, Object> tools(Transcript.Event e, JsonNode data, long time, String delta) {
            Map<String, Object> r = row(e.seq(), "Tools", "system", time, delta);
            List<String> names = new ArrayList<>();
            for (JsonNode t : data.path("tools")) {
                names.add(t.path("function").path("name").asText("?"));
            }
            r.put("meta", List.of("offered"));
            r.put(
                    "blocks",
                    List.of(notice(String.join(", ", names), false), json("their definitions", data.path("tools"))));
            return r;
        }

        private Map<String, Object> assistant(Transcript.Event e, JsonNode data, long time, String delta) {
            JsonNode msg = data.path("message");
            Map<String, Object> r = row(e.seq(), "Assistant", "assistant", time, delta);
            List<String> meta = new ArrayList<>();
            String model = msg.path("source").path("model").asText("");
            if (!model.isEmpty()) {
                meta.add(model);
            }
            if (data.has("step")) {
                meta.add("step " + data.path("step").asText());
            }
            JsonNode usage = data.path("usage");
            if (usage.isObject()) {
                StringBuilder u = new StringBuilder();
                u.append(Views.count(usage.path("inputTokens").asLong()))
                        .append(" in · ")
                        .append(Views.count(usage.path("outputTokens").asLong()))
                        .append(" out");
                if (usage.path("cacheReadTokens").asLong() > 0) {
                    u.append(" · ")
                            .append(Views.count(usage.path("cacheReadTokens").asLong()))
                            .append(" cached");
                }
                meta.add(u + " tokens");
            }
            r.put("meta", meta);
            List<Map<String, Object>> blocks = new ArrayList<>();
            List<String> calls = new ArrayList<>();
            for (JsonNode b : msg.path("content")) {
                if (b.path("type").asText("").equals("tool-call")) {
                    String id = b.path("id").asText("");
                    drawnCalls.add(id);
                    calls.add(b.path("name").asText(""));
                    blocks.add(call(b.path("name").asText(""), id, b.path("arguments"), time));
                } else {
                    blocks.addAll(blocks(List.of(b)));
                }
            }
            r.put("blocks", blocks);
            // A step that only called tools (reasoning aside): the unit a run of repeated steps is made of.
            boolean onlyCalls = !calls.isEmpty()
                    && blocks.stream()
                            .allMatch(x -> Boolean.TRUE.equals(x.get("kind_call"))
                                    || Boolean.TRUE.equals(x.get("kind_reasoning")));
            r.put("tool_step", onlyCalls ? String.join(", ", calls) : "");
            return r;
        }

        /** A tool call with its result beneath, when the page has it. */
        private Map<String, Object> call(String name, String id, JsonNode arguments, long callTime) {
            Map<String, Object> c = block();
            c.put("kind_call", true);
            c.put("call_name", name);
            c.put("call_id", id);
            c.put("args", fold(arguments(arguments)));
            Transcript.Event result = id.isEmpty() ? null : results.get(id);
            if (result != null) {
                drawnResults.add(result.seq());
                JsonNode data = result.json().path("data");
                StringBuilder text = new StringBuilder();
                boolean error = data.has("error");
                for (JsonNode block : data.path("message").path("content")) {
                    error |= block.path("isError").asBoolean(false);
                    for (JsonNode x : block.path("content")) {
                        text.append(
                                x.path("type").asText("").equals("text")
                                        ? x.path("text").asText("")
                                        : x.toString());
                    }
                }
                long t = result.json().path("time").asLong(-1);
                c.put("has_result", true);
                c.put("result", fold(text.toString()));
                c.put("result_error", error);
                c.put("result_seq", result.seq());
                c.put("result_target", isTarget(result.seq()));
                c.put("result_delta", callTime >= 0 && t >= callTime ? "after " + Views.millis(t - callTime) : "");
            }
            return c;
        }

        private Map<String, Object> turnEnd(Transcript.Event e, JsonNode data, long time, String delta) {
            JsonNode reason = data.path("reason");
            String kind = reason.path("kind").asText(data.path("kind").asText(""));
            if (!kind.equals("error")) {
                return null;
            }
            Map<String, Object> r = row(e.seq(), "End of turn", "notice", time, delta);
            JsonNode error = reason.path("error");
            r.put(
                    "blocks",
                    List.of(notice(
                            "End of turn " + data.path("turn").asText("") + " (error): "
                                    + error.path("code").asText("") + " "
                                    + error.path("message").asText(""),
                            true)));
            return r;
        }

        private Map<String, Object> attempt(Transcript.Event e, JsonNode data, long time, String delta) {
            JsonNode error = data.path("error");
            Map<String, Object> r =
                    row(e.seq(), "Attempt " + data.path("attempt").asText(""), "notice", time, delta);
            String took = Views.millis(data.path("duration_ms").asLong());
            r.put(
                    "blocks",
                    List.of(
                            error.isObject()
                                    ? notice(
                                            "failed after " + took + ": "
                                                    + error.path("type").asText("") + ": "
                                                    + error.path("message").asText(""),
                                            true)
                                    : notice("ended after " + took, false)));
            return r;
        }

        private Map<String, Object> row(long seq, String role, String cls, long time, String delta) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("fold", false);
            r.put("seq", seq);
            r.put("role", role);
            r.put("cls", cls);
            // The clock to the millisecond beside each row (gaps are what a reader compares); the date on hover.
            r.put("time", time < 0 ? "" : CLOCK.format(Instant.ofEpochMilli(time)));
            r.put("date", time < 0 ? "" : Views.time(Instant.ofEpochMilli(time)));
            r.put("delta", delta);
            r.put("meta", List.of());
            r.put("blocks", List.of());
            r.put("answer", false);
            r.put("tool_step", "");
            r.put("target", isTarget(seq));
            return r;
        }
    }

    /** Content blocks: text, reasoning (collapsed), tool calls and results, others as JSON. */
    private static List<Map<String, Object>> blocks(Iterable<JsonNode> content) {
        List<Map<String, Object>> out = new ArrayList<>();
        if (content instanceof JsonNode n && n.isTextual()) {
            out.add(text(n.asText()));
            return out;
        }
        for (JsonNode b : content) {
            switch (b.path("type").asText("")) {
                case "text" -> out.add(text(b.path("text").asText("")));
                case "reasoning" -> {
                    Map<String, Object> r = block();
                    r.put("kind_reasoning", true);
                    r.put("text", fold(b.path("text").asText("")));
                    out.add(r);
                }
                case "tool-result" -> {
                    StringBuilder text = new StringBuilder();
                    for (JsonNode x : b.path("content")) {
                        text.append(
                                x.path("type").asText("").equals("text")
                                        ? x.path("text").asText("")
                                        : x.toString());
                    }
                    Map<String, Object> r = text(text.toString());
                    r.put("result_error", b.path("isError").asBoolean(false));
                    out.add(r);
                }
                default -> out.add(json(b.path("type").asText("block"), b));
            }
        }
        return out;
    }

    private static Map<String, Object> block() {
        Map<String, Object> b = new LinkedHashMap<>();
        for (String k : List.of("kind_text", "kind_reasoning", "kind_call", "kind_json", "kind_notice")) {
            b.put(k, false);
        }
        b.put("text", false);
        b.put("call_name", "");
        b.put("call_id", "");
        b.put("args", false);
        b.put("has_result", false);
        b.put("result", false);
        b.put("result_error", false);
        b.put("result_seq", "");
        b.put("result_target", false);
        b.put("result_delta", "");
        b.put("summary", "");
        b.put("json", false);
        b.put("notice_text", "");
        b.put("notice_bad", false);
        return b;
    }

    private static Map<String, Object> text(String s) {
        Map<String, Object> b = block();
        b.put("kind_text", true);
        b.put("text", fold(s));
        return b;
    }

    private static Map<String, Object> json(String summary, JsonNode n) {
        Map<String, Object> b = block();
        b.put("kind_json", true);
        b.put("summary", summary);
        b.put("json", fold(n.isTextual() ? n.asText() : RunPages.pretty(n)));
        return b;
    }

    private static Map<String, Object> notice(String s, boolean bad) {
        Map<String, Object> b = block();
        b.put("kind_notice", true);
        b.put("notice_text", s);
        b.put("notice_bad", bad);
        return b;
    }

    /**
     * A text as the page shows it: {@code head}, and when longer than {@value #HEAD_CHARS} characters or
     * {@value #HEAD_LINES} lines, the {@code rest} under "show all" ({@code more} says how much); cut at
     * {@value #SHOWN_CHARS} characters.
     */
    static Map<String, Object> fold(String s) {
        String all = Views.cut(s == null ? "" : s, SHOWN_CHARS);
        int end = Math.min(all.length(), HEAD_CHARS);
        int lines = 0;
        for (int i = 0; i < end; i++) {
            if (all.charAt(i) == '\n' && ++lines == HEAD_LINES) {
                end = i + 1;
                break;
            }
        }
        if (end < all.length() && Character.isHighSurrogate(all.charAt(end - 1))) {
            end--; // never split a character
        }
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("head", all.substring(0, end));
        f.put("rest", all.substring(end));
        f.put("has_rest", end < all.length());
        f.put("more", Views.count(s == null ? 0 : s.length()) + " characters");
        return f;
    }

    /** Tool arguments: a JSON string is shown pretty-printed when it parses. */
    private static String arguments(JsonNode args) {
        if (args.isTextual()) {
            try {
                return RunPages.pretty(StoredJson.read(args.asText()));
            } catch (IOException e) {
                return args.asText();
            }
        }
        return RunPages.pretty(args);
    }

    /**
     * The setup of the first request (system prompt, the turns sent, the tools offered) before the user's message: the
     * model read it first, though the transcript records the case's input as the turn opens, before the request.
     */
    static List<Map<String, Object>> systemFirst(List<Map<String, Object>> rows) {
        int user = -1;
        for (int i = 0; i < rows.size(); i++) {
            Object cls = rows.get(i).get("cls");
            if (user < 0 && "user".equals(cls)) {
                user = i;
            } else if (user >= 0 && !"system".equals(cls)) {
                if (i == user + 1) {
                    return rows;
                }
                List<Map<String, Object>> out = new ArrayList<>(rows.subList(0, user));
                out.addAll(rows.subList(user + 1, i));
                out.add(rows.get(user));
                out.addAll(rows.subList(i, rows.size()));
                return out;
            }
        }
        return rows;
    }

    /**
     * Folds runs of at least {@value #MIN_RUN} consecutive steps that only call the same tools: the first stays, the
     * others go into one fold row ({@code fold}, {@code fold_label}, {@code fold_open}, {@code folded}).
     */
    static List<Map<String, Object>> foldRuns(List<Map<String, Object>> rows) {
        List<Map<String, Object>> out = new ArrayList<>();
        int i = 0;
        while (i < rows.size()) {
            String key = (String) rows.get(i).get("tool_step");
            int j = i + 1;
            while (!key.isEmpty() && j < rows.size() && key.equals(rows.get(j).get("tool_step"))) {
                j++;
            }
            out.add(rows.get(i));
            if (j - i >= MIN_RUN) {
                List<Map<String, Object>> folded = rows.subList(i + 1, j);
                Map<String, Object> f = new LinkedHashMap<>();
                f.put("fold", true);
                f.put(
                        "fold_label",
                        (j - i - 1) + " more steps calling " + key + " (#"
                                + folded.get(0).get("seq") + " to #"
                                + folded.get(folded.size() - 1).get("seq") + ")");
                f.put("fold_open", folded.stream().anyMatch(Conversation::holdsTarget));
                f.put("folded", new ArrayList<>(folded));
                out.add(f);
            } else {
                out.addAll(rows.subList(i + 1, j));
            }
            i = j;
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static boolean holdsTarget(Map<String, Object> row) {
        if (Boolean.TRUE.equals(row.get("target"))) {
            return true;
        }
        for (Map<String, Object> b : (List<Map<String, Object>>) row.get("blocks")) {
            if (Boolean.TRUE.equals(b.get("result_target"))) {
                return true;
            }
        }
        return false;
    }
}
