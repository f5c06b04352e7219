package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.checkpoint.CheckpointBatch;
import dev.vigilo.checkpoint.FieldValue;
import dev.vigilo.checkpoint.ItemRef;
import dev.vigilo.checkpoint.ItemSeq;
import dev.vigilo.checkpoint.LogWriter;
import dev.vigilo.checkpoint.StepRef;
import dev.vigilo.checkpoint.Terminal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Turns what happened to an item into one checkpoint batch, writes it durably, and only then
 * advances the item's mirror ({@link RunItem}): the durable write is the resume point, so after a
 * crash the log holds either the whole outcome or none of it. One batch per outcome: a step's field
 * updates with its STEP_COMPLETED (plus TERMINAL when the step ends the item); one FAILED event per
 * failed attempt; an expand step's STEP_COMPLETED together with its children's creation.
 *
 * <p>Called by the run's thread (seeds) and by worker threads (steps), each only for items it owns
 * (see {@link RunItem}); {@link LogWriter#write} serializes the writes.
 */
final class Checkpointer {
    /** Seeds created per durable batch. */
    static final int SEEDS_PER_BATCH = 256;

    /** An item to create: its identity and its initial fields. */
    record NewItem(ItemRef ref, ObjectNode fields) {}

    private final LogWriter writer;
    private final String runId;

    Checkpointer(LogWriter writer, String runId) {
        this.writer = Objects.requireNonNull(writer, "writer");
        this.runId = Objects.requireNonNull(runId, "runId");
    }

    /**
     * Creates {@code seeds} (ITEM_CREATED + one FIELD_SET per field), up to {@link
     * #SEEDS_PER_BATCH} per batch; returns their mirrors.
     */
    List<RunItem> createSeeds(List<SeedReader.Seed> seeds) {
        List<RunItem> created = new ArrayList<>(seeds.size());
        for (int from = 0; from < seeds.size(); from += SEEDS_PER_BATCH) {
            List<SeedReader.Seed> chunk = seeds.subList(from, Math.min(seeds.size(), from + SEEDS_PER_BATCH));
            CheckpointBatch.Builder b = batch(StepRef.NONE);
            List<RunItem> items = new ArrayList<>(chunk.size());
            for (SeedReader.Seed seed : chunk) {
                ItemRef ref = ItemRef.root(seed.id());
                var ie = b.item(ref, ItemSeq.FIRST).created(null);
                setAll(ie, seed.fields());
                items.add(RunItem.created(ref, seed.fields(), ie.nextSeq(), null));
            }
            writer.write(b.build());
            created.addAll(items);
        }
        return created;
    }

    /**
     * An attempt of an executable step returned {@code updates}: FIELD_SETs + STEP_COMPLETED (+
     * TERMINAL completed if {@code completesItem}); the updates then apply to the item's fields.
     */
    void stepSucceeded(RunItem item, StepRef step, ObjectNode updates, ObjectNode tags, boolean completesItem) {
        CheckpointBatch.Builder b = batch(step);
        var ie = b.item(item.ref, item.next());
        setAll(ie, updates);
        ie.stepCompleted(tags == null ? null : Json.canonical(tags));
        if (completesItem) {
            ie.terminal(Terminal.COMPLETED);
        }
        write(b, item, ie.nextSeq(), step, completesItem ? ItemStatus.COMPLETED : ItemStatus.RUNNING);
        item.fields.setAll(updates);
    }

    /**
     * An attempt failed: one FAILED event; after the {@code finalAttempt} (tagged so) the item is
     * failed.
     */
    void attemptFailed(RunItem item, StepRef step, StepFailure failure, boolean finalAttempt) {
        CheckpointBatch.Builder b = batch(step);
        var ie = b.item(item.ref, item.next())
                .failed(
                        failure.errorType,
                        failure.dump,
                        failure.traceback,
                        finalAttempt,
                        failure.tags == null ? null : Json.canonical(failure.tags));
        write(b, item, ie.nextSeq(), null, finalAttempt ? ItemStatus.FAILED : ItemStatus.RUNNING);
        item.attemptFailed(step.stepInstanceId());
    }

    /**
     * A filter step decided: STEP_COMPLETED, plus TERMINAL filtered if the item is dropped, or
     * TERMINAL completed if it is kept by the pipeline's last step.
     */
    void filterDecided(RunItem item, StepRef step, boolean keep, boolean last) {
        CheckpointBatch.Builder b = batch(step);
        var ie = b.item(item.ref, item.next()).stepCompleted();
        if (!keep) {
            ie.terminal(Terminal.FILTERED);
        } else if (last) {
            ie.terminal(Terminal.COMPLETED);
        }
        write(
                b,
                item,
                ie.nextSeq(),
                step,
                keep ? (last ? ItemStatus.COMPLETED : ItemStatus.RUNNING) : ItemStatus.FILTERED);
    }

    /**
     * A dedup step decided: STEP_COMPLETED with the decision's tags, plus TERMINAL filtered for a duplicate, or
     * TERMINAL completed if a kept item's step is the pipeline's {@code last}.
     */
    void dedupDecided(RunItem item, StepRef step, DedupDecision decision, boolean last) {
        CheckpointBatch.Builder b = batch(step);
        var ie = b.item(item.ref, item.next()).stepCompleted(Json.canonical(decision.tags()));
        boolean keep = !decision.duplicate();
        if (!keep) {
            ie.terminal(Terminal.FILTERED);
        } else if (last) {
            ie.terminal(Terminal.COMPLETED);
        }
        write(
                b,
                item,
                ie.nextSeq(),
                step,
                keep ? (last ? ItemStatus.COMPLETED : ItemStatus.RUNNING) : ItemStatus.FILTERED);
    }

    /**
     * A loop step ended after {@code iterations} body iterations: sets {@code __<loop>_iterations},
     * STEP_COMPLETED (+ TERMINAL completed if it is the pipeline's {@code last} step).
     */
    void loopCompleted(RunItem item, StepRef loop, long iterations, boolean last) {
        CheckpointBatch.Builder b = batch(loop);
        var ie = b.item(item.ref, item.next())
                .set("__" + loop.stepName() + "_iterations", new FieldValue.IntValue(iterations))
                .stepCompleted();
        if (last) {
            ie.terminal(Terminal.COMPLETED);
        }
        write(b, item, ie.nextSeq(), loop, last ? ItemStatus.COMPLETED : ItemStatus.RUNNING);
    }

    /**
     * An expand step at {@code index} split the item into {@code children}: the parent's
     * STEP_COMPLETED + TERMINAL completed and the children's creation are one batch, so after a
     * crash there are both or neither. Returns the children's mirrors.
     */
    List<RunItem> expanded(RunItem parent, StepRef step, List<NewItem> children) {
        CheckpointBatch.Builder b = batch(step);
        var pe = b.item(parent.ref, parent.next()).stepCompleted().terminal(Terminal.COMPLETED);
        List<RunItem> created = new ArrayList<>(children.size());
        for (NewItem child : children) {
            var ce = b.item(child.ref(), ItemSeq.FIRST).created(null);
            setAll(ce, child.fields());
            created.add(RunItem.created(child.ref(), child.fields(), ce.nextSeq(), step.stepIndex()));
        }
        write(b, parent, pe.nextSeq(), step, ItemStatus.COMPLETED);
        return created;
    }

    /** An item with no step left to run (a child of the last step): TERMINAL completed. */
    void completed(RunItem item) {
        CheckpointBatch.Builder b = batch(StepRef.NONE);
        var ie = b.item(item.ref, item.next()).terminal(Terminal.COMPLETED);
        write(b, item, ie.nextSeq(), StepRef.NONE, ItemStatus.COMPLETED);
    }

    private CheckpointBatch.Builder batch(StepRef step) {
        return CheckpointBatch.builder(runId, writer.epoch(), step);
    }

    private static void setAll(CheckpointBatch.Builder.ItemEvents ie, ObjectNode fields) {
        for (Map.Entry<String, JsonNode> f : fields.properties()) {
            ie.set(f.getKey(), Json.toValue(f.getValue()));
        }
    }

    /**
     * Durable before the mirror moves: the batch is the item's resume point. {@code completed}: the
     * step instance the batch completed (null or {@link StepRef#NONE}: none).
     */
    private void write(CheckpointBatch.Builder b, RunItem item, ItemSeq next, StepRef completed, ItemStatus status) {
        writer.write(b.build());
        item.advance(next, completed == null ? null : completed.stepInstanceId(), status);
    }
}
