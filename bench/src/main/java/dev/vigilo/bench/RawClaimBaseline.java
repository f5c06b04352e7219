package dev.vigilo.bench;

import dev.vigilo.dataset.CaseFileSpan;
import dev.vigilo.plan.PublishedPlan.ChunkRef;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.PreparedBatch;

/**
 * The raw baseline of the execution benchmark: the work any executor of the plan must at least do, without Vigilo's
 * bookkeeping. Per chunk, one claim-like {@code UPDATE ... RETURNING} (the next queued row, {@code FOR UPDATE SKIP
 * LOCKED}, its own committed transaction) on a plain table of the chunk rows in the same PostgreSQL; then the chunk
 * file and every case file covering the chunk's range are read from the local store's directory and SHA-256-hashed
 * (and compared with their references). No agent, no evaluators, no receipts, no completion, no leases or heartbeats.
 * {@code loops} threads claim concurrently, as workers would.
 */
final class RawClaimBaseline {
    private static final String CLAIM = "UPDATE bench_raw.chunks c SET state = 'claimed', owner = :o"
            + " FROM (SELECT chunk_index FROM bench_raw.chunks WHERE state = 'queued'"
            + " ORDER BY chunk_index LIMIT 1 FOR UPDATE SKIP LOCKED) n"
            + " WHERE c.chunk_index = n.chunk_index"
            + " RETURNING c.chunk_key, c.chunk_sha256, c.first_ordinal, c.case_count";

    private final Jdbi jdbi;
    private final Path storeRoot;
    private final List<ChunkRef> chunks;
    private final List<CaseFileSpan> caseFiles;

    /**
     * @param jdbi      the database to claim in (a scratch schema {@code bench_raw} is created there)
     * @param storeRoot the local object store's root directory
     * @param chunks    the plan's chunks, in order
     * @param caseFiles the dataset's case files, in ordinal order
     */
    RawClaimBaseline(Jdbi jdbi, Path storeRoot, List<ChunkRef> chunks, List<CaseFileSpan> caseFiles) {
        this.jdbi = jdbi;
        this.storeRoot = storeRoot;
        this.chunks = List.copyOf(chunks);
        this.caseFiles = List.copyOf(caseFiles);
    }

    private record Claimed(String key, String sha256, long firstOrdinal, int caseCount) {}

    /** Claims, reads and hashes every chunk with {@code loops} threads; returns cases per second. */
    double run(int loops) throws InterruptedException {
        reset();
        AtomicLong cases = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        List<RuntimeException> failures = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < loops; i++) {
            Thread t = new Thread(() -> {
                try {
                    cases.addAndGet(loop());
                } catch (RuntimeException e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (!failures.isEmpty()) {
            throw failures.get(0);
        }
        long expected = chunks.stream().mapToLong(ChunkRef::caseCount).sum();
        if (cases.get() != expected) {
            throw new IllegalStateException("baseline read " + cases.get() + " cases, expected " + expected);
        }
        return expected / seconds;
    }

    private long loop() {
        UUID owner = UUID.randomUUID();
        long cases = 0;
        while (true) {
            Optional<Claimed> c = jdbi.withHandle(h -> h.createQuery(CLAIM)
                    .bind("o", owner)
                    .map((rs, ctx) -> new Claimed(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getInt(4)))
                    .findOne());
            if (c.isEmpty()) {
                return cases;
            }
            Claimed chunk = c.get();
            check(read(chunk.key()), Sha256.parseHex(chunk.sha256()), chunk.key());
            long end = chunk.firstOrdinal() + chunk.caseCount();
            for (int i = firstFileAt(chunk.firstOrdinal()); i < caseFiles.size(); i++) {
                CaseFileSpan f = caseFiles.get(i);
                if (f.firstOrdinal() >= end) {
                    break;
                }
                check(
                        read(f.ref().key().value()),
                        f.ref().sha256(),
                        f.ref().key().value());
            }
            cases += chunk.caseCount();
        }
    }

    /** Index of the case file holding {@code ordinal} (binary search over the ordered spans). */
    private int firstFileAt(long ordinal) {
        int lo = 0;
        int hi = caseFiles.size() - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (caseFiles.get(mid).firstOrdinal() <= ordinal) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    private byte[] read(String key) {
        try {
            return Files.readAllBytes(storeRoot.resolve(key));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void check(byte[] bytes, Sha256 expected, String key) {
        if (!Sha256.of(bytes).equals(expected)) {
            throw new IllegalStateException("baseline read altered bytes of " + key);
        }
    }

    /** A fresh table of queued chunk rows, with the claim index Vigilo's scheduling table has. */
    private void reset() {
        jdbi.useHandle(h -> {
            h.execute("CREATE SCHEMA IF NOT EXISTS bench_raw");
            h.execute("DROP TABLE IF EXISTS bench_raw.chunks");
            h.execute("CREATE TABLE bench_raw.chunks (chunk_index bigint PRIMARY KEY, chunk_key text NOT NULL,"
                    + " chunk_sha256 text NOT NULL, first_ordinal bigint NOT NULL, case_count integer NOT NULL,"
                    + " state text NOT NULL DEFAULT 'queued', owner uuid)");
            h.execute("CREATE INDEX ON bench_raw.chunks (chunk_index) WHERE state = 'queued'");
            PreparedBatch batch = h.prepareBatch("INSERT INTO bench_raw.chunks"
                    + " (chunk_index, chunk_key, chunk_sha256, first_ordinal, case_count) VALUES (?, ?, ?, ?, ?)");
            for (ChunkRef c : chunks) {
                batch.add(
                        c.chunkIndex(),
                        c.ref().key().value(),
                        c.ref().sha256().toHex(),
                        c.firstOrdinal(),
                        c.caseCount());
            }
            batch.execute();
            h.execute("ANALYZE bench_raw.chunks");
        });
    }

    /** Drops the scratch schema. */
    void drop() {
        jdbi.useHandle(h -> h.execute("DROP SCHEMA IF EXISTS bench_raw CASCADE"));
    }
}
