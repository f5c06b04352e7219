package dev.vigilo.web;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How a case was scored, as the page's {@code evaluators} partial shows it: one row per evaluator (result, score, pass
 * score, reason, time, error) with its judges' model calls folded beneath ({@link JudgeCalls}). The case page builds
 * its rows from the receipt, the transcript page from the transcript's {@code vigilo/evaluator}, judge,
 * {@code vigilo/gates} and {@code vigilo/limit} events; both through {@link #row}, so they look the same.
 */
final class Scoring {
    private Scoring() {}

    /**
     * One evaluator's row; every key the partial reads is present ({@code pass_score} empty when unknown), so Mustache
     * never takes a value from the enclosing page.
     */
    static Map<String, Object> row(
            String name,
            String result,
            String score,
            String passScore,
            String reason,
            String time,
            String error,
            List<Map<String, Object>> judgeCalls) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("name", name);
        r.put("result", result);
        r.put("score", score);
        r.put("pass_score", passScore);
        r.put("reason", reason);
        r.put("time", time);
        r.put("error", error);
        r.put("judge_calls", judgeCalls);
        r.put("has_judge_calls", !judgeCalls.isEmpty());
        r.put(
                "judge_calls_label",
                judgeCalls.size() == 1 ? "1 judge model call" : judgeCalls.size() + " judge model calls");
        return r;
    }

    /** A score as the pages print it: as recorded, empty when there is none. */
    static String score(Optional<Double> score) {
        return score.map(Scoring::number).orElse("");
    }

    /** A pass score; a majority panel's, just above one half, as {@code > 0.5}; empty when unknown. */
    static String passScore(Double pass) {
        if (pass == null) {
            return "";
        }
        return pass == Math.nextUp(0.5) ? "> 0.5" : number(pass);
    }

    private static String number(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
    }

    /**
     * The scoring section of a transcript page from its scoring events ({@link TranscriptScan}): {@code has_scoring},
     * {@code evaluators}, {@code gates} with {@code gates_status} ({@code has_gates}), and {@code limit}.
     *
     * @param passScores each evaluator's pass score by name, when the run's plan could be read (empty for a file)
     */
    static void put(Map<String, Object> m, List<Transcript.Event> events, Map<String, Double> passScores) {
        Map<String, List<Map<String, Object>>> calls = JudgeCalls.byEvaluator(events);
        List<Map<String, Object>> evaluators = new ArrayList<>();
        List<Map<String, Object>> gates = new ArrayList<>();
        String gatesStatus = "";
        String limit = "";
        for (Transcript.Event e : events) {
            JsonNode j = e.json();
            JsonNode d = j.path("data");
            switch (j.path("type").asText("")) {
                case "vigilo/evaluator" -> {
                    String name = d.path("name").asText("?");
                    JsonNode error = d.path("error");
                    JsonNode score = d.path("score");
                    Double pass = passScores.get(name);
                    evaluators.add(row(
                            name,
                            error.isObject() ? "errored" : d.path("passed").asBoolean() ? "passed" : "failed",
                            score.isNumber() ? number(score.asDouble()) : "",
                            passScore(pass),
                            d.path("reason").asText(""),
                            d.has("ms") ? Views.millis(d.path("ms").asLong()) : "",
                            error.isObject()
                                    ? error.path("type").asText("") + ": "
                                            + error.path("message").asText("")
                                    : "",
                            calls.getOrDefault(name, List.of())));
                }
                case "vigilo/gates" -> {
                    gatesStatus = d.path("status").asText("");
                    gates.clear();
                    d.path("gates")
                            .fields()
                            .forEachRemaining(g -> gates.add(Map.of(
                                    "name", g.getKey(), "outcome", g.getValue().asText(""))));
                }
                case "vigilo/limit" -> limit = d.path("message").asText("");
                default -> {
                    // judges' calls: folded under their evaluator above
                }
            }
        }
        m.put("has_scoring", !evaluators.isEmpty() || !gates.isEmpty() || !limit.isEmpty());
        m.put("evaluators", evaluators);
        m.put("gates", gates);
        m.put("has_gates", !gates.isEmpty());
        m.put("gates_status", gatesStatus);
        m.put("limit", limit);
    }
}
