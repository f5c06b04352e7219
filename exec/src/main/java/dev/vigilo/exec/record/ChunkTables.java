package dev.vigilo.exec.record;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.storage.ObjectRef;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * The worker's SQL on an execution database: claiming a chunk lease, renewing it, and ending it by completion,
 * requeue or failure. Every write after the claim matches the lease owner and generation, so a worker whose lease
 * was taken over changes nothing; completion also holds the shard row {@code FOR SHARE} and requires it open, so a
 * cancelled or moved shard takes no more results. Every method runs inside the caller's (bounded) transaction.
 */
public final class ChunkTables {
    /** Claims after this many attempts end the chunk failed instead (the bounded chunk retry path). */
    public static final int MAX_ATTEMPTS = 8;

    private ChunkTables() {}

    /**
     * A held chunk lease: the row's identity plus the owner and generation every later write must match, and, for a
     * chunk queued again by {@code vigilo run rerun-errors}, what to execute again.
     */
    public record Lease(
            UUID runId,
            long chunkIndex,
            UUID owner,
            long generation,
            int attempts,
            ChunkSeed seed,
            Optional<Rerun> rerun,
            Optional<Partial> partial) {
        public Lease {
            Objects.requireNonNull(rerun, "rerun");
            Objects.requireNonNull(partial, "partial");
        }

        /** A lease of a chunk without a partial receipt. */
        public Lease(
                UUID runId,
                long chunkIndex,
                UUID owner,
                long generation,
                int attempts,
                ChunkSeed seed,
                Optional<Rerun> rerun) {
            this(runId, chunkIndex, owner, generation, attempts, seed, rerun, Optional.empty());
        }

        /** The lease of a chunk's first execution. */
        public Lease(UUID runId, long chunkIndex, UUID owner, long generation, int attempts, ChunkSeed seed) {
            this(runId, chunkIndex, owner, generation, attempts, seed, Optional.empty(), Optional.empty());
        }
    }

    /**
     * The newest partial receipt of a chunk's chain as its row references it (execution migration V10): the object
     * and how many case entries the chain holds. Docs: docs/formats/exec-partial-receipt.md.
     */
    public record Partial(ObjectRef ref, int cases) {
        public Partial {
            Objects.requireNonNull(ref, "ref");
            if (cases < 1) {
                throw new IllegalArgumentException("a partial receipt chain holds at least one case, got " + cases);
            }
        }

        /** The partial columns of a chunk row, if it references one. */
        static Optional<Partial> of(java.sql.ResultSet rs) throws java.sql.SQLException {
            String key = rs.getString("partial_key");
            if (key == null) {
                return Optional.empty();
            }
            return Optional.of(new Partial(
                    new ObjectRef(
                            dev.vigilo.storage.ObjectKey.of(key),
                            rs.getLong("partial_length"),
                            dev.vigilo.storage.Sha256.parseHex(rs.getString("partial_sha256"))),
                    rs.getInt("partial_cases")));
        }
    }

    /**
     * A chunk queued again for settlement generation {@code generation} (execution migration V6): the worker executes
     * again the errored executions of {@code previous} and carries the other case entries forward; without a previous
     * receipt (a failed chunk) it executes every case.
     */
    public record Rerun(int generation, Optional<ObjectRef> previous) {
        public Rerun {
            Objects.requireNonNull(previous, "previous");
        }

        /** The rerun columns of a chunk row, if it was queued again. */
        static Optional<Rerun> of(java.sql.ResultSet rs) throws java.sql.SQLException {
            int generation = rs.getInt("rerun_generation");
            if (rs.wasNull()) {
                return Optional.empty();
            }
            String key = rs.getString("previous_receipt_key");
            return Optional.of(new Rerun(
                    generation,
                    key == null
                            ? Optional.empty()
                            : Optional.of(new ObjectRef(
                                    dev.vigilo.storage.ObjectKey.of(key),
                                    rs.getLong("previous_receipt_length"),
                                    dev.vigilo.storage.Sha256.parseHex(rs.getString("previous_receipt_sha256"))))));
        }
    }

