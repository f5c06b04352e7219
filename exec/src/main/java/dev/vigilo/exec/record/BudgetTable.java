package dev.vigilo.exec.record;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.exec.ExecutionStatus;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * The one owner of {@code run_budgets} and {@code run_budget_grants} (control migration V23; docs/execution.md,
 * "Budget"). Every method runs on the caller's handle (the caller's transaction); the ones that change what is
 * spent or granted lock the run's budget row {@code FOR UPDATE} first, so grants are decided one at a time per run.
 *
 * <p>The invariant: {@code spent + sum over live grants of greatest(granted, used) <= the limit}, per limited
 * dimension. A worker draws its calls from its grant locally, so the budget is never exceeded as long as each call's
 * reservation (its token estimate) bounds what it spends.
 */
public final class BudgetTable {
    private BudgetTable() {}

    /** Cost and tokens: what is spent, reserved, granted or needed. */
    public record Amount(BigDecimal costUsd, long tokens) {
        public static final Amount ZERO = new Amount(BigDecimal.ZERO, 0);

        public Amount {
            Objects.requireNonNull(costUsd, "costUsd");
        }

        public Amount plus(Amount o) {
            return new Amount(costUsd.add(o.costUsd), tokens + o.tokens);
        }

        public Amount minus(Amount o) {
            return new Amount(costUsd.subtract(o.costUsd), tokens - o.tokens);
        }
    }

    /**
     * A run's budget as recorded: the limits in force (empty: not limited) and the spending.
     *
     * @param spent    what ended grants spent plus what live grants' settled calls used
     * @param reserved what live grants hold beyond their settled use (calls in flight and local headroom)
     */
    public record State(Optional<BigDecimal> maxCostUsd, Optional<Long> maxTokens, Amount spent, Amount reserved) {
        public State {
            Objects.requireNonNull(maxCostUsd, "maxCostUsd");
            Objects.requireNonNull(maxTokens, "maxTokens");
            Objects.requireNonNull(spent, "spent");
            Objects.requireNonNull(reserved, "reserved");
        }

        /** As {@code run status} shows it. */
        public ExecutionStatus.Budget status() {
            return new ExecutionStatus.Budget(
                    maxCostUsd, maxTokens, spent.costUsd(), spent.tokens(), reserved.costUsd(), reserved.tokens());
        }
    }

    /** Budget limits; an empty one is not limited. */
    public record Limits(Optional<BigDecimal> maxCostUsd, Optional<Long> maxTokens) {
        public Limits {
            Objects.requireNonNull(maxCostUsd, "maxCostUsd");
            Objects.requireNonNull(maxTokens, "maxTokens");
        }

        /**
         * The frozen profile's {@code budget} of a run configuration (docs/formats/plan-profile.md); empty without one.
         *
         * @throws DamagedException the frozen budget is not what run create writes
         */
        public static Optional<Limits> frozen(UUID runId, JsonNode configuration) {
            JsonNode b = configuration.path("profile").path("budget");
            if (b.isMissingNode()) {
                return Optional.empty();
            }
            try {
                Optional<BigDecimal> cost = b.has("max_cost_usd")
                        ? Optional.of(new BigDecimal(b.get("max_cost_usd").asText()))
                        : Optional.empty();
                Optional<Long> tokens =
                        b.has("max_tokens") ? Optional.of(b.get("max_tokens").longValue()) : Optional.empty();
                if (cost.isEmpty() && tokens.isEmpty()
                        || cost.isPresent() && cost.get().signum() <= 0
                        || tokens.isPresent() && tokens.get() <= 0) {
                    throw new NumberFormatException("no positive limit");
                }
                return Optional.of(new Limits(cost, tokens));
            } catch (NumberFormatException e) {
                throw new DamagedException("run " + runId + ": the frozen profile's budget is invalid: " + b);
            }
        }
    }

    /** The run's budget row with these limits, unless it exists (admission's activation; a worker's first grant). */
    public static void create(Handle h, UUID runId, Limits limits) {
        h.createUpdate("INSERT INTO run_budgets (run_id, max_cost_usd, max_tokens) VALUES (:r, :c, :t)"
                        + " ON CONFLICT (run_id) DO NOTHING")
                .bind("r", runId)
                .bindByType("c", limits.maxCostUsd().orElse(null), BigDecimal.class)
                .bindByType("t", limits.maxTokens().orElse(null), Long.class)
                .execute();
    }

