package dev.vigilo.checkpoint;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.UUID;

/**
 * A MemWAL shard id. Each writer has its own shard, derived from the experiment's identity
 * (pipeline, experiment) and the writer's name ({@link #forWriter}; not from the URI, which may be
 * spelled differently on a restart), so a restarted writer reopens the same shard and MemWAL
 * replays its WAL without any local state having to survive the crash.
 */
public record ShardId(UUID value) {
    public ShardId {
        Objects.requireNonNull(value, "value");
    }

    /**
     * The shard of writer {@code writerName} in one experiment's log: a name-based (v3) UUID of the
     * three names.
     */
    public static ShardId forWriter(String pipeline, String experiment, String writerName) {
        Objects.requireNonNull(pipeline, "pipeline");
        Objects.requireNonNull(experiment, "experiment");
        Objects.requireNonNull(writerName, "writerName");
        String key = "vigilo-shard\0" + pipeline + "\0" + experiment + "\0" + writerName;
        return new ShardId(UUID.nameUUIDFromBytes(key.getBytes(StandardCharsets.UTF_8)));
    }

    @Override
    public String toString() {
        return value.toString();
    }
}
