package dev.vigilo.exec.audit;

import dev.vigilo.plan.ChunkFile;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectReader;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Pulls a published plan's chunks in chunk order: the chunk index is walked in pages of at most {@value #PAGE}
 * references (a resumed walk skips the index subtrees it passed), and each chunk file is read and verified when it is
 * reached. Memory: one page of references, one index path and one chunk file. Not thread-safe.
 */
final class PlanChunkWalk {
    static final int PAGE = 256;
    private static final Duration READ = Duration.ofSeconds(120);

    private final PublishedPlan plan;
    private final ObjectReader store;
    private final Deque<PublishedPlan.ChunkRef> page = new ArrayDeque<>();
    private long nextChunk;
    private boolean exhausted;
    private long files;

    /** One chunk: the reference the index gave and the verified file. */
    record Chunk(PublishedPlan.ChunkRef ref, ChunkFile file) {}

    PlanChunkWalk(PublishedPlan plan, ObjectReader store) {
        this.plan = plan;
        this.store = store;
    }

    /** The next chunk, or null after the last. */
    Chunk next() {
        if (page.isEmpty() && !exhausted) {
            List<PublishedPlan.ChunkRef> refs = new ArrayList<>(PAGE);
            plan.forEachChunk(nextChunk, Deadline.after(READ), ref -> {
                refs.add(ref);
                return refs.size() < PAGE;
            });
            page.addAll(refs);
            if (refs.size() < PAGE) {
                exhausted = true;
            }
            if (!refs.isEmpty()) {
                nextChunk = refs.get(refs.size() - 1).chunkIndex() + 1;
            }
        }
        PublishedPlan.ChunkRef ref = page.poll();
        if (ref == null) {
            return null;
        }
        files++;
        return new Chunk(ref, PublishedPlan.readChunk(plan.runId(), ref, store, Deadline.after(READ)));
    }

    /** Chunk files read so far. */
    long files() {
        return files;
    }
}
