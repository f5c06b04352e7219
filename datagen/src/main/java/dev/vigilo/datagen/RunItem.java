package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.checkpoint.ItemRef;
import dev.vigilo.checkpoint.ItemSeq;
import dev.vigilo.checkpoint.ItemState;
import dev.vigilo.checkpoint.StepRef;
import dev.vigilo.checkpoint.Terminal;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * A run's in-memory mirror of one item's folded log state: what the item's next batch needs (its
 * next item_seq, the fields its next step sees) and what the log says about its steps (completed
 * step instances, failed attempts per instance). Built from the fold when a run starts, or together
 * with the batch that creates the item; {@link Checkpointer} advances it only after a batch is
 * durable, so the mirror never runs ahead of the log.
 *
 * <p>Not thread-safe, and needs no lock: one thread owns an item at a time. The thread that builds
 * it owns it until it is handed to {@link ItemScheduler}, then the worker running the item owns it;
 * the executor's hand-over orders the writes before it with the worker's reads.
 */
final class RunItem {
    final ItemRef ref;
    /** The fields the next step sees (the fold's values, then each step's updates applied). */
    final ObjectNode fields;
    /**
     * Index of the expand step that created this item (it runs the steps after it); null for a seed.
     */
    final Long createdBy;

    private ItemSeq next;
    private ItemStatus status;
    private final Set<String> completed = new HashSet<>();
    private final Map<String, Integer> failures = new HashMap<>();
    /** Per step instance: the failures up to its newest final attempt (a later run's budget starts after them). */
    private final Map<String, Integer> budgetStart = new HashMap<>();
    /** The dedup step (index) this item waits at for its decision; null when it does not wait. */
    private Integer parkedAt;
    /** Dedup decisions by step index, handed over by the step's {@link DedupGate} before the item runs on. */
    private final Map<Integer, DedupDecision> dedup = new HashMap<>();

    private RunItem(ItemRef ref, ObjectNode fields, ItemSeq next, Long createdBy, ItemStatus status) {
        this.ref = ref;
        this.fields = fields;
        this.next = next;
        this.createdBy = createdBy;
        this.status = status;
    }

    /** An item whose creation batch ended at {@code next} (a seed, or an expand step's child). */
    static RunItem created(ItemRef ref, ObjectNode fields, ItemSeq next, Long createdBy) {
        return new RunItem(ref, fields, next, createdBy, ItemStatus.RUNNING);
    }

    /** The mirror of an item as the log folds it. */
    static RunItem of(ItemState st) {
        return of(st, false);
    }

    /**
     * The mirror of an item as the log folds it; with {@code retryFailed} an item that failed finally is running
     * again, its failed step getting a fresh set of attempts (numbered on from the log's).
     */
    static RunItem of(ItemState st, boolean retryFailed) {
        ItemStatus status = st.terminal()
                .map(t -> t == Terminal.COMPLETED ? ItemStatus.COMPLETED : ItemStatus.FILTERED)
                .orElse(st.failedPermanently() && !retryFailed ? ItemStatus.FAILED : ItemStatus.RUNNING);
        RunItem item = new RunItem(
                st.item(),
                Json.fields(st.fields()),
                st.nextSeq(),
                st.createdByStepIndex().orElse(null),
                status);
        st.completedSteps().forEach(s -> item.completed.add(s.stepInstanceId()));
        st.failures().forEach(f -> {
            String instance = instanceId(f.stepName(), f.stepIndex() == null ? -1 : f.stepIndex(), f.iteration());
            int n = item.failures.merge(instance, 1, Integer::sum);
            if (f.finalAttempt()) {
                item.budgetStart.put(instance, n);
            }
        });
        return item;
    }

    /** The step instance id ({@code <step>#<index>[.<iteration>]}) the log records. */
    static String instanceId(String step, long index, Long iteration) {
        return StepRef.of(step, index, iteration, 1).stepInstanceId();
    }

    String id() {
        return ref.itemId();
    }

    /** The item_seq of the item's next event. */
    ItemSeq next() {
        return next;
    }

    ItemStatus status() {
        return status;
    }

    boolean isRunning() {
        return status == ItemStatus.RUNNING;
    }

    boolean isCompleted(String stepInstance) {
        return completed.contains(stepInstance);
    }

    /** Attempts of this step instance that failed so far (in this run and earlier ones). */
    int failedAttempts(String stepInstance) {
        return failures.getOrDefault(stepInstance, 0);
    }

    /**
     * The failed attempts of {@code stepInstance} before its current set of attempts: 0, or the failures up to the
     * newest final attempt when the item is retried after failing ({@code --retry-failed}).
     */
    int attemptBudgetStart(String stepInstance) {
        return budgetStart.getOrDefault(stepInstance, 0);
    }

    /**
     * A batch for this item is durable: it ended at {@code next}, completed {@code
     * completedInstance} (null: none) and left the item in {@code status}.
     */
    void advance(ItemSeq next, String completedInstance, ItemStatus status) {
        this.next = next;
        if (completedInstance != null) {
            completed.add(completedInstance);
        }
        this.status = status;
    }

    /** The item stops at dedup step {@code index} until its gate decides it (its worker returns it). */
    void park(int index) {
        parkedAt = index;
    }

    /** The dedup step it waits at, or null. */
    Integer parkedAt() {
        return parkedAt;
    }

    /** Its gate decided dedup step {@code index}: the item runs on (rescheduled) and records the decision. */
    void decide(int index, DedupDecision decision) {
        dedup.put(index, decision);
        parkedAt = null;
    }

    /** The decision for dedup step {@code index}, null while not decided. */
    DedupDecision dedupDecision(int index) {
        return dedup.get(index);
    }

    /** A FAILED event for an attempt of {@code stepInstance} is durable. */
    void attemptFailed(String stepInstance) {
        failures.merge(stepInstance, 1, Integer::sum);
    }
}
