package dev.vigilo.dataset;

import dev.vigilo.common.concurrent.Futures;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.Sha256;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * Creates objects with a bounded number in flight, so uploads overlap network round trips (or a local store's
 * fsyncs) while memory stays bounded by {@code maxInFlight} buffers and, when given, {@code maxInFlightBytes}.
 * {@link #awaitAll()} is the barrier that keeps dependency order: a parent document is written only after every
 * child submitted before it is durable. Not thread-safe (one uploader drives it).
 */
final class ObjectWriter implements AutoCloseable {
    /** Per-transfer allowance, as run preparation uses for its writes. */
    static final Duration TRANSFER_TIMEOUT = Duration.ofSeconds(120);

    private final ObjectStore store;
    private final int maxInFlight;
    private final ExecutorService pool;
    private final long maxInFlightBytes;
    private final Deque<Future<ObjectRef>> inFlight = new ArrayDeque<>();
    private final Deque<Integer> inFlightLengths = new ArrayDeque<>();
    private long bytesInFlight;
    private long objectsWritten;
    private long bytesWritten;

    ObjectWriter(ObjectStore store, int maxInFlight) {
        this(store, maxInFlight, Long.MAX_VALUE);
    }

    /** A writer with at most {@code maxInFlight} creates and {@code maxInFlightBytes} (or one object) pending. */
    ObjectWriter(ObjectStore store, int maxInFlight, long maxInFlightBytes) {
        this.store = Objects.requireNonNull(store, "store");
        this.maxInFlight = maxInFlight;
        this.maxInFlightBytes = maxInFlightBytes;
        this.pool = Executors.newFixedThreadPool(maxInFlight, Threads.daemonFactory("dataset-writer"));
    }

    /** Starts creating {@code key}; blocks while {@code maxInFlight} creates are pending. */
    Future<ObjectRef> submit(ObjectKey key, byte[] bytes) {
        return submit(() -> store.create(key, bytes, Deadline.after(TRANSFER_TIMEOUT)), bytes.length);
    }

    /**
     * Starts creating {@code bytes} under the key {@code keyOf} derives from their SHA-256, which is computed on the
     * writing thread too; blocks while {@code maxInFlight} creates are pending.
     */
    Future<ObjectRef> submitContentAddressed(byte[] bytes, Function<Sha256, ObjectKey> keyOf) {
        return submit(
                () -> store.create(keyOf.apply(Sha256.of(bytes)), bytes, Deadline.after(TRANSFER_TIMEOUT)),
                bytes.length);
    }

    private Future<ObjectRef> submit(Callable<ObjectRef> create, int length) {
        while (!inFlight.isEmpty() && (inFlight.size() >= maxInFlight || bytesInFlight + length > maxInFlightBytes)) {
            joinOldest();
        }
        Future<ObjectRef> future = pool.submit(create);
        inFlight.addLast(future);
        inFlightLengths.addLast(length);
        bytesInFlight += length;
        objectsWritten++;
        bytesWritten += length;
        return future;
    }

    /** Creates {@code key} and returns once it is durable. */
    ObjectRef createNow(ObjectKey key, byte[] bytes) {
        awaitAll();
        objectsWritten++;
        bytesWritten += bytes.length;
        return store.create(key, bytes, Deadline.after(TRANSFER_TIMEOUT));
    }

    /** Waits until every submitted create is durable; rethrows the first failure. */
    void awaitAll() {
        while (!inFlight.isEmpty()) {
            joinOldest();
        }
    }

    private void joinOldest() {
        bytesInFlight -= inFlightLengths.removeFirst();
        join(inFlight.removeFirst());
    }

    long objectsWritten() {
        return objectsWritten;
    }

    long bytesWritten() {
        return bytesWritten;
    }

    /** Waits for one create and returns its reference; rethrows its failure. */
    static ObjectRef join(Future<ObjectRef> f) {
        return Futures.join(f, "upload interrupted while writing");
    }

    @Override
    public void close() {
        for (Future<ObjectRef> f : inFlight) {
            f.cancel(true);
        }
        inFlight.clear();
        inFlightLengths.clear();
        bytesInFlight = 0;
        pool.shutdownNow();
    }
}
