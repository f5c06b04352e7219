package dev.vigilo.checkpoint;

import java.util.Objects;

/**
 * Ownership identity of one writer incarnation, stored in {@code writer_epoch}. A new incarnation
 * (a restart, or a takeover of an item) always has a new epoch: {@code <writer name>@<shard
 * id>#<MemWAL shard epoch>}; the MemWAL shard epoch grows by one each time the shard is opened.
 */
public record WriterEpoch(String value) {
    public WriterEpoch {
        Objects.requireNonNull(value, "value");
        if (value.isEmpty()) {
            throw new IllegalArgumentException("writer epoch must not be empty");
        }
    }

    /** The writer name part ({@code <writer name>} before the {@code @}). */
    public String writerName() {
        int at = value.lastIndexOf('@');
        return at < 0 ? value : value.substring(0, at);
    }

    @Override
    public String toString() {
        return value;
    }
}
