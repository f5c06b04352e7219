package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.llm.Pricing;
import dev.vigilo.stats.Reducer;
import java.math.BigDecimal;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A validated run profile (docs/formats/plan-profile.md): what agent to run, which evaluators score it, which gates
 * decide the run, and limits. Immutable; produced only by {@link ProfileParser}, which has already checked every
 * cross-reference (gate evaluators exist, names are unique, counts within bounds).
 *
 * @param version the profile format version (1)
 * @param name    the profile's name, 1..256 characters
 * @param agent   the agent under evaluation
 * @param evaluators evaluators in document order, 1..{@link #MAX_EVALUATORS}, unique names
 * @param gates   gates in document order, 1..{@link #MAX_GATES}, unique names
 * @param limits  preparation limits
 * @param epochs  how many times every case is executed and how its epochs reduce to one result
 * @param confidence the confidence level of every interval reported for the run, in
 *                   [{@link #MIN_CONFIDENCE}, {@link #MAX_CONFIDENCE}]
 * @param pricing the prices of models per million tokens ({@code pricing}), by model name as endpoints report it;
 *                empty when the profile gives none
 * @param sandbox where the commands of a case run ({@code sandbox}); {@link Sandbox#NONE} when not given
 * @param budget  the most the whole run may spend on model calls ({@code budget}); {@link Budget#NONE} when not given
 */
public record Profile(
        int version,
        String name,
        Agent agent,
        List<Evaluator> evaluators,
        List<Gate> gates,
        Limits limits,
        Epochs epochs,
        double confidence,
        Pricing pricing,
        Sandbox sandbox,
        Budget budget) {

    /** The newest profile format version this build understands. */
    public static final int VERSION = 1;
    /** Upper bound on the number of gates (the spec's "at most 64 gates"). */
    public static final int MAX_GATES = 64;
    /** Upper bound on the number of evaluators. */
    public static final int MAX_EVALUATORS = 64;
    /** Both the input limit and the canonical encoded limit of a profile, in bytes. */
    public static final int MAX_BYTES = 8 * 1024 * 1024;
    /** Default of {@code confidence}: the level of every interval when the profile does not name one. */
    public static final double DEFAULT_CONFIDENCE = 0.95;
    /** Smallest accepted {@code confidence}. */
    public static final double MIN_CONFIDENCE = 0.5;
    /** Largest accepted {@code confidence}. */
    public static final double MAX_CONFIDENCE = 0.999;

    public Profile {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(agent, "agent");
        evaluators = List.copyOf(evaluators);
        gates = List.copyOf(gates);
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(epochs, "epochs");
        Objects.requireNonNull(pricing, "pricing");
        Objects.requireNonNull(sandbox, "sandbox");
        Objects.requireNonNull(budget, "budget");
        if (!(confidence >= MIN_CONFIDENCE && confidence <= MAX_CONFIDENCE)) {
            throw new IllegalArgumentException("confidence " + confidence + " is outside [0.5, 0.999]");
        }
    }

    /** A profile without a budget. */
    public Profile(
            int version,
            String name,
            Agent agent,
            List<Evaluator> evaluators,
            List<Gate> gates,
            Limits limits,
            Epochs epochs,
            double confidence,
            Pricing pricing,
            Sandbox sandbox) {
        this(version, name, agent, evaluators, gates, limits, epochs, confidence, pricing, sandbox, Budget.NONE);
    }

    /** A profile without a sandbox. */
    public Profile(
            int version,
            String name,
            Agent agent,
            List<Evaluator> evaluators,
            List<Gate> gates,
            Limits limits,
            Epochs epochs,
            double confidence,
            Pricing pricing) {
        this(version, name, agent, evaluators, gates, limits, epochs, confidence, pricing, Sandbox.NONE);
    }

    /** Sandbox kinds (docs/formats/plan-profile.md, "sandbox"). */
    public enum SandboxKind {
        /** Commands run on the worker's host (the default). */
        NONE("none"),
        /** In bubblewrap ({@code bwrap}). */
        BWRAP("bwrap"),
        /** In a podman container. */
        PODMAN("podman");

        private final String wire;

        SandboxKind(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }
    }

    /**
     * Where the commands of a case run.
     *
     * @param kind      none, bwrap or podman
     * @param network   whether they may use the network
     * @param workdir   the directory copied into every attempt's work directory, as written (a relative one is
     *                  relative to the worker's working directory)
     * @param memoryMb  the most memory of an attempt's processes, in MiB
     * @param pids      the most processes of an attempt at once
     * @param keepFiles globs of work-directory files kept after the attempt
     * @param image     the container image (podman only)
     */
    public record Sandbox(
            SandboxKind kind,
            boolean network,
            Optional<String> workdir,
            Optional<Long> memoryMb,
            Optional<Integer> pids,
            List<String> keepFiles,
            Optional<String> image) {
        /** No sandbox. */
        public static final Sandbox NONE = new Sandbox(
                SandboxKind.NONE,
                false,
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                List.of(),
                Optional.empty());
        /** Smallest accepted {@code memory_mb}. */
        public static final long MIN_MEMORY_MB = 16;
        /** Largest accepted {@code memory_mb} (1 TiB). */
        public static final long MAX_MEMORY_MB = 1L << 20;
        /** Smallest accepted {@code pids}. */
        public static final int MIN_PIDS = 4;
        /** Largest accepted {@code pids}. */
        public static final int MAX_PIDS = 4_194_304;

        public Sandbox {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(workdir, "workdir");
            Objects.requireNonNull(memoryMb, "memoryMb");
            Objects.requireNonNull(pids, "pids");
            keepFiles = List.copyOf(keepFiles);
            Objects.requireNonNull(image, "image");
        }
    }

    /** The evaluator with this name. */
    public Optional<Evaluator> evaluator(String evaluatorName) {
        return evaluators.stream().filter(e -> e.name().equals(evaluatorName)).findFirst();
    }

    /** Agent kinds. */
    public enum AgentKind {
        /** A local program: the case on stdin as JSON, the output on stdout. */
        COMMAND("command"),
        /** An OpenAI-compatible chat completions endpoint. */
        HTTP("http");

        private final String wire;

        AgentKind(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }
    }

    /** Evaluator kinds. */
    public enum EvaluatorKind {
        /** The agent's output equals the case's {@code expected}. */
        EXACT_MATCH("exact_match"),
        /** The agent's output contains the case's {@code expected}. */
        CONTAINS("contains"),
        /** The agent's output matches the regular expression in the case's {@code expected} (or {@code pattern}). */
        REGEX("regex"),
        /** A program reads {"case":..., "output":...} on stdin and prints a score in [0, 1]. */
        COMMAND("command"),
        /** The agent's output is one JSON value, satisfying the {@code schema} when one is given. */
        JSON("json"),
        /** The last number in the agent's output is within a tolerance of the case's {@code expected}. */
        NUMERIC("numeric"),
        /** The normalised Levenshtein ratio of the output and the case's {@code expected} is at least a threshold. */
        SIMILARITY("similarity"),
        /** The agent call took at most {@code max_ms} milliseconds. */
        LATENCY("latency"),
        /** The agent call cost at most {@code max_usd}, priced by the profile's {@code pricing}. */
        COST("cost"),
        /** A model grades the output by a rubric over an OpenAI-compatible endpoint. */
        JUDGE("judge"),
        /** Two or more judges grade the output; their scores aggregate (mean, min or majority). */
        PANEL("panel"),
        /** The tool calls of the answering attempt include required ones, no forbidden one, at most max_calls. */
        TOOL_USE("tool_use");

        private final String wire;

        EvaluatorKind(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }
    }

    /**
     * The agent.
     *
     * @param kind       command or http
     * @param parameters the validated parameters as canonical JSON (an object node; treat as read-only)
     */
    public record Agent(AgentKind kind, JsonNode parameters) {
        public Agent {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(parameters, "parameters");
        }
    }

    /**
     * An evaluator.
     *
     * @param name       unique within the profile
     * @param kind       what it computes
     * @param parameters validated parameters as canonical JSON (an object node; treat as read-only)
     * @param appliesTo  the cases it applies to; empty means every case
     */
    public record Evaluator(String name, EvaluatorKind kind, JsonNode parameters, Optional<Selector> appliesTo) {
        public Evaluator {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(parameters, "parameters");
            Objects.requireNonNull(appliesTo, "appliesTo");
        }
    }

    /**
     * A gate and its frozen decision policy.
     *
     * @param name               unique within the profile
     * @param requiredEvaluators evaluator names, at least one, no duplicates, each defined
     * @param selector           group and tag rules
     * @param minPassRate        pass threshold in [0, 1]
     * @param decide             whether the gate decides on the point pass rate or on its confidence interval
     * @param confidence         the confidence level of the gate's interval (the profile's {@code confidence})
     */
    public record Gate(
            String name,
            List<String> requiredEvaluators,
            Selector selector,
            double minPassRate,
            Decide decide,
            double confidence) {
        public Gate {
            Objects.requireNonNull(name, "name");
            requiredEvaluators = List.copyOf(requiredEvaluators);
            Objects.requireNonNull(selector, "selector");
            Objects.requireNonNull(decide, "decide");
        }

        /** A gate deciding on the point pass rate, with intervals at the default confidence (today's gates). */
        public Gate(String name, List<String> requiredEvaluators, Selector selector, double minPassRate) {
            this(name, requiredEvaluators, selector, minPassRate, Decide.POINT, DEFAULT_CONFIDENCE);
        }

        /** Whether this gate's policy says only what a version 1 gate file can say (point, default confidence). */
        public boolean defaultPolicy() {
            return decide == Decide.POINT && confidence == DEFAULT_CONFIDENCE;
        }
    }

    /** How a gate turns its counts into a decision (docs/execution.md, "Statistics"). */
    public enum Decide {
        /** Passes when {@code passed / planned >= min_pass_rate} (the rule of every gate before decisions on bounds). */
        POINT("point"),
        /**
         * Passes when the interval's lower bound is at least {@code min_pass_rate}, fails when its upper bound is
         * below, and is otherwise inconclusive.
         */
        BOUND("bound");

        private final String wire;

        Decide(String wire) {
            this.wire = wire;
        }

        /** The spelling in profiles and plan files. */
        public String wire() {
            return wire;
        }

        /** The rule spelled {@code wire}, if there is one. */
        public static Optional<Decide> fromWire(String wire) {
            for (Decide d : values()) {
                if (d.wire.equals(wire)) {
                    return Optional.of(d);
                }
            }
            return Optional.empty();
        }
    }

    /**
     * Epochs: every case is executed {@code count} times, each epoch its own attempt sequence with its own
     * transcripts, and the epochs' evaluator results reduce to one per case and evaluator.
     *
     * @param count   1..{@link #MAX_COUNT}
     * @param reducer how the epochs of one case and evaluator reduce to one result
     */
    public record Epochs(int count, Reducer reducer) {
        /** Largest accepted {@code epochs.count}. */
        public static final int MAX_COUNT = 100;
        /** One epoch, reduced by the mean: what a profile without {@code epochs} means. */
        public static final Epochs SINGLE = new Epochs(1, Reducer.MEAN);

        public Epochs {
            Objects.requireNonNull(reducer, "reducer");
            if (count < 1 || count > MAX_COUNT) {
                throw new IllegalArgumentException("epochs.count " + count + " is outside [1, " + MAX_COUNT + "]");
            }
        }
    }

    /**
     * Group and tag rules shared by gates and {@code applies_to}. Each list is empty when the rule was not given;
     * a given rule is never empty (the parser rejects {@code groups: []}).
     *
     * @param groups  the case's group must be one of these (when given)
     * @param tagsAll the case must carry every one of these tags (when given)
     * @param tagsAny the case must carry at least one of these tags (when given)
     */
    public record Selector(List<String> groups, List<String> tagsAll, List<String> tagsAny) {
        /** A selector with no rules: matches every case. */
        public static final Selector ALL = new Selector(List.of(), List.of(), List.of());

        public Selector {
            groups = List.copyOf(groups);
            tagsAll = List.copyOf(tagsAll);
            tagsAny = List.copyOf(tagsAny);
        }
    }

    /**
     * A run's hard budget ({@code budget}, docs/execution.md "Budget"): the most its model calls may cost and the most
     * tokens (input plus output, agent and judges) they may use, each absent when not limited.
     */
    public record Budget(Optional<BigDecimal> maxCostUsd, Optional<Long> maxTokens) {
        /** No budget. */
        public static final Budget NONE = new Budget(Optional.empty(), Optional.empty());

        public Budget {
            Objects.requireNonNull(maxCostUsd, "maxCostUsd");
            Objects.requireNonNull(maxTokens, "maxTokens");
        }

        /** Whether the profile gives a budget. */
        public boolean present() {
            return maxCostUsd.isPresent() || maxTokens.isPresent();
        }
    }

    /**
     * Preparation limits and per-case limits.
     *
     * @param maxCases    the largest dataset (in cases) this profile may be prepared against
     * @param caseSeconds {@code case_seconds}: the most wall time of one execution of a case (all attempts of one
     *                    epoch)
     * @param caseTokens  {@code case_tokens}: the most tokens (input plus output, agent and judges) of one execution
     * @param caseCostUsd {@code case_cost_usd}: the most cost of one execution, priced by {@code pricing}
     */
    public record Limits(
            long maxCases, Optional<Long> caseSeconds, Optional<Long> caseTokens, Optional<BigDecimal> caseCostUsd) {
        /** Default for {@code limits.max_cases}. */
        public static final long DEFAULT_MAX_CASES = 10_000_000L;
        /** Largest accepted {@code limits.max_cases}. */
        public static final long MAX_MAX_CASES = 1_000_000_000L;
        /** Largest accepted {@code limits.case_seconds} (a day). */
        public static final long MAX_CASE_SECONDS = 86_400;
        /** Largest accepted {@code limits.case_tokens}. */
        public static final long MAX_CASE_TOKENS = 1_000_000_000_000L;

        public Limits {
            Objects.requireNonNull(caseSeconds, "caseSeconds");
            Objects.requireNonNull(caseTokens, "caseTokens");
            Objects.requireNonNull(caseCostUsd, "caseCostUsd");
        }

        /** Only a preparation limit. */
        public Limits(long maxCases) {
            this(maxCases, Optional.empty(), Optional.empty(), Optional.empty());
        }
    }
}
