package dev.vigilo.checkpoint;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.lance.Dataset;
import org.lance.Version;

/**
 * Removes MemWAL files that no reader and no WAL replay needs any more (Lance 7.0.0 never removes
 * them): merged generation folders, WAL entries covered by merged generations, and superseded shard
 * manifests.
 *
 * <p>What is "merged" is taken from the base table version that was current {@code graceMs} ago
 * (the newest version committed at or before that instant), not from the latest one: a reader
 * opened before a merge commit reads the generations it merged, so they stay until every reader
 * that can still see the pre-merge version is older than the grace period. The merged set per shard
 * is a single high-water mark (Lance records one merged generation per shard; every generation up
 * to it is in the base table).
 *
 * <p>Deletion order makes every crash point safe: generation folders first (readers skip them by
 * the watermark, a half-deleted folder is never opened), then WAL entries (replay starts after the
 * current manifest's replay position, which is at or past every deleted entry), then old manifests
 * last (they are what the WAL bound is computed from, so a crash before that step lets the next
 * pass finish the WAL). Always kept: the newest manifest and the newest WAL entry of each shard, so
 * Lance never sees an empty directory and restarts a sequence.
 */
final class GenerationCleanup {
    private GenerationCleanup() {}

    /** What one pass removed. */
    record Removed(int generationFolders, int walFiles, int manifests) {
        static final Removed NONE = new Removed(0, 0, 0);

        Removed plus(Removed o) {
            return new Removed(generationFolders + o.generationFolders, walFiles + o.walFiles, manifests + o.manifests);
        }
    }

    /**
     * One pass over every shard. {@code afterEachFile} is told every removed file's path (relative
     * to the dataset).
     */
    static Removed run(CheckpointLog log, long graceMs, Consumer<String> afterEachFile) {
        Map<ShardId, Long> merged = mergedAsOf(log, Instant.now().minusMillis(graceMs));
        Removed total = Removed.NONE;
        for (ShardId shard : MemWalFiles.shards(log.files())) {
            long watermark = merged.getOrDefault(shard, 0L);
            if (watermark > 0) {
                total = total.plus(cleanShard(log.files(), shard, watermark, afterEachFile));
            }
        }
        return total;
    }

    /**
     * Merged watermark per shard in the newest base version committed at or before {@code cutoff};
     * empty if none.
     */
    private static Map<ShardId, Long> mergedAsOf(CheckpointLog log, Instant cutoff) {
        try (Dataset ds = log.openDataset()) {
            Optional<Version> v = ds.listVersions().stream()
                    .filter(x -> !x.getDataTime().toInstant().isAfter(cutoff))
                    .max(Comparator.comparingLong(Version::getId));
            if (v.isEmpty()) {
                return Map.of();
            }
            if (v.get().getId() == ds.version()) {
                return MemWalFiles.mergedGenerations(ds);
            }
            try (Dataset old = ds.checkoutVersion(v.get().getId())) {
                return MemWalFiles.mergedGenerations(old);
            }
        } catch (VigiloException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new UnavailableException(
                    "cannot read merged generations of " + log.location().uri() + ": " + e.getMessage(), e);
        }
    }

    private static Removed cleanShard(LogFiles files, ShardId shard, long watermark, Consumer<String> afterEachFile) {
        String dir = "_mem_wal/" + shard;
        // Computed before anything is deleted, from the manifests: the WAL position covered by
        // generations <= watermark.
        List<MemWalFiles.ManifestFile> manifests = MemWalFiles.manifestFiles(files, shard);
        long walBound = manifests.stream()
                .filter(m -> m.maxFlushedGeneration() <= watermark)
                .mapToLong(MemWalFiles.ManifestFile::replayAfterWalPosition)
                .max()
                .orElse(0);

        int gens = 0;
        for (String name : files.list(dir)) {
            long g = MemWalFiles.generationOfFolder(name);
            if (g > 0 && g <= watermark) {
                CrashPoints.boundary("checkpoint.cleanup.generation");
                files.deleteTree(dir + "/" + name, afterEachFile);
                gens++;
            }
        }

        int wals = 0;
        List<String> walNames = files.list(dir + "/wal");
        long newestWal =
                walNames.stream().mapToLong(MemWalFiles::walPosition).max().orElse(-1);
        for (String name : walNames) {
            long pos = MemWalFiles.walPosition(name);
            if (pos > 0 && pos <= walBound && pos < newestWal) {
                CrashPoints.boundary("checkpoint.cleanup.wal");
                files.delete(dir + "/wal/" + name);
                afterEachFile.accept(dir + "/wal/" + name);
                wals++;
            }
        }

        int mans = 0;
        long newestManifest =
                manifests.isEmpty() ? -1 : manifests.get(manifests.size() - 1).version();
        for (MemWalFiles.ManifestFile m : manifests) {
            // A manifest that still lists an unmerged generation is kept: the next pass needs its
            // replay position.
            if (m.version() < newestManifest && m.maxFlushedGeneration() <= watermark) {
                CrashPoints.boundary("checkpoint.cleanup.manifest");
                files.delete(dir + "/manifest/" + m.name());
                afterEachFile.accept(dir + "/manifest/" + m.name());
                mans++;
            }
        }
        return new Removed(gens, wals, mans);
    }
}
