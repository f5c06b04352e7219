package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.re2j.Pattern;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.config.SafeRegex;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** Builds the {@link EvaluatorSet} a run configuration's {@code evaluator_plan} describes. */
public final class Evaluators {
    /** The most evaluators a plan may have (one bit each in a 64-bit mask). */
    public static final int MAX_EVALUATORS = 64;

    /** A latency evaluator's largest {@code max_ms}: one day. */
    static final int MAX_LATENCY_MS = 86_400_000;

    private Evaluators() {}

    /**
     * Builds the evaluators of a run configuration (docs/formats/plan-configuration.md, {@code evaluator_plan}: one
     * object per evaluator with {@code index}, {@code name}, {@code kind} and the parameters of
     * docs/formats/plan-profile.md; {@code applies_to} and {@code applies_to_cases} are for planning and ignored).
     * Checks every parameter and compiles every {@code pattern} up front.
     *
     * @throws InvalidInputException naming the offending entry and key
     */
    public static EvaluatorSet fromPlan(JsonNode evaluatorPlan, AgentEnvironment env) {
        Objects.requireNonNull(env, "env");
        if (evaluatorPlan == null || !evaluatorPlan.isArray()) {
            throw Params.bad("evaluator_plan", "must be a list");
        }
        if (evaluatorPlan.isEmpty() || evaluatorPlan.size() > MAX_EVALUATORS) {
            throw Params.bad("evaluator_plan", "must have 1.." + MAX_EVALUATORS + " evaluators");
        }
        List<String> names = new ArrayList<>();
        List<String> kinds = new ArrayList<>();
        List<Evaluator> evaluators = new ArrayList<>();
        for (int i = 0; i < evaluatorPlan.size(); i++) {
            Params p = Params.of(evaluatorPlan.get(i), "evaluator_plan[" + i + "]");
            if (p.integer("index", 0, MAX_EVALUATORS - 1, -1) != i) {
                throw Params.bad(p.at() + ".index", "must be " + i + " (entries are in index order)");
            }
            String name = p.text("name");
            String kind = p.text("kind");
            names.add(name);
            kinds.add(kind);
            evaluators.add(evaluator(p, name, kind, env));
        }
        return new EvaluatorSet(names, kinds, evaluators, env.secrets());
    }

    /**
     * The score at or above which an evaluator of the plan passes, for reductions of scores (an epochs' mean): a
     * command's {@code pass_score}, a similarity's {@code threshold}, 1.0 for the other built-ins (their scores are
     * 0 or 1).
     */
    public static double passScore(JsonNode planEntry) {
        return switch (planEntry.path("kind").asText()) {
            case "command" -> planEntry.path("pass_score").asDouble(1.0);
            case "similarity" -> planEntry.path("threshold").asDouble(1.0);
            default -> 1.0;
        };
    }

    private static Evaluator evaluator(Params p, String name, String kind, AgentEnvironment env) {
        return switch (kind) {
            case "exact_match" ->
                TextEvaluator.exactMatch(name, p.bool("case_sensitive", true), p.bool("trim", true), env.secrets());
            case "contains" -> TextEvaluator.contains(name, p.bool("case_sensitive", true), env.secrets());
            case "regex" -> {
                Optional<Pattern> pattern = p.optionalText("pattern").map(s -> {
                    try {
                        return SafeRegex.compile(s);
                    } catch (InvalidInputException e) {
                        throw Params.bad(p.at() + ".pattern", e.getMessage());
                    }
                });
                yield new RegexEvaluator(name, pattern, env.regexTimeLimit(), env.secrets());
            }
            case "json" -> new JsonEvaluator(p.schema("schema"));
            case "numeric" -> {
                Optional<BigDecimal> tolerance =
                        p.number("tolerance", 0, Double.MAX_VALUE).map(BigDecimal::valueOf);
                Optional<BigDecimal> relative =
                        p.number("relative_tolerance", 0, Double.MAX_VALUE).map(BigDecimal::valueOf);
                if (tolerance.isPresent() == relative.isPresent()) {
                    throw Params.bad(p.at(), "needs exactly one of tolerance and relative_tolerance");
                }
                yield new NumericEvaluator(name, tolerance, relative, env.secrets());
            }
            case "similarity" ->
                new SimilarityEvaluator(
                        name,
                        p.number("threshold", 0, 1).orElseThrow(() -> Params.bad(p.at() + ".threshold", "is required")),
                        p.bool("case_sensitive", true),
                        p.bool("trim", true));
            case "latency" ->
                new LatencyEvaluator(p.optionalInteger("max_ms", 1, MAX_LATENCY_MS)
                        .orElseThrow(() -> Params.bad(p.at() + ".max_ms", "is required")));
            case "command" ->
                new CommandEvaluator(
                        name,
                        p.argv("command"),
                        Duration.ofSeconds(p.integer("timeout_seconds", 1, 3600, 60)),
                        p.number("pass_score", 0, 1).orElse(1.0),
                        p.env("env"),
                        env);
            default ->
                throw Params.bad(
                        p.at() + ".kind",
                        "unknown evaluator kind \"" + kind
                                + "\" (known: exact_match, contains, regex, command, json, numeric, similarity,"
                                + " latency)");
        };
    }
}
