package dev.vigilo.plan;

import dev.vigilo.storage.ObjectRef;
import java.util.UUID;

/**
 * The outcome of a successful {@link RunPreparation#create}.
 *
 * @param runId           the run
 * @param status          the run's status: {@link RunState#CREATING} after preparation (admission, module exec, moves
 *                        a run whose execution is requested on to pending); a later status when repeated after that
 * @param planStatus      {@link PlanStatus#READY}
 * @param dispatchable    whether workers may claim its chunks (only after admission)
 * @param executionRequested whether execution was requested (not --prepare-only, or an earlier request)
 * @param expectedChunks  chunks in the plan
 * @param cases           cases in the plan
 * @param root            the published manifest reference
 * @param generation      the plan generation this call claimed
 * @param filesWritten    plan files created by this call
 * @param filesReverified plan files found acknowledged by an earlier attempt and verified again without upload
 */
public record CreateResult(
        UUID runId,
        RunState status,
        PlanStatus planStatus,
        boolean dispatchable,
        boolean executionRequested,
        long expectedChunks,
        long cases,
        ObjectRef root,
        PlanGeneration generation,
        long filesWritten,
        long filesReverified) {

    /**
     * The {@code run create --json} form: {@code {"run_id","status","dispatchable","creation_progress":{"plan_status",
     * "plan_chunk_cursor"},"expected_chunks","cases","root":{"key","length","sha256"}}}. Compact, one line.
     */
    public String toJson() {
        com.fasterxml.jackson.databind.node.ObjectNode n =
                com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        n.put("run_id", runId.toString());
        n.put("status", status.spelling());
        n.put("dispatchable", dispatchable);
        n.putObject("creation_progress")
                .put("plan_status", planStatus.spelling())
                .put("plan_chunk_cursor", expectedChunks);
        n.put("expected_chunks", expectedChunks);
        n.put("cases", cases);
        PlanJson.putRef(n.putObject("root"), root);
        return new String(ProfileJson.bytes(n), java.nio.charset.StandardCharsets.UTF_8);
    }
}
