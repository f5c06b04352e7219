package dev.vigilo.plan;

import dev.vigilo.common.input.Names;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * The inputs a run freezes at its first claim ({@code run_plans}' frozen columns): a repeated {@code run create} with
 * the same run id must present identical values, or it is refused with every difference and what to do about it.
 *
 * @param datasetUploadId    the dataset upload the run reads
 * @param sourceSha256       the dataset's source hash
 * @param membershipUuid     the dataset's membership identity
 * @param caseCount          the dataset's case count
 * @param storageBinding     the physical store the plan and dataset live in
 * @param profileSha256      the profile's canonical hash
 * @param limits             the limits, canonical JSON
 * @param evaluatorArtifacts the evaluator artifacts, canonical JSON
 * @param initialPlacement   the placement rule, {@code round-robin:128:alias,...}
 * @param expectedChunks     the plan's chunk count
 * @param identity           what the run is, for people: the profile's name, its agent's kind and model (functions of
 *                           the profile, so {@code profileSha256} compares them already)
 */
record FrozenInputs(
        UUID datasetUploadId,
        String sourceSha256,
        UUID membershipUuid,
        long caseCount,
        String storageBinding,
        String profileSha256,
        String limits,
        String evaluatorArtifacts,
        String initialPlacement,
        long expectedChunks,
        Identity identity) {

    /**
     * What a run is, for people: the profile's name, its agent's kind, and its model (an http agent's {@code model},
     * a command agent's program: the file name of its first argument), when there is one.
     */
    record Identity(
            String profileName,
            String agentKind,
            java.util.Optional<String> agentModel,
            java.util.Optional<String> label) {
        static Identity of(Profile profile) {
            return of(profile, java.util.Optional.empty());
        }

        static Identity of(Profile profile, java.util.Optional<String> label) {
            Profile.Agent a = profile.agent();
            com.fasterxml.jackson.databind.JsonNode p = a.parameters();
            java.util.Optional<String> model = p.path("model").isTextual()
                    ? java.util.Optional.of(p.path("model").asText())
                    : p.path("command").path(0).isTextual()
                            ? java.util.Optional.of(java.nio.file.Path.of(
                                            p.path("command").path(0).asText())
                                    .getFileName()
                                    .toString())
                            : java.util.Optional.empty();
            return new Identity(profile.name(), a.kind().wire(), model, label);
        }
    }

    /**
     * Records these inputs with the run's plan record at its first claim: plan status preparing, generation 1, the
     * current plan format version.
     */
    void insert(Handle h, UUID runId) {
        h.createUpdate("INSERT INTO run_plans (run_id, dataset_upload_id, dataset_source_sha256,"
                        + " dataset_membership_uuid, dataset_case_count, storage_binding, profile_sha256, limits,"
                        + " evaluator_artifacts, initial_placement, plan_format_version, plan_generation,"
                        + " plan_status, expected_chunks, profile_name, agent_kind, agent_model, run_label)"
                        + " VALUES (:r, :d, :src, :m, :n, :b, :p, :l, :e, :ip, :v, 1, :ps, :x, :pn, :ak, :am, :lb)")
                .bind("r", runId)
                .bind("d", datasetUploadId)
                .bind("src", sourceSha256)
                .bind("m", membershipUuid)
                .bind("n", caseCount)
                .bind("b", storageBinding)
                .bind("p", profileSha256)
                .bind("l", limits)
                .bind("e", evaluatorArtifacts)
                .bind("ip", initialPlacement)
                .bind("v", PlanLayout.FORMAT_VERSION)
                .bind("ps", PlanStatus.PREPARING.spelling())
                .bind("x", expectedChunks)
                .bind("pn", identity.profileName())
                .bind("ak", identity.agentKind())
                .bind("am", identity.agentModel().orElse(null))
                .bind("lb", identity.label().orElse(null))
                .execute();
    }

    /**
     * Compares these inputs with the recorded plan row {@code recorded} ({@code SELECT * FROM run_plans}).
     *
     * @throws dev.vigilo.common.errors.InvalidInputException listing every input that differs, each with what to do
     */
    void requireSameAs(UUID runId, Map<String, Object> recorded) {
        List<String> problems = new ArrayList<>();
        diff(
                problems,
                "dataset upload id",
                recorded.get("dataset_upload_id").toString(),
                datasetUploadId.toString(),
                "pass the same --dataset-upload-id");
        diff(
                problems,
                "dataset source hash",
                (String) recorded.get("dataset_source_sha256"),
                sourceSha256,
                "the dataset changed; create a new run");
        diff(
                problems,
                "dataset membership",
                recorded.get("dataset_membership_uuid").toString(),
                membershipUuid.toString(),
                "the dataset changed; create a new run");
        diff(
                problems,
                "dataset case count",
                recorded.get("dataset_case_count").toString(),
                Long.toString(caseCount),
                "the dataset changed; create a new run");
        diff(
                problems,
                "storage binding",
                (String) recorded.get("storage_binding"),
                storageBinding,
                "use a storage configuration that resolves the run's original store");
        diff(
                problems,
                "profile",
                (String) recorded.get("profile_sha256"),
                profileSha256,
                "pass the same profile (or create a new run)");
        diff(problems, "limits", (String) recorded.get("limits"), limits, "pass the same limits (or create a new run)");
        diff(
                problems,
                "evaluator artifacts",
                (String) recorded.get("evaluator_artifacts"),
                evaluatorArtifacts,
                "pass the same profile (or create a new run)");
        // A repeat may leave the label out; given, it must be the one recorded (a run's label does not change).
        if (identity.label().isPresent()) {
            Object label = recorded.get("run_label");
            diff(
                    problems,
                    "label",
                    label == null ? "(none)" : Names.quote((String) label),
                    Names.quote(identity.label().get()),
                    "pass the same --label, or none");
        }
        if (!problems.isEmpty()) {
            throw PlanErrors.invalid(runId, problems);
        }
    }

    private static void diff(List<String> problems, String what, String recorded, String given, String todo) {
        if (!recorded.equals(given)) {
            problems.add(what + " differs from the run's (recorded " + recorded + ", given " + given + "); " + todo);
        }
    }
}
