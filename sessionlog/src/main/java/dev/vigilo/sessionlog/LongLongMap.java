package dev.vigilo.sessionlog;

import java.util.Arrays;

/**
 * An open-addressing map from long keys to long values (linear probing, backward-shift deletion). The surface
 * fold keeps one entry per current tool/result node, which for a multi-GB log is millions of entries: a boxed
 * {@code HashMap<Long, ...>} would cost several times the 16 bytes per entry (plus load) this map needs.
 * Not thread-safe.
 */
final class LongLongMap {
    /** Returned by {@link #get} for an absent key. */
    static final long MISSING = Long.MIN_VALUE;

    private static final long FREE = Long.MIN_VALUE;
    private long[] keys;
    private long[] values;
    private int size;
    private int mask;

    LongLongMap() {
        this(64);
    }

    /** @param capacity the initial table size, a power of two of at least 4 */
    LongLongMap(int capacity) {
        if (capacity < 4 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("capacity must be a power of two >= 4, got " + capacity);
        }
        keys = new long[capacity];
        values = new long[capacity];
        Arrays.fill(keys, FREE);
        mask = capacity - 1;
    }

    int size() {
        return size;
    }

    private static int slot(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }

    /** @return the value of {@code key}, or {@link #MISSING} */
    long get(long key) {
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == key) {
                return values[i];
            }
            if (k == FREE) {
                return MISSING;
            }
        }
    }

    /** @param key any value but {@link Long#MIN_VALUE} */
    void put(long key, long value) {
        if (key == FREE) {
            throw new IllegalArgumentException("key Long.MIN_VALUE is reserved");
        }
        if ((size + 1) * 4L > keys.length * 3L) {
            rehash(keys.length * 2);
        }
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == key) {
                values[i] = value;
                return;
            }
            if (k == FREE) {
                keys[i] = key;
                values[i] = value;
                size++;
                return;
            }
        }
    }

    /** @return the removed value, or {@link #MISSING} */
    long remove(long key) {
        int i = slot(key, mask);
        for (; ; i = (i + 1) & mask) {
            long k = keys[i];
            if (k == FREE) {
                return MISSING;
            }
            if (k == key) {
                break;
            }
        }
        long old = values[i];
        size--;
        // backward-shift deletion keeps every probe chain unbroken
        int gap = i;
        for (int j = (gap + 1) & mask; ; j = (j + 1) & mask) {
            long k = keys[j];
            if (k == FREE) {
                break;
            }
            int home = slot(k, mask);
            boolean movable = gap <= j ? (home <= gap || home > j) : (home <= gap && home > j);
            if (movable) {
                keys[gap] = k;
                values[gap] = values[j];
                gap = j;
            }
        }
        keys[gap] = FREE;
        return old;
    }

    private void rehash(int capacity) {
        long[] oldKeys = keys, oldValues = values;
        keys = new long[capacity];
        values = new long[capacity];
        Arrays.fill(keys, FREE);
        mask = capacity - 1;
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != FREE) {
                put(oldKeys[i], oldValues[i]);
            }
        }
    }
}
