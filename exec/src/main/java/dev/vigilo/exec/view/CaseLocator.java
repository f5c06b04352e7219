package dev.vigilo.exec.view;

import dev.vigilo.common.concurrent.Futures;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.plan.ChunkFile;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectReader;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Finds the chunk of a case by its id: the plan's chunk files list every case's id and ordinal, so the locator walks
 * the chunk index in chunk order and reads chunk files ({@value #IN_FLIGHT} at a time, each verified) until one
 * lists the id. Case ids are unique within a dataset, so the first match is the only one.
 *
 * <p>Cost: no index by id exists; a lookup reads every chunk file before the case's (at most the whole plan, about
 * 15 KB per 100 cases) plus the chunk index documents on the way. Memory: {@value #IN_FLIGHT} chunk files and one
 * index path. One locator per lookup; not thread-safe.
 */
final class CaseLocator {
    /** Chunk files read concurrently. */
    static final int IN_FLIGHT = 8;

    private static final Duration READ = Duration.ofSeconds(120);

    /** Where a case is: its chunk and its entry there. */
    record Located(long chunkIndex, ChunkFile chunk, ChunkFile.Entry entry) {}

    private CaseLocator() {}

    /** The case whose id is {@code caseId}, if the plan has one. */
    static Optional<Located> find(PublishedPlan plan, ObjectReader store, String caseId) {
        ExecutorService pool = Executors.newFixedThreadPool(IN_FLIGHT, Threads.daemonFactory("locate"));
        Deque<Future<Optional<Located>>> window = new ArrayDeque<>();
        Optional<Located>[] found = new Optional[] {Optional.empty()};
        try {
            plan.forEachChunk(0, Deadline.after(Duration.ofMinutes(30)), ref -> {
                window.add(pool.submit(() -> scan(plan, store, ref, caseId)));
                if (window.size() >= IN_FLIGHT) {
                    found[0] = take(window.poll());
                }
                return found[0].isEmpty();
            });
            while (found[0].isEmpty() && !window.isEmpty()) {
                found[0] = take(window.poll());
            }
            return found[0];
        } finally {
            window.forEach(f -> f.cancel(true));
            pool.shutdownNow();
        }
    }

    private static Optional<Located> scan(
            PublishedPlan plan, ObjectReader store, PublishedPlan.ChunkRef ref, String caseId) {
        ChunkFile c = PublishedPlan.readChunk(plan.runId(), ref, store, Deadline.after(READ));
        for (ChunkFile.Entry e : c.cases()) {
            if (e.id().equals(caseId)) {
                return Optional.of(new Located(c.chunkIndex(), c, e));
            }
        }
        return Optional.empty();
    }

    private static Optional<Located> take(Future<Optional<Located>> f) {
        return Futures.join(f, "the search for the case was interrupted");
    }
}
