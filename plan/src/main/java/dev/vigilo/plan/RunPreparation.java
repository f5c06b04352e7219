package dev.vigilo.plan;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.DatabaseErrors;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.StateUnknownException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import dev.vigilo.dataset.CaseFold;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetDamagedException;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectNotFoundException;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import dev.vigilo.storage.StoreSpec;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * {@code vigilo run create}: prepares and publishes a run's immutable, verified execution plan
 * (docs/run-preparation.md).
 *
 * <p>Contract: {@link #create} either returns after one SQL transaction recorded the verified manifest reference and
 * shard metadata (the only commit point), or throws a {@link VigiloException} naming the run. Plan files written before
 * a failure stay owned by the run; repeating the same request (same run id, profile, dataset, storage) resumes,
 * verifies what exists and reproduces identical bytes. Cancellation: interrupt the calling thread (the CLI does so on
 * Ctrl-C); the call then throws {@link CancelledException} after yielding the lease. Thread-safe: each call
 * uses its own lease owner.
 */
public final class RunPreparation {
    /** Case files the dataset pass reads and verifies ahead of the planner. */
    private static final int READ_AHEAD = 4;

    private final Jdbi jdbi;
    private final StorageConfig storage;
    private final PreparationOptions options;

    public RunPreparation(Jdbi jdbi, StorageConfig storage) {
        this(jdbi, storage, PreparationOptions.DEFAULTS);
    }

    public RunPreparation(Jdbi jdbi, StorageConfig storage, PreparationOptions options) {
        this.jdbi = Objects.requireNonNull(jdbi, "jdbi");
        this.storage = Objects.requireNonNull(storage, "storage");
        this.options = Objects.requireNonNull(options, "options");
    }

    /**
     * Creates (or resumes) the run and publishes its plan.
     *
     * @throws InvalidInputException bad profile, unknown dataset, too many cases, unresolvable storage, inputs that
     *                               differ from the run's, or a gate selecting no case
     * @throws ConflictException     another creator holds the run
     * @throws FencedException       authority was lost mid-way (repeat to resume)
     * @throws DamagedException      a dataset or plan object is missing or altered
     * @throws CancelledException    the thread was interrupted
     * @throws StateUnknownException the publication commit's outcome is unknown (repeat; never clean up)
     * @throws UnavailableException  the control database or the store failed (repeat to resume)
     */
    public CreateResult create(CreateRequest request) {
        Objects.requireNonNull(request, "request");
        UUID runId = request.runId().orElseGet(UUID::randomUUID);
        Profile profile;
        try {
            profile = request.profile().parse();
        } catch (ProfileException e) {
            throw PlanErrors.invalid(runId, e.problems());
        }
        Optional<DatasetEntry> found;
        try {
            found = new DatasetCatalog(jdbi).find(request.datasetUploadId());
        } catch (org.jdbi.v3.core.JdbiException e) {
            throw databaseFailed(runId, e, false);
        }
        DatasetEntry dataset = found.orElseThrow(() -> PlanErrors.invalid(
                runId,
                "dataset-upload-id: no finalized dataset " + request.datasetUploadId()
                        + "; list datasets with vigilo dataset list"));
        if (dataset.caseCount() > profile.limits().maxCases()) {
            throw PlanErrors.invalid(
                    runId,
                    "limits.max_cases: the dataset has " + dataset.caseCount()
                            + " cases, the profile allows " + profile.limits().maxCases()
                            + "; raise limits.max_cases or use a"
                            + " smaller dataset");
        }
        StoreSpec spec = storage.resolve(dataset.storage())
                .orElseThrow(() -> PlanErrors.invalid(
                        runId,
                        "storage: dataset " + dataset.uploadId() + " is stored in " + dataset.storage()
                                + ", which the storage"
                                + " configuration (" + storage.source()
                                + ") does not resolve; pass --storage-config or set"
                                + " VIGILO_STORAGE_CONFIG to a configuration with that store"));
        long expectedChunks = Planner.expectedChunks(dataset.caseCount());
        Authority authority = new Authority(jdbi, runId, options.lease());
        FrozenInputs frozen = new FrozenInputs(
                dataset.uploadId(),
                dataset.sourceSha256().toHex(),
                dataset.membershipUuid(),
                dataset.caseCount(),
                dataset.storage().value(),
                ProfileJson.sha256(profile).toHex(),
                "{\"max_cases\":" + profile.limits().maxCases() + "}",
                evaluatorArtifacts(profile),
                request.initialPlacement(),
                expectedChunks,
                FrozenInputs.Identity.of(profile, request.label()));
        // Claim before opening the storage adapter or reading anything of the plan.
        Authority.Claimed claimed;
        try {
            claimed = authority.claim(frozen);
        } catch (org.jdbi.v3.core.JdbiException e) {
            throw databaseFailed(runId, e, true);
        }
        try {
            return run(request, runId, profile, dataset, spec, authority, claimed, expectedChunks);
        } catch (VigiloException e) {
            throw explain(runId, dataset, e);
        } catch (org.jdbi.v3.core.JdbiException e) {
            throw databaseFailed(runId, e, true);
        } finally {
            boolean interrupted = Thread.interrupted();
            try {
                authority.release();
            } catch (RuntimeException ignored) {
                // Control storage unreachable: the lease expires on its own.
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * A failure of the store or the dataset, explained for this run; preparation's own errors already name the run
     * and pass unchanged.
     */
    private static VigiloException explain(UUID runId, DatasetEntry dataset, VigiloException e) {
        if (PlanErrors.namesRun(e, runId)) {
            return e;
        }
        if (e instanceof DatasetDamagedException) {
            return PlanErrors.damaged(
                    runId, "dataset " + dataset.uploadId() + " failed verification: " + e.getMessage(), e);
        }
        return switch (e.kind()) {
            case CANCELLED ->
                PlanErrors.cancelled(runId, "cancelled; the lease was yielded, repeat the command to resume", e);
            case INVALID_INPUT -> PlanErrors.invalid(runId, "dataset " + dataset.uploadId() + ": " + e.getMessage());
            default ->
                PlanErrors.unavailable(
                        runId,
                        "storage failed: " + e.getMessage() + "; repeat the command with the same --run-id to resume",
                        e);
        };
    }

    /**
     * The control database failed. The lease of this attempt may outlive it (releasing it needs the database), so
     * the message says how long a repeat can be refused. The driver's message is kept, the SQL text is not.
     */
    private VigiloException databaseFailed(UUID runId, RuntimeException e, boolean leaseMayBeHeld) {
        if (Thread.currentThread().isInterrupted()) {
            return PlanErrors.cancelled(runId, "cancelled; repeat the command to resume", e);
        }
        return PlanErrors.unavailable(
                runId,
                "the control database failed (" + DatabaseErrors.detail(e)
                        + "); when it is back, repeat the command with"
                        + " the same --run-id to resume"
                        + (leaseMayBeHeld
                                ? " (the creation lease of this attempt may refuse a repeat from another host for"
                                        + " up to " + options.lease().toMinutes() + " minutes; a repeat on this host"
                                        + " takes it over once this command has exited)"
                                : ""),
                e);
    }

    private CreateResult run(
            CreateRequest request,
            UUID runId,
            Profile profile,
            DatasetEntry dataset,
            StoreSpec spec,
            Authority authority,
            Authority.Claimed claimed,
            long expectedChunks) {
        if (claimed.planStatus() == PlanStatus.REJECTED) {
            throw PlanErrors.invalid(runId, claimed.rejection().orElse("preparation was rejected"));
        }
        boolean execute = !request.prepareOnly() || claimed.executionRequested();
        try (ObjectStore store = ObjectStores.open(spec)) {
            if (claimed.planStatus() == PlanStatus.READY) {
                // Published earlier: re-verify the root (not the whole tree) and request execution if asked.
                var root = claimed.root().orElseThrow();
                try {
                    PlanManifest.decode(store.read(root, Deadline.after(Duration.ofSeconds(120))));
                } catch (ObjectNotFoundException | ObjectIntegrityException | PlanJson.FormatException e) {
                    throw PlanErrors.damaged(
                            runId, "published manifest " + root.key() + " failed verification: " + e.getMessage(), e);
                }
                if (execute && claimed.runStatus() == RunState.CREATING && !claimed.executionRequested()) {
                    authority.requestExecution();
                }
                RunState now = claimed.runStatus();
                return new CreateResult(
                        runId,
                        now,
                        PlanStatus.READY,
                        now == RunState.PENDING || now == RunState.RUNNING,
                        execute,
                        expectedChunks,
                        dataset.caseCount(),
                        root,
                        authority.generation(),
                        0,
                        0);
            }
            // A resume starts after the consecutive acknowledged chunks (the cursor); see ChunkRestore.
            long cursor = Math.min(claimed.cursor().value(), expectedChunks);
            try (GroupWriter writer = new GroupWriter(store, authority.files(), options, cursor)) {
                return prepare(runId, profile, dataset, store, authority, writer, cursor, expectedChunks, execute);
            }
        }
    }

    private CreateResult prepare(
            UUID runId,
            Profile profile,
            DatasetEntry dataset,
            ObjectStore store,
            Authority authority,
            GroupWriter writer,
            long cursor,
            long expectedChunks,
            boolean execute) {
        Planner planner = new Planner(runId, profile, dataset, writer);
        CaseFold identity = new CaseFold();
        long restored = new ChunkRestore(store, authority.files(), options, dataset.caseCount())
                .restore(cursor, planner, identity);
        DatasetReader reader = DatasetReader.open(dataset, store).withReadAhead(READ_AHEAD);
        reader.readVerifiedFrom(planner.cases(), identity, c -> {
            if (Thread.currentThread().isInterrupted()) {
                throw new CancelledException("preparation of run " + runId + " was cancelled");
            }
            authority.renewIfDue(options.renewInterval());
            planner.accept(c);
        });
        planner.completeCases();
        Optional<Integer> empty = planner.emptyGate();
        if (empty.isPresent()) {
            String reason = "gates[" + empty.get() + "]: gate \""
                    + profile.gates().get(empty.get()).name()
                    + "\" selects no case of dataset " + dataset.uploadId() + "; fix its required_evaluators,"
                    + " groups or tags and create a new run";
            writer.complete();
            authority.reject(reason);
            throw PlanErrors.invalid(runId, reason);
        }
        Planner.Result result = planner.finish();
        options.hooks().beforePublication();
        long files = new PlanVerifier(store, runId).verify(result.root(), dataset, profile);
        authority.publish(result.root(), expectedChunks, files, result.shards(), execute);
        return new CreateResult(
                runId,
                RunState.CREATING,
                PlanStatus.READY,
                false,
                execute,
                expectedChunks,
                planner.cases(),
                result.root(),
                authority.generation(),
                writer.filesWritten(),
                writer.filesReverified() + restored);
    }

    private static String evaluatorArtifacts(Profile profile) {
        var a = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.arrayNode();
        profile.evaluators().forEach(e -> a.add(ProfileJson.evaluator(e)));
        return dev.vigilo.storage.Sha256.of(ProfileJson.bytes(a)).toHex();
    }
}
