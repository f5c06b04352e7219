package dev.vigilo.plan;

import dev.vigilo.storage.ObjectRef;
import java.util.UUID;

/**
 * The outcome of a successful {@link RunPreparation#create}.
 *
 * @param runId           the run
 * @param status          {@link RunState#PENDING} (execution requested) or {@link RunState#CREATING} (--prepare-only)
 * @param planStatus      {@link PlanStatus#READY}
 * @param dispatchable    false for --prepare-only
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
