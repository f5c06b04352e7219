package dev.vigilo.exec.record;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.Placements;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectNotFoundException;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.UUID;

/**
 * Ordered reads of a run's chunk rows across its execution databases, and verified reads of the receipts done rows
 * reference: what {@code run results}, {@code run transcript}, {@code run compare} and {@code verify} share.
 *
 * <p>{@link #cursor} merges keyset pages of at most {@value #PAGE} rows per execution database by chunk index; memory
 * is one page per database. A receipt is read through its row's reference (length and SHA-256 checked by the store),
 * decoded, and checked against the row; a missing or altered receipt is a {@link DamagedException} naming its key.
 */
public final class ChunkRows {
    /** Chunk rows per page and execution database. */
    static final int PAGE = 256;
    /** Allowance for one object read. */
    static final Duration READ_DEADLINE = Duration.ofSeconds(120);

    private ChunkRows() {}

    /**
     * One chunk's scheduling row.
     *
     * @param seed         the immutable part admission seeded
     * @param state        queued, leased, done or failed
     * @param generation   the lease generation (of the completing worker, for a done row)
     * @param receipt      the receipt reference of a done row
     * @param casesErrored per done row, cases whose agent errored
     * @param passed       per done row and gate (gate order), cases that passed
     * @param failed       likewise, failed
     * @param errored      likewise, errored
     * @param epochPasses  the epoch pass histograms of a done chunk of a run of several epochs (see
     *                     {@link ChunkTables.Tallies}); empty otherwise
     * @param lastError    the last error recorded (failed or retried chunks)
     * @param usage        the usage per scope of a done chunk whose receipt is of version 4
     *                     ({@link UsageTallies#json}, as the database returns it)
     */
    public record Row(
            ChunkSeed seed,
            String state,
            long generation,
            Optional<ObjectRef> receipt,
            int casesExecuted,
            int casesErrored,
            long[] passed,
            long[] failed,
            long[] errored,
            long[] epochPasses,
            Optional<String> lastError,
            Optional<String> usage,
            Optional<String> agreement) {
        public long chunkIndex() {
            return seed.chunkIndex();
        }

        public boolean done() {
            return "done".equals(state);
        }
    }

    private static final String COLUMNS = "SELECT run_id, chunk_index, shard, shard_seq, chunk_id, first_ordinal,"
            + " case_count, membership_sha256, chunk_key, chunk_length, chunk_sha256, state, lease_generation,"
            + " receipt_key, receipt_length, receipt_sha256, cases_executed, cases_errored, gate_passed, gate_failed,"
            + " gate_errored, gate_epoch_passes, last_error, usage, agreement FROM exec_chunks";

    private static Row map(ResultSet rs) throws SQLException {
        String key = rs.getString("receipt_key");
        Optional<ObjectRef> receipt = key == null
                ? Optional.empty()
                : Optional.of(new ObjectRef(
                        ObjectKey.of(key),
                        rs.getLong("receipt_length"),
                        Sha256.parseHex(rs.getString("receipt_sha256"))));
        return new Row(
                SeedTables.seed(rs),
                rs.getString("state"),
                rs.getLong("lease_generation"),
                receipt,
                rs.getInt("cases_executed"),
                rs.getInt("cases_errored"),
                longs(rs.getArray("gate_passed")),
                longs(rs.getArray("gate_failed")),
                longs(rs.getArray("gate_errored")),
                longs(rs.getArray("gate_epoch_passes")),
                Optional.ofNullable(rs.getString("last_error")),
                Optional.ofNullable(rs.getString("usage")),
                Optional.ofNullable(rs.getString("agreement")));
    }

    /** A Postgres bigint array as longs (a null element as -1). */
    static long[] longs(java.sql.Array a) throws SQLException {
        if (a == null) {
            return new long[0];
        }
        Object[] values = (Object[]) a.getArray();
        long[] out = new long[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = values[i] == null ? -1 : ((Number) values[i]).longValue();
        }
        return out;
    }