    /** The run's budget; empty for a run without one. */
    public static Optional<State> read(Handle h, UUID runId) {
        Optional<Map<String, Object>> row = h.createQuery(
                        "SELECT max_cost_usd, max_tokens, spent_cost_usd, spent_tokens"
                                + " FROM run_budgets WHERE run_id = :r")
                .bind("r", runId)
                .mapToMap()
                .findOne();
        if (row.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Object> b = row.get();
        Map<String, Object> g = h.createQuery("SELECT coalesce(sum(used_cost_usd), 0) AS uc,"
                        + " coalesce(sum(used_tokens), 0) AS ut,"
                        + " coalesce(sum(greatest(granted_cost_usd - used_cost_usd, 0)), 0) AS rc,"
                        + " coalesce(sum(greatest(granted_tokens - used_tokens, 0)), 0) AS rt"
                        + " FROM run_budget_grants WHERE run_id = :r")
                .bind("r", runId)
                .mapToMap()
                .one();
        Amount spent = new Amount((BigDecimal) b.get("spent_cost_usd"), ((Number) b.get("spent_tokens")).longValue())
                .plus(new Amount((BigDecimal) g.get("uc"), ((Number) g.get("ut")).longValue()));
        Amount reserved = new Amount((BigDecimal) g.get("rc"), ((Number) g.get("rt")).longValue());
        return Optional.of(new State(
                Optional.ofNullable((BigDecimal) b.get("max_cost_usd")),
                Optional.ofNullable((Number) b.get("max_tokens")).map(Number::longValue),
                spent,
                reserved));
    }

    /**
     * Grows (or takes) {@code worker}'s grant of the run to at least {@code need} and at most {@code need + batch},
     * per limited dimension, and publishes its settled use {@code used}; first folds the run's expired grants of
     * other workers into spent (all of each: greatest of granted and used). Locks the budget row.
     *
     * @return the new grant; empty when the budget cannot cover {@code need} (then only {@code used} is published)
     */
    public static Optional<Amount> grant(
            Handle h, UUID runId, UUID worker, Amount used, Amount need, Amount batch, Duration ttl) {
        Map<String, Object> b = lock(h, runId);
        foldExpired(h, runId, worker);
        b = lock(h, runId);
        Map<String, Object> others = h.createQuery("SELECT coalesce(sum(greatest(granted_cost_usd, used_cost_usd)), 0)"
                        + " AS c, coalesce(sum(greatest(granted_tokens, used_tokens)), 0) AS t"
                        + " FROM run_budget_grants WHERE run_id = :r AND worker_id <> :w")
                .bind("r", runId)
                .bind("w", worker)
                .mapToMap()
                .one();
        BigDecimal maxCost = (BigDecimal) b.get("max_cost_usd");
        Number maxTokens = (Number) b.get("max_tokens");
        BigDecimal grantCost = need.costUsd();
        long grantTokens = need.tokens();
        boolean covered = true;
        if (maxCost != null) {
            BigDecimal available =
                    maxCost.subtract((BigDecimal) b.get("spent_cost_usd")).subtract((BigDecimal) others.get("c"));
            covered = need.costUsd().compareTo(available) <= 0;
            grantCost = need.costUsd().add(batch.costUsd()).min(available);
        }
        if (maxTokens != null) {
            long available = maxTokens.longValue()
                    - ((Number) b.get("spent_tokens")).longValue()
                    - ((Number) others.get("t")).longValue();
            covered = covered && need.tokens() <= available;
            grantTokens = Math.min(need.tokens() + batch.tokens(), available);
        }
        if (!covered) {
            publish(h, runId, worker, used, ttl);
            return Optional.empty();
        }
        Amount granted = new Amount(grantCost.max(BigDecimal.ZERO), Math.max(0, grantTokens));
        h.createUpdate("INSERT INTO run_budget_grants (run_id, worker_id, granted_cost_usd, granted_tokens,"
                        + " used_cost_usd, used_tokens, expires_at) VALUES (:r, :w, :gc, :gt, :uc, :ut,"
                        + " clock_timestamp() + make_interval(secs => :ttl)) ON CONFLICT (run_id, worker_id) DO UPDATE"
                        + " SET granted_cost_usd = :gc, granted_tokens = :gt, used_cost_usd = :uc, used_tokens = :ut,"
                        + " expires_at = excluded.expires_at")
                .bind("r", runId)
                .bind("w", worker)
                .bind("gc", granted.costUsd())
                .bind("gt", granted.tokens())
                .bind("uc", used.costUsd())
                .bind("ut", used.tokens())
                .bind("ttl", (double) ttl.toMillis() / 1000.0)
                .execute();
        return Optional.of(granted);
    }

    /**
     * Publishes {@code worker}'s settled use and renews its grant's expiry (the heartbeat).
     *
     * @return false when the grant is gone (it expired and another worker folded it: all of it was counted as spent)
     */
    public static boolean renew(Handle h, UUID runId, UUID worker, Amount used, Duration ttl) {
        return publish(h, runId, worker, used, ttl);
    }

    /**
     * Ends {@code worker}'s grant: its settled use {@code used} becomes spent, the rest of the grant is free again.
     * Call only with no call of the worker in flight on the run. Also folds expired grants of other workers, as
     * {@link #grant} does. Locks the budget row.
     */
    public static void release(Handle h, UUID runId, UUID worker, Amount used) {
        lock(h, runId);
        foldExpired(h, runId, worker);
        int deleted = h.createUpdate("DELETE FROM run_budget_grants WHERE run_id = :r AND worker_id = :w")
                .bind("r", runId)
                .bind("w", worker)
                .execute();
        if (deleted == 1) {
            addSpent(h, runId, used);
        }
    }

    /**
     * Raises the run's limits (those given) to the new totals ({@code vigilo run resume --budget-usd|--budget-tokens}).
     *
     * @return false when the run has no budget row
     */
    public static boolean raise(Handle h, UUID runId, Optional<BigDecimal> maxCostUsd, Optional<Long> maxTokens) {
        return h.createUpdate("UPDATE run_budgets SET max_cost_usd = coalesce(:c, max_cost_usd),"
                                + " max_tokens = coalesce(:t, max_tokens), updated_at = now() WHERE run_id = :r")
                        .bind("r", runId)
                        .bindByType("c", maxCostUsd.orElse(null), BigDecimal.class)
                        .bindByType("t", maxTokens.orElse(null), Long.class)
                        .execute()
                == 1;
    }

    private static boolean publish(Handle h, UUID runId, UUID worker, Amount used, Duration ttl) {
        return h.createUpdate("UPDATE run_budget_grants SET used_cost_usd = :uc, used_tokens = :ut,"
                                + " expires_at = clock_timestamp() + make_interval(secs => :ttl)"
                                + " WHERE run_id = :r AND worker_id = :w")
                        .bind("r", runId)
                        .bind("w", worker)
                        .bind("uc", used.costUsd())
                        .bind("ut", used.tokens())
                        .bind("ttl", (double) ttl.toMillis() / 1000.0)
                        .execute()
                == 1;
    }

    /** Folds the run's expired grants (workers that died) into spent, each counted whole; never {@code except}'s. */
    private static void foldExpired(Handle h, UUID runId, UUID except) {
        Map<String, Object> folded = h.createQuery("WITH gone AS (DELETE FROM run_budget_grants WHERE run_id = :r"
                        + " AND worker_id <> :w AND expires_at < clock_timestamp()"
                        + " RETURNING greatest(granted_cost_usd, used_cost_usd) AS c, greatest(granted_tokens,"
                        + " used_tokens) AS t) SELECT count(*) AS n, coalesce(sum(c), 0) AS c, coalesce(sum(t), 0) AS t"
                        + " FROM gone")
                .bind("r", runId)
                .bind("w", except)
                .mapToMap()
                .one();
        if (((Number) folded.get("n")).longValue() > 0) {
            addSpent(h, runId, new Amount((BigDecimal) folded.get("c"), ((Number) folded.get("t")).longValue()));
        }
    }

    private static void addSpent(Handle h, UUID runId, Amount a) {
        h.createUpdate("UPDATE run_budgets SET spent_cost_usd = spent_cost_usd + :c, spent_tokens = spent_tokens + :t,"
                        + " updated_at = now() WHERE run_id = :r")
                .bind("r", runId)
                .bind("c", a.costUsd())
                .bind("t", a.tokens())
                .execute();
    }

    private static Map<String, Object> lock(Handle h, UUID runId) {
        return h.createQuery("SELECT max_cost_usd, max_tokens, spent_cost_usd, spent_tokens FROM run_budgets"
                        + " WHERE run_id = :r FOR UPDATE")
                .bind("r", runId)
                .mapToMap()
                .findOne()
                .orElseThrow(() -> new IllegalStateException("run " + runId + " has no budget row"));
    }
}
