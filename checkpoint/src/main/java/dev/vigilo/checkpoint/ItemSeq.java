package dev.vigilo.checkpoint;

/**
 * Position of an event in its item's history: strictly increasing per item, starting at 0. Two
 * different events at the same (item_id, item_seq) are a writer-fencing violation ({@link
 * FencingViolationException}).
 */
public record ItemSeq(long value) implements Comparable<ItemSeq> {
    /** The first sequence number of every item (its ITEM_CREATED event). */
    public static final ItemSeq FIRST = new ItemSeq(0);

    public ItemSeq {
        if (value < 0) {
            throw new IllegalArgumentException("item_seq must be >= 0, got " + value);
        }
    }

    /** The next sequence number. */
    public ItemSeq next() {
        return new ItemSeq(Math.addExact(value, 1));
    }

    @Override
    public int compareTo(ItemSeq o) {
        return Long.compare(value, o.value);
    }
}
