package dev.vigilo.checkpoint;

import dev.vigilo.common.concurrent.GroupCommit;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.lance.memwal.MergedGeneration;
import org.lance.memwal.ShardWriter;
import org.lance.memwal.ShardWriterConfig;
import org.lance.merge.MergeInsertParams;
import org.lance.merge.MergeInsertResult;

/**
 * Writes checkpoint batches into this writer's own MemWAL shard. Each {@link #write} is part of one
 * durable put: when it returns, every event of the batch is in the WAL and survives a crash (a
 * restarted writer with the same name replays it); if the process dies during the call, the batch is
 * visible entirely or not at all.
 *
 * <p>Group commit: batches written by several threads while a put is under way wait together and
 * share the next put (at most {@link WriterOptions#groupBatches()} batches and about {@link
 * WriterOptions#GROUP_EVENTS} events), in the order they arrived. One put is atomic, so each batch in
 * it stays all-or-nothing; a caller's later batch is in the same or a later put, so each item's order
 * holds; a failed shared put fails every batch in it (each caller retries its own). Puts are
 * serialized; the thread that finds no put under way becomes the leader and writes for the others, after waiting up
 * to {@link WriterOptions#GROUP_GATHER} for as many batches as the previous put held (common's {@link GroupCommit}).
 *
 * <p>Fencing: Lance silently discards the puts of a writer whose shard was reopened by a newer
 * incarnation. Before and after every put this writer lists its shard's manifests and, when the current version
 * changed, reads it; a newer shard epoch raises {@link FencedException} and the batch is not acknowledged. Thread-safe (puts are
 * serialized).
 */
