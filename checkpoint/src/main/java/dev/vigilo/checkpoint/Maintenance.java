package dev.vigilo.checkpoint;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Consumer;
import org.lance.Dataset;
import org.lance.cleanup.CleanupPolicy;
import org.lance.index.IndexOptions;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.scalar.ScalarIndexParams;

/**
 * The experiment's elected maintenance worker: compaction of the shared base table, refresh of the
 * item_id scalar index, cleanup of merged MemWAL generations (with the WAL entries and shard
 * manifests they make obsolete) and of old versions. Election: on a local root an exclusive OS lock
 * on {@code <experiment>/maintenance.lock} (released by {@link #close()} or the holder's death); on
 * S3 a lease object {@code <experiment>/maintenance.lease} written with conditional PUTs and
 * renewed before every step (taken over by another worker once it expired, so the role survives the
 * holder's death). At most one holder at a time. Not thread-safe.
 */
public final class Maintenance implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Maintenance.class);

    /**
     * Name of the scalar index on item_id (a rebuildable accelerator, never needed for
     * correctness).
     */
    public static final String ITEM_INDEX = "item_id_idx";

    private final CheckpointLog log;
    private final Election election;
    private Consumer<String> onFileRemoved = path -> {};

    private Maintenance(CheckpointLog log, Election election) {
        this.log = log;
        this.election = election;
    }

    static Optional<Maintenance> tryElect(CheckpointLog log) {
        return tryElect(log, S3Lease.DEFAULT_TTL);
    }

    /** {@code leaseTtl} only matters on S3 (a local lock does not expire). */
    static Optional<Maintenance> tryElect(CheckpointLog log, Duration leaseTtl) {
        LogLocation loc = log.location();
        Optional<Election> e =
                loc.isLocal() ? FileLockElection.tryAcquire(loc) : S3Lease.tryAcquire(loc, holderId(), leaseTtl);
        return e.map(el -> new Maintenance(log, el));
    }

    /** {@code <host>/<pid>/<random uuid>}: who holds a lease, for people reading it. */
    static String holderId() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "unknown-host";
        }
        return host + "/" + ProcessHandle.current().pid() + "/" + UUID.randomUUID();
    }

    /**
     * Test hook: told the path of every MemWAL file removed by the generation cleanup (lets a test
     * kill mid-way).
     */
    void onFileRemoved(Consumer<String> listener) {
        this.onFileRemoved = listener;
    }

    /**
     * What one maintenance pass did.
     *
     * @param generationFoldersRemoved merged generation folders deleted (all shards)
     * @param walFilesRemoved WAL entries deleted (covered by merged generations)
     * @param manifestsRemoved superseded shard manifest versions deleted
     */
    public record Report(
            int fragmentsBefore,
            int fragmentsAfter,
            boolean indexRefreshed,
            long oldVersionsRemoved,
            int generationFoldersRemoved,
            int walFilesRemoved,
            int manifestsRemoved) {}

    /**
     * {@link #runOnce(long, long)} with one window for both old versions and merged generations.
     */
    public Report runOnce(long keepNewerThanMs) {
        return runOnce(keepNewerThanMs, keepNewerThanMs);
    }

    /**
     * One pass: compact the base table (stable row ids are on: without them compaction aborted the
     * JVM), rebuild the item_id BTREE index over the compacted table, remove MemWAL generations
     * that were already merged in the base version current {@code keepGenerationsMs} ago (so a
     * reader opened within that window still finds every generation its snapshot lists) together
     * with their WAL entries and old shard manifests, then remove versions older than {@code
     * keepVersionsNewerThanMs}. Safe concurrently with writers' merges (Lance retries conflicting
     * commits) and with live writers (only merged data and entries before the replay position go).
     *
     * @throws FencedException the S3 lease was taken over; nothing further was done
     */
    public Report runOnce(long keepVersionsNewerThanMs, long keepGenerationsMs) {
        election.confirm();
        try (Dataset ds = log.openDataset()) {
            int before = ds.getFragments().size();
            if (before > 1) {
                CrashPoints.boundary("checkpoint.maintenance.compact");
                ds.compact();
            }
            ds.checkoutLatest();
            boolean indexed = false;
            if (ds.countRows() > 0) {
                election.confirm();
                CrashPoints.boundary("checkpoint.maintenance.index");
                ds.createIndex(IndexOptions.builder(
                                List.of("item_id"),
                                IndexType.BTREE,
                                IndexParams.builder()
                                        .setScalarIndexParams(ScalarIndexParams.create("btree"))
                                        .build())
                        .replace(true)
                        .withIndexName(ITEM_INDEX)
                        .build());
                indexed = true;
            }
            ds.checkoutLatest();
            int after = ds.getFragments().size();
            // Before the version cleanup: the grace rule reads the merged watermark of an older
            // base version.
            election.confirm();
            GenerationCleanup.Removed gone = GenerationCleanup.run(log, keepGenerationsMs, onFileRemoved);
            // Keep at least the two newest versions whatever the age. Observed in Lance 7.0.0:
            // after a cleanup with a
            // zero-age window, the next compaction failed with "_versions/N.manifest was not found"
            // (see the format doc);
            // callers should keep a window of minutes, not zero.
            election.confirm();
            CrashPoints.boundary("checkpoint.maintenance.versions");
            long removed = ds.cleanupWithPolicy(CleanupPolicy.builder()
                            .withBeforeTimestampMillis(System.currentTimeMillis() - keepVersionsNewerThanMs)
                            .withBeforeVersion(Math.max(1, ds.latestVersion() - 1))
                            .build())
                    .getOldVersions();
            LOG.info(
                    "maintenance of {}: fragments {} -> {}, index refreshed {}, old versions removed {}, merged "
                            + "generations removed {} (WAL files {}, manifests {})",
                    log.location().uri(),
                    before,
                    after,
                    indexed,
                    removed,
                    gone.generationFolders(),
                    gone.walFiles(),
                    gone.manifests());
            return new Report(
                    before, after, indexed, removed, gone.generationFolders(), gone.walFiles(), gone.manifests());
        } catch (RuntimeException e) {
            if (e instanceof VigiloException) {
                throw e;
            }
            throw new UnavailableException("maintenance of " + log.location().uri() + " failed: " + e.getMessage(), e);
        }
    }

    /** Gives up the role. */
    @Override
    public void close() {
        election.release();
    }
}
