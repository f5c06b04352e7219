package dev.vigilo.datagen;

import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.ItemState;
import dev.vigilo.checkpoint.LogReader;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Feeds this process's workers with the items of the buckets it claims ({@link Assignment}), a bucket at a time, as
 * workers free up: a bucket has <em>work</em> when one of its seeds is not in the log yet or one of its items is
 * neither terminal nor failed (failed too with {@code --retry-failed}). Claiming a bucket creates its missing seeds
 * (this process owns them now) and hands out its unfinished items. A claim that the last fold does not cover
 * (someone held the bucket since, or a dead holder's writer was just recovered) folds the log again first.
 *
 * <p>Used by the run's coordinator thread only.
 */
final class WorkFeed implements ItemScheduler.Source<RunItem> {
    /** How long a scan that found every pending bucket held waits before scanning again. */
    static final long RESCAN_NANOS = 500_000_000L;

    private final CheckpointLog log;
    private final Assignment assignment;
    private final Checkpointer checkpointer;
    private final boolean retryFailed;
    private final Map<Integer, List<SeedReader.Seed>> seedsByBucket = new HashMap<>();
    private final Consumer<ItemState> onFold;
    private final LongSupplier clock;
    private final int workers;

    /** Mirrors of the last fold's items, by bucket (buckets not started by this process). */
    private Map<Integer, List<RunItem>> itemsByBucket = new HashMap<>();
    /** Item ids in the last fold. */
    private Set<String> folded = new HashSet<>();

    private Assignment.Snapshot snapshot;
    /** Buckets with work not known to be finished. */
    private final TreeSet<Integer> pending = new TreeSet<>();
    /** Buckets this process claimed and has not released. */
    private final Set<Integer> claimed = new TreeSet<>();
    /** Pending buckets the last claim found held by another live run. */
    private final Set<Integer> heldElsewhere = new HashSet<>();

    private final Deque<RunItem> ready = new ArrayDeque<>();
    private long lastFruitlessScan = Long.MIN_VALUE;
    private int startFinished;
    private int startFailed;
    private int knownItems;

    WorkFeed(
            CheckpointLog log,
            Assignment assignment,
            Checkpointer checkpointer,
            List<SeedReader.Seed> seeds,
            boolean retryFailed,
            Consumer<ItemState> onFold,
            LongSupplier clock,
            int workers) {
        this.workers = workers;
        this.log = log;
        this.assignment = assignment;
        this.checkpointer = checkpointer;
        this.retryFailed = retryFailed;
        this.onFold = onFold;
        this.clock = clock;
        for (SeedReader.Seed s : seeds) {
            seedsByBucket
                    .computeIfAbsent(Assignment.bucketOf(s.id()), b -> new ArrayList<>())
                    .add(s);
        }
        fold(true);
    }

    /** Finished and failed items, and all items (incl. seeds not created yet), as of the first fold. */
    int startFinished() {
        return startFinished;
    }

    int startFailed() {
        return startFailed;
    }

    int knownItems() {
        return knownItems;
    }

    /** Whether some bucket still has work (ours, or another process's not known to be finished). */
    boolean hasPending() {
        return !pending.isEmpty();
    }

    /**
     * Whether bucket {@code b}'s items are written by another run (it holds the bucket, or finished it), so that
     * only a new fold of the log tells how they stand; false for our buckets and for those we may still claim.
     */
    boolean elsewhere(int b) {
        return !claimed.contains(b) && (!pending.contains(b) || heldElsewhere.contains(b));
    }

    /** Buckets claimed and not yet released. */
    Set<Integer> claimed() {
        return Set.copyOf(claimed);
    }

    /** Our claimed buckets are finished and our writer is flushed: they are no longer pending. */
    void released() {
        pending.removeAll(claimed);
        claimed.clear();
    }

    /** Folds the log (snapshot of the assignment first) and rebuilds the mirrors of buckets not claimed. */
    private void fold(boolean first) {
        snapshot = assignment.snapshot();
        Map<Integer, List<RunItem>> byBucket = new HashMap<>();
        Set<String> ids = new HashSet<>();
        Map<String, ItemState> states;
        try (LogReader r = log.reader()) {
            states = r.foldAll();
        }
        int finished = 0;
        int failed = 0;
        for (ItemState st : states.values()) {
            onFold.accept(st);
            ids.add(st.item().itemId());
            RunItem item = RunItem.of(st, retryFailed);
            if (item.isRunning()) {
                byBucket.computeIfAbsent(Assignment.bucketOf(st.item().rootItemId()), b -> new ArrayList<>())
                        .add(item);
            } else {
                finished++;
                if (item.status() == ItemStatus.FAILED) {
                    failed++;
                }
            }
        }
        if (first) {
            startFinished = finished;
            startFailed = failed;
            knownItems = states.size();
        }
        folded = ids;
        Map<Integer, List<RunItem>> next = new LinkedHashMap<>();
        for (int b = 0; b < Assignment.BUCKETS; b++) {
            if (claimed.contains(b)) {
                continue; // our own mirrors are ahead of any fold
            }
            List<RunItem> items = byBucket.getOrDefault(b, List.of());
            next.put(b, items);
            boolean missingSeeds =
                    seedsByBucket.getOrDefault(b, List.of()).stream().anyMatch(s -> !ids.contains(s.id()));
            if (first && missingSeeds) {
                knownItems += (int) seedsByBucket.get(b).stream()
                        .filter(s -> !ids.contains(s.id()))
                        .count();
            }
            if (!items.isEmpty() || missingSeeds) {
                pending.add(b);
            } else {
                pending.remove(b);
            }
        }
        itemsByBucket = next;
    }

    @Override
    public List<RunItem> more(int pendingItems) {
        if (ready.isEmpty()) {
            claimNext(pendingItems);
        }
        List<RunItem> out = new ArrayList<>();
        while (!ready.isEmpty() && out.size() < Math.max(1, 2 * workers - pendingItems)) {
            out.add(ready.poll());
        }
        return out;
    }

    /** Claims pending buckets until one yields items (or none can be claimed now). */
    private void claimNext(int pendingItems) {
        long now = clock.getAsLong();
        if (pendingItems > 0 && now - lastFruitlessScan < RESCAN_NANOS) {
            return;
        }
        // Processes start their scans at different buckets so that they rarely contend for the same one.
        int from = Math.floorMod(assignment.slot() * 11, Assignment.BUCKETS);
        List<Integer> order = new ArrayList<>(pending.tailSet(from));
        order.addAll(pending.headSet(from));
        for (int b : order) {
            if (claimed.contains(b)) {
                continue;
            }
            Assignment.Claim c = assignment.claim(b, snapshot);
            switch (c.outcome()) {
                case DONE_ELSEWHERE -> {
                    pending.remove(b);
                    heldElsewhere.remove(b);
                }
                case HELD -> heldElsewhere.add(b);
                case CLAIMED -> {
                    heldElsewhere.remove(b);
                    if (!c.foldCurrent()) {
                        fold(false);
                    }
                    claimed.add(b);
                    start(b);
                    if (!ready.isEmpty()) {
                        return;
                    }
                }
            }
        }
        lastFruitlessScan = now;
    }

    /** Creates bucket {@code b}'s missing seeds and queues its unfinished items. */
    private void start(int b) {
        List<SeedReader.Seed> missing = new ArrayList<>();
        for (SeedReader.Seed s : seedsByBucket.getOrDefault(b, List.of())) {
            if (!folded.contains(s.id())) {
                missing.add(s);
            }
        }
        ready.addAll(itemsByBucket.getOrDefault(b, List.of()));
        ready.addAll(checkpointer.createSeeds(missing));
        missing.forEach(s -> folded.add(s.id()));
        itemsByBucket.remove(b);
    }
}
