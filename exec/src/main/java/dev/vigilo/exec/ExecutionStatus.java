package dev.vigilo.exec;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * A run's execution progress and results, as {@code vigilo run status --json} adds them to the preparation status
 * (docs/execution.md, "Status"). Immutable.
 *
 * @param runId         the run
 * @param status        the run's status when this was read (creating, pending, running, settled, cancelled, failed)
 * @param verdict       {@code passed} or {@code failed} once settled; empty before, and for failed or cancelled runs
 * @param failureReason why the run failed, when it did
 * @param execution     chunk and case progress, in all and per routed shard
 * @param gates         the gate table: final once settlement recorded it, otherwise the counts so far (partial)
 * @param gatesFinal    whether {@code gates} is the recorded table of a settled or failed run
 */
public record ExecutionStatus(
        UUID runId,
        String status,
        Optional<String> verdict,
        Optional<String> failureReason,
        Progress execution,
        List<GateResult> gates,
        boolean gatesFinal) {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    public ExecutionStatus {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(verdict, "verdict");
        Objects.requireNonNull(failureReason, "failureReason");
        Objects.requireNonNull(execution, "execution");
        gates = List.copyOf(gates);
    }

    /**
     * Progress over the run's chunks.
     *
     * @param chunks       chunks of the plan
     * @param chunksDone   chunks completed with a receipt
     * @param chunksFailed chunks that ended failed (their cases never ran)
     * @param cases        cases of the plan
     * @param casesDone    cases of done chunks (each ran: passed, failed or errored)
     * @param shards       routed shards in ascending order (empty before admission)
     */
    public record Progress(
            long chunks, long chunksDone, long chunksFailed, long cases, long casesDone, List<ShardProgress> shards) {
        public Progress {
            shards = List.copyOf(shards);
        }
    }

    /**
     * One shard's progress.
     *
     * @param placement the execution database holding its records now
     * @param state     its route's state: seeding, active, moving or tombstoned
     */
    public record ShardProgress(
            int shard,
            String placement,
            String state,
            long chunks,
            long chunksDone,
            long chunksFailed,
            long cases,
            long casesDone) {}

    /** Whether the run can change no more: settled, failed or cancelled. */
    public boolean finished() {
        return status.equals("settled") || status.equals("failed") || status.equals("cancelled");
    }

    /**
     * Adds this status to a {@code run status --json} document: sets {@code status} (to the value read with the
     * fields below, so the document is consistent), and adds {@code execution}, {@code verdict}, {@code gates},
     * {@code gates_final} and, for a failed run, {@code failure_reason}. Every other key is left as it is.
     */
    public void addTo(ObjectNode doc) {
        doc.put("status", status);
        ObjectNode e = doc.putObject("execution");
        e.put("chunks", execution.chunks())
                .put("chunks_done", execution.chunksDone())
                .put("chunks_failed", execution.chunksFailed())
                .put("cases", execution.cases())
                .put("cases_done", execution.casesDone());
        ArrayNode shards = e.putArray("shards");
        for (ShardProgress s : execution.shards()) {
            shards.addObject()
                    .put("shard", s.shard())
                    .put("placement", s.placement())
                    .put("state", s.state())
                    .put("chunks", s.chunks())
                    .put("chunks_done", s.chunksDone())
                    .put("chunks_failed", s.chunksFailed())
                    .put("cases", s.cases())
                    .put("cases_done", s.casesDone());
        }
        doc.put("verdict", verdict.orElse(null));
        ArrayNode g = doc.putArray("gates");
        for (GateResult r : gates) {
            ObjectNode o = g.addObject()
                    .put("name", r.name())
                    .put("planned", r.planned())
                    .put("executed", r.executed())
                    .put("passed", r.passed())
                    .put("failed", r.failed())
                    .put("errored", r.errored())
                    .put("pass_rate", r.passRate())
                    .put("failure_rate", r.failureRate())
                    .put("error_rate", r.errorRate())
                    .put("min_pass_rate", r.minPassRate());
            if (r.passedGate().isPresent()) {
                o.put("passed_gate", r.passedGate().get());
            } else {
                o.putNull("passed_gate");
            }
        }
        doc.put("gates_final", gatesFinal);
        failureReason.ifPresent(x -> doc.put("failure_reason", x));
    }

    /**
     * {@link #addTo} applied to the compact JSON of a preparation status (one object, as
     * {@code dev.vigilo.plan.RunStatus#toJson()} writes it); returns compact JSON, keys in their original order.
     *
     * @throws IllegalArgumentException when {@code runStatusJson} is not a JSON object
     */
    public String mergeInto(String runStatusJson) {
        try {
            JsonNode n = MAPPER.readTree(runStatusJson);
            if (!(n instanceof ObjectNode doc)) {
                throw new IllegalArgumentException("not a JSON object: " + runStatusJson);
            }
            addTo(doc);
            return MAPPER.writeValueAsString(doc);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** This status alone: {@code run_id} and the keys {@link #addTo} writes. Compact, one line. */
    public String toJson() {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("run_id", runId.toString());
        addTo(n);
        return n.toString();
    }
}