    /**
     * The run's chunk rows in chunk order, over the routes' current execution databases (the routes are read once by
     * the caller; a shard moved meanwhile is still read where its rows were).
     *
     * @param doneOnly only done rows
     */
    public static Iterator<Row> cursor(
            Placements placements, UUID runId, List<RunRecords.Route> routes, boolean doneOnly) {
        return cursor(placements, runId, routes, doneOnly ? DONE : "", -1, PAGE);
    }

    /** The condition of done rows, for {@link #cursor(Placements, UUID, List, String, long, int)}. */
    public static final String DONE = " AND state = 'done'";

    /**
     * The run's chunk rows in chunk order that hold a case after ordinal {@code afterOrdinal} and meet {@code
     * condition}, over the routes' current execution databases.
     *
     * @param condition    SQL appended to the rows' WHERE clause ({@code " AND ..."} over exec_chunks' columns), built
     *                     from constants only, never from user text; {@code ""} for every row
     * @param afterOrdinal only chunks holding a case with a greater ordinal (-1: every chunk)
     * @param pageRows     rows per query and execution database
     */
    public static Iterator<Row> cursor(
            Placements placements,
            UUID runId,
            List<RunRecords.Route> routes,
            String condition,
            long afterOrdinal,
            int pageRows) {
        List<Pages> sources = new ArrayList<>();
        RunRecords.byPlacement(routes)
                .forEach((alias, shards) ->
                        sources.add(new Pages(placements, runId, alias, shards, condition, afterOrdinal, pageRows)));
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return next(false) != null;
            }

            @Override
            public Row next() {
                Row r = next(true);
                if (r == null) {
                    throw new NoSuchElementException();
                }
                return r;
            }

