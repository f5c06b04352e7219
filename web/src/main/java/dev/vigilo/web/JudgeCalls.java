package dev.vigilo.web;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The judges' model calls of a case, as its transcript records them (docs/formats/transcript.md:
 * {@code vigilo/judge-request} and {@code vigilo/judge-response}, already masked), grouped under the evaluator whose
 * result they produced, for the case page to show beneath that result: what each judge was asked, what it answered,
 * with the status, time and tokens of each attempt.
 */
final class JudgeCalls {
    static final String REQUEST = "vigilo/judge-request";
    static final String RESPONSE = "vigilo/judge-response";
    /** Judge events read from one transcript: a panel of 16 judges, a few attempts each. */
    static final int MAX_EVENTS = 256;

    private static final int SHOWN_PROMPT = 4_000;
    private static final int SHOWN_ANSWER = 2_000;

    private JudgeCalls() {}

    /** Whether an event is a judge's request or answer (the filter of the transcript read). */
    static boolean isJudgeEvent(JsonNode event) {
        if (event == null) {
            return false;
        }
        String type = event.path("type").asText("");
        return type.equals(REQUEST) || type.equals(RESPONSE);
    }

    /**
     * The calls by the case evaluator's name (a panel's judges, recorded as {@code PANEL/JUDGE}, under the panel),
     * each a row for the page: {@code judge}, {@code attempt}, {@code prompt}, {@code status}, and once answered
     * {@code time}, {@code answer} and {@code tokens} ({@code has_answer}, {@code has_tokens}). A request is paired with the answer of the same judge and attempt that follows
     * it; a request without one (the transcript was cut there) shows no answer.
     */
    static Map<String, List<Map<String, Object>>> byEvaluator(List<Transcript.Event> events) {
        Map<String, List<Map<String, Object>>> out = new LinkedHashMap<>();
        Map<String, Map<String, Object>> open = new LinkedHashMap<>();
        for (Transcript.Event e : events) {
            JsonNode j = e.json();
            if (!isJudgeEvent(j)) {
                continue;
            }
            JsonNode d = j.path("data");
            String judge = d.path("name").asText("?");
            int attempt = d.path("attempt").asInt();
            String key = judge + "\u0000" + attempt;
            if (j.path("type").asText().equals(REQUEST)) {
                Map<String, Object> call = new LinkedHashMap<>();
                call.put("judge", judge);
                call.put("attempt", attempt);
                call.put("prompt", Views.cut(prompt(d.path("request")), SHOWN_PROMPT));
                call.put("status", "no answer recorded");
                // Every key present (false or empty until the answer comes): the page must not fall back on the
                // evaluator row's keys of the same name.
                call.put("has_answer", false);
                call.put("time", "");
                call.put("answer", "");
                call.put("tokens", "");
                call.put("has_tokens", false);
                out.computeIfAbsent(evaluator(judge), k -> new ArrayList<>()).add(call);
                open.put(key, call);
            } else {
                Map<String, Object> call = open.remove(key);
                if (call == null) {
                    continue; // an answer without its request: the request was not recorded, nothing to pair
                }
                int status = d.path("status").asInt();
                JsonNode response = d.path("response");
                call.put("status", status == 0 ? "no response: " + response.asText() : "HTTP " + status);
                call.put("time", Views.millis(d.path("ms").asLong()));
                call.put("answer", Views.cut(answer(response), SHOWN_ANSWER));
                call.put("has_answer", true);
                String tokens = tokens(response.path("usage"));
                call.put("tokens", tokens);
                call.put("has_tokens", !tokens.isEmpty());
            }
        }
        return out;
    }

    /** The evaluator a judge's calls belong to: a panel's judge {@code PANEL/JUDGE} is the panel's. */
    private static String evaluator(String judge) {
        int slash = judge.indexOf('/');
        return slash < 0 ? judge : judge.substring(0, slash);
    }

    /** The request's messages as {@code role: content} paragraphs. */
    private static String prompt(JsonNode request) {
        StringBuilder b = new StringBuilder();
        for (JsonNode m : request.path("messages")) {
            if (!b.isEmpty()) {
                b.append("\n\n");
            }
            JsonNode content = m.path("content");
            b.append(m.path("role").asText("?"))
                    .append(": ")
                    .append(content.isTextual() ? content.asText() : content.toString());
        }
        return b.toString();
    }

    /** The answer's message text, else the body as received (an error, or text that is not a completion). */
    private static String answer(JsonNode response) {
        JsonNode content = response.path("choices").path(0).path("message").path("content");
        if (content.isTextual()) {
            return content.asText();
        }
        return response.isTextual() ? response.asText() : response.toString();
    }

    /** {@code 40 in · 5 out}, or empty when the answer reports no usage. */
    private static String tokens(JsonNode usage) {
        if (!usage.isObject()) {
            return "";
        }
        return usage.path("prompt_tokens").asLong() + " in · "
                + usage.path("completion_tokens").asLong() + " out";
    }
}
