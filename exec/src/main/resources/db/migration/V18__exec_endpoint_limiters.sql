-- Fleet rate limits and circuit breakers (docs/execution.md, "Fleet rate limit", "Circuit breaker"). One row per
-- limiter key (the sha256 of an endpoint's url, model and api-key variable name: never a key's value), shared by
-- every worker process and every run naming that endpoint. Workers lease permit batches from its token bucket in one
-- short transaction (the row locked), report how their calls ended, and read the circuit back. Owned by exec's
-- record.LimiterTable; written only by workers, read by status, the dashboard and /metrics.
CREATE TABLE endpoint_limiters (
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

-- The in-flight slots (max_in_flight) each worker process holds of a limiter; a crashed process's slots return when
-- its row expires (it renews them every second while it holds any).
CREATE TABLE endpoint_limiter_holders (
    limiter_key text NOT NULL REFERENCES endpoint_limiters (limiter_key) ON DELETE CASCADE,
    holder uuid NOT NULL,
    in_flight integer NOT NULL CHECK (in_flight >= 0),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (limiter_key, holder)
);

-- Which limiters a run's endpoints use (at: agent, evaluators.NAME, evaluators.NAME.judges.JUDGE), recorded by the
-- first worker that builds the run's agent, for status.
CREATE TABLE run_endpoint_limiters (
    run_id uuid NOT NULL REFERENCES runs (run_id),
    at text NOT NULL,
    limiter_key text NOT NULL REFERENCES endpoint_limiters (limiter_key),
    PRIMARY KEY (run_id, at)
);
