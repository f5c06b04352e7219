package dev.vigilo.checkpoint;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;
import org.lance.Dataset;
import org.lance.cleanup.CleanupPolicy;
import org.lance.index.IndexOptions;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.scalar.ScalarIndexParams;

/**
 * The experiment's elected maintenance worker: compaction of the shared base table, refresh of the item_id scalar
 * index, cleanup of old versions. Election is an exclusive OS lock on {@code <experiment>/maintenance.lock}: at
 * most one holder at a time, released by {@link #close()} or when the holder's process dies (so the role survives
 * the holder's death). Not thread-safe.
 */
public final class Maintenance implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Maintenance.class);
  /** Name of the scalar index on item_id (a rebuildable accelerator, never needed for correctness). */
  public static final String ITEM_INDEX = "item_id_idx";

  private final CheckpointLog log;
  private final FileChannel channel;
  private final FileLock lock;

  private Maintenance(CheckpointLog log, FileChannel channel, FileLock lock) {
    this.log = log;
    this.channel = channel;
    this.lock = lock;
  }

  static Optional<Maintenance> tryElect(CheckpointLog log) {
    if (!log.location().isLocal()) {
      throw new CheckpointException("maintenance election needs a local durable root in this version (it is an OS "
          + "file lock); run maintenance of " + log.location().uri() + " from one host only");
    }
    Path p = log.location().experimentDir().resolve("maintenance.lock");
    FileChannel ch = null;
    try {
      ch = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock l = ch.tryLock();
      if (l == null) {
        ch.close();
        return Optional.empty();
      }
      return Optional.of(new Maintenance(log, ch, l));
    } catch (OverlappingFileLockException sameJvm) {
      closeQuietly(ch);
      return Optional.empty();
    } catch (IOException e) {
      closeQuietly(ch);
      throw new LogIoException("maintenance election on " + p + " failed: " + e.getMessage(), e);
    }
  }

  private static void closeQuietly(FileChannel ch) {
    try {
      if (ch != null) ch.close();
    } catch (IOException ignored) {
      // Nothing held yet.
    }
  }

  /** What one maintenance pass did. */
  public record Report(int fragmentsBefore, int fragmentsAfter, boolean indexRefreshed, long oldVersionsRemoved) {}

  /**
   * One pass: compact the base table (stable row ids are on: without them compaction aborted the JVM), rebuild
   * the item_id BTREE index over the compacted table, and remove versions older than {@code keepVersionsNewerThanMs}
   * milliseconds. Safe concurrently with writers' merges (Lance retries conflicting commits).
   */
  public Report runOnce(long keepVersionsNewerThanMs) {
    if (!lock.isValid()) throw new IllegalStateException("maintenance role was released");
    try (Dataset ds = log.openDataset()) {
      int before = ds.getFragments().size();
      if (before > 1) ds.compact();
      ds.checkoutLatest();
      boolean indexed = false;
      if (ds.countRows() > 0) {
        ds.createIndex(IndexOptions.builder(List.of("item_id"), IndexType.BTREE,
            IndexParams.builder().setScalarIndexParams(ScalarIndexParams.create("btree")).build())
            .replace(true).withIndexName(ITEM_INDEX).build());
        indexed = true;
      }
      ds.checkoutLatest();
      int after = ds.getFragments().size();
      // Keep at least the two newest versions whatever the age. Observed in Lance 7.0.0: after a cleanup with a
      // zero-age window, the next compaction failed with "_versions/N.manifest was not found" (see the format doc);
      // callers should keep a window of minutes, not zero.
      long removed = ds.cleanupWithPolicy(CleanupPolicy.builder()
          .withBeforeTimestampMillis(System.currentTimeMillis() - keepVersionsNewerThanMs)
          .withBeforeVersion(Math.max(1, ds.latestVersion() - 1)).build()).getOldVersions();
      LOG.info("maintenance of {}: fragments {} -> {}, index refreshed {}, old versions removed {}",
          log.location().uri(), before, after, indexed, removed);
      return new Report(before, after, indexed, removed);
    } catch (RuntimeException e) {
      if (e instanceof CheckpointException) throw e;
      throw new LogIoException("maintenance of " + log.location().uri() + " failed: " + e.getMessage(), e);
    }
  }

  /** Gives up the role. */
  @Override
  public void close() {
    try {
      lock.release();
      channel.close();
    } catch (IOException e) {
      LOG.warn("releasing maintenance lock failed: {}", e.getMessage());
    }
  }
}
