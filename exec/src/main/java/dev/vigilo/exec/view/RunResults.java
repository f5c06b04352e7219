package dev.vigilo.exec.view;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SequenceWriter;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.TokenBuffer;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.UsageSummary;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.ReviewRecords;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.exec.record.UsageTallies;
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
import java.util.Iterator;
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
 * {@code {passed, score, reason, error}}), {@code gates} (name to {@code passed|failed|errored}), {@code error} (null
 * or {@code {type, message}}) and, from receipts of version 4, {@code usage} (tokens and cost in all and per role,
 * unpriced models), and, for executions of a sandbox that kept files (version 5), {@code kept_files} ({@code path},
 * and the stored object's {@code key}, {@code length}, {@code sha256}). A run of several epochs adds {@code epoch_passes} (gate to the number of epochs that
 * passed it) and {@code epochs}: per epoch, in epoch order, {@code epoch} (from 1) and the keys above from
 * {@code status} to {@code error}, its own; the case's own keys are then the epochs' reduction (its {@code output}
 * null, its {@code attempts} their sum).
 *
 * <p>Memory is bounded: per execution database one page of at most {@value ChunkRows#PAGE} chunk rows, and one receipt (and
 * one output) at a time. The routes are read once at the start; a shard moved meanwhile is still read where its rows
 * were. A missing or altered receipt is a {@link DamagedException} naming its key; lines written before it stay
 * written, so callers that write a file write it aside and keep it only on success. Thread-safe.
 */
