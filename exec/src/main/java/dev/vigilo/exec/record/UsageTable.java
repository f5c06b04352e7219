package dev.vigilo.exec.record;

import dev.vigilo.llm.Pricing;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * The one owner of {@code run_usage} (control migration V15): a settled run's usage per scope, role and model,
 * inserted by settlement in its transaction and read by status, the dashboard and {@code vigilo verify}.
 */
public final class UsageTable {
    private UsageTable() {}

    /**
     * Inserts the run's usage per scope (settlement's transaction); scopes without calls have no rows (a run whose
     * agent calls no model records none: its usage is read from its chunk rows).
     */
    public static void insert(Handle h, UUID runId, Map<String, List<Receipt.ModelUsage>> byScope) {
        var batch = h.prepareBatch("INSERT INTO run_usage (run_id, scope, role, model, calls, input_tokens,"
                + " cached_input_tokens, output_tokens, cost_usd) VALUES (:r, :s, :role, :m, :c, :i, :ci, :o, :cost)");
        int rows = 0;
        for (var e : byScope.entrySet()) {
            for (Receipt.ModelUsage m : e.getValue()) {
                batch.bind("r", runId)
                        .bind("s", e.getKey())
                        .bind("role", m.role().wire)
                        .bind("m", m.model())
                        .bind("c", m.calls())
                        .bind("i", m.inputTokens())
                        .bind("ci", m.cachedInputTokens())
                        .bind("o", m.outputTokens())
                        .bindByType("cost", m.costUsd().orElse(null), BigDecimal.class)
                        .add();
                rows++;
            }
        }
        if (rows > 0) {
            batch.execute();
        }
    }

    /** The recorded usage per scope, each scope's models in role then model order; empty when none is recorded. */
    public static Map<String, List<Receipt.ModelUsage>> read(Handle h, UUID runId) {
        Map<String, Map<String, Receipt.ModelUsage>> out = new TreeMap<>();
        h.createQuery("SELECT scope, role, model, calls, input_tokens, cached_input_tokens, output_tokens, cost_usd"
                        + " FROM run_usage WHERE run_id = :r")
                .bind("r", runId)
                .map((rs, ctx) -> {
                    BigDecimal cost = rs.getBigDecimal("cost_usd");
                    Receipt.ModelUsage m = UsageTallies.model(
                            rs.getString("role") + "/" + rs.getString("model"),
                            rs.getLong("calls"),
                            rs.getLong("input_tokens"),
                            rs.getLong("cached_input_tokens"),
                            rs.getLong("output_tokens"),
                            Optional.ofNullable(cost).map(Pricing::plain));
                    out.computeIfAbsent(rs.getString("scope"), k -> new TreeMap<>())
                            .put(m.key(), m);
                    return m;
                })
                .list();
        Map<String, List<Receipt.ModelUsage>> result = new TreeMap<>();
        out.forEach((s, models) -> result.put(s, new ArrayList<>(models.values())));
        return result;
    }

    /**
     * Removes the settled sums when {@code vigilo run rerun-errors} reopens the run: the next settlement records the
     * sums of the new receipts, which count the replaced executions' calls too ({@code superseded_usage}).
     */
    public static void clearForRerun(Handle h, UUID runId) {
        h.createUpdate("DELETE FROM run_usage WHERE run_id = :r")
                .bind("r", runId)
                .execute();
    }
}