            private Row next(boolean take) {
                Pages best = null;
                for (Pages p : sources) {
                    if (p.peek() != null
                            && (best == null
                                    || p.peek().chunkIndex() < best.peek().chunkIndex())) {
                        best = p;
                    }
                }
                if (best == null) {
                    return null;
                }
                return take ? best.poll() : best.peek();
            }
        };
    }

    /** The done rows of the run's shards {@code shards} in execution database {@code alias} holding {@code ordinal}. */
    public static List<Row> doneHolding(
            Placements placements, UUID runId, String alias, List<Integer> shards, long ordinal) {
        return LocalTransactions.inTransaction(
                placements.jdbi(alias),
                "reading case " + ordinal + " of run " + runId + " in execution database \"" + alias + "\"",
                h -> h.createQuery(COLUMNS + " WHERE run_id = :r AND shard = ANY(:s)" + DONE
                                + " AND first_ordinal <= :o AND first_ordinal + case_count > :o")
                        .bind("r", runId)
                        .bindArray("s", Integer.class, shards)
                        .bind("o", ordinal)
                        .map((rs, ctx) -> map(rs))
                        .list());
    }

    /** One chunk's row in execution database {@code alias}, if it has one. */
    public static Optional<Row> one(Placements placements, UUID runId, String alias, long chunkIndex) {
        return LocalTransactions.inTransaction(
                placements.jdbi(alias),
                "reading chunk " + chunkIndex + " of run " + runId + " in execution database \"" + alias + "\"",
                h -> h.createQuery(COLUMNS + " WHERE run_id = :r AND chunk_index = :c")
                        .bind("r", runId)
                        .bind("c", chunkIndex)
                        .map((rs, ctx) -> map(rs))
                        .findOne());
    }

    /** Keyset pages of one execution database's chunk rows, in chunk order. */
    private static final class Pages {
        private final Placements placements;
        private final UUID runId;
        private final String alias;
        private final List<Integer> shards;
        private final String condition;
        private final long afterOrdinal;
        private final int pageRows;
        private final Deque<Row> page = new ArrayDeque<>();
        private long after = -1;
        private boolean exhausted;

        Pages(
                Placements placements,
                UUID runId,
                String alias,
                List<Integer> shards,
                String condition,
                long afterOrdinal,
                int pageRows) {
            this.placements = placements;
            this.runId = runId;
            this.alias = alias;
            this.shards = shards;
            this.condition = condition;
            this.afterOrdinal = afterOrdinal;
            this.pageRows = pageRows;
        }

        Row peek() {
            if (page.isEmpty() && !exhausted) {
                fill();
            }
            return page.peekFirst();
        }

        Row poll() {
            Row r = peek();
            page.removeFirst();
            return r;
        }

        private void fill() {
            List<Row> rows = LocalTransactions.inTransaction(
                    placements.jdbi(alias),
                    "reading the chunks of run " + runId + " in execution database \"" + alias + "\"",
                    h -> h.createQuery(COLUMNS + " WHERE run_id = :r AND shard = ANY(:s)" + condition
                                    + " AND first_ordinal + case_count > :o AND chunk_index > :after"
                                    + " ORDER BY chunk_index LIMIT " + pageRows)
                            .bind("r", runId)
                            .bindArray("s", Integer.class, shards)
                            .bind("o", afterOrdinal + 1)
                            .bind("after", after)
                            .map((rs, ctx) -> map(rs))
                            .list());
            page.addAll(rows);
            if (rows.size() < pageRows) {
                exhausted = true;
            } else {
                after = rows.get(rows.size() - 1).chunkIndex();
            }
        }
    }

    /**
     * Reads, decodes and checks the receipt a done row references: run, chunk index and id, shard, membership digest,
     * case count, lease generation and tallies must be the row's.
     *
     * @throws DamagedException when the receipt is missing, altered, invalid or not the row's
     */
    public static Receipt receipt(UUID runId, ObjectReader store, Row row) {
        ChunkSeed s = row.seed();
        Receipt r = receipt(
                runId,
                store,
                row.receipt().orElseThrow(() -> new IllegalArgumentException("chunk row is not done")),
                s.chunkIndex(),
                s.chunkId(),
                s.shard(),
                s.membership(),
                s.caseCount(),
                row.generation(),
                row.casesErrored(),
                row.passed(),
                row.failed(),
                row.errored());
        if (!Arrays.equals(r.epochPassHistograms(), row.epochPasses())) {
            throw new DamagedException("receipt " + row.receipt().get().key() + " of run " + runId + " does not match"
                    + " its chunk row: its epoch pass histograms " + Arrays.toString(r.epochPassHistograms())
                    + " differ from the row's " + Arrays.toString(row.epochPasses())
                    + "; the execution records were altered");
        }
        Map<String, Receipt.Usage> usage = r.usageByScope();
        if (!sameJson(
                usage.isEmpty() ? null : UsageTallies.json(usage), row.usage().orElse(null))) {
            throw new DamagedException("receipt " + row.receipt().get().key() + " of run " + runId + " does not match"
                    + " its chunk row: its usage " + (usage.isEmpty() ? "(none)" : UsageTallies.json(usage))
                    + " differs from the row's " + row.usage().orElse("(none)")
                    + "; the execution records were altered");
        }
        String agreement = AgreementTallies.json(r.agreementByScope());
        if (!sameJson(agreement, row.agreement().orElse(null))) {
            throw new DamagedException("receipt " + row.receipt().get().key() + " of run " + runId + " does not match"
                    + " its chunk row: its judge agreement sums " + (agreement == null ? "(none)" : agreement)
                    + " differ from the row's " + row.agreement().orElse("(none)")
                    + "; the execution records were altered");
        }
        return r;
    }

    /** Whether two JSON texts hold the same value (the database normalises jsonb's spacing and key order). */
    private static boolean sameJson(String a, String b) {
        if (a == null || b == null) {
            return a == b;
        }
        try {
            return JSON.readTree(a).equals(JSON.readTree(b));
        } catch (java.io.IOException e) {
            return false;
        }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
            new com.fasterxml.jackson.databind.ObjectMapper();

    /**
     * Reads the receipt {@code ref} names (length and SHA-256 verified), decodes it and checks it against the fields
     * of its done chunk row (for readers that select fewer columns than {@link Row} holds).
     *
     * @throws DamagedException when the receipt is missing, altered, invalid or not the row's
     */
    static Receipt receipt(
            UUID runId,
            ObjectReader store,
            ObjectRef ref,
            long chunkIndex,
            UUID chunkId,
            int shard,
            Sha256 membership,
            int caseCount,
            long generation,
            int casesErrored,
            long[] passed,
            long[] failed,
            long[] errored) {
        String key = ref.key().value();
        byte[] bytes = read(store, ref, "receipt " + key + " of chunk " + chunkIndex + " of run " + runId);
        Receipt r = ReceiptParser.fromJson(bytes, key);
        List<String> problems = new ArrayList<>();
        if (!r.runId().equals(runId)
                || r.chunkIndex() != chunkIndex
                || !r.chunkId().equals(chunkId)
                || r.shard() != shard) {
            problems.add("it is not the receipt of chunk " + chunkIndex);
        }
        if (!r.membership().equals(membership) || r.cases().size() != caseCount) {
            problems.add("its cases are not the chunk's");
        }
        if (r.leaseGeneration() != generation) {
            problems.add(
                    "it was written under lease generation " + r.leaseGeneration() + ", the row's is " + generation);
        }
        List<Receipt.GateTally> t = r.tallies();
        if (r.casesErrored() != casesErrored
                || !Arrays.equals(
                        t.stream().mapToLong(Receipt.GateTally::passed).toArray(), passed)
                || !Arrays.equals(
                        t.stream().mapToLong(Receipt.GateTally::failed).toArray(), failed)
                || !Arrays.equals(
                        t.stream().mapToLong(Receipt.GateTally::errored).toArray(), errored)) {
            problems.add("its tallies differ from the chunk row's");
        }
        if (!problems.isEmpty()) {
            throw new DamagedException("receipt " + key + " of run " + runId + " does not match its chunk row: "
                    + String.join("; ", problems) + "; the execution records were altered");
        }
        return r;
    }

    /**
     * A verified read of an object execution records reference.
     *
     * @param what names the object for messages
     * @throws DamagedException (an {@link ObjectIntegrityException} when the bytes differ) when it is missing or
     *     altered
     */
    public static byte[] read(ObjectReader store, ObjectRef ref, String what) {
        try {
            return store.read(ref, Deadline.after(READ_DEADLINE));
        } catch (ObjectNotFoundException e) {
            throw new DamagedException(what + " is missing from " + store.binding() + "; it is lost", e);
        } catch (ObjectIntegrityException e) {
            throw new DamagedException(what + " was altered (" + e.getMessage() + ")", e);
        }
    }

    /**
     * Reads a transcript through its receipt reference: the whole object, or the slice at its {@code offset} of a
     * transcript container (a ranged read, checked against the slice's length and SHA-256).
     *
     * @throws DamagedException     when the object is missing, or the bytes differ from the reference
     * @throws dev.vigilo.common.errors.UnavailableException when the store fails
     */
    public static byte[] readTranscript(ObjectReader store, Receipt.TranscriptRef t, String what) {
        return readTranscript(store, t.ref(), t.offset(), what);
    }

    /** As {@link #readTranscript(ObjectReader, Receipt.TranscriptRef, String)}, by reference and offset. */
    public static byte[] readTranscript(ObjectReader store, ObjectRef ref, java.util.OptionalLong offset, String what) {
        if (offset.isEmpty()) {
            return read(store, ref, what);
        }
        try {
            return store.readSlice(ref, offset.getAsLong(), Deadline.after(READ_DEADLINE));
        } catch (ObjectNotFoundException e) {
            throw new DamagedException(what + " is missing from " + store.binding() + "; it is lost", e);
        } catch (ObjectIntegrityException e) {
            throw new DamagedException(what + " was altered (" + e.getMessage() + ")", e);
        }
    }
}
