package dev.vigilo.dataset;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.StoreBinding;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * Decoded, completely verified dataset files (case files and index documents) that {@link DatasetReader}s opened
 * with this cache share, so that a worker decodes each file once while it is retained instead of once per chunk
 * that touches it (docs/execution.md, "Decoded files").
 *
 * <p>Contract:
 * <ul>
 *   <li><b>What is retained.</b> Only the outcome of a successful, complete check: a case file's cases after its
 *       bytes verified against their reference and every record of the file was checked against the index's range
 *       ({@link CaseFileDecoder}), an index document after its bytes verified and its structure and tiling were
 *       checked. A file that fails is never retained.</li>
 *   <li><b>Keys.</b> The store binding, the whole {@link ObjectRef} (key, length, SHA-256) and the range (and, for an
 *       index document, the level) the check was made against: the same reference checked against another range is
 *       another entry, checked on its own. Objects are create-only, so a reference's content never changes.</li>
 *   <li><b>Bytes handed out.</b> A reader serving cases from a retained file hashes each case's bytes again and
 *       compares them with the case's SHA-256 before passing it on (a few microseconds per case, against decoding
 *       the whole file), so a retained case whose bytes were changed in memory is detected, dropped and its file
 *       read again. {@link StoredCase#caseJson()} is shared: callers must not modify it (its documented rule).</li>
 *   <li><b>Bounds.</b> At most {@link #MAX_FILES} files and {@code maxChargedBytes} charged bytes, least recently
 *       used first out. A case file is charged its encoded length plus {@link #CASE_CHARGE} per case (the decoded
 *       objects around each case's bytes); an index document its encoded length plus {@link #INDEX_CHARGE}. A file
 *       charged more than half the bound is not retained.</li>
 *   <li><b>Concurrency.</b> Thread-safe; decoding happens outside the lock. Concurrent misses of one file wait for
 *       the first one's decoding (a worker's chunks reach a new case file together); when it fails, each decodes on
 *       its own.</li>
 * </ul>
 */
public final class DecodedFileCache {
    /** Most files retained at once. */
    public static final int MAX_FILES = 1024;
    /** Charge per case of a retained case file beyond the file's encoded length. */
    public static final int CASE_CHARGE = 128;
    /** Charge per retained index document beyond its encoded length. */
    public static final int INDEX_CHARGE = 1024;
    /** The charged-byte bound a worker uses (8 MiB). */
    public static final long DEFAULT_MAX_CHARGED_BYTES = 8L * 1024 * 1024;

    private final long maxChargedBytes;
    private final LinkedHashMap<Object, Retained> map = new LinkedHashMap<>(64, 0.75f, true);
    /** Decodings under way, so that concurrent misses of one key decode it once. */
    private final Map<Object, Future<Retained>> inFlight = new HashMap<>();

    private long charged;
    private long evictions;
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();

    /** A cache of at most {@code maxChargedBytes} charged bytes ({@code >= 0}; 0 retains nothing). */
    public DecodedFileCache(long maxChargedBytes) {
        if (maxChargedBytes < 0) {
            throw new IllegalArgumentException("the charged-byte bound must be >= 0, got " + maxChargedBytes);
        }
        this.maxChargedBytes = maxChargedBytes;
    }

    /**
     * Counters since the cache was created.
     *
     * @param hits         files served decoded from the cache
     * @param misses       files decoded (read through the reader's store), including failed ones
     * @param evictions    retained files dropped to respect the bounds, or because a case no longer verified
     * @param files        files retained now
     * @param chargedBytes charged bytes retained now
     */
    public record Stats(long hits, long misses, long evictions, int files, long chargedBytes) {}

    /** A snapshot of the counters and occupancy. */
    public synchronized Stats stats() {
        return new Stats(hits.sum(), misses.sum(), evictions, map.size(), charged);
    }

    record CaseKey(StoreBinding binding, ObjectRef ref, long firstOrdinal, long caseCount) {}

    record IndexKey(StoreBinding binding, ObjectRef ref, int level, long firstOrdinal, long caseCount) {}

    private record Retained(Object value, long charge) {}

    /**
     * The cases of the case file {@code key} names: retained ones, or {@code decode}'s (which reads, verifies and
     * checks the whole file, or throws), retained when they fit.
     */
    @SuppressWarnings("unchecked")
    List<StoredCase> caseFile(CaseKey key, Supplier<List<StoredCase>> decode) {
        return (List<StoredCase>) getOrDecode(key, () -> {
            List<StoredCase> cases = List.copyOf(decode.get());
            return new Retained(cases, key.ref().length() + (long) CASE_CHARGE * cases.size());
        });
    }

    /** The index document {@code key} names: a retained one, or {@code decode}'s, retained when it fits. */
    IndexDocument index(IndexKey key, Supplier<IndexDocument> decode) {
        return (IndexDocument)
                getOrDecode(key, () -> new Retained(decode.get(), key.ref().length() + INDEX_CHARGE));
    }

    /**
     * The retained value of {@code key}, or the one {@code decode} gives, retained when it fits. A worker's chunks
     * reach a new case file at about the same time (up to its concurrency of them claimed in order): concurrent misses
     * of one key wait for the first one's decoding instead of each decoding the file. When that decoding fails, each
     * waiting caller decodes on its own (and fails or succeeds as its own read does).
     */
    private Object getOrDecode(Object key, Supplier<Retained> decode) {
        FutureTask<Retained> mine = null;
        Future<Retained> running;
        synchronized (this) {
            Retained r = map.get(key);
            if (r != null) {
                hits.increment();
                return r.value();
            }
            running = inFlight.get(key);
            if (running == null) {
                mine = new FutureTask<>(decode::get);
                inFlight.put(key, mine);
                running = mine;
            }
        }
        if (mine == null) {
            try {
                Retained r = running.get();
                hits.increment();
                return r.value();
            } catch (ExecutionException e) {
                misses.increment();
                Retained own = decode.get();
                put(key, own);
                return own.value();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CancelledException(
                        "interrupted while waiting for another reader's decoding of a dataset file");
            }
        }
        misses.increment();
        try {
            mine.run();
            Retained r;
            try {
                r = mine.get();
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof RuntimeException re) {
                    throw re;
                }
                if (cause instanceof Error err) {
                    throw err;
                }
                throw new IllegalStateException(cause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CancelledException("interrupted while decoding a dataset file");
            }
            put(key, r);
            return r.value();
        } finally {
            synchronized (this) {
                inFlight.remove(key, mine);
            }
        }
    }

    /** Drops {@code key}'s entry (a retained case that no longer verified). */
    synchronized void discard(Object key) {
        Retained r = map.remove(key);
        if (r != null) {
            charged -= r.charge();
            evictions++;
        }
    }

    private synchronized void put(Object key, Retained r) {
        long charge = r.charge();
        if (charge > maxChargedBytes / 2 || map.containsKey(key)) {
            return; // too large to share the bound, or a concurrent miss retained it first (same key, same outcome)
        }
        map.put(key, r);
        charged += charge;
        Iterator<Map.Entry<Object, Retained>> eldest = map.entrySet().iterator();
        while (map.size() > MAX_FILES || charged > maxChargedBytes) {
            Map.Entry<Object, Retained> e = eldest.next();
            charged -= e.getValue().charge();
            eldest.remove();
            evictions++;
        }
    }
}
