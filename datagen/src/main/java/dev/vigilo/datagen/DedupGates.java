package dev.vigilo.datagen;

import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.ItemRef;
import dev.vigilo.checkpoint.ItemState;
import dev.vigilo.checkpoint.LogReader;
import dev.vigilo.checkpoint.LogWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.IntPredicate;
import java.util.function.LongSupplier;

/**
 * The {@link DedupGate}s of a run's dedup steps, and what keeps them moving when their walk waits for items of
 * other processes: at most every {@link #REFRESH_NANOS}, while items of this process are parked and a gate waits for
 * an item outside the buckets this process holds, the run flushes its own writer (so the other processes see the
 * items it already moved, which they may be waiting for in turn) and folds the log again.
 *
 * <p>Used by the run's coordinator thread only.
 */
final class DedupGates {
    /** How often a waiting gate looks at the log again for other processes' items. */
    static final long REFRESH_NANOS = 500_000_000L;

    private final List<DedupGate> gates = new ArrayList<>();
    private final CheckpointLog log;
    private final LogWriter writer;
    private final LongSupplier clock;
    private long lastRefresh;

    DedupGates(
            List<StepSpec> steps,
            List<String> seedIds,
            boolean retryFailed,
            CheckpointLog log,
            LogWriter writer,
            LongSupplier clock) {
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i).kind() == StepKind.DEDUP) {
                gates.add(new DedupGate(steps, i, seedIds, retryFailed));
            }
        }
        this.log = log;
        this.writer = writer;
        this.clock = clock;
        this.lastRefresh = clock.getAsLong() - REFRESH_NANOS;
    }

    /** Learns an item's state from a fold of the log. */
    void observe(ItemState st) {
        gates.forEach(g -> g.observe(st));
    }

    /** Learns the state of one of this process's items its worker returned (and of what it spawned). */
    void returned(RunItem item, List<RunItem> spawned) {
        gates.forEach(g -> g.returned(item, spawned));
    }

    /** Whether items of this process wait at a gate. */
    boolean holding() {
        return gates.stream().anyMatch(DedupGate::holding);
    }

    /**
     * The parked items that may run on now; folds the log again first when a gate waits for an item another process
     * writes ({@code elsewhere}: whether a bucket's items are another run's; the states of this run's items arrive
     * through {@link #returned}, and the buckets it may still claim will be its own).
     */
    List<RunItem> ready(IntPredicate elsewhere) {
        List<RunItem> out = advance();
        if (!out.isEmpty() || !holding()) {
            return out;
        }
        boolean foreign = gates.stream()
                .map(DedupGate::blockedOn)
                .flatMap(Optional::stream)
                .map(ItemRef::rootItemId)
                .anyMatch(root -> elsewhere.test(Assignment.bucketOf(root)));
        long now = clock.getAsLong();
        if (!foreign || now - lastRefresh < REFRESH_NANOS) {
            return out;
        }
        lastRefresh = now;
        writer.flush();
        try (LogReader r = log.reader()) {
            r.foldAll().values().forEach(this::observe);
        }
        return advance();
    }

    private List<RunItem> advance() {
        List<RunItem> out = new ArrayList<>();
        gates.forEach(g -> out.addAll(g.advance()));
        return out;
    }
}
