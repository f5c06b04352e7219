package dev.vigilo.exec.record;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import dev.vigilo.storage.StorageConfig;
import dev.vigilo.storage.StoreBinding;
import dev.vigilo.storage.StoreSpec;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * A run's preparation record as the readers of executed runs need it ({@code run_plans}): the frozen dataset identity,
 * the store of the plan, receipts and transcripts, and the published root.
 *
 * @param datasetUploadId    the finalized dataset
 * @param datasetSourceSha256 the dataset's source hash, frozen at preparation
 * @param datasetMembership  the dataset's membership UUID, frozen at preparation
 * @param datasetCases       the dataset's case count
 * @param storageBinding     the store of the plan, dataset, receipts, outputs and transcripts
 * @param root               the published manifest's reference (empty before publication)
 */
public record PlanRecord(
        UUID runId,
        UUID datasetUploadId,
        Sha256 datasetSourceSha256,
        UUID datasetMembership,
        long datasetCases,
        String storageBinding,
        Optional<ObjectRef> root) {
    /** Reads the run's plan record; empty when the run does not exist. */
    public static Optional<PlanRecord> find(Handle h, UUID runId) {
        return h.createQuery("SELECT dataset_upload_id, dataset_source_sha256, dataset_membership_uuid,"
                        + " dataset_case_count, storage_binding, root_key, root_length, root_sha256 FROM run_plans"
                        + " WHERE run_id = :r")
                .bind("r", runId)
                .map((rs, ctx) -> new PlanRecord(
                        runId,
                        rs.getObject("dataset_upload_id", UUID.class),
                        Sha256.parseHex(rs.getString("dataset_source_sha256")),
                        rs.getObject("dataset_membership_uuid", UUID.class),
                        rs.getLong("dataset_case_count"),
                        rs.getString("storage_binding"),
                        rs.getString("root_key") == null
                                ? Optional.empty()
                                : Optional.of(new ObjectRef(
                                        ObjectKey.of(rs.getString("root_key")),
                                        rs.getLong("root_length"),
                                        Sha256.parseHex(rs.getString("root_sha256"))))))
                .findOne();
    }

    /**
     * The configured store bound to this run's storage binding.
     *
     * @throws InvalidInputException when the storage configuration has none
     */
    public StoreSpec store(StorageConfig storage) {
        return storage.resolve(new StoreBinding(storageBinding))
                .orElseThrow(() -> new InvalidInputException("run " + runId + ": its plan and receipts are stored in "
                        + storageBinding + ", which the storage configuration (" + storage.source()
                        + ") does not resolve; set VIGILO_STORAGE_CONFIG or --storage-config to a configuration"
                        + " with that store"));
    }

    /**
     * The published plan, read through the recorded root.
     *
     * @throws InvalidInputException when the run's plan was never published
     */
    public PublishedPlan plan(ObjectReader store, Duration deadline) {
        ObjectRef r = root.orElseThrow(() -> new InvalidInputException(
                "run " + runId + " has no published plan; see `vigilo run status " + runId + "`"));
        return PublishedPlan.open(runId, r, store, Deadline.after(deadline));
    }
}
