package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.checkpoint.ItemRef;
import dev.vigilo.checkpoint.StepRef;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs one item's remaining steps in order, from the resume cursor its mirror holds: a step
 * instance the log records as completed is skipped, a failed attempt is retried up to the step's
 * {@code retries}, and every outcome is written through {@link Checkpointer} before the next step
 * starts. Stops at the item's end: completed, filtered, failed, or split by an expand step (whose
 * children it returns for scheduling), or at a dedup step not decided yet (the item is parked: {@link
 * RunItem#parkedAt}).
 *
 * <p>Runs on a worker thread, for an item that worker owns; shared by all workers (it holds no
 * per-item state).
 */
final class ItemRunner {
    private final List<StepSpec> steps;
    private final StepExecutor executor;
    private final StepLimits limits;
    private final Checkpointer checkpointer;

    ItemRunner(List<StepSpec> steps, StepExecutor executor, StepLimits limits, Checkpointer checkpointer) {
        this.steps = List.copyOf(steps);
        this.executor = executor;
        this.limits = limits;
        this.checkpointer = checkpointer;
    }

    /** Runs the item's remaining steps; returns the children an expand step created (usually none). */
    List<RunItem> run(RunItem item) throws InterruptedException {
        int start = item.createdBy == null ? 0 : (int) (item.createdBy + 1);
        for (int i = start; i < steps.size() && item.isRunning(); i++) {
            StepSpec step = steps.get(i);
            boolean last = i == steps.size() - 1;
            StepRef ref = StepRef.of(step.name(), i, null, 1);
            if (item.isCompleted(ref.stepInstanceId())) {
                continue;
            }
            switch (step.kind()) {
                case FILTER ->
                    checkpointer.filterDecided(item, ref, step.condition().test(item.fields), last);
                case EXPAND -> {
                    return expand(item, step, ref);
                }
                case LOOP -> runLoop(item, step, i, last);
                case DEDUP -> {
                    DedupDecision d = item.dedupDecision(i);
                    if (d == null) {
                        // Decided in item order by the step's DedupGate on the coordinator: wait there, not here,
                        // so the worker is free for the earlier items the decision waits for.
                        item.park(i);
                        return List.of();
                    }
                    checkpointer.dedupDecided(item, ref, d, last);
                }
                default -> runAttempts(item, step, i, null, last);
            }
        }
        if (item.isRunning() && start >= steps.size()) {
            // A child created by the last step: nothing left to do but complete it.
            checkpointer.completed(item);
        }
        return List.of();
    }

    /**
     * Runs one executable step (or loop iteration) until an attempt succeeds or the attempts are
     * used up; the attempt number continues from the failures the log already holds. Returns false
     * if the item failed.
     */
    private boolean runAttempts(RunItem item, StepSpec step, int index, Long iteration, boolean completesItem)
            throws InterruptedException {
        String instance = RunItem.instanceId(step.name(), index, iteration);
        while (true) {
            int attempt = item.failedAttempts(instance) + 1;
            StepRef ref = StepRef.of(step.name(), index, iteration, attempt);
            StepResult result;
            try {
                result = limits.run(step, () -> executor.run(step, item.id(), item.fields.deepCopy(), attempt));
            } catch (StepFailure f) {
                boolean finalAttempt = attempt >= item.attemptBudgetStart(instance) + step.maxAttempts();
                checkpointer.attemptFailed(item, ref, f, finalAttempt);
                if (finalAttempt) {
                    return false;
                }
                continue;
            }
            checkpointer.stepSucceeded(item, ref, result.updates(), result.tags(), completesItem);
            return true;
        }
    }

    /**
     * Runs the loop's body as iterations 1, 2, ... until its condition holds after an iteration or
     * {@code max_iterations} ran; iterations the log records as completed are not run again.
     */
    private void runLoop(RunItem item, StepSpec loop, int index, boolean last) throws InterruptedException {
        StepSpec body = loop.body();
        long k = 1;
        while (item.isCompleted(RunItem.instanceId(body.name(), index, k))) {
            k++;
        }
        boolean satisfied = k > 1 && loop.condition().test(item.fields);
        for (; !satisfied && k <= loop.maxIterations(); k++) {
            if (!runAttempts(item, body, index, k, false)) {
                return;
            }
            satisfied = loop.condition().test(item.fields);
        }
        checkpointer.loopCompleted(
                item, StepRef.of(loop.name(), index, null, 1), Math.min(k - 1, loop.maxIterations()), last);
    }

    /**
     * One child per element of the list field ({@code <parent>.<k>}: the parent's fields without
     * the list, plus the element); a missing or non-list field fails the item at once (not
     * retried).
     */
    private List<RunItem> expand(RunItem item, StepSpec step, StepRef ref) {
        JsonNode list = item.fields.get(step.listField());
        if (list == null || !list.isArray()) {
            String dump = "field '"
                    + step.listField()
                    + "' is "
                    + (list == null ? "missing" : "not a list: " + Json.canonical(list));
            checkpointer.attemptFailed(item, ref, new StepFailure("ExpandError", dump, null), true);
            return List.of();
        }
        List<Checkpointer.NewItem> children = new ArrayList<>(list.size());
        for (int k = 0; k < list.size(); k++) {
            ItemRef child = item.ref.child(item.id() + "." + k);
            ObjectNode fields = item.fields.deepCopy();
            fields.remove(step.listField());
            fields.set(step.childField(), list.get(k));
            children.add(new Checkpointer.NewItem(child, fields));
        }
        return checkpointer.expanded(item, ref, children);
    }
}
