package dev.vigilo.checkpoint;

import java.time.Instant;

/**
 * One FAILED event of an item. {@code stepName}/{@code stepIndex}/{@code iteration}/{@code errorDump}/{@code traceback}
 * and {@code queryTagsJson} may be null. {@code finalAttempt}: the writer gave up on the item with this failure (the
 * query tag {@code "final_attempt": true}). {@code writerEpoch}: the writer that recorded it.
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
        boolean finalAttempt,
        WriterEpoch writerEpoch,
        String queryTagsJson) {}
