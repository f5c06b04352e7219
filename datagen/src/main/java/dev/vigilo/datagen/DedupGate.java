package dev.vigilo.datagen;

import dev.vigilo.checkpoint.CompletedStep;
import dev.vigilo.checkpoint.ItemRef;
import dev.vigilo.checkpoint.ItemState;
import dev.vigilo.checkpoint.Terminal;
import dev.vigilo.common.errors.DamagedException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Decides one dedup step for every item in item order, so the first item wins whatever the timing, in every
 * process alike. Item order: the seeds in input order, each followed by its children ({@code <parent>.<k>} in the
 * order of {@code k}, each child followed by its own children), i.e. a depth-first walk of the item trees.
 *
 * <p>The gate walks that order from the front: it moves past an item once it knows how the item stands at this step
 * (from the log's folds and from this process's own items as they return from their workers):
 *
 * <ul>
 *   <li>it ended before the step (filtered, failed finally): nothing to compare;
 *   <li>it was split by an expand step before this one: its children come next in the walk;
 *   <li>its decision is in the log (the step's STEP_COMPLETED and its {@link DedupDecision} tags): a kept item's key
 *       is registered;
 *   <li>it reached the step (every earlier step completed, not ended): the gate decides it now against the kept items
 *       before it, and a parked item of this process is handed back to run on with its decision.
 * </ul>
 *
 * An item whose state is not known yet (not created, still running an earlier step, written by another process
 * and not flushed) stops the walk there: later items wait, parked (holding no worker), and nothing is decided out of
 * order. The walk only moves forward, so each item is looked at once: no barrier over the experiment and no
 * pairwise comparison (exact: a hash map of keys; minhash: LSH bands, {@link MinHash}).
 *
 * <p>Used by the run's coordinator thread only.
 */
final class DedupGate {
    private enum Kind {
        REACHED,
        ENDED,
        EXPANDED,
        DECIDED
    }

    /** What is known of one item at this step; a later observation replaces it only with a higher rank. */
    private record Known(Kind kind, String text, DedupDecision decision) {
        int rank() {
            return switch (kind) {
                case REACHED -> 1;
                case ENDED, EXPANDED -> 2;
                case DECIDED -> 3;
            };
        }
    }

    private record Kept(String id, long[] signature) {}

    private final int index;
    private final String instance;
    private final List<StepSpec> steps;
    private final DedupSpec spec;
    private final boolean retryFailed;

    private final Map<String, Known> known = new HashMap<>();
    /** Items the walk moved past: what is learnt of them later changes nothing. */
    private final Set<String> passed = new HashSet<>();

    private final Map<String, NavigableMap<Integer, ItemRef>> children = new HashMap<>();
    private final Deque<ItemRef> walk = new ArrayDeque<>();
    /** Decisions the walk made for items that reached the step, until such an item parks here and takes it. */
    private final Map<String, DedupDecision> decided = new HashMap<>();

    private final Map<String, RunItem> parked = new HashMap<>();
    private final List<RunItem> ready = new ArrayList<>();

    private final Map<String, String> firstByKey = new HashMap<>();
    private final List<Kept> kept = new ArrayList<>();
    private final Map<Long, List<Integer>> bands = new HashMap<>();
    private final int rows;
    private final int minMatches;

    DedupGate(List<StepSpec> steps, int index, List<String> seedIds, boolean retryFailed) {
        this.steps = List.copyOf(steps);
        this.index = index;
        StepSpec step = steps.get(index);
        this.instance = RunItem.instanceId(step.name(), index, null);
        this.spec = step.dedup();
        this.retryFailed = retryFailed;
        seedIds.forEach(id -> walk.add(ItemRef.root(id)));
        boolean minhash = spec.method() == DedupSpec.Method.MINHASH;
        this.rows = minhash ? MinHash.rowsPerBand(spec.threshold()) : 0;
        this.minMatches = minhash ? MinHash.minMatches(spec.threshold()) : 0;
    }

    int index() {
        return index;
    }

    /** Learns how an item stands at this step from a fold of the log. */
    void observe(ItemState st) {
        ItemRef ref = st.item();
        long start = st.createdByStepIndex().map(e -> e + 1).orElse(0L);
        if (start > index || passed.contains(ref.itemId())) {
            return; // created by a step after this one (never reaches it), or already walked past
        }
        child(ref);
        Optional<CompletedStep> done = st.completedSteps().stream()
                .filter(c -> instance.equals(c.stepInstanceId()))
                .findFirst();
        Known k = null;
        if (done.isPresent()) {
            DedupDecision d = DedupDecision.fromTags(done.get().queryTagsJson());
            if (d == null) {
                throw new DamagedException("item " + ref.itemId() + ": the STEP_COMPLETED of dedup step "
                        + steps.get(index).name() + " carries no dedup decision this version reads"
                        + " (docs/formats/checkpoint-log.md, dedup tags)");
            }
            k = new Known(Kind.DECIDED, null, d);
        } else if (st.terminal().isPresent()) {
            k = new Known(st.terminal().get() == Terminal.COMPLETED ? Kind.EXPANDED : Kind.ENDED, null, null);
        } else if (st.failedPermanently()) {
            // With --retry-failed such an item runs again and may still reach this step.
            k = retryFailed ? null : new Known(Kind.ENDED, null, null);
        } else if (reached(st, start)) {
            k = new Known(Kind.REACHED, DedupText.text(Json.fields(st.fields()).get(spec.field())), null);
        }
        learn(ref.itemId(), k);
    }

    private boolean reached(ItemState st, long start) {
        for (int i = (int) start; i < index; i++) {
            if (!st.isCompleted(RunItem.instanceId(steps.get(i).name(), i, null))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Learns how one of this process's items stands after its worker returned it: parked at this step, ended, or
     * split into {@code spawned}.
     */
    void returned(RunItem item, List<RunItem> spawned) {
        long start = item.createdBy == null ? 0 : item.createdBy + 1;
        if (start > index) {
            return;
        }
        child(item.ref);
        spawned.forEach(c -> child(c.ref));
        Integer at = item.parkedAt();
        String id = item.id();
        if (at != null) {
            if (at != index) {
                return; // parked at another dedup step: past this one, or not there yet
            }
            DedupDecision d = decided.remove(id);
            if (d != null) {
                item.decide(index, d);
                ready.add(item);
            } else {
                parked.put(id, item);
                learn(id, new Known(Kind.REACHED, DedupText.text(item.fields.get(spec.field())), null));
            }
        } else if (!item.isRunning() && !item.isCompleted(instance)) {
            learn(id, new Known(item.status() == ItemStatus.COMPLETED ? Kind.EXPANDED : Kind.ENDED, null, null));
        }
    }

    private void child(ItemRef ref) {
        if (ref.parentItemId() != null && !passed.contains(ref.parentItemId())) {
            int k = Integer.parseInt(ref.itemId().substring(ref.parentItemId().length() + 1));
            children.computeIfAbsent(ref.parentItemId(), p -> new TreeMap<>()).put(k, ref);
        }
    }

    private void learn(String id, Known k) {
        if (k == null || passed.contains(id)) {
            return;
        }
        Known old = known.get(id);
        if (old == null || k.rank() > old.rank()) {
            known.put(id, k);
        }
    }

    /** Walks on as far as what is known allows; returns the parked items that can run on now (with decisions). */
    List<RunItem> advance() {
        while (!walk.isEmpty()) {
            ItemRef ref = walk.peekFirst();
            Known k = known.get(ref.itemId());
            if (k == null) {
                break;
            }
            walk.pollFirst();
            known.remove(ref.itemId());
            passed.add(ref.itemId());
            switch (k.kind()) {
                case ENDED -> {}
                case EXPANDED -> {
                    NavigableMap<Integer, ItemRef> cs = children.remove(ref.itemId());
                    if (cs != null) {
                        cs.descendingMap().values().forEach(walk::addFirst);
                    }
                }
                case DECIDED -> register(ref.itemId(), k.decision());
                case REACHED -> {
                    DedupDecision d = decide(ref.itemId(), k.text());
                    RunItem p = parked.remove(ref.itemId());
                    if (p != null) {
                        p.decide(index, d);
                        ready.add(p);
                    } else {
                        decided.put(ref.itemId(), d);
                    }
                }
            }
        }
        List<RunItem> out = List.copyOf(ready);
        ready.clear();
        return out;
    }

    /** Whether items of this process wait here. */
    boolean holding() {
        return !parked.isEmpty() || !ready.isEmpty();
    }

    /** The item the walk waits for, while items of this process are parked here. */
    Optional<ItemRef> blockedOn() {
        return parked.isEmpty() ? Optional.empty() : Optional.ofNullable(walk.peekFirst());
    }

    private DedupDecision decide(String id, String text) {
        if (spec.method() == DedupSpec.Method.EXACT) {
            String key = DedupText.exactKey(text);
            String first = firstByKey.putIfAbsent(key, id);
            return first == null ? DedupDecision.kept(key) : DedupDecision.duplicate(DedupSpec.Method.EXACT, first, 0);
        }
        long[] sig = MinHash.signature(text);
        TreeSet<Integer> candidates = new TreeSet<>();
        for (int b = 0; b < MinHash.HASHES / rows; b++) {
            candidates.addAll(bands.getOrDefault(MinHash.bandKey(sig, b, rows), List.of()));
        }
        for (int ord : candidates) { // earliest kept item first
            int m = MinHash.matches(sig, kept.get(ord).signature());
            if (m >= minMatches) {
                return DedupDecision.duplicate(
                        DedupSpec.Method.MINHASH, kept.get(ord).id(), m);
            }
        }
        DedupDecision d = DedupDecision.kept(sig);
        register(id, d);
        return d;
    }

    /** A kept item's key joins the index later items are compared with. */
    private void register(String id, DedupDecision d) {
        if (d.duplicate()) {
            return;
        }
        if (d.exactKey() != null) {
            firstByKey.putIfAbsent(d.exactKey(), id);
            return;
        }
        if (d.signature() == null || rows == 0) {
            return; // a decision of the other method (the pipeline changed): nothing this index compares
        }
        int ord = kept.size();
        kept.add(new Kept(id, d.signature()));
        for (int b = 0; b < MinHash.HASHES / rows; b++) {
            bands.computeIfAbsent(MinHash.bandKey(d.signature(), b, rows), x -> new ArrayList<>(1))
                    .add(ord);
        }
    }
}
