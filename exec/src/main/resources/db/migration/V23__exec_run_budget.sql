-- A run's hard budget (docs/execution.md, "Budget"). run_budgets: the limits in force (the frozen profile's budget,
-- copied at admission; raised by `vigilo run resume --budget-usd|--budget-tokens`; NULL = that dimension has no
-- limit) and what grants that ended have spent. run_budget_grants: the part of the budget each live worker holds to
-- draw its calls from locally (granted), with the usage of its settled calls as it last published it (used) and the
-- grant's expiry (renewed by the worker's heartbeat). While a grant lives, all of it counts against the budget; a
-- grant released by its worker adds its used part to spent; an expired grant (its worker died) adds all of it
-- (greatest of granted and used: its calls in flight may have been answered). Owned by exec's record.BudgetTable.
CREATE TABLE run_budgets (
    run_id uuid PRIMARY KEY REFERENCES runs (run_id),
    max_cost_usd numeric CHECK (max_cost_usd > 0),
    max_tokens bigint CHECK (max_tokens > 0),
    spent_cost_usd numeric NOT NULL DEFAULT 0 CHECK (spent_cost_usd >= 0),
    spent_tokens bigint NOT NULL DEFAULT 0 CHECK (spent_tokens >= 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (max_cost_usd IS NOT NULL OR max_tokens IS NOT NULL)
);

CREATE TABLE run_budget_grants (
    run_id uuid NOT NULL REFERENCES run_budgets (run_id),
    worker_id uuid NOT NULL,
    granted_cost_usd numeric NOT NULL CHECK (granted_cost_usd >= 0),
    granted_tokens bigint NOT NULL CHECK (granted_tokens >= 0),
    used_cost_usd numeric NOT NULL DEFAULT 0 CHECK (used_cost_usd >= 0),
    used_tokens bigint NOT NULL DEFAULT 0 CHECK (used_tokens >= 0),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (run_id, worker_id)
);
