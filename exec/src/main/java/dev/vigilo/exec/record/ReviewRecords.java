package dev.vigilo.exec.record;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.json.CanonicalJson;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.Placements;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * The records of human review (docs/execution.md, "Human review"): the control table {@code run_review_overrides}
 * (migration V25), append-only, and the override object each row references, a canonical JSON document in the run's
 * store under a key naming its own SHA-256 (docs/formats/review-override.md, version {@value #VERSION}). Also the
 * rules every reader shares: a case's machine outcome and the digest of its recorded execution (what makes an
 * override stale), and the gate table recomputed with the overrides in force. Stateless.
 */
public final class ReviewRecords {
    /** The {@code format} field of an override object. */
    public static final String FORMAT = "vigilo-review-override";
    /** The version this build writes; it reads versions 1 to this one. */
    public static final int VERSION = 1;
    /** Longest note, in characters. */
    public static final int MAX_NOTE = 4000;

    private static final ObjectMapper JSON = StrictJson.newMapper();

    private ReviewRecords() {}

    /**
     * A case as its receipt records it now.
     *
     * @param outcome         {@code passed}, {@code failed} or {@code errored} over every gate (as case pages show it)
     * @param gates           its outcome per selecting gate ({@code passed|failed|errored}), gate order
     * @param executionSha256 the digest of its recorded execution ({@link #executionDigest})
     */
    public record Machine(
            long ordinal, String caseId, String outcome, Map<String, String> gates, String executionSha256) {
        public Machine {
            gates = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(gates));
        }

        /** The case's machine record in {@code c}. */
        public static Machine of(Receipt.CaseResult c) {
            Map<String, String> gates = new LinkedHashMap<>();
            c.gates().forEach((g, o) -> gates.put(g, o.wire));
            String outcome = c.errored() || c.gates().containsValue(Receipt.GateOutcome.ERRORED)
                    ? "errored"
                    : c.gates().containsValue(Receipt.GateOutcome.FAILED) ? "failed" : "passed";
            return new Machine(c.ordinal(), c.id(), outcome, gates, executionDigest(c));
        }
    }

    /**
     * One override row.
     *
     * @param seq        1, 2, ... per run in recording order
     * @param outcome    {@code pass} or {@code fail}
     * @param original   the machine outcome it overrides
     * @param supersedes the seq of the override of the same case it replaces
     * @param record     the override object's reference
     */
    public record Row(
            long seq,
            long ordinal,
            String caseId,
            String outcome,
            String original,
            String executionSha256,
            String reviewer,
            String note,
            Instant createdAt,
            Optional<Long> supersedes,
            ObjectRef record) {}

    /**
     * The digest of a case's recorded execution: the canonical JSON of what only an execution of it produces (its
     * status, attempts, agent time, output digest, gate outcomes, transcript keys, and each epoch's the same). A
     * case that {@code run rerun-errors} carried forward keeps its digest; one it executed again gets another (new
     * transcripts under the new lease generation, another agent time), which makes an override of it stale.
     */
    public static String executionDigest(Receipt.CaseResult c) {
        return CanonicalJson.sha256Hex(execution(c));
    }

    private static ObjectNode execution(Receipt.CaseResult c) {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("errored", c.errored());
        n.put("attempts", c.attempts());
        n.put("agent_ms", c.agentMillis());
        n.put("output_sha256", c.outputSha256().map(Sha256::toHex).orElse(null));
        ObjectNode gates = n.putObject("gates");
        c.gates().forEach((g, o) -> gates.put(g, o.wire));
        ArrayNode transcripts = n.putArray("transcripts");
        // A slice names its offset too (several cases share a container); a whole object's key alone, as before.
        c.transcripts()
                .forEach(t -> transcripts.add(t.ref().key().value()
                        + t.offset().stream().mapToObj(o -> "@" + o).findFirst().orElse("")));
        ArrayNode epochs = n.putArray("epochs");
        c.epochs().forEach(e -> epochs.add(execution(e)));
        return n;
    }

    /** The object key of an override object: {@code runs/<run>/reviews/<sha256 of its bytes>.json}. */
    public static ObjectKey key(UUID runId, Sha256 sha256) {
        return ObjectKey.of("runs/" + runId + "/reviews/" + sha256.toHex() + ".json");
    }

    /**
     * The override object (canonical JSON, UTF-8) for a new override of {@code machine}.
     *
     * @param supersedes the SHA-256 of the override object it replaces, if any
     */
    public static byte[] encode(
            UUID runId,
            Machine machine,
            String outcome,
            String reviewer,
            String note,
            Instant createdAt,
            Optional<String> supersedes) {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("format", FORMAT);
        n.put("version", VERSION);
        n.put("run_id", runId.toString());
        ObjectNode c = n.putObject("case");
        c.put("ordinal", machine.ordinal());
        c.put("id", machine.caseId());
        n.put("outcome", outcome);
        ObjectNode original = n.putObject("original");
        original.put("outcome", machine.outcome());
        ObjectNode gates = original.putObject("gates");
        machine.gates().forEach(gates::put);
        original.put("execution_sha256", machine.executionSha256());
        n.put("reviewer", reviewer);
        n.put("note", note);
        n.put("created_at", createdAt.truncatedTo(ChronoUnit.MICROS).toString());
        n.put("supersedes", supersedes.orElse(null));
        return CanonicalJson.text(n).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * An override object read back.
     *
     * @param gates the case's machine outcome per selecting gate when it was overridden
     */
    public record Document(
            UUID runId,
            long ordinal,
            String caseId,
            String outcome,
            String original,
            Map<String, String> gates,
            String executionSha256,
            String reviewer,
            String note,
            Instant createdAt,
            Optional<String> supersedes) {}

    /**
     * Parses an override object.
     *
     * @throws DamagedException naming {@code key} when it is not one this build reads
     */
    public static Document parse(String key, byte[] bytes) {
        try {
            JsonNode n = JSON.readTree(bytes);
            if (!FORMAT.equals(n.path("format").asText())) {
                throw new IllegalArgumentException("format is " + n.path("format") + ", not \"" + FORMAT + "\"");
            }
            int version = n.path("version").asInt(-1);
            if (version < 1 || version > VERSION) {
                throw new IllegalArgumentException(
                        "version " + n.path("version") + " is not one this build reads (1 to " + VERSION + ")");
            }
            Map<String, String> gates = new LinkedHashMap<>();
            n.path("original").path("gates").fields().forEachRemaining(e -> gates.put(e.getKey(), text(e.getValue())));
            JsonNode sup = n.path("supersedes");
            return new Document(
                    UUID.fromString(text(n.path("run_id"))),
                    n.path("case").path("ordinal").asLong(-1),
                    text(n.path("case").path("id")),
                    text(n.path("outcome")),
                    text(n.path("original").path("outcome")),
                    gates,
                    text(n.path("original").path("execution_sha256")),
                    text(n.path("reviewer")),
                    text(n.path("note")),
                    Instant.parse(text(n.path("created_at"))),
                    sup.isNull() ? Optional.empty() : Optional.of(text(sup)));
        } catch (IOException | RuntimeException e) {
            throw new DamagedException(
                    "review override " + key + " is not an override record this build reads: " + e.getMessage(), e);
        }
    }

    private static String text(JsonNode n) {
        if (!n.isTextual()) {
            throw new IllegalArgumentException("expected text, found " + n);
        }
        return n.asText();
    }

    /**
     * Whether {@code d} says what {@code row} says: run, case, outcome, original outcome, execution digest, reviewer,
     * note, time; empty when it does, else the first difference.
     */
    public static Optional<String> difference(UUID runId, Row row, Document d) {
        Map<String, Object[]> fields = new LinkedHashMap<>();
        fields.put("run_id", new Object[] {runId, d.runId()});
        fields.put("ordinal", new Object[] {row.ordinal(), d.ordinal()});
        fields.put("case_id", new Object[] {row.caseId(), d.caseId()});
        fields.put("outcome", new Object[] {row.outcome(), d.outcome()});
        fields.put("original_outcome", new Object[] {row.original(), d.original()});
        fields.put("execution_sha256", new Object[] {row.executionSha256(), d.executionSha256()});
        fields.put("reviewer", new Object[] {row.reviewer(), d.reviewer()});
        fields.put("note", new Object[] {row.note(), d.note()});
        fields.put("created_at", new Object[] {row.createdAt(), d.createdAt()});
        for (Map.Entry<String, Object[]> f : fields.entrySet()) {
            if (!Objects.equals(f.getValue()[0], f.getValue()[1])) {
                return Optional.of(f.getKey() + " is " + f.getValue()[0] + " in the row and " + f.getValue()[1]
                        + " in the record");
            }
        }
        return Optional.empty();
    }

    private static final String COLUMNS = "SELECT seq, ordinal, case_id, outcome, original_outcome, execution_sha256,"
            + " reviewer, note, created_at, supersedes, record_key, record_length, record_sha256"
            + " FROM run_review_overrides WHERE run_id = :r";

    /** Every override of the run, in seq order (superseded ones included). */
    public static List<Row> rows(Handle h, UUID runId) {
        return h.createQuery(COLUMNS + " ORDER BY seq")
                .bind("r", runId)
                .map((rs, ctx) -> new Row(
                        rs.getLong("seq"),
                        rs.getLong("ordinal"),
                        rs.getString("case_id"),
                        rs.getString("outcome"),
                        rs.getString("original_outcome"),
                        rs.getString("execution_sha256"),
                        rs.getString("reviewer"),
                        rs.getString("note"),
                        rs.getTimestamp("created_at").toInstant(),
                        Optional.ofNullable((Long) rs.getObject("supersedes", Long.class)),
                        new ObjectRef(
                                ObjectKey.of(rs.getString("record_key")),
                                rs.getLong("record_length"),
                                Sha256.parseHex(rs.getString("record_sha256")))))
                .list();
    }

    /** The override in force per case (the latest of each), by ordinal. */
    public static Map<Long, Row> current(List<Row> rows) {
        Map<Long, Row> out = new TreeMap<>();
        rows.forEach(r -> out.put(r.ordinal(), r));
        return out;
    }

    /**
     * Serializes the run's overrides for the rest of the transaction (a transaction-scoped advisory lock: the run row
     * stays free for workers and settlement).
     */
    public static void lock(Handle h, UUID runId) {
        h.createQuery("SELECT pg_advisory_xact_lock(hashtext('vigilo-review:' || :r))::text")
                .bind("r", runId.toString())
                .mapTo(String.class)
                .one();
    }

    /** Inserts an override as the run's next seq (call under {@link #lock}); returns the row written. */
    public static Row insert(
            Handle h,
            UUID runId,
            Machine machine,
            String outcome,
            String reviewer,
            String note,
            Instant createdAt,
            Optional<Long> supersedes,
            ObjectRef record) {
        long seq = h.createQuery("SELECT coalesce(max(seq), 0) + 1 FROM run_review_overrides WHERE run_id = :r")
                .bind("r", runId)
                .mapTo(Long.class)
                .one();
        h.createUpdate("INSERT INTO run_review_overrides (run_id, seq, ordinal, case_id, outcome, original_outcome,"
                        + " execution_sha256, reviewer, note, created_at, supersedes, record_key, record_length,"
                        + " record_sha256) VALUES (:r, :seq, :o, :id, :outcome, :original, :exec, :reviewer, :note,"
                        + " :at, :sup, :key, :len, :sha)")
                .bind("r", runId)
                .bind("seq", seq)
                .bind("o", machine.ordinal())
                .bind("id", machine.caseId())
                .bind("outcome", outcome)
                .bind("original", machine.outcome())
                .bind("exec", machine.executionSha256())
                .bind("reviewer", reviewer)
                .bind("note", note)
                .bind("at", Timestamp.from(createdAt))
                .bind("sup", supersedes.orElse(null))
                .bind("key", record.key().value())
                .bind("len", record.length())
                .bind("sha", record.sha256().toHex())
                .execute();
        return new Row(
                seq,
                machine.ordinal(),
                machine.caseId(),
                outcome,
                machine.outcome(),
                machine.executionSha256(),
                reviewer,
                note,
                createdAt,
                supersedes,
                record);
    }

    /**
     * The machine records of the cases at {@code ordinals} as the run's done chunks hold them now, each receipt read
     * (and verified against its row) once; an ordinal no done chunk holds is absent.
     */
    public static Map<Long, Machine> machines(
            Placements placements,
            UUID runId,
            List<RunRecords.Route> routes,
            ObjectReader store,
            Collection<Long> ordinals) {
        Map<Long, Machine> out = new HashMap<>();
        Map<String, Receipt> read = new HashMap<>();
        TreeSet<Long> wanted = new TreeSet<>(ordinals);
        for (long ordinal : wanted) {
            if (out.containsKey(ordinal)) {
                continue;
            }
            for (var g : RunRecords.byPlacement(routes).entrySet()) {
                for (ChunkRows.Row row : ChunkRows.doneHolding(placements, runId, g.getKey(), g.getValue(), ordinal)) {
                    Receipt r = read.computeIfAbsent(
                            row.receipt().orElseThrow().key().value(), k -> ChunkRows.receipt(runId, store, row));
                    for (Receipt.CaseResult c : r.cases()) {
                        if (wanted.contains(c.ordinal())) {
                            out.putIfAbsent(c.ordinal(), Machine.of(c));
                        }
                    }
                }
            }
        }
        return out;
    }

    /**
     * An override in force and not stale, as the recomputed gate table applies it.
     *
     * @param gates   the case's machine outcome per selecting gate
     * @param outcome {@code pass} or {@code fail}
     */
    public record Applied(Map<String, String> gates, String outcome) {}

    /**
     * The gate table {@code machine} with {@code overrides} applied: in every gate that selects an overridden case,
     * the case moves from its machine outcome to passed ({@code pass}) or failed ({@code fail}); the planned counts,
     * thresholds and rules stay; each gate is decided again by its rule when the machine row is decided, and stays
     * undecided (partial) otherwise. Epoch pass counts are not carried (a reviewer judges the case, not its epochs).
     */
    public static List<GateResult> recompute(List<GateResult> machine, Collection<Applied> overrides) {
        List<GateResult> out = new ArrayList<>();
        for (GateResult g : machine) {
            long passed = g.passed();
            long failed = g.failed();
            long errored = g.errored();
            for (Applied a : overrides) {
                String was = a.gates().get(g.name());
                if (was == null) {
                    continue;
                }
                switch (was) {
                    case "passed" -> passed--;
                    case "failed" -> failed--;
                    default -> errored--;
                }
                if ("pass".equals(a.outcome())) {
                    passed++;
                } else {
                    failed++;
                }
            }
            if (passed < 0 || failed < 0 || errored < 0) {
                throw new DamagedException("gate " + g.name() + ": the overrides move more cases than the gate table"
                        + " counts (" + g.passed() + " passed, " + g.failed() + " failed, " + g.errored()
                        + " errored); the override records disagree with the receipts");
            }
            out.add(
                    g.decision().isPresent()
                            ? GateResult.decided(
                                    g.name(),
                                    g.planned(),
                                    passed,
                                    failed,
                                    errored,
                                    g.minPassRate(),
                                    g.decide(),
                                    g.confidence())
                            : GateResult.partial(
                                    g.name(),
                                    g.planned(),
                                    passed,
                                    failed,
                                    errored,
                                    g.minPassRate(),
                                    g.decide(),
                                    g.confidence()));
        }
        return out;
    }
}
