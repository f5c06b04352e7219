package dev.vigilo.exec.record;

import dev.vigilo.agent.TokenUsage;
import dev.vigilo.llm.Pricing;
import dev.vigilo.stats.KrippendorffAlpha;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.UUID;

/**
 * One chunk's execution evidence, format {@code vigilo.exec.receipt} (docs/formats/exec-receipt.md). Immutable;
 * {@link ReceiptParser} writes it in the current version and reads every version this build knows.
 *
 * @param runId           the run
 * @param chunkIndex      the chunk
 * @param chunkId         the plan's chunk id
 * @param shard           the chunk's shard
 * @param leaseGeneration the lease generation the worker held
 * @param worker          the worker's id
 * @param membership      the chunk's membership digest
 * @param startedAt       when execution of the chunk began
 * @param finishedAt      when its last case ended
 * @param evaluators      evaluator names in profile order
 * @param gates           gate names in profile order
 * @param cases           one entry per case, in ordinal order
 * @param rerun           what a receipt written by {@code vigilo run rerun-errors} executed again and what it
 *                        carried forward (version 6); empty for a chunk's first execution
 * @param resumed         the partial receipt chain a resumed chunk carried case entries from (version 7); empty when
 *                        the chunk was executed from its start
 */
public record Receipt(
        UUID runId,
        long chunkIndex,
        UUID chunkId,
        int shard,
        long leaseGeneration,
        UUID worker,
        Sha256 membership,
        Instant startedAt,
        Instant finishedAt,
        List<String> evaluators,
        List<String> gates,
        List<CaseResult> cases,
        Optional<Rerun> rerun,
        Optional<Resumed> resumed) {
    /** Outputs up to this many UTF-8 bytes are stored in the receipt itself. */
    public static final int INLINE_OUTPUT_BYTES = 64 * 1024;

    public Receipt {
        evaluators = List.copyOf(evaluators);
        gates = List.copyOf(gates);
        cases = List.copyOf(cases);
        Objects.requireNonNull(rerun, "rerun");
        Objects.requireNonNull(resumed, "resumed");
    }

    /** This receipt with the given case results instead of its own. */
    public Receipt withCases(List<CaseResult> results) {
        return new Receipt(
                runId,
                chunkIndex,
                chunkId,
                shard,
                leaseGeneration,
                worker,
                membership,
                startedAt,
                finishedAt,
                evaluators,
                gates,
                results,
                rerun,
                resumed);
    }

    /** A receipt of a chunk executed from its start (no partial receipt carried forward). */
    public Receipt(
            UUID runId,
            long chunkIndex,
            UUID chunkId,
            int shard,
            long leaseGeneration,
            UUID worker,
            Sha256 membership,
            Instant startedAt,
            Instant finishedAt,
            List<String> evaluators,
            List<String> gates,
            List<CaseResult> cases,
            Optional<Rerun> rerun) {
        this(
                runId,
                chunkIndex,
                chunkId,
                shard,
                leaseGeneration,
                worker,
                membership,
                startedAt,
                finishedAt,
                evaluators,
                gates,
                cases,
                rerun,
                Optional.empty());
    }

    /**
     * What a resumed chunk's receipt carried forward from the partial receipts of earlier lease holders
     * (docs/execution.md, "Resume from partial receipts"; version 7): the chain it verified and carried, and per
     * carried case entry the lease generation that executed it (its transcripts are that generation's).
     *
     * @param head    the newest partial receipt of the chain, as the chunk row referenced it at the claim
     * @param carried the carried case entries, in ascending ordinal order
     */
    public record Resumed(ObjectRef head, List<Carried> carried) {
        public Resumed {
            Objects.requireNonNull(head, "head");
            carried = List.copyOf(carried);
            if (carried.isEmpty()) {
                throw new IllegalArgumentException("a resumed receipt carries at least one case entry");
            }
            for (int i = 1; i < carried.size(); i++) {
                if (carried.get(i).ordinal() <= carried.get(i - 1).ordinal()) {
                    throw new IllegalArgumentException("carried case entries must be in ascending ordinal order");
                }
            }
        }

        /** The carried entry of the case at {@code ordinal}, if this receipt carried it. */
        public Optional<Carried> of(long ordinal) {
            return carried.stream().filter(c -> c.ordinal() == ordinal).findFirst();
        }
    }

    /**
     * A case entry carried forward from a partial receipt.
     *
     * @param ordinal    the case
     * @param generation the lease generation whose holder executed it (a partial receipt of that generation lists it)
     */
    public record Carried(long ordinal, long generation) {
        public Carried {
            if (generation < 1) {
                throw new IllegalArgumentException("a lease generation is at least 1, got " + generation);
            }
        }
    }

    /** A receipt of a chunk's first execution. */
    public Receipt(
            UUID runId,
            long chunkIndex,
            UUID chunkId,
            int shard,
            long leaseGeneration,
            UUID worker,
            Sha256 membership,
            Instant startedAt,
            Instant finishedAt,
            List<String> evaluators,
            List<String> gates,
            List<CaseResult> cases) {
        this(
                runId,
                chunkIndex,
                chunkId,
                shard,
                leaseGeneration,
                worker,
                membership,
                startedAt,
                finishedAt,
                evaluators,
                gates,
                cases,
                Optional.empty(),
                Optional.empty());
    }

    /**
     * What a chunk's execution for a later settlement generation ({@code vigilo run rerun-errors}, docs/execution.md
     * "Rerun errors") did: it executed again the errored executions of its previous receipt and carried every other
     * case entry forward unchanged (its transcripts stay those of the previous receipt's generation).
     *
     * @param generation      the run's settlement generation this receipt executed for (2 for the first rerun)
     * @param previous        the receipt the chunk was done with before (empty for a failed chunk executed again whole:
     *                        then every case was executed)
     * @param executed        the executions this receipt ran, in ordinal order: per case, its epochs executed again
     *                        (1-based, ascending; empty in a run of one epoch, where the case is its execution)
     * @param supersededUsage per scope ({@link #ALL_CASES} and each gate over the cases it selects), the usage of every
     *                        execution this receipt and the previous ones replaced: their calls were paid, so they
     *                        count once in the run's usage, beside the usage of the case entries
     */
    public record Rerun(
            int generation, Optional<ObjectRef> previous, List<Executed> executed, Map<String, Usage> supersededUsage) {
        public Rerun {
            if (generation < 2) {
                throw new IllegalArgumentException("a rerun executes for generation 2 or later, got " + generation);
            }
            Objects.requireNonNull(previous, "previous");
            executed = List.copyOf(executed);
            supersededUsage = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(supersededUsage));
        }

        /** The executed entry of the case at {@code ordinal}, if this receipt executed it (or some of its epochs). */
        public Optional<Executed> of(long ordinal) {
            return executed.stream().filter(e -> e.ordinal() == ordinal).findFirst();
        }
    }

    /**
     * A case a rerun executed again.
     *
     * @param epochs its epochs executed again (1-based, ascending); empty in a run of one epoch
     */
    public record Executed(long ordinal, List<Integer> epochs) {
        public Executed {
            epochs = List.copyOf(epochs);
        }
    }

    /**
     * Whether an execution (a case of one epoch, or one epoch) ended errored in the sense of {@code rerun-errors}: its
     * agent errored (errors, limits, timeouts) or a gate selecting it errored (a required evaluator's or judge's error).
     */
    public static boolean erroredExecution(CaseResult execution) {
        return execution.errored() || execution.gates().containsValue(GateOutcome.ERRORED);
    }

    /** A gate's outcome for one case. */
    public enum GateOutcome {
        PASSED("passed"),
        FAILED("failed"),
        ERRORED("errored");

        public final String wire;

        GateOutcome(String wire) {
            this.wire = wire;
        }

        static GateOutcome of(String wire) {
            for (GateOutcome g : values()) {
                if (g.wire.equals(wire)) {
                    return g;
                }
            }
            throw new IllegalArgumentException("unknown gate outcome " + wire);
        }
    }

    /** An error: a stable type code and a one-line message. */
    public record Error(String type, String message) {
        public Error {
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(message, "message");
        }
    }

    /**
     * One evaluator's result on one case.
     *
     * @param reason why it passed or failed (version 4 receipts; bounded, masked: agent-protocol.md "Reasons"); empty
     *               on an error, for evaluators that give none, and in older receipts
     * @param votes  a panel's judges' votes, in the panel's order (version 4); empty for every other evaluator
     */
    public record EvaluatorResult(
            String name,
            boolean passed,
            double score,
            Optional<Error> error,
            long millis,
            Optional<String> reason,
            List<Vote> votes) {
        public EvaluatorResult {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(error, "error");
            Objects.requireNonNull(reason, "reason");
            votes = List.copyOf(votes);
        }

        /** A result without votes. */
        public EvaluatorResult(
                String name,
                boolean passed,
                double score,
                Optional<Error> error,
                long millis,
                Optional<String> reason) {
            this(name, passed, score, error, millis, reason, List.of());
        }

        /** A result without a reason. */
        public EvaluatorResult(String name, boolean passed, double score, Optional<Error> error, long millis) {
            this(name, passed, score, error, millis, Optional.empty(), List.of());
        }

        /** The scores of the judges that scored, for agreement (a unit of Krippendorff's alpha). */
        public double[] scoredVotes() {
            return votes.stream()
                    .filter(v -> v.score().isPresent())
                    .mapToDouble(v -> v.score().get())
                    .toArray();
        }
    }

    /**
     * One judge's vote in a panel's result.
     *
     * @param judge  the judge's name within the panel
     * @param score  its normalised score in [0, 1]; empty when it gave none (unscored, failed)
     * @param reason its reason, or its error's code and message
     */
    public record Vote(String judge, Optional<Double> score, Optional<String> reason) {
        public Vote {
            Objects.requireNonNull(judge, "judge");
            Objects.requireNonNull(score, "score");
            Objects.requireNonNull(reason, "reason");
            if (score.isPresent() && !(score.get() >= 0 && score.get() <= 1)) {
                throw new IllegalArgumentException("a vote's score must be in [0, 1], got " + score.get());
            }
        }
    }

    /** Who made a model call: the agent under evaluation or a judge. */
    public enum Role {
        AGENT("agent"),
        JUDGE("judge");

        public final String wire;

        Role(String wire) {
            this.wire = wire;
        }

        static Role of(String wire) {
            for (Role r : values()) {
                if (r.wire.equals(wire)) {
                    return r;
                }
            }
            throw new IllegalArgumentException("unknown role " + wire);
        }
    }

    /**
     * The tokens of one role's calls of one model, as the endpoints reported them, and their cost.
     *
     * @param calls             the calls whose answers reported usage (failed attempts' too)
     * @param inputTokens       prompt tokens
     * @param cachedInputTokens of those, served from the provider's prompt cache
     * @param outputTokens      completion tokens
     * @param costUsd           their cost by the run's pricing; empty when the model has no price (never a silent 0)
     */
    public record ModelUsage(
            Role role,
            String model,
            long calls,
            long inputTokens,
            long cachedInputTokens,
            long outputTokens,
            Optional<BigDecimal> costUsd) {
        public ModelUsage {
            Objects.requireNonNull(role, "role");
            Objects.requireNonNull(model, "model");
            Objects.requireNonNull(costUsd, "costUsd");
            if (calls < 0
                    || inputTokens < 0
                    || outputTokens < 0
                    || cachedInputTokens < 0
                    || cachedInputTokens > inputTokens) {
                throw new IllegalArgumentException("usage counts must be >= 0, cached at most input");
            }
            if (costUsd.isPresent() && costUsd.get().signum() < 0) {
                throw new IllegalArgumentException("a cost cannot be negative");
            }
        }

        /** The calls of both; the cost is the sum (prices are linear, costs exact), unknown when either is. */
        ModelUsage plus(ModelUsage o) {
            return new ModelUsage(
                    role,
                    model,
                    calls + o.calls,
                    inputTokens + o.inputTokens,
                    cachedInputTokens + o.cachedInputTokens,
                    outputTokens + o.outputTokens,
                    sum(costUsd, o.costUsd));
        }

        /** The cost of these tokens by {@code pricing}: empty when the model has no price. */
        public Optional<BigDecimal> priced(Pricing pricing) {
            return pricing.price(model).map(p -> p.cost(inputTokens, cachedInputTokens, outputTokens));
        }

        String key() {
            return role.ordinal() + "/" + model;
        }
    }

    private static Optional<BigDecimal> sum(Optional<BigDecimal> a, Optional<BigDecimal> b) {
        return a.isPresent() && b.isPresent()
                ? Optional.of(Pricing.plain(a.get().add(b.get())))
                : Optional.empty();
    }

    /**
     * The model calls of one execution of a case (version 4 receipts): per role and model, in role then model order
     * (one entry each, none without calls), each with its cost.
     *
     * @param cachedAnswers the agent's answers taken from the answer cache ({@code agent.cache}): not sent, no tokens,
     *                      no cost (0 or 1 per execution; summed over epochs)
     */
    public record Usage(List<ModelUsage> models, long cachedAnswers) {
        /** No model calls (a command agent and evaluators that call no model): nothing to pay. */
        public static final Usage NONE = new Usage(List.of(), 0);

        /** Usage without cached answers. */
        public Usage(List<ModelUsage> models) {
            this(models, 0);
        }

        public Usage {
            if (cachedAnswers < 0) {
                throw new IllegalArgumentException("cached answers cannot be negative");
            }
            models = List.copyOf(models);
            String previous = null;
            for (ModelUsage m : models) {
                if (m.calls() < 1 || (previous != null && previous.compareTo(m.key()) >= 0)) {
                    throw new IllegalArgumentException(
                            "usage lists one entry per role and model, in order, each with calls");
                }
                previous = m.key();
            }
        }

        /** The usage of the agent's and the judges' calls, priced by {@code pricing}. */
        public static Usage of(List<TokenUsage> agent, List<TokenUsage> judges, Pricing pricing) {
            Map<String, ModelUsage> byKey = new TreeMap<>();
            add(byKey, Role.AGENT, agent, pricing);
            add(byKey, Role.JUDGE, judges, pricing);
            return new Usage(new ArrayList<>(byKey.values()), 0);
        }

        /** This usage with the agent's answer taken from the answer cache. */
        public Usage withCachedAnswer() {
            return new Usage(models, cachedAnswers + 1);
        }

        private static void add(Map<String, ModelUsage> byKey, Role role, List<TokenUsage> usage, Pricing pricing) {
            for (TokenUsage u : usage) {
                Optional<BigDecimal> cost = pricing.price(u.model())
                        .map(p -> p.cost(u.promptTokens(), u.cachedPromptTokens(), u.completionTokens()));
                ModelUsage m = new ModelUsage(
                        role, u.model(), 1, u.promptTokens(), u.cachedPromptTokens(), u.completionTokens(), cost);
                byKey.merge(m.key(), m, ModelUsage::plus);
            }
        }

        /** Both executions' calls (the sum of epochs). */
        public Usage plus(Usage o) {
            Map<String, ModelUsage> byKey = new TreeMap<>();
            for (ModelUsage m : models) {
                byKey.merge(m.key(), m, ModelUsage::plus);
            }
            for (ModelUsage m : o.models) {
                byKey.merge(m.key(), m, ModelUsage::plus);
            }
            return new Usage(new ArrayList<>(byKey.values()), cachedAnswers + o.cachedAnswers);
        }

        /** The cost of every call; empty when a model has no price; zero without calls. */
        public Optional<BigDecimal> costUsd() {
            Optional<BigDecimal> total = Optional.of(BigDecimal.ZERO);
            for (ModelUsage m : models) {
                total = sum(total, m.costUsd());
            }
            return total;
        }

        /** Input plus output tokens of every call. */
        public long tokens() {
            long t = 0;
            for (ModelUsage m : models) {
                t += m.inputTokens() + m.outputTokens();
            }
            return t;
        }
    }

    /**
     * The transcript of one attempt of a case's agent call: a session log (docs/transcripts.md), either a whole object
     * (receipt versions 2-7, and version 8 without {@code offset}) or a slice of a transcript container (version 8).
     *
     * @param attempt the 1-based attempt number
     * @param ref     the transcript's reference: the object's key, and the length and SHA-256 of the transcript's
     *                bytes (the whole object's, or the slice's)
     * @param offset  where the slice starts in the container at {@code ref.key()}; empty: the whole object
     */
    public record TranscriptRef(int attempt, ObjectRef ref, OptionalLong offset) {
        public TranscriptRef {
            Objects.requireNonNull(ref, "ref");
            Objects.requireNonNull(offset, "offset");
            if (attempt < 1) {
                throw new IllegalArgumentException("attempt must be >= 1, got " + attempt);
            }
            if (offset.isPresent() && offset.getAsLong() < 0) {
                throw new IllegalArgumentException("offset must be >= 0, got " + offset.getAsLong());
            }
        }

        /** A transcript that is a whole object (receipt versions 2-7). */
        public TranscriptRef(int attempt, ObjectRef ref) {
            this(attempt, ref, OptionalLong.empty());
        }

        /** A transcript that is the slice {@code ref} at {@code offset} of a container (receipt version 8). */
        public static TranscriptRef slice(int attempt, ObjectRef ref, long offset) {
            return new TranscriptRef(attempt, ref, OptionalLong.of(offset));
        }
    }

    /**
     * A file a sandboxed execution left in its work directory that matched the profile's {@code keep_files}
     * (version 5 receipts), stored as an immutable object at {@link #keptFileKey}.
     *
     * @param path its path relative to the work directory, with {@code /} separators
     * @param ref  the stored object (key, length, SHA-256)
     */
    public record KeptFileRef(String path, ObjectRef ref) {
        public KeptFileRef {
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(ref, "ref");
        }
    }

    /** The content-addressed key of a kept file of run {@code runId}. */
    public static ObjectKey keptFileKey(UUID runId, Sha256 sha) {
        return ObjectKey.of("runs/" + runId + "/files/" + sha.toHex());
    }

    /**
     * One case's result.
     *
     * @param output       the output when stored inline (at most {@link #INLINE_OUTPUT_BYTES} UTF-8 bytes)
     * @param outputRef    the output's object when stored apart
     * @param outputLength UTF-8 bytes of the output (0 when the agent errored)
     * @param outputSha256 SHA-256 of the output's UTF-8 bytes (empty when the agent errored)
     * @param gates        outcome per selecting gate, by gate name, in gate order
     * @param transcripts  one transcript per attempt, in attempt order (empty in version 1 receipts, and for a case
     *                     of several epochs: its epochs list their own)
     * @param epochs       with several epochs (version 3 receipts), each epoch's own result, in epoch order: the
     *                     same case, with its own status, output, attempts, evaluator results, gate outcomes and
     *                     transcripts, and no epochs of its own. This result is then their reduction
     *                     ({@link EpochReduction}): no output, the attempts and agent time summed, the evaluators
     *                     reduced, the gate outcomes from the reduced evaluators. Empty with one epoch.
     * @param usage        the execution's model calls and cost (version 4; of a case of several epochs: the sum of
     *                     its epochs'); empty in older receipts
     * @param keptFiles    the files a sandboxed execution kept (version 5), in path order; empty without
     *                     {@code keep_files}, and for a case of several epochs (its epochs list their own)
     */
    public record CaseResult(
            long ordinal,
            String id,
            Sha256 caseSha256,
            boolean errored,
            Optional<String> output,
            Optional<ObjectRef> outputRef,
            long outputLength,
            Optional<Sha256> outputSha256,
            int attempts,
            long agentMillis,
            Optional<Error> error,
            List<EvaluatorResult> evaluatorResults,
            Map<String, GateOutcome> gates,
            List<TranscriptRef> transcripts,
            List<CaseResult> epochs,
            Optional<Usage> usage,
            List<KeptFileRef> keptFiles) {
        public CaseResult {
            Objects.requireNonNull(usage, "usage");
            keptFiles = List.copyOf(keptFiles);
            evaluatorResults = List.copyOf(evaluatorResults);
            gates = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(gates));
            transcripts = List.copyOf(transcripts);
            epochs = List.copyOf(epochs);
            for (CaseResult e : epochs) {
                if (!e.epochs().isEmpty() || e.ordinal() != ordinal) {
                    throw new IllegalArgumentException(
                            "case " + id + ": an epoch must be of the same case and have no" + " epochs of its own");
                }
            }
        }

        /** A result without kept files. */
        public CaseResult(
                long ordinal,
                String id,
                Sha256 caseSha256,
                boolean errored,
                Optional<String> output,
                Optional<ObjectRef> outputRef,
                long outputLength,
                Optional<Sha256> outputSha256,
                int attempts,
                long agentMillis,
                Optional<Error> error,
                List<EvaluatorResult> evaluatorResults,
                Map<String, GateOutcome> gates,
                List<TranscriptRef> transcripts,
                List<CaseResult> epochs,
                Optional<Usage> usage) {
            this(
                    ordinal,
                    id,
                    caseSha256,
                    errored,
                    output,
                    outputRef,
                    outputLength,
                    outputSha256,
                    attempts,
                    agentMillis,
                    error,
                    evaluatorResults,
                    gates,
                    transcripts,
                    epochs,
                    usage,
                    List.of());
        }

        /** A result of one execution (no epochs). */
        public CaseResult(
                long ordinal,
                String id,
                Sha256 caseSha256,
                boolean errored,
                Optional<String> output,
                Optional<ObjectRef> outputRef,
                long outputLength,
                Optional<Sha256> outputSha256,
                int attempts,
                long agentMillis,
                Optional<Error> error,
                List<EvaluatorResult> evaluatorResults,
                Map<String, GateOutcome> gates,
                List<TranscriptRef> transcripts) {
            this(
                    ordinal,
                    id,
                    caseSha256,
                    errored,
                    output,
                    outputRef,
                    outputLength,
                    outputSha256,
                    attempts,
                    agentMillis,
                    error,
                    evaluatorResults,
                    gates,
                    transcripts,
                    List.of(),
                    Optional.empty());
        }

        /** A result of several epochs, without usage. */
        public CaseResult(
                long ordinal,
                String id,
                Sha256 caseSha256,
                boolean errored,
                Optional<String> output,
                Optional<ObjectRef> outputRef,
                long outputLength,
                Optional<Sha256> outputSha256,
                int attempts,
                long agentMillis,
                Optional<Error> error,
                List<EvaluatorResult> evaluatorResults,
                Map<String, GateOutcome> gates,
                List<TranscriptRef> transcripts,
                List<CaseResult> epochs) {
            this(
                    ordinal,
                    id,
                    caseSha256,
                    errored,
                    output,
                    outputRef,
                    outputLength,
                    outputSha256,
                    attempts,
                    agentMillis,
                    error,
                    evaluatorResults,
                    gates,
                    transcripts,
                    epochs,
                    Optional.empty());
        }

        /** This result with the given usage. */
        public CaseResult withUsage(Optional<Usage> u) {
            return new CaseResult(
                    ordinal,
                    id,
                    caseSha256,
                    errored,
                    output,
                    outputRef,
                    outputLength,
                    outputSha256,
                    attempts,
                    agentMillis,
                    error,
                    evaluatorResults,
                    gates,
                    transcripts,
                    epochs,
                    u,
                    keptFiles);
        }

        /** This result with the given kept files. */
        public CaseResult withKeptFiles(List<KeptFileRef> files) {
            return new CaseResult(
                    ordinal,
                    id,
                    caseSha256,
                    errored,
                    output,
                    outputRef,
                    outputLength,
                    outputSha256,
                    attempts,
                    agentMillis,
                    error,
                    evaluatorResults,
                    gates,
                    transcripts,
                    epochs,
                    usage,
                    files);
        }

        /**
         * Per selecting gate (in gate order), how many of the case's epochs passed it; empty for a case of one
         * epoch.
         */
        public Map<String, Integer> epochPasses() {
            Map<String, Integer> out = new LinkedHashMap<>();
            if (epochs.isEmpty()) {
                return out;
            }
            for (String g : gates.keySet()) {
                int n = 0;
                for (CaseResult e : epochs) {
                    n += e.gates().get(g) == GateOutcome.PASSED ? 1 : 0;
                }
                out.put(g, n);
            }
            return java.util.Collections.unmodifiableMap(out);
        }

        /** This result with the given transcripts. */
        public CaseResult withTranscripts(List<TranscriptRef> refs) {
            return new CaseResult(
                    ordinal,
                    id,
                    caseSha256,
                    errored,
                    output,
                    outputRef,
                    outputLength,
                    outputSha256,
                    attempts,
                    agentMillis,
                    error,
                    evaluatorResults,
                    gates,
                    refs,
                    epochs,
                    usage,
                    keptFiles);
        }
    }

    /** Per-gate counts over this receipt's cases. */
    public record GateTally(String name, long selected, long passed, long failed, long errored) {}

    /**
     * Epochs per case: the number every case of a version 3 receipt lists (at least 2), else 1.
     */
    public int epochCount() {
        return cases.isEmpty() || cases.get(0).epochs().isEmpty()
                ? 1
                : cases.get(0).epochs().size();
    }

    /**
     * The chunk's epoch pass histograms, for pass@k without per-case rows (docs/execution.md, "Statistics"): for gate
     * {@code g} (gate order) and {@code 0 <= c <= n} ({@code n} = {@link #epochCount}), element {@code g * (n + 1) + c}
     * counts the cases the gate selects, not errored, with c of their n epochs passing it. Empty with one epoch.
     */
    public long[] epochPassHistograms() {
        int n = epochCount();
        if (n == 1) {
            return new long[0];
        }
        long[] out = new long[gates.size() * (n + 1)];
        for (int g = 0; g < gates.size(); g++) {
            String gate = gates.get(g);
            for (CaseResult c : cases) {
                GateOutcome o = c.gates().get(gate);
                if (o != null && o != GateOutcome.ERRORED) {
                    out[g * (n + 1) + c.epochPasses().get(gate)]++;
                }
            }
        }
        return out;
    }

    /** The scope of a run's usage over all its cases, beside the scopes of its gates (named by the gate). */
    public static final String ALL_CASES = "*";

    /**
     * The chunk's usage per scope: {@link #ALL_CASES} over every case, and per gate (gate order) over the cases it
     * selects. Empty when a case has no usage (a receipt before version 4).
     */
    public Map<String, Usage> usageByScope() {
        Map<String, Usage> out = new LinkedHashMap<>();
        Usage all = Usage.NONE;
        Map<String, Usage> byGate = new LinkedHashMap<>();
        gates.forEach(g -> byGate.put(g, Usage.NONE));
        for (CaseResult c : cases) {
            if (c.usage().isEmpty()) {
                return Map.of();
            }
            Usage u = c.usage().get();
            all = all.plus(u);
            for (String g : c.gates().keySet()) {
                byGate.merge(g, u, Usage::plus);
            }
        }
        out.put(ALL_CASES, all);
        out.putAll(byGate);
        // Executions a rerun replaced were paid for: they count once, here, beside the entries that replaced them.
        rerun.ifPresent(r -> r.supersededUsage().forEach((scope, u) -> out.merge(scope, u, Usage::plus)));
        return java.util.Collections.unmodifiableMap(out);
    }

    /**
     * The chunk's judge agreement per scope ({@link #ALL_CASES} and each gate over the cases it selects) and panel:
     * Krippendorff's alpha sums over the panel results of the chunk's executions (each execution, each epoch of a
     * case of several, is one unit of its panel's scored votes). Scopes and panels without a unit of two scored votes
     * are absent.
     */
    public Map<String, Map<String, KrippendorffAlpha.Sums>> agreementByScope() {
        Map<String, Map<String, KrippendorffAlpha.Sums>> out = new TreeMap<>();
        for (CaseResult c : cases) {
            List<CaseResult> executions = c.epochs().isEmpty() ? List.of(c) : c.epochs();
            for (CaseResult x : executions) {
                for (EvaluatorResult e : x.evaluatorResults()) {
                    double[] scored = e.scoredVotes();
                    if (scored.length < 2) {
                        continue;
                    }
                    KrippendorffAlpha.Sums unit = KrippendorffAlpha.Sums.ofUnit(scored);
                    List<String> scopes = new ArrayList<>();
                    scopes.add(ALL_CASES);
                    scopes.addAll(c.gates().keySet());
                    for (String scope : scopes) {
                        out.computeIfAbsent(scope, k -> new TreeMap<>())
                                .merge(e.name(), unit, KrippendorffAlpha.Sums::plus);
                    }
                }
            }
        }
        return out;
    }

    public long casesErrored() {
        return cases.stream().filter(CaseResult::errored).count();
    }

    /** The tallies, computed from the case entries, in gate order. */
    public List<GateTally> tallies() {
        List<GateTally> out = new ArrayList<>();
        for (String g : gates) {
            long selected = 0;
            long passed = 0;
            long failed = 0;
            long errored = 0;
            for (CaseResult c : cases) {
                GateOutcome o = c.gates().get(g);
                if (o == null) {
                    continue;
                }
                selected++;
                switch (o) {
                    case PASSED -> passed++;
                    case FAILED -> failed++;
                    case ERRORED -> errored++;
                }
            }
            out.add(new GateTally(g, selected, passed, failed, errored));
        }
        return out;
    }

    /** The object key of a receipt written under {@code leaseGeneration}. */
    public static ObjectKey key(UUID runId, long chunkIndex, long leaseGeneration) {
        return ObjectKey.of("runs/" + runId + "/receipts/" + ObjectKey.zeroPadded(chunkIndex, 10) + "-g"
                + leaseGeneration + ".json");
    }

    /** The content-addressed key of an output too long to inline. */
    public static ObjectKey outputKey(UUID runId, Sha256 sha) {
        return ObjectKey.of("runs/" + runId + "/outputs/" + sha.toHex() + ".txt");
    }
}
