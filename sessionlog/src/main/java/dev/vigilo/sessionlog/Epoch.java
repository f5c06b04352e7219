package dev.vigilo.sessionlog;

/**
 * A writer epoch (fencing token): the generation of the writer lease under which a batch was appended.
 * Ordered by value; a batch whose epoch is lower than the highest epoch seen so far is stale-writer residue.
 *
 * @param value non-negative epoch number
 * @throws IllegalArgumentException if {@code value} is negative
 */
public record Epoch(long value) implements Comparable<Epoch> {
    public Epoch {
        if (value < 0) {
            throw new IllegalArgumentException("epoch must be >= 0, got " + value);
        }
    }

    /** @return the epoch that directly follows this one */
    public Epoch next() {
        return new Epoch(Math.addExact(value, 1));
    }

    @Override
    public int compareTo(Epoch o) {
        return Long.compare(value, o.value);
    }
}