    /** A route a worker may claim from: the shard's chunks below the dispatch cursor. */
    public record Claimable(UUID runId, int shard, long dispatchCursor) {}

    /** A chunk a worker executes now (its claims skip it). */
    public record Held(UUID runId, long chunkIndex) {}

    /** {@link #claim(Handle, List, UUID, Duration, List)} for a worker that holds no chunk. */
    public static Optional<Lease> claim(Handle h, List<Claimable> routes, UUID owner, Duration lease) {
        return claim(h, routes, owner, lease, List.of());
    }

    /**
     * Claims the next claimable chunk among {@code routes} (queued, or leased with an expired lease; past its
     * backoff; below its shard's dispatch cursor; shard open and not paused), in run and chunk order, skipping rows other workers
     * hold locked and the chunks in {@code held} (this worker still executes them: a lease of its own that expired
     * while a database was out is renewed or completed by the thread holding it, never taken over by its own claim).
     * The claim increments the lease generation and the attempt count, and, when it takes over an expired lease, the
     * chunk's count of lease expiries (what {@code run status} reports as chunks requeued after a lease expiry).
     */
    public static Optional<Lease> claim(Handle h, List<Claimable> routes, UUID owner, Duration lease, List<Held> held) {
        if (routes.isEmpty()) {
            return Optional.empty();
        }
        // One ordered scan of the claimable index (run, chunk order) that stops at the first claimable chunk. The
        // routes are looked up per scanned row by a scalar subquery, not joined: joined, the planner drove the scan
        // from the routes (one index scan per shard, 128 for a run, each reading every claimable chunk of the run),
        // so a claim cost grew with the run's size (docs/execution.md, "Claims at scale"). Held chunks are a filter
        // for the same reason (an anti-join could be planned as a sort of the whole claimable set).
        return h.createQuery("WITH r AS (SELECT * FROM unnest(:runs::uuid[], :shards::int[], :cursors::bigint[])"
                        + " AS r(run_id, shard, cursor)),"
                        + " next AS (SELECT c.run_id, c.chunk_index FROM exec_chunks c"
                        + " WHERE c.run_id = ANY(:run_ids::uuid[]) AND c.state IN ('queued', 'leased')"
                        + " AND (c.state = 'queued' OR (c.state = 'leased' AND c.lease_expires_at < clock_timestamp()))"
                        + " AND (c.not_before IS NULL OR c.not_before <= clock_timestamp())"
                        + " AND c.attempts < :max"
                        // below its shard's dispatch cursor; shard open and not paused (a paused run's chunks are
                        // not claimed, whatever the caller's routes say)
                        + " AND c.shard_seq < coalesce((SELECT max(r.cursor) FROM r JOIN exec_run_shards s"
                        + " ON s.run_id = r.run_id AND s.shard = r.shard AND s.state = 'open' AND NOT s.paused"
                        + " WHERE r.run_id = c.run_id AND r.shard = c.shard), -1)"
                        + " AND NOT (c.run_id::text || '/' || c.chunk_index = ANY(:held::text[]))"
                        + " ORDER BY c.run_id, c.chunk_index LIMIT 1 FOR UPDATE OF c SKIP LOCKED)"
                        + " UPDATE exec_chunks c SET state = 'leased', lease_owner = :o,"
                        + " lease_generation = c.lease_generation + 1, attempts = c.attempts + 1,"
                        // a leased row here is an expired lease taken over (execution migration V9)
                        + " lease_expiries = c.lease_expiries + CASE WHEN c.state = 'leased' THEN 1 ELSE 0 END,"
                        + " lease_expires_at = clock_timestamp() + make_interval(secs => :s)"
                        + " FROM next WHERE c.run_id = next.run_id AND c.chunk_index = next.chunk_index"
                        + " RETURNING c.*")
                .bindArray(
                        "runs",
                        UUID.class,
                        routes.stream().map(Claimable::runId).toList())
                .bindArray(
                        "run_ids",
                        UUID.class,
                        routes.stream().map(Claimable::runId).distinct().toList())
                .bindArray(
                        "shards",
                        Integer.class,
                        routes.stream().map(Claimable::shard).toList())
                .bindArray(
                        "cursors",
                        Long.class,
                        routes.stream().map(Claimable::dispatchCursor).toList())
                .bindArray(
                        "held",
                        String.class,
                        held.stream().map(x -> x.runId() + "/" + x.chunkIndex()).toList())
                .bind("max", MAX_ATTEMPTS)
                .bind("o", owner)
                .bind("s", (double) lease.toMillis() / 1000.0)
                .map((rs, ctx) -> new Lease(
                        rs.getObject("run_id", UUID.class),
                        rs.getLong("chunk_index"),
                        owner,
                        rs.getLong("lease_generation"),
                        rs.getInt("attempts"),
                        SeedTables.seed(rs),
                        Rerun.of(rs),
                        Partial.of(rs)))
                .findOne()
                .map(ChunkTables::claimed);
    }

