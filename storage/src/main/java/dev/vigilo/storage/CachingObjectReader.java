package dev.vigilo.storage;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

/**
 * An {@link ObjectReader} that keeps verified copies of recently read small immutable objects in memory, so that
 * readers of the same published files (a worker's run and shard contexts) need not fetch them again.
 *
 * <p>Contract, beyond {@link ObjectReader#read}:
 * <ul>
 *   <li><b>Bounds.</b> At most {@link #MAX_FILES} objects and {@link #MAX_CHARGED_BYTES} charged bytes are
 *       retained, least recently used first out. An object is charged its length, its key's length and
 *       {@link #ENTRY_REFERENCE_BYTES} for the rest of its reference (digest, length, binding); the map's own
 *       bookkeeping (one node per entry, at most a few hundred bytes each) comes on top and is bounded by the file
 *       count. Objects longer than {@link #MAX_RETAINED_LENGTH} bypass retention: every read of one goes to the
 *       store.</li>
 *   <li><b>Keys.</b> An entry is keyed by the delegate's physical {@link StoreBinding} and the whole
 *       {@link ObjectRef} (key, length, SHA-256, and any field a reference gains later). Objects are create-only,
 *       so a key's content never changes and the digest is its revision: a reference to other bytes is another
 *       entry.</li>
 *   <li><b>Verification.</b> Only bytes that verified against their reference are retained; a missing object
 *       or bytes that fail verification are never retained. A hit copies the retained bytes and verifies the copy
 *       (length and SHA-256) before returning it; a retained copy that no longer verifies is dropped and the
 *       object read again. Callers still decode and check what they get, as for any store read.</li>
 *   <li><b>Owned copies.</b> Every returned array belongs to the caller; the retained copy is never exposed, so
 *       a caller can neither change it nor keep an evicted allocation alive.</li>
 *   <li><b>Availability.</b> A retained copy is served even when the store has become unavailable; a miss
 *       reads the store with the caller's deadline and fails as the store does.</li>
 *   <li><b>Deadlines and cancellation</b> apply to hits as to misses: a hit throws
 *       {@link dev.vigilo.common.errors.UnavailableException} or
 *       {@link dev.vigilo.common.errors.CancelledException} when the deadline has passed or the
 *       thread is interrupted.</li>
 *   <li><b>Concurrency.</b> Thread-safe. No lock is held while the store is read: concurrent misses of one
 *       object may each read it (one copy is retained), and a slow read never delays a hit.</li>
 * </ul>
 *
 * <p>The cache holds bytes only, no lease, route or admission authority; eviction or a restart costs one more
 * verified read. Reads that decide authority (publication, admission) use the {@link ObjectStore} directly.
 *
 * <p>One cache can serve several stores: {@link #forStore} returns a reader over another store that shares this
 * one's retained bytes, bounds and statistics.
 */
public final class CachingObjectReader implements ObjectReader {
    /** Most objects retained at once. */
    public static final int MAX_FILES = 256;
    /** Most charged bytes retained at once (8 MiB). */
    public static final long MAX_CHARGED_BYTES = 8L * 1024 * 1024;
    /** Longest object retained (1 MiB); longer ones bypass retention. */
    public static final int MAX_RETAINED_LENGTH = 1024 * 1024;
    /**
     * Fixed charge per retained object for its reference beyond the key text: the 32-byte digest, the 8-byte
     * length and the shared binding, rounded up.
     */
    public static final int ENTRY_REFERENCE_BYTES = 64;

    private final Retained retained;
    private final ObjectReader delegate;
    private final StoreBinding binding;

    /** A reader over {@code delegate} with a new, empty cache. */
    public CachingObjectReader(ObjectReader delegate) {
        this(new Retained(), delegate);
    }

    private CachingObjectReader(Retained retained, ObjectReader delegate) {
        this.retained = retained;
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.binding = Objects.requireNonNull(delegate.binding(), "delegate binding");
    }

    /**
     * A reader over {@code other} that shares this reader's cache (entries, bounds and statistics). Entries are
     * keyed by binding, so stores never see each other's objects.
     */
    public CachingObjectReader forStore(ObjectReader other) {
        return new CachingObjectReader(retained, other);
    }

    @Override
    public StoreBinding binding() {
        return binding;
    }

    /** Not retained: slices are read once each (a transcript shown or verified), so they go to the store. */
    @Override
    public byte[] readSlice(ObjectRef slice, long offset, Deadline deadline) {
        return delegate.readSlice(slice, offset, deadline);
    }

