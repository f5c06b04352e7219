package dev.vigilo.exec.record;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * One chunk's execution evidence, format {@code vigilo.exec.receipt} version 2 (docs/formats/exec-receipt.md): version
 * 1 plus, per case, the references of its attempts' transcripts. Immutable; {@link #decode} reads versions 1 and 2 and
 * checks the header and that the tallies equal the case entries.
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
    static final String FORMAT = "vigilo.exec.receipt";
    static final int VERSION = 2;
    /** The oldest version {@link #decode} reads (a version 1 receipt has no transcript references). */
    static final int OLDEST_VERSION = 1;
    /** Outputs up to this many UTF-8 bytes are stored in the receipt itself. */
    public static final int INLINE_OUTPUT_BYTES = 64 * 1024;

    private static final ObjectMapper MAPPER = StrictJson.newMapper();

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
     * @param transcripts  one transcript per attempt, in attempt order (empty in version 1 receipts)
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
            List<TranscriptRef> transcripts) {
        public CaseResult {
            evaluatorResults = List.copyOf(evaluatorResults);
            gates = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(gates));
            transcripts = List.copyOf(transcripts);
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
                    refs);
        }

        /** A result without transcripts (as in a version 1 receipt). */
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
                Map<String, GateOutcome> gates) {
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
                    List.of());
        }
    }

    /** Per-gate counts over this receipt's cases. */
    public record GateTally(String name, long selected, long passed, long failed, long errored) {}

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

    public byte[] encode() {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("format", FORMAT);
        n.put("version", VERSION);
        n.put("run_id", runId.toString());
        n.put("chunk_index", chunkIndex);
        n.put("chunk_id", chunkId.toString());
        n.put("shard", shard);
        n.put("lease_generation", leaseGeneration);
        n.put("worker", worker.toString());
        n.put("membership_sha256", membership.toHex());
        n.put("started_at", startedAt.toString());
        n.put("finished_at", finishedAt.toString());
        evaluators.forEach(n.putArray("evaluators")::add);
        gates.forEach(n.putArray("gates")::add);
        ArrayNode a = n.putArray("cases");
        for (CaseResult c : cases) {
            ObjectNode o = a.addObject();
            o.put("ordinal", c.ordinal());
            o.put("id", c.id());
            o.put("case_sha256", c.caseSha256().toHex());
            o.put("status", c.errored() ? "errored" : "ok");
            o.put("output", c.output().orElse(null));
            if (c.outputRef().isPresent()) {
                putRef(o.putObject("output_ref"), c.outputRef().get());
            } else {
                o.putNull("output_ref");
            }
            o.put("output_length", c.outputLength());
            o.put("output_sha256", c.outputSha256().map(Sha256::toHex).orElse(null));
            o.put("attempts", c.attempts());
            o.put("agent_ms", c.agentMillis());
            putError(o, c.error());
            ArrayNode ev = o.putArray("evaluators");
            for (EvaluatorResult r : c.evaluatorResults()) {
                ObjectNode e = ev.addObject();
                e.put("name", r.name());
                e.put("passed", r.passed());
                e.put("score", r.score());
                putError(e, r.error());
                e.put("ms", r.millis());
            }
            ObjectNode g = o.putObject("gates");
            c.gates().forEach((name, outcome) -> g.put(name, outcome.wire));
            ArrayNode tr = o.putArray("transcripts");
            for (TranscriptRef t : c.transcripts()) {
                ObjectNode x = tr.addObject();
                x.put("attempt", t.attempt());
                putRef(x, t.ref());
            }
        }
        ObjectNode t = n.putObject("tallies");
        t.put("cases_executed", cases.size());
        t.put("cases_errored", casesErrored());
        ArrayNode ta = t.putArray("gates");
        for (GateTally gt : tallies()) {
            ta.addObject()
                    .put("name", gt.name())
                    .put("selected", gt.selected())
                    .put("passed", gt.passed())
                    .put("failed", gt.failed())
                    .put("errored", gt.errored());
        }
        try {
            byte[] json = MAPPER.writeValueAsBytes(n);
            byte[] out = java.util.Arrays.copyOf(json, json.length + 1);
            out[json.length] = '\n';
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void putError(ObjectNode o, Optional<Error> error) {
        if (error.isPresent()) {
            o.putObject("error")
                    .put("type", error.get().type())
                    .put("message", error.get().message());
        } else {
            o.putNull("error");
        }
    }

    private static void putRef(ObjectNode o, ObjectRef ref) {
        o.put("key", ref.key().value());
        o.put("length", ref.length());
        o.put("sha256", ref.sha256().toHex());
    }

    /**
     * Decodes a receipt and checks its header and its tallies against its case entries.
     *
     * @param where names the receipt for messages (its key)
     * @throws DamagedException on any format or consistency problem
     */
    public static Receipt decode(byte[] bytes, String where) {
        try {
            JsonNode n = MAPPER.readTree(bytes);
            require(n != null && FORMAT.equals(n.path("format").asText()), "not a " + FORMAT + " document");
            int version = n.path("version").asInt();
            require(
                    n.path("version").isInt() && version >= OLDEST_VERSION && version <= VERSION,
                    "version " + n.path("version") + " is not one this build reads (" + OLDEST_VERSION + " to "
                            + VERSION + "); a newer Vigilo wrote it");
            List<String> evaluators = strings(n.path("evaluators"));
            List<String> gates = strings(n.path("gates"));
            List<CaseResult> cases = new ArrayList<>();
            for (JsonNode c : n.path("cases")) {
                List<EvaluatorResult> ev = new ArrayList<>();
                for (JsonNode e : c.path("evaluators")) {
                    ev.add(new EvaluatorResult(
                            e.path("name").asText(),
                            e.path("passed").asBoolean(),
                            e.path("score").asDouble(),
                            error(e.path("error")),
                            e.path("ms").asLong()));
                }
                Map<String, GateOutcome> go = new LinkedHashMap<>();
                c.path("gates")
                        .properties()
                        .forEach(f ->
                                go.put(f.getKey(), GateOutcome.of(f.getValue().asText())));
                JsonNode ref = c.path("output_ref");
                List<TranscriptRef> transcripts = new ArrayList<>();
                if (version >= 2) {
                    require(c.path("transcripts").isArray(), "case " + c.path("id") + " has no transcripts list");
                    for (JsonNode t : c.path("transcripts")) {
                        transcripts.add(new TranscriptRef(t.path("attempt").asInt(), ref(t)));
                    }
                }
                cases.add(new CaseResult(
                        c.path("ordinal").asLong(),
                        c.path("id").asText(),
                        Sha256.parseHex(c.path("case_sha256").asText()),
                        "errored".equals(c.path("status").asText()),
                        c.path("output").isTextual()
                                ? Optional.of(c.path("output").asText())
                                : Optional.empty(),
                        ref.isObject() ? Optional.of(ref(ref)) : Optional.empty(),
                        c.path("output_length").asLong(),
                        c.path("output_sha256").isTextual()
                                ? Optional.of(
                                        Sha256.parseHex(c.path("output_sha256").asText()))
                                : Optional.empty(),
                        c.path("attempts").asInt(),
                        c.path("agent_ms").asLong(),
                        error(c.path("error")),
                        ev,
                        go,
                        transcripts));
            }
            Receipt r = new Receipt(
                    UUID.fromString(n.path("run_id").asText()),
                    n.path("chunk_index").asLong(),
                    UUID.fromString(n.path("chunk_id").asText()),
                    n.path("shard").asInt(),
                    n.path("lease_generation").asLong(),
                    UUID.fromString(n.path("worker").asText()),
                    Sha256.parseHex(n.path("membership_sha256").asText()),
                    Instant.parse(n.path("started_at").asText()),
                    Instant.parse(n.path("finished_at").asText()),
                    evaluators,
                    gates,
                    cases);
            JsonNode t = n.path("tallies");
            require(
                    t.path("cases_executed").asLong() == cases.size()
                            && t.path("cases_errored").asLong() == r.casesErrored(),
                    "case tallies do not match the entries");
            List<GateTally> computed = r.tallies();
            JsonNode tg = t.path("gates");
            require(tg.size() == computed.size(), "gate tallies do not match the gates");
            for (int i = 0; i < computed.size(); i++) {
                GateTally g = computed.get(i);
                JsonNode x = tg.get(i);
                require(
                        g.name().equals(x.path("name").asText())
                                && g.selected() == x.path("selected").asLong()
                                && g.passed() == x.path("passed").asLong()
                                && g.failed() == x.path("failed").asLong()
                                && g.errored() == x.path("errored").asLong(),
                        "gate " + g.name() + "'s tally does not match the entries");
            }
            return r;
        } catch (IOException | RuntimeException e) {
            if (e instanceof DamagedException d) {
                throw new DamagedException("receipt " + where + " is invalid: " + d.getMessage(), d);
            }
            throw new DamagedException("receipt " + where + " is invalid: " + e.getMessage(), e);
        }
    }

    private static ObjectRef ref(JsonNode n) {
        return new ObjectRef(
                ObjectKey.of(n.path("key").asText()),
                n.path("length").asLong(),
                Sha256.parseHex(n.path("sha256").asText()));
    }

    private static void require(boolean ok, String what) {
        if (!ok) {
            throw new DamagedException(what);
        }
    }

    private static List<String> strings(JsonNode a) {
        List<String> out = new ArrayList<>();
        a.forEach(x -> out.add(x.asText()));
        return out;
    }

    private static Optional<Error> error(JsonNode e) {
        return e.isObject()
                ? Optional.of(
                        new Error(e.path("type").asText(), e.path("message").asText()))
                : Optional.empty();
    }
}
