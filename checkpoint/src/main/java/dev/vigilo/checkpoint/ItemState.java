package dev.vigilo.checkpoint;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An item's state, folded from its events in item_seq order (invariants 4-7): fields, completed
 * steps (the resume cursor is the last of them), failures, terminal state, and the next free
 * item_seq. Immutable.
 *
 * @param item identity in the item tree
 * @param fields folded fields by name, in first-written order
 * @param completedSteps every STEP_COMPLETED in order
 * @param failures every FAILED in order
 * @param terminal the TERMINAL state, if any
 * @param nextSeq the item_seq the next event of this item must use
 * @param lastEpoch the writer epoch of the item's newest event
 * @param eventCount number of (distinct) events folded
 * @param createdByStepIndex step_index of the ITEM_CREATED event (the expand step that created a
 *     child), if any
 */
public record ItemState(
        ItemRef item,
        Map<String, FieldState> fields,
        List<CompletedStep> completedSteps,
        List<Failure> failures,
        Optional<Terminal> terminal,
        ItemSeq nextSeq,
        WriterEpoch lastEpoch,
        int eventCount,
        Optional<Long> createdByStepIndex) {

    public ItemState {
        fields = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(fields));
        completedSteps = List.copyOf(completedSteps);
        failures = List.copyOf(failures);
    }

    /** The resume cursor: the newest completed step, empty if no step completed yet. */
    public Optional<CompletedStep> cursor() {
        return completedSteps.isEmpty() ? Optional.empty() : Optional.of(completedSteps.get(completedSteps.size() - 1));
    }

    /** Whether a STEP_COMPLETED exists for this step instance (step name + index + iteration). */
    public boolean isCompleted(String stepInstanceId) {
        return completedSteps.stream().anyMatch(c -> stepInstanceId.equals(c.stepInstanceId()));
    }

    /**
     * Whether the writer gave up on this item: its newest failure was a final attempt and no step
     * completed since.
     */
    public boolean failedPermanently() {
        if (failures.isEmpty() || terminal.isPresent()) {
            return false;
        }
        Failure last = failures.get(failures.size() - 1);
        return last.finalAttempt()
                && cursor().map(c -> c.itemSeq().compareTo(last.itemSeq()) < 0).orElse(true);
    }

    /** Failures recorded for one step instance (name, index, iteration), oldest first. */
    public List<Failure> failuresOf(String stepName, long stepIndex, Long iteration) {
        return failures.stream()
                .filter(f -> stepName.equals(f.stepName())
                        && f.stepIndex() != null
                        && f.stepIndex() == stepIndex
                        && java.util.Objects.equals(iteration, f.iteration()))
                .toList();
    }
}
