-- The fleet module's tables (docs/execution.md, "Fleet rate limit"; docs/datagen.md, "Fleet limits and budget").
--
-- endpoint_limiters and endpoint_limiter_holders were created by exec's V18 before the fleet limiter moved into its
-- own module, which exec and datagen share; Flyway's history keeps V18 where it was applied, so this migration only
-- creates them where V18 did not run (a process built without exec, such as datagen's tests): IF NOT EXISTS, the same
-- definitions. Every Vigilo binary (the CLI, the server, the benchmarks) ships exec too, so V18 always runs first on
-- a database they create. Written only by fleet's LimiterTable.
-- Where V18 did run, IF NOT EXISTS makes PostgreSQL send a notice per table, which Flyway logs as a warning on every
-- new database: this transaction does not report notices.
SET LOCAL client_min_messages = warning;
CREATE TABLE IF NOT EXISTS endpoint_limiters (
    limiter_key text PRIMARY KEY,
    endpoint text NOT NULL,
    requests_per_minute integer CHECK (requests_per_minute > 0),
    tokens_per_minute integer CHECK (tokens_per_minute > 0),
    max_in_flight integer CHECK (max_in_flight > 0),
    -- Adaptive rate: the fraction of the configured rates the fleet uses now, and why it last changed.
    rate_factor double precision NOT NULL CHECK (rate_factor > 0 AND rate_factor <= 1),
    rate_reason text NOT NULL,
    rate_changed_at timestamptz NOT NULL,
    latency_baseline_ms double precision,
    -- The token buckets: permits left at refilled_at (tokens may be negative: a debt of answers larger than estimated).
    request_permits double precision NOT NULL,
    token_permits double precision NOT NULL,
    refilled_at timestamptz NOT NULL,
    paused_until timestamptz,
    -- The circuit breaker.
    circuit text NOT NULL CHECK (circuit IN ('closed', 'open', 'half_open')),
    breaker_failures integer NOT NULL CHECK (breaker_failures > 0),
    cool_down_seconds integer NOT NULL CHECK (cool_down_seconds > 0),
    consecutive_failures integer NOT NULL CHECK (consecutive_failures >= 0),
    circuit_since timestamptz NOT NULL,
    circuit_reason text NOT NULL,
    open_until timestamptz,
    probe_holder uuid,
    probe_until timestamptz,
    updated_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS endpoint_limiter_holders (
    limiter_key text NOT NULL REFERENCES endpoint_limiters (limiter_key) ON DELETE CASCADE,
    holder uuid NOT NULL,
    in_flight integer NOT NULL CHECK (in_flight >= 0),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (limiter_key, holder)
);

-- Cost budgets shared by every process spending from them (datagen's `budget: {max_cost}`, one row per experiment):
-- a call is admitted only while charged < max_cost, and charges its reservation (an upper bound of its cost) at once
-- in the same transaction, the row locked; when it ends the reservation is replaced by what its usage cost. So
-- charged = settled + the reservations of calls not settled yet (in flight, or lost with a process that died: those
-- stay charged whole, as the endpoint may have answered them). Written only by fleet's BudgetTable.
CREATE TABLE fleet_budgets (
    budget_key text PRIMARY KEY,
    -- What the key stands for, for people (datagen: durable root, pipeline, experiment).
    scope text NOT NULL,
    -- The limit of the last process that admitted a call (a rerun with a larger budget raises it).
    max_cost numeric NOT NULL CHECK (max_cost >= 0),
    charged numeric NOT NULL,
    settled numeric NOT NULL,
    calls bigint NOT NULL,
    updated_at timestamptz NOT NULL
);
