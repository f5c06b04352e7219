package dev.vigilo.checkpoint;

/** Batch builders shared by the tests. */
final class TestBatches {
    private TestBatches() {}

    /**
     * ITEM_CREATED + {@code fields} FIELD_SETs + STEP_COMPLETED of step "gen"#0, for a new root
     * item.
     */
    static CheckpointBatch itemWithStep(WriterEpoch epoch, String itemId, int fields) {
        CheckpointBatch.Builder b = CheckpointBatch.builder("run-1", epoch, StepRef.of("gen", 0, null, 1));
        var ie = b.item(ItemRef.root(itemId), ItemSeq.FIRST).created(null);
        for (int f = 0; f < fields; f++) {
            ie.set("f" + f, new FieldValue.StrValue(itemId + "/" + f));
        }
        ie.stepCompleted();
        return b.build();
    }
}
