package dev.vigilo.exec.record;

import static dev.vigilo.exec.record.JsonFields.array;
import static dev.vigilo.exec.record.JsonFields.bool;
import static dev.vigilo.exec.record.JsonFields.doubleValue;
import static dev.vigilo.exec.record.JsonFields.intValue;
import static dev.vigilo.exec.record.JsonFields.longValue;
import static dev.vigilo.exec.record.JsonFields.object;
import static dev.vigilo.exec.record.JsonFields.optionalObject;
import static dev.vigilo.exec.record.JsonFields.optionalText;
import static dev.vigilo.exec.record.JsonFields.sha256;
import static dev.vigilo.exec.record.JsonFields.strings;
import static dev.vigilo.exec.record.JsonFields.text;
import static dev.vigilo.exec.record.JsonFields.uuid;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.exec.record.Receipt.CaseResult;
import dev.vigilo.exec.record.Receipt.EvaluatorResult;
import dev.vigilo.exec.record.Receipt.GateOutcome;
import dev.vigilo.exec.record.Receipt.GateTally;
import dev.vigilo.exec.record.Receipt.TranscriptRef;
import dev.vigilo.llm.Pricing;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The one writer and reader of format {@code vigilo.exec.receipt} (docs/formats/exec-receipt.md), as Apache Iceberg's
 * {@code TableMetadataParser}: field names are the constants below, {@link #toJson} writes the current version, and
 * {@link #fromJson} reads every version in {@link Version}, strictly: through {@link StrictJson} (a key given twice is
 * damage), every field required with its JSON type (a missing or mistyped field is damage, never a default), the
 * header and the tallies checked against the case entries. A version this build does not know (a newer Vigilo's) is
 * refused as a {@link DamagedException} that says so, never read as the nearest one it knows.
 */
public final class ReceiptParser {
    private ReceiptParser() {}

    static final String FORMAT = "vigilo.exec.receipt";

    /**
     * The versions this build reads, oldest first; the last is the one {@link #toJson} writes. A new version is a new
     * constant here with the capabilities it adds, read where {@link #fromJson} asks for them.
     */
    enum Version {
        /** The first receipt: cases, evaluators, gates and tallies. */
        V1(1, false, false),
        /** Version 1 plus, per case, the references of its attempts' transcripts. */
        V2(2, true, false),
        /**
         * Version 2 plus epochs: the header's {@code epochs} (at least 2), and per case its {@code epoch_passes} and
         * its {@code epochs}, each an execution entry with its {@code epoch}; the case's own fields are their
         * reduction. Written only for runs of several epochs; a run of one epoch writes version 2, byte for byte.
         */
        V3(3, true, true, false),
        /**
         * Version 3 plus reasons and usage, written for every run: each evaluator result's {@code reason}, each
         * execution's {@code usage} (tokens per role and model, and {@code cost_usd}); the header's {@code epochs}
         * and each case's {@code epoch_passes} and {@code epochs} are always present ({@code 1}, {@code {}} and
         * {@code []} for a run of one epoch).
         */
        V4(4, true, true, true),
        /**
         * Version 4 plus each execution's {@code kept_files} (the files of a sandbox's work directory matching the
         * profile's {@code keep_files}, stored as objects). Written only when an execution of the receipt kept a
         * file; every other receipt is version 4, byte for byte.
         */
        V5(5, true, true, true, true),
        /**
         * Version 5 plus the header's {@code rerun} (the settlement generation, the previous receipt, the executions
         * run again and the usage of those they replaced): written only for a chunk executed again by {@code vigilo
         * run rerun-errors}; every other receipt is version 4 or 5, byte for byte.
         */
        V6(6, true, true, true, true, true),
        /**
         * Version 6 plus the header's {@code resumed_from} (the partial receipt chain a resumed chunk carried case
         * entries from, and the lease generation of each carried entry); its {@code rerun} is an object for a rerun's
         * chunk, else null. Written only for a chunk that carried entries from partial receipts; every other receipt
         * is version 4, 5 or 6, byte for byte.
         */
        V7(7, true, true, true, true, true, true),
        /**
         * Version 7's fields plus transcript slices: a transcript reference may carry {@code offset}, the slice's
         * start in a transcript container (docs/formats/transcript.md; its {@code length} and {@code sha256} are the
         * slice's; a reference without it is a whole object, as before), and {@code resumed_from} is an object for
         * a chunk that carried partial receipt entries, else null. Written for every receipt that references a
         * slice; every other receipt is version 4, 5, 6 or 7, byte for byte.
         */
        V8(8, true, true, true, true, true, true, true);

        final int number;
        final boolean transcripts;
        final boolean epochs;
        final boolean usage;
        final boolean keptFiles;
        final boolean rerun;
        final boolean resumed;
        /** Transcript references may be slices ({@code offset}); {@code resumed_from} may be null. */
        final boolean slices;

        Version(
                int number,
                boolean transcripts,
                boolean epochs,
                boolean usage,
                boolean keptFiles,
                boolean rerun,
                boolean resumed,
                boolean slices) {
            this.number = number;
            this.transcripts = transcripts;
            this.epochs = epochs;
            this.usage = usage;
            this.keptFiles = keptFiles;
            this.rerun = rerun;
            this.resumed = resumed;
            this.slices = slices;
        }

        Version(
                int number,
                boolean transcripts,
                boolean epochs,
                boolean usage,
                boolean keptFiles,
                boolean rerun,
                boolean resumed) {
            this(number, transcripts, epochs, usage, keptFiles, rerun, resumed, false);
        }

        Version(int number, boolean transcripts, boolean epochs, boolean usage, boolean keptFiles, boolean rerun) {
            this(number, transcripts, epochs, usage, keptFiles, rerun, false);
        }

        Version(int number, boolean transcripts, boolean epochs, boolean usage, boolean keptFiles) {
            this(number, transcripts, epochs, usage, keptFiles, false);
        }

        Version(int number, boolean transcripts, boolean epochs, boolean usage) {
            this(number, transcripts, epochs, usage, false);
        }

        Version(int number, boolean transcripts, boolean epochs) {
            this(number, transcripts, epochs, false, false);
        }

        /** The version receipts are written in when no execution kept a file. */
        static final Version WRITING = V4;

        /**
         * The version {@code r} is written in: {@link #V8} when a transcript reference is a slice, {@link #V7} for a
         * resumed chunk's, {@link #V6} for a rerun's receipt, {@link #V5} when an execution kept files, else {@link
         * #WRITING}.
         */
        static Version writing(Receipt r) {
            for (CaseResult c : r.cases()) {
                if (hasSlice(c)) {
                    return V8;
                }
            }
            if (r.resumed().isPresent()) {
                return V7;
            }
            if (r.rerun().isPresent()) {
                return V6;
            }
            for (CaseResult c : r.cases()) {
                if (!c.keptFiles().isEmpty()
                        || c.epochs().stream().anyMatch(e -> !e.keptFiles().isEmpty())) {
                    return V5;
                }
            }
            return WRITING;
        }

        /** Whether an execution of {@code c} (or of one of its epochs) references a transcript slice. */
        static boolean hasSlice(CaseResult c) {
            for (TranscriptRef t : c.transcripts()) {
                if (t.offset().isPresent()) {
                    return true;
                }
            }
            for (CaseResult e : c.epochs()) {
                if (hasSlice(e)) {
                    return true;
                }
            }
            return false;
        }

        /** The fewest epochs a receipt of this version lists. */
        int minEpochs() {
            return usage ? 1 : 2;
        }
    }

    // Header.
    static final String RUN_ID = "run_id";
    static final String CHUNK_INDEX = "chunk_index";
    static final String CHUNK_ID = "chunk_id";
    static final String SHARD = "shard";
    static final String LEASE_GENERATION = "lease_generation";
    static final String WORKER = "worker";
    static final String MEMBERSHIP_SHA256 = "membership_sha256";
    static final String STARTED_AT = "started_at";
    static final String FINISHED_AT = "finished_at";
    static final String EVALUATORS = "evaluators";
    static final String GATES = "gates";
    static final String CASES = "cases";
    static final String TALLIES = "tallies";
    // A rerun's header (version 6).
    static final String RERUN = "rerun";
    static final String GENERATION = "generation";
    static final String PREVIOUS = "previous";
    static final String EXECUTED = "executed";
    static final String SUPERSEDED_USAGE = "superseded_usage";
    // A resumed chunk's header (version 7).
    static final String RESUMED_FROM = "resumed_from";
    static final String HEAD = "head";
    static final String CARRIED = "carried";
    // A case.
    static final String ORDINAL = "ordinal";
    static final String ID = "id";
    static final String CASE_SHA256 = "case_sha256";
    static final String STATUS = "status";
    static final String OUTPUT = "output";
    static final String OUTPUT_REF = "output_ref";
    static final String OUTPUT_LENGTH = "output_length";
    static final String OUTPUT_SHA256 = "output_sha256";
    static final String ATTEMPTS = "attempts";
    static final String AGENT_MS = "agent_ms";
    static final String ERROR = "error";
    static final String TRANSCRIPTS = "transcripts";
    /** A transcript slice's start in its container (version 8). */
    static final String OFFSET = "offset";

    static final String EPOCH_PASSES = "epoch_passes";
    static final String EPOCHS = "epochs";
    static final String EPOCH = "epoch";
    // A case's evaluator result (also "error"), an error, a transcript reference.
    static final String NAME = "name";
    static final String PASSED = "passed";
    static final String SCORE = "score";
    static final String MS = "ms";
    static final String ERROR_TYPE = "type";
    static final String ERROR_MESSAGE = "message";
    static final String ATTEMPT = "attempt";
    static final String REASON = "reason";
    static final String VOTES = "votes";
    static final String JUDGE = "judge";
    // Usage.
    static final String USAGE = "usage";
    static final String KEPT_FILES = "kept_files";
    static final String PATH = "path";
    static final String MODELS = "models";
    static final String ROLE = "role";
    static final String MODEL = "model";
    static final String CALLS = "calls";
    static final String INPUT_TOKENS = "input_tokens";
    static final String CACHED_INPUT_TOKENS = "cached_input_tokens";
    static final String OUTPUT_TOKENS = "output_tokens";
    static final String COST_USD = "cost_usd";
    static final String CACHED_ANSWERS = "cached_answers";
    // Tallies.
    static final String CASES_EXECUTED = "cases_executed";
    static final String CASES_ERRORED = "cases_errored";
    static final String SELECTED = "selected";
    static final String FAILED = "failed";
    static final String ERRORED = "errored";
    // Case statuses.
    static final String STATUS_OK = "ok";
    static final String STATUS_ERRORED = "errored";

    private static final ObjectMapper MAPPER = StrictJson.newMapper();

    /**
     * The receipt in the current version ({@link Version#writing}: 8 when a transcript is a slice of a container, 7
     * for a resumed chunk, 6 for a rerun's, 5 when an execution kept files, else 4):
     * compact JSON in the documented key order, ending in a newline.
     */
    public static byte[] toJson(Receipt r) {
        Version version = Version.writing(r);
        // Streamed straight into the bytes in the documented key order: a tree of nodes per case entry, built only
        // to be serialized, was a large share of a worker's CPU per case (docs/benchmarks.md, "Execution").
        return write(g -> {
            g.writeStartObject();
            g.writeStringField(JsonFields.FORMAT, FORMAT);
            g.writeNumberField(JsonFields.VERSION, version.number);
            g.writeStringField(RUN_ID, r.runId().toString());
            g.writeNumberField(CHUNK_INDEX, r.chunkIndex());
            g.writeStringField(CHUNK_ID, r.chunkId().toString());
            g.writeNumberField(SHARD, r.shard());
            g.writeNumberField(LEASE_GENERATION, r.leaseGeneration());
            g.writeStringField(WORKER, r.worker().toString());
            g.writeStringField(MEMBERSHIP_SHA256, r.membership().toHex());
            g.writeStringField(STARTED_AT, r.startedAt().toString());
            g.writeStringField(FINISHED_AT, r.finishedAt().toString());
            writeStrings(g, EVALUATORS, r.evaluators());
            writeStrings(g, GATES, r.gates());
            if (version.epochs) {
                g.writeNumberField(EPOCHS, r.epochCount());
            }
            if (version.rerun) {
                g.writeFieldName(RERUN);
                if (r.rerun().isPresent()) {
                    writeRerun(g, r.rerun().get());
                } else {
                    g.writeNull(); // version 7 of a chunk's first execution
                }
            }
            if (version.resumed) {
                g.writeFieldName(RESUMED_FROM);
                if (r.resumed().isPresent()) {
                    writeResumed(g, r.resumed().get());
                } else {
                    g.writeNull(); // version 8 of a chunk that carried nothing
                }
            }
            g.writeArrayFieldStart(CASES);
            for (CaseResult c : r.cases()) {
                writeCase(g, c, version);
            }
            g.writeEndArray();
            g.writeObjectFieldStart(TALLIES);
            g.writeNumberField(CASES_EXECUTED, r.cases().size());
            g.writeNumberField(CASES_ERRORED, r.casesErrored());
            g.writeArrayFieldStart(GATES);
            for (GateTally gt : r.tallies()) {
                g.writeStartObject();
                g.writeStringField(NAME, gt.name());
                g.writeNumberField(SELECTED, gt.selected());
                g.writeNumberField(PASSED, gt.passed());
                g.writeNumberField(FAILED, gt.failed());
                g.writeNumberField(ERRORED, gt.errored());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
            g.writeEndObject();
            g.writeRaw('\n');
        });
    }

    /** Writes one JSON document through {@code body}: compact, as the mapper would serialize the same tree. */
    private static byte[] write(GeneratorBody body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(4096);
        try (JsonGenerator g = MAPPER.getFactory().createGenerator(out)) {
            body.write(g);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    @FunctionalInterface
    private interface GeneratorBody {
        void write(JsonGenerator g) throws IOException;
    }

    private static void writeStrings(JsonGenerator g, String name, List<String> values) throws IOException {
        g.writeArrayFieldStart(name);
        for (String v : values) {
            g.writeString(v);
        }
        g.writeEndArray();
    }

    private static void writeRef(JsonGenerator g, ObjectRef ref) throws IOException {
        g.writeStringField(JsonFields.KEY, ref.key().value());
        g.writeNumberField(JsonFields.LENGTH, ref.length());
        g.writeStringField(JsonFields.SHA256, ref.sha256().toHex());
    }

    private static void writeRefObject(JsonGenerator g, ObjectRef ref) throws IOException {
        g.writeStartObject();
        writeRef(g, ref);
        g.writeEndObject();
    }

    /** Writes {@code value} as a string, or null when absent. */
    private static void writeOptional(JsonGenerator g, String name, Optional<String> value) throws IOException {
        g.writeFieldName(name);
        if (value.isPresent()) {
            g.writeString(value.get());
        } else {
            g.writeNull();
        }
    }

    /** One case entry in {@code version}: identity, its execution's fields and, with epochs, its epochs. */
    private static void writeCase(JsonGenerator g, CaseResult c, Version version) throws IOException {
        g.writeStartObject();
        g.writeNumberField(ORDINAL, c.ordinal());
        g.writeStringField(ID, c.id());
        g.writeStringField(CASE_SHA256, c.caseSha256().toHex());
        writeExecution(g, c, version);
        if (version.epochs) {
            g.writeObjectFieldStart(EPOCH_PASSES);
            for (Map.Entry<String, Integer> e : c.epochPasses().entrySet()) {
                g.writeNumberField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
            g.writeArrayFieldStart(EPOCHS);
            for (int i = 0; i < c.epochs().size(); i++) {
                g.writeStartObject();
                g.writeNumberField(EPOCH, i + 1);
                writeExecution(g, c.epochs().get(i), version);
                g.writeEndObject();
            }
            g.writeEndArray();
        }
        g.writeEndObject();
    }

    /** The compact bytes of a case entry node as read from a document (the bytes {@link #caseBytes(CaseResult)} wrote). */
    public static byte[] caseBytes(JsonNode entry) {
        try {
            return MAPPER.writeValueAsBytes(entry);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The bytes of {@code c} as a version 7 receipt's case entry, which a partial receipt also writes
     * ({@code vigilo.exec.partial-receipt}): the one case format both share, so a carried entry is compared byte for
     * byte.
     */
    public static byte[] caseBytes(CaseResult c) {
        // Version 8's case format is version 7's plus transcript slices' offsets: without a slice the bytes are
        // version 7's, so a partial receipt of version 1 and its carried entries are unchanged.
        return write(g -> writeCase(g, c, Version.V8));
    }

    /**
     * Reads a case entry in the version 7 case format ({@code slices}: version 8's, whose transcript references may
     * be slices), of a document listing {@code epochCount} epochs per case.
     */
    static CaseResult readCaseEntry(JsonNode c, int epochCount, boolean slices) {
        return readCase(c, slices ? Version.V8 : Version.V7, epochCount);
    }

    private static long nonNegative(long value, String name, String in) {
        if (value < 0) {
            throw new DamagedException(in + ": field \"" + name + "\" is " + value + ", not a byte offset");
        }
        return value;
    }

    private static void writeResumed(JsonGenerator g, Receipt.Resumed resumed) throws IOException {
        g.writeStartObject();
        g.writeFieldName(HEAD);
        writeRefObject(g, resumed.head());
        g.writeArrayFieldStart(CARRIED);
        for (Receipt.Carried c : resumed.carried()) {
            g.writeStartObject();
            g.writeNumberField(ORDINAL, c.ordinal());
            g.writeNumberField(LEASE_GENERATION, c.generation());
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    private static Receipt.Resumed readResumed(JsonNode n) {
        JsonNode o = object(n, RESUMED_FROM, "");
        String at = RESUMED_FROM;
        List<Receipt.Carried> carried = new ArrayList<>();
        for (JsonNode x : array(o, CARRIED, at)) {
            carried.add(new Receipt.Carried(
                    longValue(x, ORDINAL, at + ", carried"), longValue(x, LEASE_GENERATION, at + ", carried")));
        }
        try {
            return new Receipt.Resumed(JsonFields.ref(object(o, HEAD, at), at + ", head"), carried);
        } catch (IllegalArgumentException e) {
            throw new DamagedException(at + ": " + e.getMessage(), e);
        }
    }

    /** One execution's fields, shared by a case entry and an epoch entry. */
    private static void writeExecution(JsonGenerator g, CaseResult c, Version version) throws IOException {
        g.writeStringField(STATUS, c.errored() ? STATUS_ERRORED : STATUS_OK);
        writeOptional(g, OUTPUT, c.output());
        g.writeFieldName(OUTPUT_REF);
        if (c.outputRef().isPresent()) {
            writeRefObject(g, c.outputRef().get());
        } else {
            g.writeNull();
        }
        g.writeNumberField(OUTPUT_LENGTH, c.outputLength());
        writeOptional(g, OUTPUT_SHA256, c.outputSha256().map(Sha256::toHex));
        g.writeNumberField(ATTEMPTS, c.attempts());
        g.writeNumberField(AGENT_MS, c.agentMillis());
        writeError(g, c.error());
        g.writeArrayFieldStart(EVALUATORS);
        for (EvaluatorResult e : c.evaluatorResults()) {
            g.writeStartObject();
            g.writeStringField(NAME, e.name());
            g.writeBooleanField(PASSED, e.passed());
            g.writeNumberField(SCORE, e.score());
            writeError(g, e.error());
            g.writeNumberField(MS, e.millis());
            if (version.usage) {
                writeOptional(g, REASON, e.reason());
                g.writeArrayFieldStart(VOTES);
                for (Receipt.Vote v : e.votes()) {
                    g.writeStartObject();
                    g.writeStringField(JUDGE, v.judge());
                    g.writeFieldName(SCORE);
                    if (v.score().isPresent()) {
                        g.writeNumber(v.score().get());
                    } else {
                        g.writeNull();
                    }
                    writeOptional(g, REASON, v.reason());
                    g.writeEndObject();
                }
                g.writeEndArray();
            }
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeObjectFieldStart(GATES);
        for (Map.Entry<String, GateOutcome> e : c.gates().entrySet()) {
            g.writeStringField(e.getKey(), e.getValue().wire);
        }
        g.writeEndObject();
        g.writeArrayFieldStart(TRANSCRIPTS);
        for (TranscriptRef t : c.transcripts()) {
            g.writeStartObject();
            g.writeNumberField(ATTEMPT, t.attempt());
            writeRef(g, t.ref());
            if (t.offset().isPresent()) {
                if (!version.slices) {
                    throw new IllegalArgumentException("case " + c.id() + ": a version " + version.number
                            + " document cannot reference a transcript slice");
                }
                g.writeNumberField(OFFSET, t.offset().getAsLong());
            }
            g.writeEndObject();
        }
        g.writeEndArray();
        if (version.usage) {
            // Unknown usage is not written as none: only results read from older receipts lack it.
            g.writeFieldName(USAGE);
            writeUsage(
                    g,
                    c.usage()
                            .orElseThrow(() -> new IllegalArgumentException("case " + c.id() + ": a version "
                                    + version.number + " receipt records every execution's usage")));
        }
        if (version.keptFiles) {
            g.writeArrayFieldStart(KEPT_FILES);
            for (Receipt.KeptFileRef k : c.keptFiles()) {
                g.writeStartObject();
                g.writeStringField(PATH, k.path());
                writeRef(g, k.ref());
                g.writeEndObject();
            }
            g.writeEndArray();
        }
    }

    private static void writeRerun(JsonGenerator g, Receipt.Rerun rerun) throws IOException {
        g.writeStartObject();
        g.writeNumberField(GENERATION, rerun.generation());
        g.writeFieldName(PREVIOUS);
        if (rerun.previous().isPresent()) {
            writeRefObject(g, rerun.previous().get());
        } else {
            g.writeNull();
        }
        g.writeArrayFieldStart(EXECUTED);
        for (Receipt.Executed e : rerun.executed()) {
            g.writeStartObject();
            g.writeNumberField(ORDINAL, e.ordinal());
            g.writeArrayFieldStart(EPOCHS);
            for (int epoch : e.epochs()) {
                g.writeNumber(epoch);
            }
            g.writeEndArray();
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeObjectFieldStart(SUPERSEDED_USAGE);
        for (Map.Entry<String, Receipt.Usage> e : rerun.supersededUsage().entrySet()) {
            g.writeFieldName(e.getKey());
            writeUsage(g, e.getValue());
        }
        g.writeEndObject();
        g.writeEndObject();
    }

    private static Receipt.Rerun readRerun(JsonNode n) {
        JsonNode o = object(n, RERUN, "");
        String at = RERUN;
        List<Receipt.Executed> executed = new ArrayList<>();
        long last = -1;
        for (JsonNode x : array(o, EXECUTED, at)) {
            long ordinal = longValue(x, ORDINAL, at + ", executed");
            if (ordinal <= last) {
                throw new DamagedException(at + ": executed cases are not in ascending ordinal order");
            }
            last = ordinal;
            List<Integer> epochs = new ArrayList<>();
            for (JsonNode e : array(x, EPOCHS, at + ", executed case " + ordinal)) {
                if (!e.isInt()
                        || e.intValue() < 1
                        || (!epochs.isEmpty() && e.intValue() <= epochs.get(epochs.size() - 1))) {
                    throw new DamagedException(
                            at + ", executed case " + ordinal + ": epochs must be ascending numbers >= 1");
                }
                epochs.add(e.intValue());
            }
            executed.add(new Receipt.Executed(ordinal, epochs));
        }
        Map<String, Receipt.Usage> superseded = new LinkedHashMap<>();
        for (var f : object(o, SUPERSEDED_USAGE, at).properties()) {
            if (!f.getValue().isObject()) {
                throw new DamagedException(at + ", superseded_usage " + f.getKey() + " is not an object");
            }
            superseded.put(f.getKey(), usage(f.getValue(), at + ", superseded_usage " + f.getKey()));
        }
        try {
            return new Receipt.Rerun(
                    intValue(o, GENERATION, at),
                    optionalObject(o, PREVIOUS, at).map(p -> JsonFields.ref(p, at + ", previous")),
                    executed,
                    superseded);
        } catch (IllegalArgumentException e) {
            throw new DamagedException(at + ": " + e.getMessage(), e);
        }
    }

    private static void writeUsage(JsonGenerator g, Receipt.Usage usage) throws IOException {
        g.writeStartObject();
        g.writeArrayFieldStart(MODELS);
        for (Receipt.ModelUsage m : usage.models()) {
            g.writeStartObject();
            g.writeStringField(ROLE, m.role().wire);
            g.writeStringField(MODEL, m.model());
            g.writeNumberField(CALLS, m.calls());
            g.writeNumberField(INPUT_TOKENS, m.inputTokens());
            g.writeNumberField(CACHED_INPUT_TOKENS, m.cachedInputTokens());
            g.writeNumberField(OUTPUT_TOKENS, m.outputTokens());
            writeOptional(g, COST_USD, m.costUsd().map(Pricing::text));
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeNumberField(CACHED_ANSWERS, usage.cachedAnswers());
        writeOptional(g, COST_USD, usage.costUsd().map(Pricing::text));
        g.writeEndObject();
    }

    private static List<Receipt.Vote> votes(JsonNode e, String at) {
        List<Receipt.Vote> out = new ArrayList<>();
        for (JsonNode v : array(e, VOTES, at)) {
            String in = at + ", vote";
            JsonNode score = v.get(SCORE);
            if (score == null || !(score.isNull() || score.isNumber())) {
                throw new DamagedException(in + ": score is missing or not a number");
            }
            try {
                out.add(new Receipt.Vote(
                        text(v, JUDGE, in),
                        score.isNull() ? Optional.empty() : Optional.of(score.doubleValue()),
                        optionalText(v, REASON, in)));
            } catch (IllegalArgumentException x) {
                throw new DamagedException(in + ": " + x.getMessage(), x);
            }
        }
        return out;
    }

    private static Receipt.Usage readUsage(JsonNode parent, String in) {
        return usage(object(parent, USAGE, in), in + ", usage");
    }

    private static Receipt.Usage usage(JsonNode u, String at) {
        List<Receipt.ModelUsage> models = new ArrayList<>();
        Receipt.Usage usage;
        try {
            for (JsonNode m : array(u, MODELS, at)) {
                models.add(new Receipt.ModelUsage(
                        Receipt.Role.of(text(m, ROLE, at)),
                        text(m, MODEL, at),
                        longValue(m, CALLS, at),
                        longValue(m, INPUT_TOKENS, at),
                        longValue(m, CACHED_INPUT_TOKENS, at),
                        longValue(m, OUTPUT_TOKENS, at),
                        optionalText(m, COST_USD, at).map(BigDecimal::new).map(Pricing::plain)));
            }
            usage = new Receipt.Usage(models, longValue(u, CACHED_ANSWERS, at));
        } catch (IllegalArgumentException e) { // NumberFormatException included
            throw new DamagedException(at + ": " + e.getMessage(), e);
        }
        Optional<BigDecimal> total = optionalText(u, COST_USD, at).map(BigDecimal::new);
        if (!total.map(Pricing::plain).equals(usage.costUsd())) {
            throw new DamagedException(at + ": cost_usd "
                    + total.map(BigDecimal::toPlainString).orElse("null") + " is not the sum of its models' costs");
        }
        return usage;
    }

    /**
     * Reads a receipt of any version in {@link Version} and checks its header and its tallies against its cases.
     *
     * @param where names the receipt for messages (its key)
     * @throws DamagedException on any format or consistency problem, and on a version this build does not read
     */
    public static Receipt fromJson(byte[] bytes, String where) {
        try {
            JsonNode n = MAPPER.readTree(bytes);
            Version version = JsonFields.header(n, FORMAT, Version.values(), v -> v.number);
            return read(n, version);
        } catch (IOException | RuntimeException e) {
            throw new DamagedException("receipt " + where + " is invalid: " + e.getMessage(), e);
        }
    }

    private static Receipt read(JsonNode n, Version version) {
        int epochCount = version.epochs ? intValue(n, EPOCHS, "") : 1;
        if (version.epochs && (epochCount < version.minEpochs() || epochCount > 100)) {
            throw new DamagedException("a version " + version.number + " receipt has " + epochCount + " epochs, not "
                    + version.minEpochs() + "..100");
        }
        List<CaseResult> cases = new ArrayList<>();
        for (JsonNode c : array(n, CASES, "")) {
            cases.add(readCase(c, version, epochCount));
        }
        Receipt r = new Receipt(
                uuid(n, RUN_ID, ""),
                longValue(n, CHUNK_INDEX, ""),
                uuid(n, CHUNK_ID, ""),
                intValue(n, SHARD, ""),
                longValue(n, LEASE_GENERATION, ""),
                uuid(n, WORKER, ""),
                sha256(n, MEMBERSHIP_SHA256, ""),
                Instant.parse(text(n, STARTED_AT, "")),
                Instant.parse(text(n, FINISHED_AT, "")),
                strings(n, EVALUATORS, ""),
                strings(n, GATES, ""),
                cases,
                !version.rerun
                                || (version.resumed
                                        && JsonFields.field(n, RERUN, "").isNull())
                        ? Optional.empty()
                        : Optional.of(readRerun(n)),
                version.resumed
                                && !(version.slices
                                        && JsonFields.field(n, RESUMED_FROM, "").isNull())
                        ? Optional.of(readResumed(n))
                        : Optional.empty());
        checkTallies(r, object(n, TALLIES, ""));
        if (r.rerun().isPresent()) {
            checkExecuted(r, epochCount);
        }
        if (r.resumed().isPresent()) {
            checkCarried(r);
        }
        return r;
    }

    private static CaseResult readCase(JsonNode c, Version version, int epochCount) {
        if (!c.isObject()) {
            throw new DamagedException("a case entry is " + c + ", not an object");
        }
        String in = "case " + c.path(ORDINAL);
        long ordinal = longValue(c, ORDINAL, in);
        String id = text(c, ID, in);
        Sha256 caseSha = sha256(c, CASE_SHA256, in);
        List<CaseResult> epochs = new ArrayList<>();
        if (version.epochs) {
            JsonNode entries = array(c, EPOCHS, in);
            int listed = epochCount == 1 ? 0 : epochCount; // one epoch lists none: the case is its execution
            if (entries.size() != listed) {
                throw new DamagedException(in + " lists " + entries.size() + " epochs, the receipt " + epochCount);
            }
            for (int i = 0; i < entries.size(); i++) {
                JsonNode e = entries.get(i);
                String at = in + ", epoch " + (i + 1);
                if (!e.isObject() || intValue(e, EPOCH, at) != i + 1) {
                    throw new DamagedException(at + " is out of order or not an object");
                }
                epochs.add(readExecution(e, version, at, ordinal, id, caseSha, List.of()));
            }
        }
        CaseResult result = readExecution(c, version, in, ordinal, id, caseSha, epochs);
        if (version.epochs) {
            Map<String, Integer> written = new LinkedHashMap<>();
            object(c, EPOCH_PASSES, in)
                    .properties()
                    .forEach(f -> written.put(f.getKey(), f.getValue().intValue()));
            if (!written.equals(result.epochPasses())) {
                throw new DamagedException(
                        in + ": epoch_passes " + written + " does not match its epochs' " + result.epochPasses());
            }
        }
        return result;
    }

    /** One execution's fields (a case entry's or an epoch entry's), for the case given. */
    private static CaseResult readExecution(
            JsonNode c, Version version, String in, long ordinal, String id, Sha256 caseSha, List<CaseResult> epochs) {
        List<EvaluatorResult> evaluators = new ArrayList<>();
        for (JsonNode e : array(c, EVALUATORS, in)) {
            String at = in + ", evaluator " + e.path(NAME);
            evaluators.add(new EvaluatorResult(
                    text(e, NAME, at),
                    bool(e, PASSED, at),
                    doubleValue(e, SCORE, at),
                    error(e, at),
                    longValue(e, MS, at),
                    version.usage ? optionalText(e, REASON, at) : Optional.empty(),
                    version.usage ? votes(e, at) : List.of()));
        }
        Map<String, GateOutcome> gates = new LinkedHashMap<>();
        object(c, GATES, in)
                .properties()
                .forEach(f -> gates.put(f.getKey(), GateOutcome.of(f.getValue().asText())));
        List<TranscriptRef> transcripts = new ArrayList<>();
        if (version.transcripts) {
            for (JsonNode t : array(c, TRANSCRIPTS, in)) {
                String at = in + ", transcript";
                transcripts.add(new TranscriptRef(
                        intValue(t, ATTEMPT, at),
                        JsonFields.ref(t, at),
                        version.slices && t.has(OFFSET)
                                ? OptionalLong.of(nonNegative(longValue(t, OFFSET, at), OFFSET, at))
                                : OptionalLong.empty()));
            }
        }
        String status = text(c, STATUS, in);
        if (!status.equals(STATUS_OK) && !status.equals(STATUS_ERRORED)) {
            throw new DamagedException(in + ": status \"" + status + "\" is neither ok nor errored");
        }
        return new CaseResult(
                ordinal,
                id,
                caseSha,
                status.equals(STATUS_ERRORED),
                optionalText(c, OUTPUT, in),
                optionalObject(c, OUTPUT_REF, in).map(o -> JsonFields.ref(o, in + ", output_ref")),
                longValue(c, OUTPUT_LENGTH, in),
                optionalText(c, OUTPUT_SHA256, in).map(Sha256::parseHex),
                intValue(c, ATTEMPTS, in),
                longValue(c, AGENT_MS, in),
                error(c, in),
                evaluators,
                gates,
                transcripts,
                epochs,
                version.usage ? Optional.of(readUsage(c, in)) : Optional.empty(),
                version.keptFiles ? keptFiles(c, in) : List.of());
    }

    private static List<Receipt.KeptFileRef> keptFiles(JsonNode c, String in) {
        List<Receipt.KeptFileRef> out = new ArrayList<>();
        for (JsonNode k : array(c, KEPT_FILES, in)) {
            String at = in + ", kept file";
            out.add(new Receipt.KeptFileRef(text(k, PATH, at), JsonFields.ref(k, at)));
        }
        return out;
    }

    /** A rerun's executed cases are cases of the receipt, each naming epochs exactly when the run has several. */
    private static void checkExecuted(Receipt r, int epochCount) {
        java.util.Set<Long> ordinals = new java.util.HashSet<>();
        r.cases().forEach(c -> ordinals.add(c.ordinal()));
        for (Receipt.Executed e : r.rerun().orElseThrow().executed()) {
            if (!ordinals.contains(e.ordinal())) {
                throw new DamagedException("rerun: executed case " + e.ordinal() + " is not a case of the receipt");
            }
            boolean fits = epochCount == 1
                    ? e.epochs().isEmpty()
                    : !e.epochs().isEmpty() && e.epochs().get(e.epochs().size() - 1) <= epochCount;
            if (!fits) {
                throw new DamagedException("rerun: executed case " + e.ordinal() + " names epochs " + e.epochs()
                        + " in a receipt of " + epochCount + " epochs");
            }
        }
    }

    /** A resumed receipt's carried entries are cases of the receipt, executed under an earlier lease generation. */
    private static void checkCarried(Receipt r) {
        java.util.Set<Long> ordinals = new java.util.HashSet<>();
        r.cases().forEach(c -> ordinals.add(c.ordinal()));
        for (Receipt.Carried c : r.resumed().orElseThrow().carried()) {
            if (!ordinals.contains(c.ordinal()) || c.generation() >= r.leaseGeneration()) {
                throw new DamagedException("resumed_from: carried case " + c.ordinal() + " of lease generation "
                        + c.generation() + " is not a case of the receipt executed before its generation "
                        + r.leaseGeneration());
            }
        }
    }

    private static void checkTallies(Receipt r, JsonNode t) {
        if (longValue(t, CASES_EXECUTED, TALLIES) != r.cases().size()
                || longValue(t, CASES_ERRORED, TALLIES) != r.casesErrored()) {
            throw new DamagedException("case tallies do not match the entries");
        }
        List<GateTally> computed = r.tallies();
        JsonNode written = array(t, GATES, TALLIES);
        if (written.size() != computed.size()) {
            throw new DamagedException("gate tallies do not match the gates");
        }
        for (int i = 0; i < computed.size(); i++) {
            GateTally g = computed.get(i);
            JsonNode x = written.get(i);
            String in = "tally of gate " + g.name();
            if (!g.name().equals(text(x, NAME, in))
                    || g.selected() != longValue(x, SELECTED, in)
                    || g.passed() != longValue(x, PASSED, in)
                    || g.failed() != longValue(x, FAILED, in)
                    || g.errored() != longValue(x, ERRORED, in)) {
                throw new DamagedException("gate " + g.name() + "'s tally does not match the entries");
            }
        }
    }

    private static void writeError(JsonGenerator g, Optional<Receipt.Error> error) throws IOException {
        g.writeFieldName(ERROR);
        if (error.isPresent()) {
            g.writeStartObject();
            g.writeStringField(ERROR_TYPE, error.get().type());
            g.writeStringField(ERROR_MESSAGE, error.get().message());
            g.writeEndObject();
        } else {
            g.writeNull();
        }
    }

    private static Optional<Receipt.Error> error(JsonNode parent, String in) {
        return optionalObject(parent, ERROR, in)
                .map(e ->
                        new Receipt.Error(text(e, ERROR_TYPE, in + ", error"), text(e, ERROR_MESSAGE, in + ", error")));
    }
}
