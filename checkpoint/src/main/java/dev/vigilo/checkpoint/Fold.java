package dev.vigilo.checkpoint;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Folds one item's events into an {@link ItemState}; the only place the fold rules live. */
final class Fold {
    private Fold() {}

    /**
     * Sorts by item_seq, drops exact duplicates (same event id: a retried write seen twice), and
     * rejects two different events at one item_seq.
     */
    static List<CheckpointEvent> ordered(String itemId, List<CheckpointEvent> events) {
        List<CheckpointEvent> sorted = new ArrayList<>(events);
        sorted.sort(Comparator.comparing(CheckpointEvent::itemSeq));
        List<CheckpointEvent> out = new ArrayList<>(sorted.size());
        for (CheckpointEvent e : sorted) {
            if (!out.isEmpty()) {
                CheckpointEvent prev = out.get(out.size() - 1);
                if (prev.itemSeq().equals(e.itemSeq())) {
                    if (prev.eventId().equals(e.eventId())) {
                        continue;
                    }
                    throw new FencingViolationException(
                            itemId,
                            e.itemSeq(),
                            "writer-fencing violation: item '"
                                    + itemId
                                    + "' has two different events at item_seq "
                                    + e.itemSeq().value()
                                    + ": "
                                    + prev.eventId()
                                    + " ("
                                    + prev.eventType()
                                    + ", writer_epoch "
                                    + prev.writerEpoch()
                                    + ") and "
                                    + e.eventId()
                                    + " ("
                                    + e.eventType()
                                    + ", writer_epoch "
                                    + e.writerEpoch()
                                    + "); two writers owned the item at once");
                }
            }
            out.add(e);
        }
        return out;
    }

    static ItemState fold(String itemId, List<CheckpointEvent> events) {
        List<CheckpointEvent> ordered = ordered(itemId, events);
        if (ordered.isEmpty()) {
            throw new IllegalArgumentException("no events for item " + itemId);
        }
        CheckpointEvent first = ordered.get(0);
        ItemRef ref = new ItemRef(itemId, first.rootItemId(), first.parentItemId());
        Map<String, FieldState> fields = new LinkedHashMap<>();
        List<CompletedStep> steps = new ArrayList<>();
        List<Failure> failures = new ArrayList<>();
        Terminal terminal = null;
        Long createdBy = null;
        for (CheckpointEvent e : ordered) {
            switch (e.eventType()) {
                case ITEM_CREATED -> {
                    ref = new ItemRef(itemId, e.rootItemId(), e.parentItemId());
                    createdBy = e.stepIndex();
                }
                case FIELD_SET -> fields.put(e.fieldName(), new FieldState(List.of(e.value()), false));
                case FIELD_APPEND -> {
                    FieldState old = fields.get(e.fieldName());
                    List<FieldValue> vs = new ArrayList<>(old == null ? List.of() : old.values());
                    vs.add(e.value());
                    fields.put(e.fieldName(), new FieldState(vs, true));
                }
                case STEP_COMPLETED ->
                    steps.add(new CompletedStep(
                            e.stepName(),
                            e.stepIndex() == null ? -1 : e.stepIndex(),
                            e.stepInstanceId(),
                            e.iteration(),
                            e.attempt(),
                            e.itemSeq(),
                            e.writerEpoch(),
                            e.queryTagsJson()));
                case FAILED ->
                    failures.add(new Failure(
                            e.stepName(),
                            e.stepIndex(),
                            e.iteration(),
                            e.attempt(),
                            e.errorType(),
                            e.errorDump(),
                            e.traceback(),
                            e.eventTs(),
                            e.itemSeq(),
                            CheckpointBatch.isFinalAttempt(e.queryTagsJson()),
                            e.writerEpoch(),
                            e.queryTagsJson()));
                case TERMINAL -> terminal = Terminal.fromColumn(e.terminal());
            }
        }
        CheckpointEvent last = ordered.get(ordered.size() - 1);
        return new ItemState(
                ref,
                fields,
                steps,
                failures,
                Optional.ofNullable(terminal),
                last.itemSeq().next(),
                last.writerEpoch(),
                ordered.size(),
                Optional.ofNullable(createdBy));
    }
}
