package dev.vigilo.plan;

import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * A {@code vigilo run create} request.
 *
 * @param profile         the profile input
 * @param datasetUploadId the finalized dataset to prepare against
 * @param runId           the run id to use (resume with the same one); empty to generate one
 * @param prepareOnly     hold the published run in creating (plan ready, not dispatchable)
 */
public record CreateRequest(ProfileInput profile, UUID datasetUploadId, Optional<UUID> runId, boolean prepareOnly) {
    public CreateRequest {
        Objects.requireNonNull(profile, "profile");
        Objects.requireNonNull(datasetUploadId, "datasetUploadId");
        Objects.requireNonNull(runId, "runId");
    }
}
