package dev.vigilo.exec.record;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.agent.Evaluators;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.exec.record.Receipt.CaseResult;
import dev.vigilo.exec.record.Receipt.EvaluatorResult;
import dev.vigilo.exec.record.Receipt.GateOutcome;
import dev.vigilo.stats.Outcome;
import dev.vigilo.stats.Reducer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The rule that turns a case's epochs into its one result (docs/execution.md, "Epochs"), used by the worker that
 * writes a receipt and by {@code vigilo verify} that recomputes it, so the two cannot drift apart.
 *
 * <ul>
 *   <li>The case is errored when any epoch's agent call ended in an error; its error is the first such epoch's,
 *       prefixed {@code epoch K of N:}. An errored case has no evaluator results and every selecting gate is
 *       errored, as a case of one epoch.
 *   <li>Otherwise each evaluator reduces over the epochs by the profile's reducer ({@link Reducer#reduce}, with the
 *       evaluator's pass score): passed as the reducer says, the score the epochs' mean, errored (with the first
 *       erroring epoch's error) when any epoch's result errored, the time the sum.
 *   <li>Each selecting gate's outcome comes from the reduced evaluators by the one gate rule
 *       ({@link #gateOutcome}): errored when a required evaluator errored, passed when all passed, else failed.
 *   <li>Attempts, agent time and usage (tokens and cost) are the epochs' sums; the output and transcripts stay with
 *       the epochs.
 * </ul>
 *
 * Immutable and thread-safe.
 */
public final class EpochReduction {
    /**
     * A run's epochs, from its frozen configuration's {@code profile.epochs} (docs/formats/plan-profile.md).
     *
     * @param count   executions of every case, 1..100
     * @param reducer how each evaluator's epoch results reduce
     */
    public record Policy(int count, Reducer reducer) {
        /** One epoch: what a profile without {@code epochs} means. */
        public static final Policy SINGLE = new Policy(1, Reducer.MEAN);

        public Policy {
            Objects.requireNonNull(reducer, "reducer");
            if (count < 1 || count > 100) {
                throw new IllegalArgumentException("epochs.count must be in [1, 100], got " + count);
            }
        }

        /**
         * The policy of a frozen configuration (format {@code vigilo.plan.configuration}).
         *
         * @throws DamagedException when its {@code profile.epochs} is present and not a valid policy
         */
        public static Policy of(JsonNode configuration) {
            JsonNode epochs = configuration.path("profile").path("epochs");
            if (epochs.isMissingNode()) {
                return SINGLE;
            }
            try {
                if (!epochs.path("count").canConvertToInt()
                        || !epochs.path("reducer").isTextual()) {
                    throw new IllegalArgumentException("count and reducer are required");
                }
                int count = epochs.path("count").intValue();
                return new Policy(count, Reducer.parse(epochs.path("reducer").textValue(), count));
            } catch (IllegalArgumentException e) {
                throw new DamagedException(
                        "the run's configuration has an invalid profile.epochs " + epochs + ": " + e.getMessage(), e);
            }
        }

        /** Whether cases run more than once (receipts are then version 3). */
        public boolean several() {
            return count > 1;
        }
    }

    private final Policy policy;
    private final Map<String, Double> passScores;
    private final Map<String, List<String>> requiredByGate;

    /**
     * @param policy         the run's epochs
     * @param passScores     each evaluator's pass score, by name
     * @param requiredByGate each gate's required evaluators, by gate name
     */
    public EpochReduction(Policy policy, Map<String, Double> passScores, Map<String, List<String>> requiredByGate) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.passScores = Map.copyOf(passScores);
        Map<String, List<String>> required = new LinkedHashMap<>();
        requiredByGate.forEach((g, r) -> required.put(g, List.copyOf(r)));
        this.requiredByGate = required;
    }

    /**
     * The reduction of a run from its frozen configuration: the policy, the pass scores of its evaluator plan
     * ({@link Evaluators#passScore}: a command's {@code pass_score}, a similarity's {@code threshold}, 1.0 for the
     * other built-ins) and its gates' required evaluators.
     */
    public static EpochReduction of(JsonNode configuration) {
        Map<String, Double> scores = new LinkedHashMap<>();
        for (JsonNode e : configuration.path("evaluator_plan")) {
            scores.put(e.path("name").asText(), Evaluators.passScore(e));
        }
        Map<String, List<String>> required = new LinkedHashMap<>();
        for (JsonNode g : configuration.path("profile").path("gates")) {
            List<String> names = new ArrayList<>();
            g.path("required_evaluators").forEach(x -> names.add(x.asText()));
            required.put(g.path("name").asText(), names);
        }
        return new EpochReduction(Policy.of(configuration), scores, required);
    }

    public Policy policy() {
        return policy;
    }

    /**
     * The case's result from its epochs' results (each of one execution, in epoch order, all of the same case and
     * gate selection), with the epochs attached.
     *
     * @throws IllegalArgumentException when the epochs are not {@code count} results of one case, or a gate or an
     *     evaluator is unknown to the run
     */
    public CaseResult reduce(List<CaseResult> epochs) {
        if (epochs.size() != policy.count() || policy.count() < 2) {
            throw new IllegalArgumentException(
                    "a reduction needs the run's " + policy.count() + " epochs (at least 2), got " + epochs.size());
        }
        CaseResult first = epochs.get(0);
        int attempts = 0;
        long agentMillis = 0;
        Optional<Receipt.Error> error = Optional.empty();
        for (int i = 0; i < epochs.size(); i++) {
            CaseResult e = epochs.get(i);
            if (!e.epochs().isEmpty()
                    || e.ordinal() != first.ordinal()
                    || !e.gates().keySet().equals(first.gates().keySet())) {
                throw new IllegalArgumentException("case " + first.id() + ": epoch " + (i + 1)
                        + " is not an execution of the same case and gates as epoch 1");
            }
            attempts += e.attempts();
            agentMillis += e.agentMillis();
            if (e.errored() && error.isEmpty()) {
                error = Optional.of(inEpoch(e.error().orElseThrow(), i + 1));
            }
        }
        boolean errored = error.isPresent();
        List<EvaluatorResult> evaluators = errored ? List.of() : reduceEvaluators(epochs);
        Map<String, GateOutcome> gates = new LinkedHashMap<>();
        for (String g : first.gates().keySet()) {
            List<String> required = requiredByGate.get(g);
            if (required == null) {
                throw new IllegalArgumentException("case " + first.id() + ": unknown gate " + g);
            }
            gates.put(g, errored ? GateOutcome.ERRORED : gateOutcome(evaluators, required));
        }
        return new CaseResult(
                first.ordinal(),
                first.id(),
                first.caseSha256(),
                errored,
                Optional.empty(),
                Optional.empty(),
                0,
                Optional.empty(),
                attempts,
                agentMillis,
                error,
                evaluators,
                gates,
                List.of(),
                epochs,
                usage(epochs));
    }

    /** The epochs' usage summed; none when an epoch has none (a result read from an older receipt). */
    private static Optional<Receipt.Usage> usage(List<CaseResult> epochs) {
        Receipt.Usage sum = Receipt.Usage.NONE;
        for (CaseResult e : epochs) {
            if (e.usage().isEmpty()) {
                return Optional.empty();
            }
            sum = sum.plus(e.usage().get());
        }
        return Optional.of(sum);
    }

    private List<EvaluatorResult> reduceEvaluators(List<CaseResult> epochs) {
        List<String> names = epochs.get(0).evaluatorResults().stream()
                .map(EvaluatorResult::name)
                .toList();
        List<EvaluatorResult> out = new ArrayList<>();
        for (int x = 0; x < names.size(); x++) {
            String name = names.get(x);
            Double passScore = passScores.get(name);
            if (passScore == null) {
                throw new IllegalArgumentException("unknown evaluator " + name);
            }
            List<Outcome> outcomes = new ArrayList<>();
            Optional<Receipt.Error> error = Optional.empty();
            long millis = 0;
            for (int i = 0; i < epochs.size(); i++) {
                List<EvaluatorResult> results = epochs.get(i).evaluatorResults();
                if (results.size() != names.size() || !results.get(x).name().equals(name)) {
                    throw new IllegalArgumentException("epoch " + (i + 1) + " ran other evaluators than epoch 1");
                }
                EvaluatorResult r = results.get(x);
                millis += r.millis();
                if (r.error().isPresent()) {
                    outcomes.add(Outcome.error());
                    if (error.isEmpty()) {
                        error = Optional.of(inEpoch(r.error().get(), i + 1));
                    }
                } else {
                    outcomes.add(new Outcome(r.passed(), r.score(), false));
                }
            }
            Outcome reduced = policy.reducer().reduce(outcomes, passScore);
            out.add(new EvaluatorResult(name, reduced.passed(), reduced.score(), error, millis));
        }
        return out;
    }

    private Receipt.Error inEpoch(Receipt.Error e, int epoch) {
        return new Receipt.Error(e.type(), "epoch " + epoch + " of " + policy.count() + ": " + e.message());
    }

    /**
     * The one gate rule over a case's (or epoch's) evaluator results: errored when a required evaluator errored or
     * has no result, passed when every required one passed, else failed.
     */
    public static GateOutcome gateOutcome(List<EvaluatorResult> results, List<String> required) {
        boolean all = true;
        for (String name : required) {
            EvaluatorResult r = results.stream()
                    .filter(x -> x.name().equals(name))
                    .findFirst()
                    .orElse(null);
            if (r == null || r.error().isPresent()) {
                return GateOutcome.ERRORED;
            }
            all &= r.passed();
        }
        return all ? GateOutcome.PASSED : GateOutcome.FAILED;
    }
}
