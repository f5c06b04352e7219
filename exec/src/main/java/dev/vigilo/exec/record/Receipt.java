package dev.vigilo.exec.record;

import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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
        List<CaseResult> cases) {
    /** Outputs up to this many UTF-8 bytes are stored in the receipt itself. */
    public static final int INLINE_OUTPUT_BYTES = 64 * 1024;

    public Receipt {
        evaluators = List.copyOf(evaluators);
        gates = List.copyOf(gates);
        cases = List.copyOf(cases);
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

    /** One evaluator's result on one case. */
    public record EvaluatorResult(String name, boolean passed, double score, Optional<Error> error, long millis) {}

    /**
     * The transcript of one attempt of a case's agent call: a session log object (docs/transcripts.md).
     *
     * @param attempt the 1-based attempt number
     * @param ref     the transcript object's reference (key, length, SHA-256)
     */
    public record TranscriptRef(int attempt, ObjectRef ref) {
        public TranscriptRef {
            Objects.requireNonNull(ref, "ref");
            if (attempt < 1) {
                throw new IllegalArgumentException("attempt must be >= 1, got " + attempt);
            }
        }
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
            List<CaseResult> epochs) {
        public CaseResult {
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
                    List.of());
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
                    epochs);
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
        return ObjectKey.of(
                "runs/" + runId + "/receipts/" + String.format("%010d", chunkIndex) + "-g" + leaseGeneration + ".json");
    }

    /** The content-addressed key of an output too long to inline. */
    public static ObjectKey outputKey(UUID runId, Sha256 sha) {
        return ObjectKey.of("runs/" + runId + "/outputs/" + sha.toHex() + ".txt");
    }
}
