package dev.vigilo.plan;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * A {@code vigilo run create} request.
 *
 * @param profile         the profile input
 * @param datasetUploadId the finalized dataset to prepare against
 * @param runId           the run id to use (resume with the same one); empty to generate one
 * @param prepareOnly     hold the published run in creating (plan ready, execution not requested)
 * @param placements      the execution database aliases a new run's shards are spread over (shard {@code s} on
 *                        {@code placements[s mod n]}); frozen at the run's first claim, ignored by later repeats
 * @param label           a label for people, shown after the profile's name (printable, at most 256 characters);
 *                        recorded at the run's first claim; a repeat may omit it but not change it
 */
public record CreateRequest(
        ProfileInput profile,
        UUID datasetUploadId,
        Optional<UUID> runId,
        boolean prepareOnly,
        List<String> placements,
        Optional<String> label) {
    /** The placement of a process without an execution configuration: the control database. */
    public static final List<String> CONTROL_PLACEMENT = List.of("control");

    public CreateRequest {
        Objects.requireNonNull(profile, "profile");
        Objects.requireNonNull(datasetUploadId, "datasetUploadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(label, "label");
        placements = List.copyOf(placements);
        if (placements.isEmpty()) {
            throw new IllegalArgumentException("at least one placement");
        }
    }

    /** A request without a label. */
    public CreateRequest(
            ProfileInput profile,
            UUID datasetUploadId,
            Optional<UUID> runId,
            boolean prepareOnly,
            List<String> placements) {
        this(profile, datasetUploadId, runId, prepareOnly, placements, Optional.empty());
    }

    /** A request placing the run in the control database. */
    public CreateRequest(ProfileInput profile, UUID datasetUploadId, Optional<UUID> runId, boolean prepareOnly) {
        this(profile, datasetUploadId, runId, prepareOnly, CONTROL_PLACEMENT);
    }

    /** The frozen placement rule recorded with the run: {@code round-robin:128:alias,alias,...}. */
    String initialPlacement() {
        return PlanShape.placementRule(placements);
    }
}
