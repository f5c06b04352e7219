package dev.vigilo.exec;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectNotFoundException;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.Sha256;
import dev.vigilo.storage.StorageConfig;
import dev.vigilo.storage.StoreBinding;
import dev.vigilo.storage.StoreSpec;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * {@code vigilo run results}: one JSON line per executed case (the cases of done chunks), in chunk order across the
 * run's execution databases (docs/execution.md, "Results"). Each done chunk row names its receipt; the receipt is
 * read through the store with that reference (length and SHA-256 verified), decoded, and checked against the row
 * (run, chunk, shard, membership digest, lease generation, tallies). Outputs stored apart are read and verified the
 * same way.
 *
 * <p>Line keys: {@code case_id}, {@code ordinal}, {@code shard}, {@code chunk}, {@code status} ({@code ok} or
 * {@code errored}), {@code attempts}, {@code output} (null when the agent errored), {@code evaluators} (name to
 * {@code {passed, score, error}}), {@code gates} (name to {@code passed|failed|errored}) and {@code error} (null or
 * {@code {type, message}}).
 *
 * <p>Memory is bounded: per execution database one page of at most {@value #PAGE} chunk rows, and one receipt (and
 * one output) at a time. The routes are read once at the start; a shard moved meanwhile is still read where its rows
 * were. A missing or altered receipt is a {@link DamagedException} naming its key; lines written before it stay
 * written, so callers that write a file write it aside and keep it only on success. Thread-safe.
 */
public final class RunResults {
    /** Chunk rows per page and execution database. */
    static final int PAGE = 256;
    /** Allowance for one object read. */
    static final Duration READ_DEADLINE = Duration.ofSeconds(120);

    private static final JsonFactory JSON = new JsonFactory();

    /**
     * What {@link #write} wrote.
     *
     * @param chunks done chunks read
     * @param cases  lines written
     */
    public record Summary(UUID runId, long chunks, long cases) {}

    private final Placements placements;
    private final StorageConfig storage;
    private final Jdbi control;