    /** A claim made in the open transaction: a durable boundary (halting here is halting before its commit). */
    private static Lease claimed(Lease lease) {
        CrashPoints.boundary("exec.claim");
        return lease;
    }

    /** Whether this execution database holds chunks of {@code run} that are queued or leased. */
    public static boolean unfinished(Handle h, UUID run) {
        return h.createQuery("SELECT EXISTS (SELECT 1 FROM exec_chunks WHERE run_id = :r"
                        + " AND state IN ('queued', 'leased'))")
                .bind("r", run)
                .mapTo(Boolean.class)
                .one();
    }

    /**
     * Ends, as failed, chunks of {@code runs} that used up their attempts and are not held by a live lease (a chunk
     * whose workers keep dying, for example).
     *
     * @return the number of chunks failed now
     */
    public static int failExhausted(Handle h, List<UUID> runs) {
        if (runs.isEmpty()) {
            return 0;
        }
        return h.createUpdate("UPDATE exec_chunks SET state = 'failed', lease_owner = NULL, lease_expires_at = NULL,"
                        + " finished_at = now(), last_error = 'gave up after ' || attempts || ' attempts: '"
                        + " || coalesce(last_error, 'every worker holding it stopped without finishing')"
                        + " WHERE run_id = ANY(:runs) AND attempts >= :max"
                        + " AND (state = 'queued' OR (state = 'leased' AND lease_expires_at < clock_timestamp()))")
                .bindArray("runs", UUID.class, runs)
                .bind("max", MAX_ATTEMPTS)
                .execute();
    }

    /**
     * The fence of every write a lease holder makes: the chunk is still leased, to this owner, at this generation
     * (parameters {@code r}, {@code c}, {@code o}, {@code g}: {@link #held}).
     */
    private static final String HELD =
            " WHERE run_id = :r AND chunk_index = :c AND state = 'leased' AND lease_owner = :o AND lease_generation = :g";

    /**
     * Clears a row's partial receipt reference (a SET list item): a chunk that ended needs none, and a chunk queued
     * again by rerun-errors executes for a new settlement generation, never from an earlier one's partials.
     */
    public static final String PARTIAL_CLEARED =
            " partial_key = NULL, partial_length = NULL, partial_sha256 = NULL, partial_cases = NULL,";

    /** The values of {@link #HELD}'s parameters for lease {@code l}. */
    private static Map<String, Object> held(Lease l) {
        return Map.of("r", l.runId(), "c", l.chunkIndex(), "o", l.owner(), "g", l.generation());
    }

