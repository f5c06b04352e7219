package dev.vigilo.checkpoint;

import java.time.Instant;

/**
 * One FAILED event of an item. {@code stepName}/{@code stepIndex}/{@code iteration}/{@code errorDump}/{@code traceback}
 * may be null. {@code finalAttempt}: the writer gave up on the item with this failure.
 */
public record Failure(
        String stepName,
        Long stepIndex,
        Long iteration,
        int attempt,
        String errorType,
        String errorDump,
        String traceback,
        Instant at,
        ItemSeq itemSeq,
        boolean finalAttempt) {}