    public RunResults(Placements placements, StorageConfig storage) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.storage = Objects.requireNonNull(storage, "storage");
        this.control = placements.control();
    }

    /** A done chunk row: identity, lease generation, receipt reference and tallies. */
    private record Done(
            long chunkIndex,
            int shard,
            UUID chunkId,
            Sha256 membership,
            int caseCount,
            long generation,
            ObjectRef receipt,
            int casesErrored,
            long[] passed,
            long[] failed,
            long[] errored) {}

    /**
     * Writes the run's results to {@code out} (UTF-8 JSON lines; {@code out} is flushed after every chunk, not
     * closed).
     *
     * @throws NotFoundException     no such run
     * @throws InvalidInputException the storage configuration does not resolve the run's store
     * @throws DamagedException      a receipt or output is missing or differs from its reference or row
     * @throws UnavailableException  an execution database or the store cannot be reached
     */
    public Summary write(UUID runId, OutputStream out) {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(out, "out");
        RunRecords.Run run = control.withHandle(h -> RunRecords.run(h, runId));
        List<RunRecords.Route> routes = control.withHandle(h -> RunRecords.routes(h, runId, ""));
        StoreSpec spec = storage.resolve(new StoreBinding(run.storageBinding()))
                .orElseThrow(() -> new InvalidInputException("run " + runId + ": its receipts are stored in "
                        + run.storageBinding() + ", which the storage configuration (" + storage.source()
                        + ") does not resolve; set VIGILO_STORAGE_CONFIG or --storage-config to a configuration"
                        + " with that store"));
        List<Pages> sources = new ArrayList<>();
        RunRecords.byPlacement(routes).forEach((alias, shards) -> sources.add(new Pages(runId, alias, shards)));
        long chunks = 0;
        long cases = 0;
        try (ObjectStore store = ObjectStores.open(spec);
                JsonGenerator g = JSON.createGenerator(out, JsonEncoding.UTF8)) {
            g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            // One object per line: no separator between root values besides the newline written after each.
            g.setRootValueSeparator(null);
            while (true) {
                Pages next = null;
                for (Pages p : sources) {
                    if (p.peek() != null
                            && (next == null
                                    || p.peek().chunkIndex() < next.peek().chunkIndex())) {
                        next = p;
                    }
                }
                if (next == null) {
                    break;
                }
                Done row = next.poll();
                Receipt r = receipt(runId, store, row);
                for (Receipt.CaseResult c : r.cases()) {
                    writeCase(g, store, row, c);
                }
                g.flush();
                chunks++;
                cases += r.cases().size();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("writing the results of run " + runId + " failed: " + e.getMessage(), e);
        }
        return new Summary(runId, chunks, cases);
    }

    /** Keyset pages of one execution database's done chunk rows, in chunk order. */
    private final class Pages {
        private final UUID runId;
        private final String alias;
        private final List<Integer> shards;
        private final Deque<Done> page = new ArrayDeque<>();
        private long after = -1;
        private boolean exhausted;

        Pages(UUID runId, String alias, List<Integer> shards) {
            this.runId = runId;
            this.alias = alias;
            this.shards = shards;
        }

        Done peek() {
            if (page.isEmpty() && !exhausted) {
                fill();
            }
            return page.peekFirst();
        }

        Done poll() {
            Done d = peek();
            page.removeFirst();
            return d;
        }

        private void fill() {
            List<Done> rows = LocalTransactions.inTransaction(
                    placements.jdbi(alias),
                    "reading the results of run " + runId + " in execution database \"" + alias + "\"",
                    h -> h.createQuery("SELECT chunk_index, shard, chunk_id, membership_sha256, case_count,"
                                    + " lease_generation, receipt_key, receipt_length, receipt_sha256, cases_errored,"
                                    + " gate_passed, gate_failed, gate_errored FROM exec_chunks WHERE run_id = :r"
                                    + " AND shard = ANY(:s) AND state = 'done' AND chunk_index > :after"
                                    + " ORDER BY chunk_index LIMIT " + PAGE)
                            .bind("r", runId)
                            .bindArray("s", Integer.class, shards)
                            .bind("after", after)
                            .map((rs, ctx) -> new Done(
                                    rs.getLong("chunk_index"),
                                    rs.getInt("shard"),
                                    rs.getObject("chunk_id", UUID.class),
                                    Sha256.parseHex(rs.getString("membership_sha256")),
                                    rs.getInt("case_count"),
                                    rs.getLong("lease_generation"),
                                    new ObjectRef(
                                            ObjectKey.of(rs.getString("receipt_key")),
                                            rs.getLong("receipt_length"),
                                            Sha256.parseHex(rs.getString("receipt_sha256"))),
                                    rs.getInt("cases_errored"),
                                    longs(rs.getArray("gate_passed")),
                                    longs(rs.getArray("gate_failed")),
                                    longs(rs.getArray("gate_errored"))))
                            .list());
            page.addAll(rows);
            if (rows.size() < PAGE) {
                exhausted = true;
            } else {
                after = rows.get(rows.size() - 1).chunkIndex();
            }
        }
    }

    static long[] longs(java.sql.Array a) throws java.sql.SQLException {
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

    /** Reads, decodes and checks the receipt a done row references. */
    private static Receipt receipt(UUID runId, ObjectStore store, Done row) {
        return receipt(
                runId,
                store,
                row.receipt(),
                row.chunkIndex(),
                row.chunkId(),
                row.shard(),
                row.membership(),
                row.caseCount(),
                row.generation(),
                row.casesErrored(),
                row.passed(),
                row.failed(),
                row.errored());
    }

    /**
     * Reads the receipt {@code ref} names (length and SHA-256 verified), decodes it and checks it against its chunk
     * row's identity, lease generation and tallies (shared with {@link CaseResults}).
     *
     * @throws DamagedException when it is missing, altered, or not the row's
     */
    static Receipt receipt(
            UUID runId,
            ObjectStore store,
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
        Done row = new Done(
                chunkIndex,
                shard,
                chunkId,
                membership,
                caseCount,
                generation,
                ref,
                casesErrored,
                passed,
                failed,
                errored);
        String key = row.receipt().key().value();
        byte[] bytes =
                read(store, row.receipt(), "receipt " + key + " of chunk " + row.chunkIndex() + " of run " + runId);
        Receipt r = Receipt.decode(bytes, key);
        List<String> problems = new ArrayList<>();
        if (!r.runId().equals(runId)
                || r.chunkIndex() != row.chunkIndex()
                || !r.chunkId().equals(row.chunkId())
                || r.shard() != row.shard()) {
            problems.add("it is not the receipt of chunk " + row.chunkIndex());
        }
        if (!r.membership().equals(row.membership()) || r.cases().size() != row.caseCount()) {
            problems.add("its cases are not the chunk's");
        }
        if (r.leaseGeneration() != row.generation()) {
            problems.add("it was written under lease generation " + r.leaseGeneration() + ", the row's is "
                    + row.generation());
        }
        List<Receipt.GateTally> t = r.tallies();
        if (r.casesErrored() != row.casesErrored()
                || !Arrays.equals(
                        t.stream().mapToLong(Receipt.GateTally::passed).toArray(), row.passed())
                || !Arrays.equals(
                        t.stream().mapToLong(Receipt.GateTally::failed).toArray(), row.failed())
                || !Arrays.equals(
                        t.stream().mapToLong(Receipt.GateTally::errored).toArray(), row.errored())) {
            problems.add("its tallies differ from the chunk row's");
        }
        if (!problems.isEmpty()) {
            throw new DamagedException("receipt " + key + " of run " + runId + " does not match its chunk row: "
                    + String.join("; ", problems) + "; the execution records were altered");
        }
        return r;
    }

    private static byte[] read(ObjectStore store, ObjectRef ref, String what) {
        try {
            return store.read(ref, Deadline.after(READ_DEADLINE));
        } catch (ObjectNotFoundException e) {
            throw new DamagedException(
                    what + " is missing from " + store.binding() + "; the results of that chunk are" + " lost", e);
        } catch (ObjectIntegrityException e) {
            throw new DamagedException(what + " was altered (" + e.getMessage() + ")", e);
        }
    }

    private static void writeCase(JsonGenerator g, ObjectStore store, Done row, Receipt.CaseResult c)
            throws IOException {
        g.writeStartObject();
        g.writeStringField("case_id", c.id());
        g.writeNumberField("ordinal", c.ordinal());
        g.writeNumberField("shard", row.shard());
        g.writeNumberField("chunk", row.chunkIndex());
        g.writeStringField("status", c.errored() ? "errored" : "ok");
        g.writeNumberField("attempts", c.attempts());
        g.writeFieldName("output");
        if (c.output().isPresent()) {
            g.writeString(c.output().get());
        } else if (c.outputRef().isPresent()) {
            g.writeString(output(store, c));
        } else {
            g.writeNull();
        }
        g.writeObjectFieldStart("evaluators");
        for (Receipt.EvaluatorResult e : c.evaluatorResults()) {
            g.writeObjectFieldStart(e.name());
            g.writeBooleanField("passed", e.passed());
            g.writeNumberField("score", e.score());
            writeError(g, e.error());
            g.writeEndObject();
        }
        g.writeEndObject();
        g.writeObjectFieldStart("gates");
        for (Map.Entry<String, Receipt.GateOutcome> e : c.gates().entrySet()) {
            g.writeStringField(e.getKey(), e.getValue().wire);
        }
        g.writeEndObject();
        writeError(g, c.error());
        g.writeEndObject();
        g.writeRaw('\n');
    }

    /** An output stored apart: read, verified against the reference and the receipt's length and digest. */
    static String output(ObjectStore store, Receipt.CaseResult c) {
        ObjectRef ref = c.outputRef().get();
        byte[] bytes = read(store, ref, "output " + ref.key().value() + " of case " + c.id());
        if (bytes.length != c.outputLength()
                || !c.outputSha256().map(Sha256.of(bytes)::equals).orElse(false)) {
            throw new DamagedException("output " + ref.key().value() + " of case " + c.id() + " differs from the"
                    + " length and SHA-256 its receipt records");
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static void writeError(JsonGenerator g, java.util.Optional<Receipt.Error> error) throws IOException {
        if (error.isEmpty()) {
            g.writeNullField("error");
            return;
        }
        g.writeObjectFieldStart("error");
        g.writeStringField("type", error.get().type());
        g.writeStringField("message", error.get().message());
        g.writeEndObject();
    }
}
