package dev.vigilo.exec.record;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.DatabaseErrors;
import dev.vigilo.exec.UsageSummary;
import dev.vigilo.llm.Pricing;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * Usage as chunk rows record it and as status and settlement sum it (docs/execution.md, "Usage and cost"): the one
 * encoding of a chunk's {@code usage} column ({@link #json}), the aggregate SQL over done chunk rows ({@link #read}),
 * and the one summary of model usage ({@link #summary}).
 *
 * <p>A chunk's column: {@code {"<scope>": {"<role>/<model>": [calls, input, cached input, output, "cost" | null]}}},
 * scope {@link Receipt#ALL_CASES} or a gate's name. Role and model are split at the first {@code /} (roles have
 * none; models may).
 */
public final class UsageTallies {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private UsageTallies() {}

    /** The column value of a chunk's usage per scope. */
    public static String json(Map<String, Receipt.Usage> byScope) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        byScope.forEach((scope, usage) -> {
            ObjectNode s = root.putObject(scope);
            for (Receipt.ModelUsage m : usage.models()) {
                ArrayNode a = s.putArray(m.role().wire + "/" + m.model());
                a.add(m.calls()).add(m.inputTokens()).add(m.cachedInputTokens()).add(m.outputTokens());
                if (m.costUsd().isPresent()) {
                    a.add(Pricing.text(m.costUsd().get()));
                } else {
                    a.addNull();
                }
            }
        });
        try {
            return MAPPER.writeValueAsString(root);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The usage of the done chunks of {@code shards}, summed per scope by aggregate SQL, each scope's models in role
     * then model order; chunks without usage (receipts before version 4) add nothing. When some chunk records usage,
     * {@link Receipt#ALL_CASES} is present (an empty list when no model was called); with none it is absent.
     *
     * @throws DamagedException when a row's usage is not the documented encoding
     */
    public static Map<String, List<Receipt.ModelUsage>> read(Handle h, UUID runId, List<Integer> shards) {
        Map<String, Map<String, Receipt.ModelUsage>> out = new TreeMap<>();
        try {
            h.createQuery("SELECT s.key AS scope, m.key AS rm, sum((m.value->>0)::bigint) AS calls,"
                            + " sum((m.value->>1)::bigint) AS input, sum((m.value->>2)::bigint) AS cached,"
                            + " sum((m.value->>3)::bigint) AS output, sum((m.value->>4)::numeric) AS cost,"
                            + " bool_or(m.value->>4 IS NULL) AS unpriced"
                            + " FROM exec_chunks c CROSS JOIN LATERAL jsonb_each(c.usage) AS s(key, value)"
                            + " CROSS JOIN LATERAL jsonb_each(s.value) AS m(key, value)"
                            + " WHERE c.run_id = :r AND c.shard = ANY(:s) AND c.state = 'done' AND c.usage IS NOT NULL"
                            + " GROUP BY s.key, m.key")
                    .bind("r", runId)
                    .bindArray("s", Integer.class, shards)
                    .mapToMap()
                    .forEach(row -> {
                        Receipt.ModelUsage m = model(
                                (String) row.get("rm"),
                                num(row.get("calls")),
                                num(row.get("input")),
                                num(row.get("cached")),
                                num(row.get("output")),
                                Boolean.TRUE.equals(row.get("unpriced"))
                                        ? Optional.empty()
                                        : Optional.of(Pricing.plain((BigDecimal) row.get("cost"))));
                        out.computeIfAbsent((String) row.get("scope"), k -> new TreeMap<>())
                                .put(m.key(), m);
                    });
        } catch (org.jdbi.v3.core.statement.StatementException e) {
            if (DatabaseErrors.isUnavailable(e)) {
                throw e;
            }
            // A cast that fails on a row's values: the row is not what a completion wrote.
            throw new DamagedException(
                    "run " + runId + ": a chunk row's usage cannot be summed (" + DatabaseErrors.detail(e)
                            + "); the execution database's chunk rows were altered",
                    e);
        }
        Map<String, List<Receipt.ModelUsage>> result = new TreeMap<>();
        out.forEach((scope, models) -> result.put(scope, List.copyOf(models.values())));
        if (!result.containsKey(Receipt.ALL_CASES)
                && h.createQuery("SELECT EXISTS (SELECT 1 FROM exec_chunks WHERE run_id = :r AND shard = ANY(:s)"
                                + " AND state = 'done' AND usage IS NOT NULL)")
                        .bind("r", runId)
                        .bindArray("s", Integer.class, shards)
                        .mapTo(Boolean.class)
                        .one()) {
            // Usage is recorded, and no case called a model (a command agent): known to be none, not unknown.
            result.put(Receipt.ALL_CASES, List.of());
        }
        return result;
    }

    /** {@code byScope} without the scopes of no calls (as {@link UsageTable} records it). */
    public static Map<String, List<Receipt.ModelUsage>> withCalls(Map<String, List<Receipt.ModelUsage>> byScope) {
        Map<String, List<Receipt.ModelUsage>> out = new TreeMap<>();
        byScope.forEach((scope, models) -> {
            if (!models.isEmpty()) {
                out.put(scope, models);
            }
        });
        return out;
    }

    /** {@code a} and {@code b} added per scope and model (sums over several execution databases). */
    public static Map<String, List<Receipt.ModelUsage>> plus(
            Map<String, List<Receipt.ModelUsage>> a, Map<String, List<Receipt.ModelUsage>> b) {
        Map<String, Map<String, Receipt.ModelUsage>> sum = new TreeMap<>();
        for (Map<String, List<Receipt.ModelUsage>> part : List.of(a, b)) {
            part.forEach((scope, models) -> {
                Map<String, Receipt.ModelUsage> s = sum.computeIfAbsent(scope, k -> new TreeMap<>());
                models.forEach(m -> s.merge(m.key(), m, Receipt.ModelUsage::plus));
            });
        }
        Map<String, List<Receipt.ModelUsage>> out = new TreeMap<>();
        sum.forEach((scope, models) -> out.put(scope, List.copyOf(models.values())));
        return out;
    }

    /** The summary of some model usage: totals, per role, the models without a price. */
    public static UsageSummary summary(List<Receipt.ModelUsage> models) {
        Set<String> unpriced = new TreeSet<>();
        models.stream().filter(m -> m.costUsd().isEmpty()).forEach(m -> unpriced.add(m.model()));
        return new UsageSummary(
                part(models),
                part(models.stream().filter(m -> m.role() == Receipt.Role.AGENT).toList()),
                part(models.stream().filter(m -> m.role() == Receipt.Role.JUDGE).toList()),
                new ArrayList<>(unpriced));
    }

    private static UsageSummary.Part part(List<Receipt.ModelUsage> models) {
        long calls = 0;
        long input = 0;
        long cached = 0;
        long output = 0;
        Optional<BigDecimal> cost = Optional.of(BigDecimal.ZERO);
        for (Receipt.ModelUsage m : models) {
            calls += m.calls();
            input += m.inputTokens();
            cached += m.cachedInputTokens();
            output += m.outputTokens();
            cost = cost.isPresent() && m.costUsd().isPresent()
                    ? Optional.of(cost.get().add(m.costUsd().get()))
                    : Optional.empty();
        }
        return new UsageSummary.Part(calls, input, cached, output, cost.map(Pricing::plain));
    }

    /** A model usage from its row key ({@code role/model}) and sums. */
    static Receipt.ModelUsage model(
            String roleModel, long calls, long input, long cached, long output, Optional<BigDecimal> cost) {
        int slash = roleModel.indexOf('/');
        if (slash < 0) {
            throw new DamagedException("usage key \"" + roleModel + "\" is not role/model");
        }
        try {
            return new Receipt.ModelUsage(
                    Receipt.Role.of(roleModel.substring(0, slash)),
                    roleModel.substring(slash + 1),
                    calls,
                    input,
                    cached,
                    output,
                    cost);
        } catch (IllegalArgumentException e) {
            throw new DamagedException("usage of \"" + roleModel + "\" is impossible: " + e.getMessage(), e);
        }
    }

    private static long num(Object v) {
        return v == null ? 0 : ((Number) v).longValue();
    }
}