    /**
     * Extends a held lease while its shard is open.
     *
     * @return false when the lease is no longer this worker's (taken over, or the chunk ended), or the shard was
     *     cancelled or moved away: the worker stops executing the chunk, whose result would not count
     */
    public static boolean renew(Handle h, Lease l, Duration lease) {
        return h.createUpdate(
                                "UPDATE exec_chunks c SET lease_expires_at = clock_timestamp() + make_interval(secs => :s)"
                                        + HELD
                                        + " AND EXISTS (SELECT 1 FROM exec_run_shards s"
                                        + " WHERE s.run_id = c.run_id AND s.shard = c.shard AND s.state = 'open')")
                        .bind("s", (double) lease.toMillis() / 1000.0)
                        .bindMap(held(l))
                        .execute()
                == 1;
    }

    /**
     * References {@code partial} as the newest partial receipt of the held chunk (docs/execution.md, "Resume from
     * partial receipts"): one update fenced like a renewal, in the caller's short transaction of its own.
     *
     * @return false when the lease is no longer this worker's: nothing changed, and the holder writes no further
     *     partial receipt for the chunk
     */
    public static boolean referencePartial(Handle h, Lease l, Partial partial) {
        CrashPoints.boundary("exec.partial");
        return h.createUpdate("UPDATE exec_chunks SET partial_key = :pk, partial_length = :pl, partial_sha256 = :ps,"
                                + " partial_cases = :pc"
                                + HELD)
                        .bind("pk", partial.ref().key().value())
                        .bind("pl", partial.ref().length())
                        .bind("ps", partial.ref().sha256().toHex())
                        .bind("pc", partial.cases())
                        .bindMap(held(l))
                        .execute()
                == 1;
    }

    /**
     * A receipt's tallies as its chunk row records them: cases, per-gate outcomes in gate order, the epoch pass
     * histograms ({@link Receipt#epochPassHistograms}; empty for a run of one epoch, recorded as NULL) and the usage
     * per scope ({@link UsageTallies#json}; empty for a receipt before version 4, recorded as NULL).
     */
    public record Tallies(
            int casesExecuted,
            int casesErrored,
            long[] passed,
            long[] failed,
            long[] errored,
            long[] epochPasses,
            Optional<String> usage,
            Optional<String> agreement) {
        /** Tallies without usage. */
        public Tallies(
                int casesExecuted, int casesErrored, long[] passed, long[] failed, long[] errored, long[] epochPasses) {
            this(casesExecuted, casesErrored, passed, failed, errored, epochPasses, Optional.empty(), Optional.empty());
        }

        /** The tallies of {@code r}. */
        public static Tallies of(Receipt r) {
            List<Receipt.GateTally> t = r.tallies();
            long[] p = new long[t.size()];
            long[] f = new long[t.size()];
            long[] e = new long[t.size()];
            for (int i = 0; i < t.size(); i++) {
                p[i] = t.get(i).passed();
                f[i] = t.get(i).failed();
                e[i] = t.get(i).errored();
            }
            Map<String, Receipt.Usage> usage = r.usageByScope();
            return new Tallies(
                    r.cases().size(),
                    (int) r.casesErrored(),
                    p,
                    f,
                    e,
                    r.epochPassHistograms(),
                    usage.isEmpty() ? Optional.empty() : Optional.of(UsageTallies.json(usage)),
                    Optional.ofNullable(AgreementTallies.json(r.agreementByScope())));
        }
    }

    /** Why a completion did not count. */
    public enum Completion {
        /** The chunk is done with this receipt. */
        COMPLETED,
        /** The lease was taken over or the chunk ended otherwise: this worker's result is dropped. */
        FENCED,
        /** The shard was cancelled or moved: no more results are taken. */
        SHARD_CLOSED
    }

