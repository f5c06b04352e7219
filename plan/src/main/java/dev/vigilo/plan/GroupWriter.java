package dev.vigilo.plan;

import dev.vigilo.common.concurrent.Futures;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectConflictException;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectNotFoundException;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Writes plan files in bounded groups, in the order they are added (which is dependency order: callers add a file
 * only after everything it references). Per group: register ownership (one SQL transaction), then create and
 * byte-verify the files with no transaction open, then acknowledge (one SQL transaction) and advance the chunk cursor
 * across the consecutive chunk range.
 *
 * <p>Transfers overlap: up to {@link #TRANSFERS} run at once on the writer's pool, and up to
 * {@link #GROUPS_IN_FLIGHT} registered groups transfer while the caller goes on producing the next one. Groups are
 * completed (verified results taken, acknowledged) strictly in order, so acknowledgement still follows complete
 * verification and the cursor only moves over a consecutive range; a mid-group checkpoint acknowledges exactly the
 * verified prefix. Chunk files reference nothing and transfer side by side; any other file (an index document, a gate
 * file, the configuration, the manifest) starts only once every file added before it, in any group, is durable and
 * verified, so a file never exists before what it references.
 *
 * <p>Threads: the creator adds files and hands full groups to a coordinator thread (at most {@link #QUEUED_HAND_OFFS}
 * waiting), which registers, starts transfers, takes results and acknowledges, one hand-off after the other, so the
 * creator goes on planning during transactions and transfers; the hooks of {@link PreparationOptions} run on the
 * coordinator. The first failure stops later hand-offs and is rethrown to the creator at its next hand-off or at
 * {@link #complete()}. Memory: the open group, the queued ones and the groups in flight (at most 6 x 8 MiB of
 * payload). Not thread-safe: one creator thread drives it.
 */
final class GroupWriter implements AutoCloseable {
    static final int MAX_FILES = 64;
    static final int MAX_REFERENCE_BYTES = 256 * 1024;
    static final int MAX_PAYLOAD_BYTES = 8 * 1024 * 1024;
    /** Transfers (create and read-back) running at once: enough to overlap fsyncs or round trips. */
    static final int TRANSFERS = 16;
    /** Registered groups whose transfers may run while the next group is produced. */
    static final int GROUPS_IN_FLIGHT = 3;
    /** Groups handed to the coordinator and not yet registered, beyond which the creator waits. */
    static final int QUEUED_HAND_OFFS = 2;
    /** Fixed per-reference metadata charge besides the key (length, digest, kind, chunk index). */
    private static final int REFERENCE_OVERHEAD = 96;

    private static final Duration TRANSFER = Duration.ofSeconds(120);
    private static final Duration WINDOW = Duration.ofSeconds(150);

    record Pending(ObjectRef ref, byte[] bytes, PlanFileKind kind, Long chunkIndex) {}

    /** One file's transfer: whether it was created now (else it was acknowledged before and only re-verified). */
    private record Transfer(Pending file, boolean created) {}

    /** A registered group: its files, which were acknowledged before, and the transfers started so far. */
    private final class InFlight {
        final List<Pending> files;
        final Set<ObjectKey> acked;
        final List<Future<Transfer>> transfers = new ArrayList<>();
        Deadline window;
        long started;

        InFlight(List<Pending> files, Set<ObjectKey> acked, Deadline window) {
            this.files = files;
            this.acked = acked;
            this.window = window;
            this.started = System.nanoTime();
        }

        /** Starts the transfers from the next unstarted file up to (not including) the next file that depends. */
        void startChunks() {
            while (transfers.size() < files.size()
                    && files.get(transfers.size()).kind() == PlanFileKind.CHUNK) {
                startNext();
            }
        }

        /** Every transfer started and finished (successfully or not). */
        boolean allDone() {
            if (transfers.size() < files.size()) {
                return false;
            }
            for (Future<Transfer> f : transfers) {
                if (!f.isDone()) {
                    return false;
                }
            }
            return true;
        }

        void startNext() {
            Pending p = files.get(transfers.size());
            Deadline deadline = earlier(window, Deadline.after(TRANSFER));
            boolean create = !acked.contains(p.ref().key());
            transfers.add(pool.submit(() -> transfer(p, create, deadline)));
        }
    }

    private final ObjectStore store;
    private final PlanFiles planFiles;
    private final PreparationOptions options;
    private final ExecutorService pool;
    /** Runs hand-offs one after the other, off the creator's thread; owns {@link #inFlight} and the counters. */
    private final ExecutorService coordinator;
    /** Hand-offs submitted to the coordinator and not yet joined by the creator, oldest first. */
    private final Deque<Future<?>> handOffs = new ArrayDeque<>();
    /** Set by the coordinator at its first failure: later hand-offs then do nothing. */
    private volatile boolean failed;

    private final Deque<InFlight> inFlight = new ArrayDeque<>();
    private List<Pending> group = new ArrayList<>();
    private final int maxFiles;
    private int referenceBytes;
    private long payloadBytes;
    /** Chunks below this index are acknowledged (by this creator or an earlier one). */
    private long chunkPrefix;
    /** Chunks below this index are verified (acknowledged or about to be); never behind {@link #chunkPrefix}. */
    private long verifiedPrefix;

    private long filesWritten;
    private long filesReverified;

    /**
     * @param chunkPrefix the chunks already acknowledged (the run's chunk cursor), which this writer is not given
     */
    GroupWriter(ObjectStore store, PlanFiles planFiles, PreparationOptions options, long chunkPrefix) {
        this.store = store;
        this.planFiles = planFiles;
        this.options = options;
        this.maxFiles = Math.min(MAX_FILES, options.groupMaxFiles());
        this.chunkPrefix = chunkPrefix;
        this.verifiedPrefix = chunkPrefix;
        this.pool = Executors.newFixedThreadPool(TRANSFERS, Threads.daemonFactory("plan-transfer"));
        this.coordinator = Executors.newSingleThreadExecutor(Threads.daemonFactory("plan-groups"));
    }

    void add(Pending p) {
        int ref = p.ref().key().value().length() + REFERENCE_OVERHEAD;
        boolean fits = group.size() < maxFiles
                && referenceBytes + ref <= MAX_REFERENCE_BYTES
                && payloadBytes + p.bytes().length <= MAX_PAYLOAD_BYTES;
        if (!fits && !group.isEmpty()) {
            handOff();
        }
        group.add(p);
        referenceBytes += ref;
        payloadBytes += p.bytes().length;
        if (p.bytes().length > MAX_PAYLOAD_BYTES) {
            handOff(); // a single larger document admitted by its format goes alone
        }
    }

    /** Writes, verifies and acknowledges every file added so far; returns once all are acknowledged. */
    void complete() {
        handOff();
        handOffs.addLast(coordinator.submit(() -> {
            if (failed) {
                return;
            }
            try {
                while (!inFlight.isEmpty()) {
                    completeOldest();
                }
            } catch (RuntimeException | Error e) {
                failed = true;
                abandon();
                throw e;
            }
        }));
        while (!handOffs.isEmpty()) {
            awaitOldestHandOff();
        }
    }

    /**
     * Gives the open group to the coordinator, which registers it and starts its transfers while the creator goes on;
     * waits while {@link #QUEUED_HAND_OFFS} are queued, and rethrows a failure of an earlier hand-off.
     */
    private void handOff() {
        if (group.isEmpty()) {
            return;
        }
        List<Pending> files = group;
        group = new ArrayList<>();
        referenceBytes = 0;
        payloadBytes = 0;
        while (!handOffs.isEmpty()
                && (handOffs.size() >= QUEUED_HAND_OFFS || handOffs.peekFirst().isDone())) {
            awaitOldestHandOff();
        }
        handOffs.addLast(coordinator.submit(() -> {
            if (!failed) {
                handOffNow(files);
            }
        }));
    }

    /** Waits for the oldest hand-off; rethrows its failure as the coordinator threw it. */
    private void awaitOldestHandOff() {
        Future<?> oldest = handOffs.removeFirst();
        Futures.join(oldest, "preparation of run " + planFiles.runId() + " was cancelled");
    }

    /**
     * On the coordinator: registers {@code group} (acknowledging finished groups in the same transaction) and starts
     * its transfers; completes older groups beyond the in-flight limit.
     */
    private void handOffNow(List<Pending> group) {
        try {
            boolean dependent = group.stream().anyMatch(p -> p.kind() != PlanFileKind.CHUNK);
            if (dependent) {
                // Its dependent files need every earlier file durable: finish the earlier groups first.
                while (!inFlight.isEmpty()) {
                    completeOldest();
                }
            }
            // Groups whose transfers all finished are acknowledged in the same transaction that registers this one.
            List<ObjectKey> verified = new ArrayList<>();
            int finished = 0;
            while (!inFlight.isEmpty() && inFlight.peekFirst().allDone()) {
                verified.addAll(takeResults(inFlight.removeFirst()));
                finished++;
            }
            Deadline window = Deadline.after(WINDOW); // minted before registration
            List<PlanFiles.FileRow> rows = new ArrayList<>(group.size());
            for (Pending p : group) {
                rows.add(new PlanFiles.FileRow(p.ref(), p.kind(), p.chunkIndex()));
            }
            Set<ObjectKey> acked = new HashSet<>(planFiles.register(rows, verified, cursorIfAdvanced(verifiedPrefix)));
            if (!verified.isEmpty()) {
                chunkPrefix = verifiedPrefix;
            }
            for (int i = 0; i < finished; i++) {
                options.hooks().afterAcknowledge(chunkPrefix);
            }
            options.hooks().afterRegister(group.size());
            InFlight g = new InFlight(group, acked, window);
            inFlight.addLast(g);
            g.startChunks();
            while (inFlight.size() > (dependent ? 0 : GROUPS_IN_FLIGHT)) {
                completeOldest();
            }
        } catch (RuntimeException | Error e) {
            failed = true;
            abandon();
            throw e;
        }
    }

    /** Takes the oldest group's results in order, checkpointing if it runs long, and acknowledges it. */
    private void completeOldest() {
        List<ObjectKey> verified = takeResults(inFlight.peekFirst());
        planFiles.acknowledge(verified, cursorIfAdvanced(verifiedPrefix));
        chunkPrefix = verifiedPrefix;
        inFlight.removeFirst();
        options.hooks().afterAcknowledge(chunkPrefix);
    }

    /**
     * Takes a group's results in order, waiting for them and starting its dependent files once everything before
     * them is verified; a group running past the checkpoint interval acknowledges its verified prefix on the way.
     *
     * @return the keys verified and not yet acknowledged
     */
    private List<ObjectKey> takeResults(InFlight g) {
        List<ObjectKey> verified = new ArrayList<>();
        for (int taken = 0; taken < g.files.size(); taken++) {
            if (taken == g.transfers.size()) {
                // A file that references earlier ones: every file before it is verified by now.
                g.startNext();
                g.startChunks();
            }
            Transfer done = join(g.transfers.get(taken));
            if (done.created()) {
                filesWritten++;
            } else {
                filesReverified++;
            }
            verified.add(done.file().ref().key());
            if (done.file().chunkIndex() != null && done.file().chunkIndex() == verifiedPrefix) {
                verifiedPrefix++;
            }
            if (System.nanoTime() - g.started >= options.checkpointInterval().toNanos()
                    && verified.size() < g.files.size()) {
                // Checkpoint only the verified prefix, and recheck authority before starting more transfers.
                planFiles.acknowledge(verified, cursorIfAdvanced(verifiedPrefix));
                chunkPrefix = verifiedPrefix;
                verified.clear();
                options.hooks().afterCheckpoint(chunkPrefix);
                g.started = System.nanoTime();
                g.window = Deadline.after(WINDOW);
            }
        }
        return verified;
    }

    /** On a transfer thread: creates the file unless it was acknowledged before, then reads it back and verifies it. */
    private Transfer transfer(Pending p, boolean create, Deadline deadline) {
        if (create) {
            try {
                store.create(p.ref().key(), p.bytes(), deadline);
            } catch (ObjectConflictException e) {
                throw PlanErrors.damaged(
                        planFiles.runId(),
                        "plan file " + p.ref().key()
                                + " already exists with different bytes; the run's inputs changed, create a new run",
                        e);
            }
        }
        verify(p.ref(), deadline);
        return new Transfer(p, create);
    }

    private Transfer join(Future<Transfer> f) {
        return Futures.join(f, "preparation of run " + planFiles.runId() + " was cancelled");
    }

    /** Stops the transfers still running after a failure and waits for them, so none outlives the failure. */
    private void abandon() {
        List<Future<Transfer>> running = new ArrayList<>();
        for (InFlight g : inFlight) {
            running.addAll(g.transfers);
        }
        inFlight.clear();
        for (Future<Transfer> f : running) {
            f.cancel(true);
        }
        boolean interrupted = Thread.interrupted();
        for (Future<Transfer> f : running) {
            try {
                f.get();
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException | java.util.concurrent.CancellationException e) {
                // the first failure is the one reported
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private Optional<ChunkCursor> cursorIfAdvanced(long prefix) {
        return prefix > chunkPrefix ? Optional.of(new ChunkCursor(prefix)) : Optional.empty();
    }

    private void verify(ObjectRef ref, Deadline deadline) {
        try {
            store.read(ref, deadline);
        } catch (ObjectNotFoundException e) {
            throw PlanErrors.damaged(
                    planFiles.runId(),
                    "plan file " + ref.key() + " is missing from " + store.binding() + " although it was written",
                    e);
        } catch (ObjectIntegrityException e) {
            throw PlanErrors.damaged(
                    planFiles.runId(),
                    "plan file " + ref.key() + " failed verification: " + e.getMessage()
                            + "; the stored copy was altered, create a new run",
                    e);
        }
    }

    private static Deadline earlier(Deadline a, Deadline b) {
        return a.nanoTime() - b.nanoTime() <= 0 ? a : b;
    }

    long filesWritten() {
        return filesWritten;
    }

    long filesReverified() {
        return filesReverified;
    }

    /** Stops the coordinator (interrupting a hand-off in progress, which cancels its transfers) and the transfers. */
    @Override
    public void close() {
        failed = true;
        coordinator.shutdownNow();
        boolean stopped = false;
        try {
            stopped = coordinator.awaitTermination(TRANSFER.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (stopped) {
            abandon(); // the coordinator's state is this thread's now
        }
        pool.shutdownNow();
    }
}
