package dev.vigilo.checkpoint;

/** One STEP_COMPLETED event of an item, in item_seq order: what the resume cursor is rebuilt from. */
public record CompletedStep(
        String stepName, long stepIndex, String stepInstanceId, Long iteration, int attempt, ItemSeq itemSeq) {}
