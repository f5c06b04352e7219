package dev.vigilo.checkpoint;

import java.util.Objects;

/**
 * Provenance of a checkpoint batch: which step (by name and static position), which runtime
 * instance of it, which loop iteration and which attempt (1-based). {@link #NONE} is used for
 * batches not produced by a step (item creation from the seed input). Nullable components map to
 * the spec's nullable columns.
 */
public record StepRef(String stepName, Long stepIndex, String stepInstanceId, Long iteration, int attempt) {
    /** Not produced by a step (attempt 1, everything else null). */
    public static final StepRef NONE = new StepRef(null, null, null, null, 1);

    public StepRef {
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt is 1-based, got " + attempt);
        }
        if (stepIndex != null && stepIndex < 0) {
            throw new IllegalArgumentException("step_index must be >= 0");
        }
    }

    /**
     * Step {@code name} at position {@code index}, attempt {@code attempt}, iteration {@code
     * iteration} (nullable).
     */
    public static StepRef of(String name, long index, Long iteration, int attempt) {
        Objects.requireNonNull(name, "name");
        String instance = name + "#" + index + (iteration == null ? "" : "." + iteration);
        return new StepRef(name, index, instance, iteration, attempt);
    }
}
