package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.re2j.Pattern;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.config.RubricTemplate;
import dev.vigilo.config.SafeRegex;
import dev.vigilo.llm.ChatCompletions;
import dev.vigilo.llm.HttpOptions;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Builds the {@link EvaluatorSet} a run configuration's {@code evaluator_plan} describes. A set with judges holds
 * their HTTP client: close it when the run ends.
 */
public final class Evaluators {
    /** The most evaluators a plan may have (one bit each in a 64-bit mask). */
    public static final int MAX_EVALUATORS = 64;
    /**
     * A judge's (and a mean/min panel's) {@code pass_score} when the profile gives none: the middle of the normalised
     * scale, so a judge passes what it rates at least half-way up its scale.
     */
    public static final double JUDGE_PASS_SCORE = 0.5;
    /** How long a judge's connection may take to open. */
    static final Duration JUDGE_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    /** A latency evaluator's largest {@code max_ms}: one day. */
    static final int MAX_LATENCY_MS = 86_400_000;

    /** A {@code tool_use} evaluator's largest {@code max_calls}. */
    static final int MAX_TOOL_CALLS = 100_000;

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
        // Judges' keys are masked in everything any evaluator hands on (an endpoint may echo its request's headers).
        AgentEnvironment judged =
                env.withSecrets(env.secrets().and(SecretValues.ofEnvKeys(evaluatorPlan, env.variables()::get)));
        // One client (one connection pool) for every judge of the set, made only when the plan has a judge.
        ChatCompletions client = null;
        try {
            for (int i = 0; i < evaluatorPlan.size(); i++) {
                Params p = Params.of(evaluatorPlan.get(i), "evaluator_plan[" + i + "]");
                if (p.integer("index", 0, MAX_EVALUATORS - 1, -1) != i) {
                    throw Params.bad(p.at() + ".index", "must be " + i + " (entries are in index order)");
                }
                String name = p.text("name");
                String kind = p.text("kind");
                names.add(name);
                kinds.add(kind);
                if ((kind.equals("judge") || kind.equals("panel")) && client == null) {
                    client = ChatCompletions.http(new HttpOptions(
                            JUDGE_CONNECT_TIMEOUT,
                            JudgeEvaluator.MAX_RESPONSE_BYTES,
                            HttpOptions.Oversized.ABORT,
                            "judge"));
                }
                evaluators.add(evaluator(i, p, name, kind, judged, client));
            }
        } catch (RuntimeException e) {
            if (client != null) {
                client.close();
            }
            throw e;
        }
        return new EvaluatorSet(names, kinds, evaluators, judged.secrets(), Optional.ofNullable(client));
    }

    /**
     * The score at or above which an evaluator of the plan passes, for reductions of scores (an epochs' mean): a
     * command's, judge's or mean/min panel's {@code pass_score}, a similarity's {@code threshold}, just above 0.5 for a
     * majority panel (more than half of its judges), 1.0 for the other built-ins (their scores are 0 or 1).
     */
    public static double passScore(JsonNode planEntry) {
        return switch (planEntry.path("kind").asText()) {
            case "command" -> planEntry.path("pass_score").asDouble(1.0);
            case "judge" -> planEntry.path("pass_score").asDouble(JUDGE_PASS_SCORE);
            // A majority panel's score is the fraction of judges passing; it passes above one half.
            case "panel" ->
                "majority".equals(planEntry.path("aggregate").asText())
                        ? Math.nextUp(0.5)
                        : planEntry.path("pass_score").asDouble(JUDGE_PASS_SCORE);
            case "similarity" -> planEntry.path("threshold").asDouble(1.0);
            default -> 1.0;
        };
    }

    private static Evaluator evaluator(
            int index, Params p, String name, String kind, AgentEnvironment env, ChatCompletions client) {
        return switch (kind) {
            case "judge" -> judgeEvaluator(index, p, name, "evaluators." + name, env, client);
            case "panel" -> panel(index, p, name, env, client);
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
            case "cost" -> {
                BigDecimal max = p.decimal("max_usd").orElseThrow(() -> Params.bad(p.at() + ".max_usd", "is required"));
                if (max.signum() <= 0) {
                    throw Params.bad(p.at() + ".max_usd", "must be greater than 0");
                }
                yield new CostEvaluator(max);
            }
            case "tool_use" -> toolUse(p, env);
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
                                + " latency, cost, judge, panel, tool_use)");
        };
    }

    /** A {@code tool_use} evaluator: {@code require}, {@code forbid}, {@code max_calls}, {@code ordered}. */
    private static ToolUseEvaluator toolUse(Params p, AgentEnvironment env) {
        List<ToolUseEvaluator.Required> require = new ArrayList<>();
        JsonNode given = p.get("require");
        boolean none = given != null && given.isArray() && given.isEmpty();
        for (Params r : none ? List.<Params>of() : p.objects("require").orElse(List.of())) {
            JsonNode args = r.get("arguments");
            if (args != null && !args.isNull() && !args.isObject()) {
                throw Params.bad(r.at() + ".arguments", "must be an object");
            }
            require.add(new ToolUseEvaluator.Required(
                    r.text("name"), Optional.ofNullable(args).filter(a -> !a.isNull())));
        }
        java.util.Set<String> forbid = new java.util.LinkedHashSet<>();
        JsonNode f = p.get("forbid");
        if (f != null && !f.isNull()) {
            if (!f.isArray()) {
                throw Params.bad(p.at() + ".forbid", "must be a list of tool names");
            }
            for (JsonNode n : f) {
                if (!n.isTextual() || n.asText().isEmpty()) {
                    throw Params.bad(p.at() + ".forbid", "must be a list of tool names");
                }
                forbid.add(n.asText());
            }
        }
        Optional<Integer> max = p.optionalInteger("max_calls", 0, MAX_TOOL_CALLS);
        if (require.isEmpty() && forbid.isEmpty() && max.isEmpty() && !p.has("max_calls")) {
            throw Params.bad(p.at(), "needs require, forbid or max_calls");
        }
        return new ToolUseEvaluator(require, forbid, max, p.bool("ordered", false), env.secrets());
    }

    /** A judge, its calls sent through its endpoint's limiter ({@code at}: where the configuration names it). */
    private static JudgeEvaluator judgeEvaluator(
            int index, Params p, String name, String at, AgentEnvironment env, ChatCompletions client) {
        JudgeEvaluator.Settings s = judge(p, name, env);
        return new JudgeEvaluator(
                index,
                s,
                client,
                env,
                env.limiters().limiter(new EndpointLimiters.Endpoint(at, s.uri(), s.model(), s.apiKeyEnv(), p.node())));
    }

    /** A judge's settings; its {@code api_key_env} variable must be set (as an http agent's). */
    private static JudgeEvaluator.Settings judge(Params p, String name, AgentEnvironment env) {
        URI uri;
        try {
            uri = new URI(p.text("url"));
        } catch (URISyntaxException e) {
            throw Params.bad(p.at() + ".url", "is not a URL");
        }
        if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
            throw Params.bad(p.at() + ".url", "must be an http:// or https:// URL with a host");
        }
        Optional<String> keyEnv = p.optionalText("api_key_env");
        Optional<String> key = Optional.empty();
        if (keyEnv.isPresent()) {
            String value = env.variables().get(keyEnv.get());
            if (value == null || value.isEmpty()) {
                throw new InvalidInputException(p.at() + ".api_key_env: environment variable " + keyEnv.get()
                        + " is not set; export it with the judge endpoint's API key before running the worker");
            }
            key = Optional.of(value);
        }
        RubricTemplate rubric;
        try {
            rubric = RubricTemplate.parse(p.text("rubric"));
        } catch (InvalidInputException e) {
            throw Params.bad(p.at() + ".rubric", e.getMessage());
        }
        return new JudgeEvaluator.Settings(
                name,
                uri,
                p.text("model"),
                keyEnv,
                key,
                rubric,
                scale(p),
                p.number("pass_score", 0, 1).orElse(JUDGE_PASS_SCORE),
                p.integer("max_attempts", 1, Agents.MAX_ATTEMPTS, Agents.DEFAULT_MAX_ATTEMPTS),
                Duration.ofSeconds(p.integer("timeout_seconds", 1, 3600, 120)),
                p.number("temperature", 0, 2).orElse(0.0),
                p.optionalInteger("max_tokens", 1, 1_000_000));
    }

    /** Exactly one of {@code scale: {min, max}} and {@code grades: {LETTER: score}}. */
    private static JudgeScale scale(Params p) {
        if (p.has("scale") == p.has("grades")) {
            throw Params.bad(p.at(), "needs exactly one of scale and grades");
        }
        if (p.has("scale")) {
            Params s = Params.of(p.get("scale"), p.at() + ".scale");
            double min = s.number("min", -Double.MAX_VALUE, Double.MAX_VALUE)
                    .orElseThrow(() -> Params.bad(s.at() + ".min", "is required"));
            double max = s.number("max", -Double.MAX_VALUE, Double.MAX_VALUE)
                    .orElseThrow(() -> Params.bad(s.at() + ".max", "is required"));
            if (!(min < max)) {
                throw Params.bad(s.at(), "min must be below max");
            }
            return JudgeScale.range(min, max);
        }
        Params g = Params.of(p.get("grades"), p.at() + ".grades");
        Map<String, Double> grades = new LinkedHashMap<>();
        p.get("grades")
                .fieldNames()
                .forEachRemaining(k -> grades.put(
                        k,
                        g.number(k, 0, 1)
                                .orElseThrow(() -> Params.bad(g.at() + "." + k, "must be a number in [0, 1]"))));
        if (grades.size() < 2) {
            throw Params.bad(g.at(), "needs at least two grades");
        }
        return JudgeScale.ofGrades(grades);
    }

    private static PanelEvaluator panel(
            int index, Params p, String name, AgentEnvironment env, ChatCompletions client) {
        JsonNode list = p.get("judges");
        if (list == null || !list.isArray() || list.size() < 2) {
            throw Params.bad(p.at() + ".judges", "must be a list of two or more judges");
        }
        List<String> judgeNames = new ArrayList<>();
        List<JudgeEvaluator> judges = new ArrayList<>();
        for (int j = 0; j < list.size(); j++) {
            Params jp = Params.of(list.get(j), p.at() + ".judges[" + j + "]");
            String judgeName = jp.text("name");
            if (judgeNames.contains(judgeName)) {
                throw Params.bad(jp.at() + ".name", "repeats \"" + judgeName + "\"; judges' names must be unique");
            }
            judgeNames.add(judgeName);
            judges.add(judgeEvaluator(
                    index, jp, name + "/" + judgeName, "evaluators." + name + ".judges." + judgeName, env, client));
        }
        String aggregate = p.text("aggregate");
        PanelEvaluator.Aggregate a = switch (aggregate) {
            case "mean" -> PanelEvaluator.Aggregate.MEAN;
            case "min" -> PanelEvaluator.Aggregate.MIN;
            case "majority" -> PanelEvaluator.Aggregate.MAJORITY;
            default -> throw Params.bad(p.at() + ".aggregate", "must be mean, min or majority");
        };
        return new PanelEvaluator(
                name, judgeNames, judges, a, p.number("pass_score", 0, 1).orElse(JUDGE_PASS_SCORE));
    }
}