public final class RunResults {
    private static final JsonFactory JSON = new JsonFactory();
    /** Writes a tree into the streaming generator (which has no codec of its own). */
    private static final ObjectMapper TREES = new ObjectMapper();

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
        return write(runId, out, CaseResults.Filter.ALL, Format.JSONL);
    }

    /** How {@link #write(UUID, OutputStream, CaseResults.Filter, Format)} writes the cases. */
    public enum Format {
        /** One JSON object per line (the keys above). */
        JSONL,
        /**
         * CSV with a header row: the columns {@link #CSV_COLUMNS}, the line's top-level keys; a key holding an object
         * ({@code evaluators}, {@code gates}, {@code error}, {@code usage}) is its compact JSON text, an absent key an
         * empty cell.
         */
        CSV
    }

    /** The CSV columns, in order. */
    public static final List<String> CSV_COLUMNS = List.of(
            "case_id",
            "ordinal",
            "shard",
            "chunk",
            "status",
            "attempts",
            "output",
            "evaluators",
            "gates",
            "error",
            "usage",
            "epoch_passes",
            "epochs",
            "kept_files",
            "override");

    /**
     * As {@link #write(UUID, OutputStream)}, only the cases {@code filter} lists (as the case list of the dashboard and
     * {@link CaseResults} filter them: by outcome over every gate, or in one gate, which lists only the cases it
     * selects), in {@code format}. {@link Summary#cases()} counts the cases written.
     */
    public Summary write(UUID runId, OutputStream out, CaseResults.Filter filter, Format format) {
        return write(runId, out, filter, format, ordinal -> true);
    }

    /**
     * As {@link #write(UUID, OutputStream, CaseResults.Filter, Format)}, only the cases whose ordinal {@code ordinals}
     * also accepts (the dashboard's download of a list its results explorer filtered further).
     */
    public Summary write(
            UUID runId,
            OutputStream out,
            CaseResults.Filter filter,
            Format format,
            java.util.function.LongPredicate ordinals) {
        Objects.requireNonNull(ordinals, "ordinals");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(out, "out");
        Objects.requireNonNull(filter, "filter");
        Objects.requireNonNull(format, "format");
        RunRecords.Run run = control.withHandle(h -> RunRecords.run(h, runId));
        List<RunRecords.Route> routes = control.withHandle(h -> RunRecords.routes(h, runId, ""));
        StoreSpec spec = storage.resolve(new StoreBinding(run.storageBinding()))
                .orElseThrow(() -> new InvalidInputException("run " + runId + ": its receipts are stored in "
                        + run.storageBinding() + ", which the storage configuration (" + storage.source()
                        + ") does not resolve; set VIGILO_STORAGE_CONFIG or --storage-config to a configuration"
                        + " with that store"));
        // The overrides in force, one entry per overridden case (review is by hand, so they are few).
        Map<Long, ReviewRecords.Row> overrides =
                ReviewRecords.current(control.withHandle(h -> ReviewRecords.rows(h, runId)));
        Iterator<ChunkRows.Row> rows = ChunkRows.cursor(placements, runId, routes, true);
        long chunks = 0;
        long cases = 0;
        try (ObjectStore store = ObjectStores.open(spec);
                JsonGenerator g = JSON.createGenerator(out, JsonEncoding.UTF8);
                CsvCases csv = format == Format.CSV ? new CsvCases(out) : null) {
            g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            // One object per line: no separator between root values besides the newline written after each.
            g.setRootValueSeparator(null);
            while (rows.hasNext()) {
                ChunkRows.Row row = rows.next();
                Receipt r = ChunkRows.receipt(runId, store, row);
                for (Receipt.CaseResult c : r.cases()) {
                    if (!CaseResults.accepts(filter, c) || !ordinals.test(c.ordinal())) {
                        continue;
                    }
                    if (csv != null) {
                        TokenBuffer line = new TokenBuffer(TREES, false);
                        writeCase(line, store, row, c, overrides.get(c.ordinal()));
                        csv.write(TREES.readTree(line.asParser()));
                    } else {
                        writeCase(g, store, row, c, overrides.get(c.ordinal()));
                    }
                    cases++;
                }
                g.flush();
                if (csv != null) {
                    csv.flush();
                }
                chunks++;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("writing the results of run " + runId + " failed: " + e.getMessage(), e);
        }
        return new Summary(runId, chunks, cases);
    }

    private static void writeCase(
            JsonGenerator g, ObjectStore store, ChunkRows.Row row, Receipt.CaseResult c, ReviewRecords.Row override)
            throws IOException {
        g.writeStartObject();
        g.writeStringField("case_id", c.id());
        g.writeNumberField("ordinal", c.ordinal());
        g.writeNumberField("shard", row.seed().shard());
        g.writeNumberField("chunk", row.chunkIndex());
        writeResult(g, store, c, "status");
        if (!c.epochs().isEmpty()) {
            // Only runs of several epochs have these keys, so a one-epoch line stays as it always was.
            g.writeObjectFieldStart("epoch_passes");
            for (Map.Entry<String, Integer> e : c.epochPasses().entrySet()) {
                g.writeNumberField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
            g.writeArrayFieldStart("epochs");
            for (int i = 0; i < c.epochs().size(); i++) {
                g.writeStartObject();
                g.writeNumberField("epoch", i + 1);
                writeResult(g, store, c.epochs().get(i), "outcome");
                g.writeEndObject();
            }
            g.writeEndArray();
        }
        if (override != null) {
            writeOverride(g, c, override);
        }
        g.writeEndObject();
        if (!(g instanceof TokenBuffer)) {
            g.writeRaw('\n');
        }
    }

    /**
     * {@code override}: the human review in force for the case (docs/execution.md, "Human review"), only on lines of
     * overridden cases, so every other line stays as it was. {@code stale} when the case was executed again after it
     * (the override is then not applied).
     */
    private static void writeOverride(JsonGenerator g, Receipt.CaseResult c, ReviewRecords.Row o) throws IOException {
        g.writeObjectFieldStart("override");
        g.writeStringField("outcome", o.outcome());
        g.writeStringField("original", o.original());
        g.writeStringField("reviewer", o.reviewer());
        g.writeStringField("note", o.note());
        g.writeStringField("at", o.createdAt().toString());
        g.writeNumberField("seq", o.seq());
        g.writeBooleanField("stale", !ReviewRecords.executionDigest(c).equals(o.executionSha256()));
        g.writeStringField("record_key", o.record().key().value());
        g.writeEndObject();
    }

    /** The CSV writer of {@link Format#CSV}: one row per case line, nested values as compact JSON text. */
    private static final class CsvCases implements AutoCloseable {
        private static final CsvMapper CSV = new CsvMapper();
        private final SequenceWriter rows;

        CsvCases(OutputStream out) throws IOException {
            CsvSchema.Builder schema = CsvSchema.builder().setUseHeader(true);
            CSV_COLUMNS.forEach(schema::addColumn);
            this.rows = CSV.writerFor(Map.class)
                    .with(schema.build())
                    .without(com.fasterxml.jackson.core.JsonGenerator.Feature.AUTO_CLOSE_TARGET)
                    .writeValues(out);
        }

        void write(JsonNode line) throws IOException {
            Map<String, String> row = new java.util.LinkedHashMap<>();
            for (String column : CSV_COLUMNS) {
                JsonNode v = line.get(column);
                row.put(
                        column,
                        v == null || v.isNull() ? "" : v.isContainerNode() ? TREES.writeValueAsString(v) : v.asText());
            }
            rows.write(row);
        }

        void flush() throws IOException {
            rows.flush();
        }

        @Override
        public void close() throws IOException {
            rows.close();
        }
    }

    /**
     * The keys one execution of a case has, for the case and for each of its epochs alike: {@code statusKey}
     * ({@code ok}|{@code errored}), {@code attempts}, {@code output}, {@code evaluators}, {@code gates},
     * {@code error}. An epoch names its status {@code outcome}, as issue 23 specified the epoch entries
     * ({@code {"epoch", "outcome", ...}}); a case keeps {@code status}, as its lines always had.
     */
    private static void writeResult(JsonGenerator g, ObjectStore store, Receipt.CaseResult c, String statusKey)
            throws IOException {
        g.writeStringField(statusKey, c.errored() ? "errored" : "ok");
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
            g.writeStringField("reason", e.reason().orElse(null));
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
        if (c.usage().isPresent()) {
            writeUsage(g, c.usage().get());
        }
        if (!c.keptFiles().isEmpty()) {
            // Only executions that kept files have the key, so every other line stays as it was.
            g.writeArrayFieldStart("kept_files");
            for (Receipt.KeptFileRef k : c.keptFiles()) {
                g.writeStartObject();
                g.writeStringField("path", k.path());
                g.writeStringField("key", k.ref().key().value());
                g.writeNumberField("length", k.ref().length());
                g.writeStringField("sha256", k.ref().sha256().toHex());
                g.writeEndObject();
            }
            g.writeEndArray();
        }
    }

    /**
     * {@code usage}: the execution's tokens and cost, in all and per role ({@code agent}, {@code judges}), and the
     * models without a price: the same object {@code run status --json} gives a run ({@link UsageSummary#putJson}).
     */
    static void writeUsage(JsonGenerator g, Receipt.Usage u) throws IOException {
        ObjectNode usage = JsonNodeFactory.instance.objectNode();
        UsageTallies.summary(u.models()).putJson(usage);
        g.writeFieldName("usage");
        TREES.writeTree(g, usage);
    }

    /** An output stored apart: read, verified against the reference and the receipt's length and digest. */
    static String output(ObjectStore store, Receipt.CaseResult c) {
        ObjectRef ref = c.outputRef().get();
        byte[] bytes = ChunkRows.read(store, ref, "output " + ref.key().value() + " of case " + c.id());
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