    /**
     * Completes the chunk with its receipt, if the lease is still this worker's and the shard is open. The shard
     * row is locked FOR SHARE first so a concurrent cancellation or move (FOR UPDATE) serializes with it. A replay of
     * a completion whose commit was acknowledged to nobody (the database went away while it committed) finds the
     * chunk done with this very receipt (its key names the lease generation) and reports it completed.
     */
    public static Completion complete(Handle h, Lease l, ObjectRef receipt, Tallies t) {
        CrashPoints.boundary("exec.complete"); // inside the transaction: halting here is halting before its commit
        Optional<String> shard = h.createQuery(
                        "SELECT state FROM exec_run_shards WHERE run_id = :r AND shard = :s" + " FOR SHARE")
                .bind("r", l.runId())
                .bind("s", l.seed().shard())
                .mapTo(String.class)
                .findOne();
        if (shard.isEmpty() || !"open".equals(shard.get())) {
            return Completion.SHARD_CLOSED;
        }
        var update = h.createUpdate(
                        "UPDATE exec_chunks SET state = 'done', lease_owner = NULL, lease_expires_at = NULL,"
                                + " receipt_key = :k, receipt_length = :len, receipt_sha256 = :sha, cases_executed = :ce,"
                                + " cases_errored = :cer, gate_passed = :gp, gate_failed = :gf, gate_errored = :ge,"
                                + " gate_epoch_passes = :gh, usage = CAST(:u AS jsonb),"
                                + " agreement = CAST(:a AS jsonb),"
                                + PARTIAL_CLEARED
                                + " last_error = NULL, finished_at = now()"
                                + HELD)
                .bind("k", receipt.key().value())
                .bind("len", receipt.length())
                .bind("sha", receipt.sha256().toHex())
                .bind("ce", t.casesExecuted())
                .bind("cer", t.casesErrored())
                .bind("gp", t.passed())
                .bind("gf", t.failed())
                .bind("ge", t.errored())
                .bind("u", t.usage().orElse(null))
                .bind("a", t.agreement().orElse(null))
                .bindMap(held(l));
        if (t.epochPasses().length == 0) {
            update.bindNull("gh", java.sql.Types.ARRAY);
        } else {
            update.bind("gh", t.epochPasses());
        }
        int n = update.execute();
        if (n == 1) {
            return Completion.COMPLETED;
        }
        boolean mine = h.createQuery("SELECT EXISTS (SELECT 1 FROM exec_chunks WHERE run_id = :r AND chunk_index = :c"
                        + " AND state = 'done' AND receipt_key = :k AND receipt_sha256 = :sha)")
                .bind("r", l.runId())
                .bind("c", l.chunkIndex())
                .bind("k", receipt.key().value())
                .bind("sha", receipt.sha256().toHex())
                .mapTo(Boolean.class)
                .one();
        return mine ? Completion.COMPLETED : Completion.FENCED;
    }

    /**
     * Gives the chunk back for another attempt after {@code backoff}, recording why. With {@code refund}, the
     * attempt its claim counted is given back too (the attempt ended for a reason outside the chunk: an outage).
     *
     * @return false when the lease was no longer this worker's
     */
    public static boolean requeue(Handle h, Lease l, Duration backoff, String error, boolean refund) {
        CrashPoints.boundary("exec.requeue");
        return h.createUpdate("UPDATE exec_chunks SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL,"
                                + " not_before = clock_timestamp() + make_interval(secs => :b), last_error = :e,"
                                + " attempts = CASE WHEN :refund THEN greatest(attempts - 1, 0) ELSE attempts END"
                                + HELD)
                        .bind("b", (double) backoff.toMillis() / 1000.0)
                        .bind("e", error)
                        .bind("refund", refund)
                        .bindMap(held(l))
                        .execute()
                == 1;
    }

    /**
     * Ends the chunk failed for a reason retrying cannot cure (damaged bytes), or because its attempts ran out.
     *
     * @return false when the lease was no longer this worker's
     */
    public static boolean fail(Handle h, Lease l, String error) {
        CrashPoints.boundary("exec.fail");
        return h.createUpdate("UPDATE exec_chunks SET state = 'failed', lease_owner = NULL, lease_expires_at = NULL,"
                                + PARTIAL_CLEARED
                                + " last_error = :e, finished_at = now()"
                                + HELD)
                        .bind("e", error)
                        .bindMap(held(l))
                        .execute()
                == 1;
    }
}