    @Override
    public byte[] read(ObjectRef ref, Deadline deadline) {
        Objects.requireNonNull(ref, "ref");
        Objects.requireNonNull(deadline, "deadline");
        String what = "read " + ref.key() + " from " + binding;
        deadline.check(what);
        if (ref.length() > MAX_RETAINED_LENGTH) {
            retained.bypasses.increment();
            return verified(ref, delegate.read(ref, deadline));
        }
        Key key = new Key(binding, ref);
        byte[] kept = retained.get(key);
        if (kept != null) {
            // Verify a private copy, so that what is checked is exactly what the caller gets.
            byte[] copy = kept.clone();
            if (matches(ref, copy)) {
                deadline.check(what);
                retained.hits.increment();
                return copy;
            }
            retained.discard(key, kept);
        }
        retained.misses.increment();
        byte[] bytes = verified(ref, delegate.read(ref, deadline));
        retained.put(key, bytes.clone());
        return bytes;
    }

    /** A snapshot of this cache's counters and occupancy, shared by every reader of {@link #forStore}. */
    public Stats stats() {
        return retained.stats();
    }

    /**
     * Counters of a {@link CachingObjectReader}'s cache since it was created.
     *
     * @param hits         reads served from a retained, re-verified copy
     * @param misses       reads of objects up to {@link #MAX_RETAINED_LENGTH} that went to the store (including
     *                     failed ones and re-reads after a retained copy failed verification)
     * @param bypasses     reads of longer objects, which always go to the store
     * @param evictions    retained objects dropped to respect the bounds
     * @param files        objects retained now
     * @param chargedBytes charged bytes retained now
     */
    public record Stats(long hits, long misses, long bypasses, long evictions, int files, long chargedBytes) {}

    /** The retained array for {@code ref}, not a copy, or null; lets tests damage a retained copy. */
    byte[] retainedArray(ObjectRef ref) {
        return retained.peek(new Key(binding, ref));
    }

    private static byte[] verified(ObjectRef ref, byte[] bytes) {
        // The delegate promises verified bytes; checking again is cheap next to the read and keeps this class's
        // promise (only verified bytes are retained or returned) independent of the delegate.
        if (!matches(ref, bytes)) {
            throw new ObjectIntegrityException(
                    ref.key(), "the store returned " + bytes.length + " bytes that do not match the reference");
        }
        return bytes;
    }

    private static boolean matches(ObjectRef ref, byte[] bytes) {
        return bytes.length == ref.length() && Sha256.of(bytes).equals(ref.sha256());
    }

    static long charge(Key key, int length) {
        return (long) length + key.ref().key().value().length() + ENTRY_REFERENCE_BYTES;
    }

    record Key(StoreBinding binding, ObjectRef ref) {}

    /**
     * The retained objects, in least-recently-used order. A synchronized access-ordered {@link LinkedHashMap}
     * rather than a cache library: the bounds are a count and a weight at once (Caffeine bounds one or the other),
     * the map is small (at most 256 entries), and every critical section is a few pointer updates: hashing,
     * copying and storage reads all happen outside the lock.
     */
    private static final class Retained {
        private final LinkedHashMap<Key, byte[]> map = new LinkedHashMap<>(MAX_FILES * 2, 0.75f, true);
        private long charged;
        private long evictions;
        final LongAdder hits = new LongAdder();
        final LongAdder misses = new LongAdder();
        final LongAdder bypasses = new LongAdder();

        synchronized byte[] get(Key key) {
            return map.get(key);
        }

        synchronized byte[] peek(Key key) {
            for (Map.Entry<Key, byte[]> e : map.entrySet()) {
                if (e.getKey().equals(key)) {
                    return e.getValue();
                }
            }
            return null;
        }

        /** Retains {@code bytes} (already verified) unless an equal entry is present, then restores the bounds. */
        synchronized void put(Key key, byte[] bytes) {
            if (map.get(key) != null) {
                return; // a concurrent miss retained it first; same key means same bytes
            }
            map.put(key, bytes);
            charged += charge(key, bytes.length);
            Iterator<Map.Entry<Key, byte[]>> eldest = map.entrySet().iterator();
            while (map.size() > MAX_FILES || charged > MAX_CHARGED_BYTES) {
                Map.Entry<Key, byte[]> e = eldest.next();
                charged -= charge(e.getKey(), e.getValue().length);
                eldest.remove();
                evictions++;
            }
        }

        /** Drops {@code key} if it still holds exactly {@code bytes}. */
        synchronized void discard(Key key, byte[] bytes) {
            if (map.remove(key, bytes)) {
                charged -= charge(key, bytes.length);
            }
        }

        synchronized Stats stats() {
            return new Stats(hits.sum(), misses.sum(), bypasses.sum(), evictions, map.size(), charged);
        }
    }
}
