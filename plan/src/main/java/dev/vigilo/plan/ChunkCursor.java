package dev.vigilo.plan;

/**
 * Acknowledged chunk progress: every chunk with an index below {@code value} has its file created and byte-verified.
 * Only ever advances, and only across a consecutive range.
 */
public record ChunkCursor(long value) implements Comparable<ChunkCursor> {
    public ChunkCursor {
        if (value < 0) {
            throw new IllegalArgumentException("chunk cursor must be >= 0, got " + value);
        }
    }

    @Override
    public int compareTo(ChunkCursor o) {
        return Long.compare(value, o.value);
    }
}
