package dev.vigilo.exec.record;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.DatabaseErrors;
import dev.vigilo.stats.KrippendorffAlpha;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.StatementException;

/**
 * Judge agreement as chunk rows record it, as status and settlement sum it, and as settlement records it (docs/
 * execution.md, "Judge agreement"): the one encoding of a chunk's {@code agreement} column ({@link #json}), the
 * aggregate SQL over done chunk rows ({@link #read}), and the owner of the control table {@code run_agreement}
 * ({@link #insert}, {@link #recorded}). Per scope ({@link Receipt#ALL_CASES} or a gate) and panel evaluator, the
 * summable {@link KrippendorffAlpha.Sums}, exact.
 */
public final class AgreementTallies {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private AgreementTallies() {}

    /** The column value of a chunk's agreement sums; null when there are none. */
    public static String json(Map<String, Map<String, KrippendorffAlpha.Sums>> byScope) {
        if (byScope.isEmpty()) {
            return null;
        }
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        byScope.forEach((scope, panels) -> {
            ObjectNode s = root.putObject(scope);
            panels.forEach((panel, sums) -> s.putArray(panel)
                    .add(sums.n())
                    .add(sums.sum().toPlainString())
                    .add(sums.sumOfSquares().toPlainString())
                    .add(sums.disagreement().toPlainString()));
        });
        try {
            return MAPPER.writeValueAsString(root);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The sums of the done chunks of {@code shards}, per scope and panel, by aggregate SQL. */
    public static Map<String, Map<String, KrippendorffAlpha.Sums>> read(Handle h, UUID runId, List<Integer> shards) {
        Map<String, Map<String, KrippendorffAlpha.Sums>> out = new TreeMap<>();
        try {
            h.createQuery("SELECT s.key AS scope, p.key AS panel, sum((p.value->>0)::bigint) AS n,"
                            + " sum((p.value->>1)::numeric) AS s, sum((p.value->>2)::numeric) AS q,"
                            + " sum((p.value->>3)::numeric) AS w"
                            + " FROM exec_chunks c CROSS JOIN LATERAL jsonb_each(c.agreement) AS s(key, value)"
                            + " CROSS JOIN LATERAL jsonb_each(s.value) AS p(key, value)"
                            + " WHERE c.run_id = :r AND c.shard = ANY(:s) AND c.state = 'done'"
                            + " AND c.agreement IS NOT NULL GROUP BY s.key, p.key")
                    .bind("r", runId)
                    .bindArray("s", Integer.class, shards)
                    .mapToMap()
                    .forEach(row -> out.computeIfAbsent((String) row.get("scope"), k -> new TreeMap<>())
                            .put(
                                    (String) row.get("panel"),
                                    sums(
                                            ((Number) row.get("n")).longValue(),
                                            (BigDecimal) row.get("s"),
                                            (BigDecimal) row.get("q"),
                                            (BigDecimal) row.get("w"),
                                            runId)));
        } catch (StatementException e) {
            if (DatabaseErrors.isUnavailable(e)) {
                throw e;
            }
            throw new DamagedException(
                    "run " + runId + ": a chunk row's agreement sums cannot be summed (" + DatabaseErrors.detail(e)
                            + "); the execution database's chunk rows were altered",
                    e);
        }
        return out;
    }

    /** {@code a} and {@code b} added per scope and panel. */
    public static Map<String, Map<String, KrippendorffAlpha.Sums>> plus(
            Map<String, Map<String, KrippendorffAlpha.Sums>> a, Map<String, Map<String, KrippendorffAlpha.Sums>> b) {
        Map<String, Map<String, KrippendorffAlpha.Sums>> out = new TreeMap<>();
        for (var part : List.of(a, b)) {
            part.forEach((scope, panels) -> panels.forEach((panel, sums) ->
                    out.computeIfAbsent(scope, k -> new TreeMap<>()).merge(panel, sums, KrippendorffAlpha.Sums::plus)));
        }
        return out;
    }

    /** Records the run's sums (settlement's transaction). */
    public static void insert(Handle h, UUID runId, Map<String, Map<String, KrippendorffAlpha.Sums>> byScope) {
        var batch = h.prepareBatch("INSERT INTO run_agreement (run_id, scope, evaluator, n, sum_scores, sum_squares,"
                + " disagreement) VALUES (:r, :s, :e, :n, :sum, :q, :w)");
        int rows = 0;
        for (var scope : byScope.entrySet()) {
            for (var panel : scope.getValue().entrySet()) {
                KrippendorffAlpha.Sums x = panel.getValue();
                batch.bind("r", runId)
                        .bind("s", scope.getKey())
                        .bind("e", panel.getKey())
                        .bind("n", x.n())
                        .bind("sum", x.sum())
                        .bind("q", x.sumOfSquares())
                        .bind("w", x.disagreement())
                        .add();
                rows++;
            }
        }
        if (rows > 0) {
            batch.execute();
        }
    }

    /** The recorded sums; empty for runs that recorded none. */
    public static Map<String, Map<String, KrippendorffAlpha.Sums>> recorded(Handle h, UUID runId) {
        Map<String, Map<String, KrippendorffAlpha.Sums>> out = new TreeMap<>();
        h.createQuery("SELECT scope, evaluator, n, sum_scores, sum_squares, disagreement FROM run_agreement"
                        + " WHERE run_id = :r")
                .bind("r", runId)
                .mapToMap()
                .forEach(row -> out.computeIfAbsent((String) row.get("scope"), k -> new TreeMap<>())
                        .put(
                                (String) row.get("evaluator"),
                                sums(
                                        ((Number) row.get("n")).longValue(),
                                        (BigDecimal) row.get("sum_scores"),
                                        (BigDecimal) row.get("sum_squares"),
                                        (BigDecimal) row.get("disagreement"),
                                        runId)));
        return out;
    }

    private static KrippendorffAlpha.Sums sums(long n, BigDecimal s, BigDecimal q, BigDecimal w, UUID runId) {
        try {
            return new KrippendorffAlpha.Sums(n, s, q, w);
        } catch (IllegalArgumentException e) {
            throw new DamagedException("run " + runId + ": impossible agreement sums (" + e.getMessage() + ")", e);
        }
    }

    /** Removes the settled sums when {@code vigilo run rerun-errors} reopens the run; the next settlement records them. */
    public static void clearForRerun(Handle h, UUID runId) {
        h.createUpdate("DELETE FROM run_agreement WHERE run_id = :r")
                .bind("r", runId)
                .execute();
    }
}
