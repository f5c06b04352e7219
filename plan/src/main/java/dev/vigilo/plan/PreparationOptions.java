package dev.vigilo.plan;

import java.time.Duration;
import java.util.Objects;

/**
 * Tunables of preparation. {@link #DEFAULTS} are the spec's values (five-minute lease, 60 s renewal during
 * read-only traversal, 30 s group checkpoint, 64-file groups); tests shorten them.
 *
 * @param lease              how long a claim or renewal keeps the creation lease
 * @param renewInterval      how often read-only traversal renews the lease (must be well under {@code lease})
 * @param checkpointInterval after this long in one group, acknowledge the verified prefix and recheck authority
 * @param groupMaxFiles      files per write group, 1..64
 * @param hooks              observation points for tests; {@link Hooks#NONE} in production
 */
public record PreparationOptions(
        Duration lease, Duration renewInterval, Duration checkpointInterval, int groupMaxFiles, Hooks hooks) {
    public static final PreparationOptions DEFAULTS = new PreparationOptions(
            Duration.ofMinutes(5), Duration.ofSeconds(60), Duration.ofSeconds(30), GroupWriter.MAX_FILES, Hooks.NONE);

    public PreparationOptions {
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(renewInterval, "renewInterval");
        Objects.requireNonNull(checkpointInterval, "checkpointInterval");
        Objects.requireNonNull(hooks, "hooks");
        if (groupMaxFiles < 1 || groupMaxFiles > GroupWriter.MAX_FILES) {
            throw new IllegalArgumentException("groupMaxFiles must be in 1..64, got " + groupMaxFiles);
        }
    }

    /**
     * Observation points, called one at a time on the thread that registers and acknowledges write groups (not the
     * thread that called {@code create}). Implementations must not mutate plan state.
     */
    public interface Hooks {
        Hooks NONE = new Hooks() {};

        /** After a group's ownership rows are committed, before any of its PUTs. */
        default void afterRegister(int files) {}

        /** After a group's acknowledgement committed; {@code chunkPrefix} chunks are acknowledged. */
        default void afterAcknowledge(long chunkPrefix) {}

        /** After a mid-group checkpoint (the group ran past the checkpoint interval) committed. */
        default void afterCheckpoint(long chunkPrefix) {}

        /** After all files are acknowledged and before the publication verification pass. */
        default void beforePublication() {}
    }
}
