package dev.vigilo.checkpoint;

/**
 * One STEP_COMPLETED event of an item, in item_seq order: what the resume cursor is rebuilt from. {@code writerEpoch}
 * is the writer that completed the step; {@code queryTagsJson} its non-authoritative tags (a JSON object, or null).
 */
public record CompletedStep(
        String stepName,
        long stepIndex,
        String stepInstanceId,
        Long iteration,
        int attempt,
        ItemSeq itemSeq,
        WriterEpoch writerEpoch,
        String queryTagsJson) {}