public final class LogWriter implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(LogWriter.class);

    private final CheckpointLog log;
    private final String name;
    private final ShardId shard;
    private final WriterOptions options;
    private final Dataset dataset;
    /** Keeps Lance's MemWAL writer environment set for this writer's store (S3 roots). */
    private final WriterEnvironment.Lease environment;

    private ShardWriter writer;
    private long shardEpoch;
    /**
     * The shard manifest version last seen carrying {@link #shardEpoch}: while it is still the current version, the
     * epoch is unchanged (a version's file never changes), so the fencing check needs only a listing.
     */
    private long checkedManifestVersion;

    private int batchesSinceFlush;
    private long lastFlushNanos = System.nanoTime();
    private int flushesSinceMerge;
    private final WriterEpoch epoch;
    private boolean fenced;
    private boolean stuck;
    private boolean closed;

    /**
     * Batches waiting for, or sharing, a put: at most {@link WriterOptions#groupBatches()} batches and about
     * {@link WriterOptions#GROUP_EVENTS} events per put, the {@link WriterOptions#GROUP_GATHER} window, interruptible
     * waits.
     */
    private final GroupCommit<CheckpointBatch, Void> group;
    /** Durable puts done (tests observe group commit through it). */
    private final java.util.concurrent.atomic.AtomicLong puts = new java.util.concurrent.atomic.AtomicLong();

    private final java.util.concurrent.ExecutorService putThread =
            java.util.concurrent.Executors.newSingleThreadExecutor(Threads.daemonFactory("checkpoint-put"));

    private LogWriter(
            CheckpointLog log,
            String name,
            ShardId shard,
            WriterOptions options,
            Dataset dataset,
            WriterEnvironment.Lease environment,
            ShardWriter writer,
            MemWalFiles.ShardManifest opened) {
        // The WriterEpoch names the first shard epoch of this object; later rotations keep it (same
        // owner).
        this.log = log;
        this.name = name;
        this.shard = shard;
        this.options = options;
        this.dataset = dataset;
        this.environment = environment;
        this.writer = writer;
        this.shardEpoch = opened.epoch();
        this.checkedManifestVersion = opened.version();
        this.epoch = new WriterEpoch(name + "@" + shard + "#" + shardEpoch);
        this.group = GroupCommit.<CheckpointBatch, Void>builder("writer " + name, b -> putGroup(b.items()))
                .maxItems(options.groupBatches())
                .maxWeight(WriterOptions.GROUP_EVENTS, b -> b.events().size())
                .gather(WriterOptions.GROUP_GATHER)
                .failures(t -> new UnavailableException("a checkpoint put failed: " + t, t))
                .interruptible(e -> new UnavailableException(
                        "interrupted while waiting to write a checkpoint batch; it may or may not be durable", e))
                .build();
    }

    static LogWriter open(CheckpointLog log, String name, WriterOptions options) {
        Objects.requireNonNull(name, "writerName");
        Objects.requireNonNull(options, "options");
        if (name.isBlank()) {
            throw new IllegalArgumentException("writer name must not be blank");
        }
        LogLocation loc = log.location();
        ShardId shard = ShardId.forWriter(loc.pipeline(), loc.experiment(), name);
        ShardWriterConfig cfg = config();
        Dataset ds = log.openDataset();
        WriterEnvironment.Lease env = null;
        try {
            env = log.lance().writerEnvironment();
            // First open replays the WAL of a crashed predecessor into the memtable; closing
            // flushes it into a
            // generation so that every reader (not only this writer) sees the replayed batches
            // before we go on.
            if (MemWalFiles.manifest(log.files(), shard).version() >= 0) {
                CrashPoints.boundary("checkpoint.replay");
                ds.memWalWriter(shard.toString(), cfg).close();
            }
            MemWalFiles.ShardManifest[] after = new MemWalFiles.ShardManifest[1];
            ShardWriter w = openChecked(log, ds, env, shard, name, after);
            LOG.debug("writer {} opened shard {} at epoch {}", name, shard, after[0].epoch());
            return new LogWriter(log, name, shard, options, ds, env, w, after[0]);
        } catch (RuntimeException e) {
            ds.close();
            if (env != null) {
                env.close();
            }
            if (e instanceof VigiloException) {
                throw e;
            }
            throw new UnavailableException(
                    "cannot open writer '" + name + "' on " + loc.uri() + ": " + e.getMessage(), e);
        }
    }

    private static ShardWriterConfig config() {
        // Lance flushes a memtable by itself only when these limits are hit; we never let that
        // happen (see
        // WriterOptions.MEMTABLE_BATCHES: a batch put right after such an automatic flush was lost
        // on WAL replay after
        // kill -9). Flushes are done by close() instead, which is synchronous: see rotate().
        return new ShardWriterConfig()
                .withDurableWrite(true)
                .withMaxMemtableBatches(1_000_000)
                .withMaxMemtableSize(512L << 20);
    }

    /**
     * Opens the shard and checks that nobody else opened it concurrently (the epoch must grow by
     * exactly one).
     */
    private static ShardWriter openChecked(
            CheckpointLog log,
            Dataset ds,
            WriterEnvironment.Lease env,
            ShardId shard,
            String name,
            MemWalFiles.ShardManifest[] openedOut) {
        long before = MemWalFiles.manifest(log.files(), shard).epoch();
        env.refresh(); // credentials may have been refreshed since the last open
        CrashPoints.boundary("checkpoint.shard-open");
        ShardWriter w = ds.memWalWriter(shard.toString(), config());
        MemWalFiles.ShardManifest opened = MemWalFiles.manifest(log.files(), shard);
        long after = opened.epoch();
        if (after != before + 1) {
            w.close();
            throw new FencedException("writer '"
                    + name
                    + "' (shard "
                    + shard
                    + ") was opened concurrently by "
                    + "another process (shard epoch "
                    + before
                    + " -> "
                    + after
                    + "); run one writer per name");
        }
        openedOut[0] = opened;
        return w;
    }

    /**
     * Flushes the memtable into a new generation by closing the ShardWriter and reopening the shard
     * (same {@link WriterEpoch} for callers; the shard epoch moves on and fencing checks follow
     * it).
     */
    private void rotate() {
        CrashPoints.boundary("checkpoint.flush");
        writer.close();
        MemWalFiles.ShardManifest[] after = new MemWalFiles.ShardManifest[1];
        writer = openChecked(log, dataset, environment, shard, name, after);
        shardEpoch = after[0].epoch();
        checkedManifestVersion = after[0].version();
        batchesSinceFlush = 0;
        lastFlushNanos = System.nanoTime();
        flushesSinceMerge++;
        if (options.mergeEveryFlushes() > 0 && flushesSinceMerge >= options.mergeEveryFlushes()) {
            flushesSinceMerge = 0;
            mergeGenerations(log, shard);
        }
    }

    /** Durable puts this writer has done so far (fewer than batches written when group commit shared them). */
    long puts() {
        return puts.get();
    }

    /** This writer's shard. */
    public ShardId shard() {
        return shard;
    }

    /**
     * This incarnation's writer epoch (stored in every event it writes via batches built with it).
     */
    public WriterEpoch epoch() {
        return epoch;
    }

    /** The writer's name. */
    public String name() {
        return name;
    }

    /**
     * Durably writes {@code batch} (alone or in a group commit with other threads' batches: one
     * MemWAL put). Idempotent per batch: retrying after a {@link UnavailableException} writes the
     * same event ids and readers see each event once.
     *
     * <p>Thread-safe; blocks until the put holding the batch ended.
     *
     * @throws FencedException a newer incarnation owns the shard; the batch may have been
     *     dropped by Lance
     * @throws UnavailableException the outcome is unknown; retry with the same batch
     */
    public void write(CheckpointBatch batch) {
        Objects.requireNonNull(batch, "batch");
        for (CheckpointEvent e : batch.events()) {
            if (!e.writerEpoch().equals(epoch)) {
                throw new IllegalArgumentException(
                        "batch was built for writer epoch " + e.writerEpoch() + " but this writer is " + epoch);
            }
        }
        group.submit(batch);
    }

    /** One durable put of every batch of {@code group}; all of them are durable when it returns. */
    private synchronized void putGroup(List<CheckpointBatch> group) {
        checkUsable();
        // Check before the put as well: a fenced ShardWriter's put() was seen to block forever (not
        // only to drop rows).
        checkNotFenced();
        List<CheckpointEvent> events;
        if (group.size() == 1) {
            events = group.get(0).events();
        } else {
            events = new ArrayList<>();
            for (CheckpointBatch b : group) {
                events.addAll(b.events());
            }
        }
        String what = group.size() == 1
                ? "checkpoint batch " + group.get(0).id()
                : "checkpoint batches " + group.get(0).id() + " and " + (group.size() - 1) + " more (one put)";
        CrashPoints.boundary("checkpoint.put");
        java.util.concurrent.Future<?> put = putThread.submit(() -> {
            try (ArrowReader r = EventSchema.reader(log.allocator(), events)) {
                writer.put(r);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        try {
            put.get(options.putTimeout().toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            // Fenced between our check and the put (the put then hangs in Lance), or storage is
            // stuck. Either way the ShardWriter is unusable: leave the stuck native call alone and
            // refuse further writes (the single put thread is occupied by it anyway).
            stuck = true;
            try {
                checkNotFenced();
            } catch (UnavailableException storageDown) {
                // The manifest is unreadable too (storage unreachable): report the timeout, the
                // more useful fact.
            }
            throw new UnavailableException(
                    what + " did not complete within " + options.putTimeout()
                            + "; its durability is unknown, reopen the writer",
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stuck = true;
            fenced = true;
            throw new UnavailableException("interrupted while writing " + what, e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new UnavailableException(
                    what + " may not be durable: " + e.getCause().getMessage(), e.getCause());
        }
        checkNotFenced();
        puts.incrementAndGet();
        if (++batchesSinceFlush >= WriterOptions.MEMTABLE_BATCHES
                || System.nanoTime() - lastFlushNanos >= WriterOptions.FLUSH_INTERVAL.toNanos()) {
            try {
                rotate();
            } catch (RuntimeException e) {
                // The batches are durable already; a failed flush only delays visibility. The writer
                // is unusable though.
                fenced = e instanceof FencedException;
                stuck = !fenced;
                LOG.warn("writer {}: memtable flush failed after a durable put: {}", epoch, e.getMessage());
            }
        }
    }

    private void checkUsable() {
        if (closed) {
            throw new IllegalStateException("writer " + name + " is closed");
        }
        if (fenced) {
            throw new FencedException("writer " + epoch + " was fenced earlier: another writer took over its shard"
                    + " (another process opened this log under the same writer name)");
        }
        if (stuck) {
            throw new UnavailableException(
                    "writer " + epoch + " is unusable after a put that did not complete; reopen it", null);
        }
    }

    private void checkNotFenced() {
        // A newer incarnation opening the shard writes a newer manifest version (with its epoch); our own puts write
        // none. So an unchanged current version is proof enough, and only a changed one is read.
        if (MemWalFiles.currentManifestVersion(log.files(), shard) == checkedManifestVersion) {
            return;
        }
        MemWalFiles.ShardManifest current = MemWalFiles.manifest(log.files(), shard);
        long stored = current.epoch();
        if (stored == shardEpoch) {
            checkedManifestVersion = current.version();
            return;
        }
        fenced = true;
        throw new FencedException("writer "
                + epoch
                + " is fenced: shard "
                + shard
                + " was reopened (stored epoch "
                + stored
                + " > ours "
                + shardEpoch
                + "); Lance silently dropped this put, so the batch is NOT durable");
    }

    /**
     * Merges this writer's flushed, not yet merged generations into the base table (de-duplicated
     * by event id, existing events untouched) and marks them merged, in one commit. Other writers'
     * generations are never touched.
     *
     * @return the number of generations merged
     */
    public synchronized int mergeOwnGenerations() {
        checkUsable();
        flushesSinceMerge = 0;
        return mergeGenerations(log, shard);
    }

    static int mergeGenerations(CheckpointLog log, ShardId shard) {
        MemWalFiles.ShardManifest m = MemWalFiles.manifest(log.files(), shard);
        if (m.flushed().isEmpty()) {
            return 0;
        }
        try (Dataset base = log.openDataset();
                GenerationBatches events = new GenerationBatches(log.allocator())) {
            long merged = MemWalFiles.mergedGenerations(base).getOrDefault(shard, 0L);
            List<MergedGeneration> marks = new ArrayList<>();
            for (MemWalFiles.Generation g : m.flushed()) {
                if (g.number() <= merged) {
                    continue;
                }
                marks.add(new MergedGeneration(shard.toString(), g.number()));
                try (Dataset gen = log.openGeneration(shard, g);
                        LanceScanner sc = gen.newScan(new ScanOptions.Builder()
                                .columns(EventSchema.COLUMNS)
                                .build());
                        ArrowReader r = sc.scanBatches()) {
                    events.addAll(r);
                }
            }
            if (marks.isEmpty()) {
                return 0;
            }
            ArrowReader src = events.reader();
            try (ArrowArrayStream stream = ArrowArrayStream.allocateNew(log.allocator())) {
                // The exported stream owns src from here on (closing it ourselves NPEs, FINDINGS).
                Data.exportArrayStream(log.allocator(), src, stream);
                CrashPoints.boundary("checkpoint.merge");
                MergeInsertResult res = base.mergeInsert(
                        new MergeInsertParams(List.of("event_id"))
                                .withMatchedDoNothing()
                                .markGenerationsAsMerged(marks),
                        stream);
                res.dataset().close();
            }
            return marks.size();
        } catch (VigiloException e) {
            throw e;
        } catch (Exception e) {
            throw new UnavailableException("merge of shard " + shard + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * Makes everything written so far visible to every reader (a memtable flush into a new
     * generation).
     */
    public synchronized void flush() {
        checkUsable();
        if (batchesSinceFlush > 0) {
            rotate();
        }
    }

    /**
     * Flushes the memtable into a generation (making it visible to every reader), merges own
     * generations, closes.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        putThread.shutdown();
        if (stuck) {
            // The ShardWriter is blocked inside Lance; close() would wait for it forever. Its
            // native memory is leaked.
            LOG.warn("writer {} abandoned with a blocked put; not closing its ShardWriter", epoch);
            environment.close();
            return;
        }
        try {
            CrashPoints.boundary("checkpoint.flush");
            writer.close();
            if (!fenced && options.mergeEveryFlushes() > 0) {
                try {
                    mergeGenerations(log, shard);
                } catch (VigiloException e) {
                    // Merging is an optimization; the generations stay readable and the next
                    // incarnation merges them.
                    LOG.warn("merge on close of writer {} failed: {}", name, e.getMessage());
                }
            }
        } finally {
            dataset.close();
            environment.close();
        }
    }
}
