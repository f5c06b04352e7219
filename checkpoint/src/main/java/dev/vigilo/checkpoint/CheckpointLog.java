package dev.vigilo.checkpoint;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.retry.RetryPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.ReadOptions;
import org.lance.WriteParams;
import org.lance.memwal.InitializeMemWalParams;

/**
 * One experiment's checkpoint log: a Lance dataset (stable row ids on, MemWAL initialized) whose
 * rows are immutable events. Entry point to {@link LogWriter writers}, {@link LogReader readers}
 * and {@link Maintenance}. Thread-safe; close it after every writer and reader it handed out.
 */
public final class CheckpointLog implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(CheckpointLog.class);

    private final LogLocation location;
    private final BufferAllocator allocator;
    private final LogFiles files;
    private final LanceStorage lance;

    private CheckpointLog(LogLocation location) {
        this.location = location;
        this.allocator = new RootAllocator();
        this.lance = LanceStorage.of(location.root());
        this.files = LogFiles.open(location);
    }

    /**
     * Opens the log, creating it (empty, MemWAL initialized) if it does not exist. Safe against a
     * concurrent create.
     */
    public static CheckpointLog openOrCreate(LogLocation location) {
        Objects.requireNonNull(location, "location");
        LanceRuntime.prepare();
        CheckpointLog log = new CheckpointLog(location);
        try {
            log.ensureCreated();
            log.checkSchema();
            return log;
        } catch (RuntimeException e) {
            log.close();
            throw e;
        }
    }

    /** Opens an existing log; {@link NotFoundException} if there is none. */
    public static CheckpointLog open(LogLocation location) {
        Objects.requireNonNull(location, "location");
        if (!exists(location)) {
            throw new NotFoundException("no checkpoint log for pipeline '"
                    + location.pipeline()
                    + "' experiment '"
                    + location.experiment()
                    + "' at "
                    + location.uri());
        }
        LanceRuntime.prepare();
        CheckpointLog log = new CheckpointLog(location);
        try {
            log.checkSchema();
            return log;
        } catch (RuntimeException e) {
            log.close();
            throw e;
        }
    }

    /** Whether a log exists at {@code location}. */
    public static boolean exists(LogLocation location) {
        if (location.isLocal()) {
            return Files.isDirectory(location.logDir().resolve("_versions"));
        }
        try (LogFiles f = LogFiles.open(location)) {
            return !f.list("_versions").isEmpty();
        }
    }

    /** Names of the experiments of {@code pipeline} under {@code durableRoot}, sorted. */
    public static List<String> experiments(Path durableRoot, String pipeline) {
        Path d = durableRoot.resolve("datagen_checkpoints").resolve(pipeline);
        if (!Files.isDirectory(d)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(d)) {
            return s.filter(p -> Files.isDirectory(p.resolve("log.lance")))
                    .map(p -> p.getFileName().toString())
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UnavailableException("cannot list " + d, e);
        }
    }

    /** Where this log lives. */
    public LogLocation location() {
        return location;
    }

    /**
     * Opens writer {@code writerName}'s shard (replaying its WAL if a previous incarnation crashed)
     * with a new writer epoch. At most one live writer per name: a second incarnation fences the
     * first, which then fails with {@link FencedException} on its next write.
     */
    public LogWriter openWriter(String writerName, WriterOptions options) {
        return LogWriter.open(this, writerName, options);
    }

    /**
     * A read snapshot: the base table plus every flushed, not yet merged generation of every shard,
     * as of now.
     */
    public LogReader reader() {
        return LogReader.open(this);
    }

    /**
     * Tries to become this experiment's maintenance worker. Empty if another live process holds the
     * role. The role is released by {@link Maintenance#close()} or by the holder's death: on a
     * local root it is an OS file lock, on S3 a lease object that another worker can take over once
     * it expired (10 minutes without renewal).
     */
    public Optional<Maintenance> tryElectMaintenance() {
        return Maintenance.tryElect(this);
    }

    /**
     * As {@link #tryElectMaintenance()} with an S3 lease duration of {@code leaseTtl} (ignored on
     * local roots).
     */
    public Optional<Maintenance> tryElectMaintenance(java.time.Duration leaseTtl) {
        return Maintenance.tryElect(this, leaseTtl);
    }

    /**
     * Tries to take the experiment's lease {@code name} (1-64 of {@code [a-z0-9._-]}, '/'-separated segments
     * allowed) by the mechanism of the maintenance election: on a local root an exclusive OS lock on {@code
     * <experiment>/<name>.lock}, on S3 a lease object {@code <experiment>/<name>.lease} lasting {@code ttl} from each
     * {@link ExperimentLease#renew()} and taken over once expired. Empty if a live process (or this JVM) holds it.
     */
    public Optional<ExperimentLease> tryAcquireLease(String name, java.time.Duration ttl) {
        return tryAcquireLease(name, ttl, java.time.Clock.systemUTC());
    }

    /**
     * {@link #tryAcquireLease(String, java.time.Duration)} with an S3 lease's expiry judged and renewed on {@code
     * clock} (tests move time with a clock of their own; a local lock has no expiry).
     */
    public Optional<ExperimentLease> tryAcquireLease(String name, java.time.Duration ttl, java.time.Clock clock) {
        checkLeaseName(name);
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(clock, "clock");
        Optional<Election> e = location.isLocal()
                ? FileLockElection.tryAcquire(location.experimentDir().resolve(name + ".lock"))
                : S3Lease.tryAcquire(location, name + ".lease", Maintenance.holderId(), ttl, clock);
        return e.map(el -> new ExperimentLease() {
            @Override
            public void renew() {
                el.confirm();
            }

            @Override
            public void release() {
                el.release();
            }
        });
    }

    /**
     * Whether a live process holds the experiment's lease {@code name} (local: someone holds its OS lock; S3: the
     * lease object exists and has not expired by this host's clock). A snapshot: the answer may change right after.
     */
    public boolean leaseHeld(String name) {
        return leaseHeld(name, java.time.Clock.systemUTC());
    }

    /** {@link #leaseHeld(String)} with an S3 lease's expiry judged on {@code clock}. */
    public boolean leaseHeld(String name, java.time.Clock clock) {
        checkLeaseName(name);
        Objects.requireNonNull(clock, "clock");
        if (location.isLocal()) {
            Optional<Election> probe =
                    FileLockElection.tryAcquire(location.experimentDir().resolve(name + ".lock"));
            probe.ifPresent(Election::release);
            return probe.isEmpty();
        }
        return S3Lease.isHeld(location, name + ".lease", clock);
    }

    /** The experiment's compare-and-set records in {@code dir} (see {@link ExperimentRecords}); close them. */
    public ExperimentRecords records(String dir) {
        return ExperimentRecords.open(location, dir);
    }

    private static void checkLeaseName(String name) {
        Objects.requireNonNull(name, "name");
        for (String seg : name.split("/", -1)) {
            if (!ExperimentRecords.NAME.matcher(seg).matches()) {
                throw new IllegalArgumentException("invalid lease name: " + name);
            }
        }
    }

    LogFiles files() {
        return files;
    }

    BufferAllocator allocator() {
        return allocator;
    }

    /** What Lance needs to reach this log's store. */
    LanceStorage lance() {
        return lance;
    }

    Dataset openDataset() {
        try {
            return Dataset.open()
                    .allocator(allocator)
                    .uri(location.uri())
                    .readOptions(new ReadOptions.Builder()
                            .setStorageOptions(lance.storageOptions())
                            .build())
                    .build();
        } catch (RuntimeException e) {
            throw new UnavailableException("cannot open checkpoint log " + location.uri() + ": " + e.getMessage(), e);
        }
    }

    Dataset openGeneration(ShardId shard, MemWalFiles.Generation g) {
        String uri = location.uri() + "/_mem_wal/" + shard + "/" + g.folder();
        return Dataset.open()
                .allocator(allocator)
                .uri(uri)
                .readOptions(new ReadOptions.Builder()
                        .setStorageOptions(lance.storageOptions())
                        .build())
                .build();
    }

    private void ensureCreated() {
        if (!exists(location)) {
            try {
                if (location.isLocal()) {
                    Files.createDirectories(location.experimentDir());
                }
                {
                    CrashPoints.boundary("checkpoint.create");
                    try (ArrowReader r = EventSchema.reader(allocator, List.of());
                            Dataset ds = Dataset.write()
                                    .allocator(allocator)
                                    .reader(r)
                                    .uri(location.uri())
                                    .storageOptions(lance.storageOptions())
                                    .mode(WriteParams.WriteMode.CREATE)
                                    // Stable row ids: without them compaction of a MemWAL
                                    // dataset aborted the JVM (FINDINGS).
                                    .enableStableRowIds(true)
                                    .execute()) {
                        LOG.info("created checkpoint log {} (version {})", location.uri(), ds.version());
                    }
                }
            } catch (IOException e) {
                throw new UnavailableException("cannot create " + location.experimentUri(), e);
            } catch (RuntimeException e) {
                // A concurrent creator won the race: fine if the dataset now exists.
                if (!exists(location)) {
                    throw new UnavailableException(
                            "cannot create checkpoint log " + location.uri() + ": " + e.getMessage(), e);
                }
            }
        }
        try {
            MEMWAL_INIT.run(attempt -> {
                initializeMemWal();
                return null;
            });
        } catch (MemWalInitConflict e) {
            throw new UnavailableException(
                    "cannot initialize MemWAL on " + location.uri() + ": " + e.getMessage(), e.getCause());
        }
    }

    /**
     * Concurrent creators race here too: Lance refuses all but one MemWAL initialization, either saying the index
     * exists ("already") or, when the commits overlap, with a retryable commit conflict. Either way the loser reads
     * the dataset again: an index written by the winner is success, and a conflict with no index yet is tried again
     * ({@link #MEMWAL_INIT}).
     */
    private static final RetryPolicy MEMWAL_INIT = RetryPolicy.of(6, Duration.ofMillis(50), Duration.ofSeconds(1))
            .retrying(e -> e instanceof MemWalInitConflict);

    private void initializeMemWal() {
        try (Dataset ds = openDataset()) {
            if (!ds.memWalIndexDetails().isEmpty()) {
                return;
            }
            try {
                CrashPoints.boundary("checkpoint.memwal-init");
                ds.initializeMemWal(new InitializeMemWalParams());
            } catch (RuntimeException e) {
                String message = String.valueOf(e.getMessage());
                if (message.contains("already") || memWalInitialized()) {
                    return;
                }
                if (message.contains("Retryable commit conflict")) {
                    throw new MemWalInitConflict(e);
                }
                throw new UnavailableException("cannot initialize MemWAL on " + location.uri() + ": " + message, e);
            }
        }
    }

    private boolean memWalInitialized() {
        try (Dataset ds = openDataset()) {
            return !ds.memWalIndexDetails().isEmpty();
        }
    }

    /** A MemWAL initialization that lost a commit race before any initialization was visible. */
    private static final class MemWalInitConflict extends RuntimeException {
        MemWalInitConflict(RuntimeException cause) {
            super(cause.getMessage(), cause);
        }
    }

    private void checkSchema() {
        try (Dataset ds = openDataset()) {
            EventSchema.check(ds.getSchema());
        }
    }

    @Override
    public void close() {
        try {
            files.close();
            lance.close();
        } finally {
            allocator.close();
        }
    }
}
