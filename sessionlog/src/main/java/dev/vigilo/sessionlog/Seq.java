package dev.vigilo.sessionlog;

/**
 * An event sequence number. Seqs are contiguous from 0 across a log (after packed-row expansion).
 *
 * @param value non-negative sequence number
 * @throws IllegalArgumentException if {@code value} is negative
 */
public record Seq(long value) implements Comparable<Seq> {
    public Seq {
        if (value < 0) {
            throw new IllegalArgumentException("seq must be >= 0, got " + value);
        }
    }

    @Override
    public int compareTo(Seq o) {
        return Long.compare(value, o.value);
    }
}
