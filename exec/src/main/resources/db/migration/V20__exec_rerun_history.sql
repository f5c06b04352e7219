-- Rerun errors (docs/execution.md, "Rerun errors"). `vigilo run rerun-errors` reopens a settled or failed run to
-- execute again only its errored cases (or epochs); before it reopens the run it moves the run's settled outcome here,
-- one row per earlier settlement ("generation", 1 for the first), so the history stays readable and `vigilo verify`
-- can recompute every earlier gate table from the earlier receipts the later ones reference. Written only by exec's
-- record.RerunHistory, in the reopening transaction; never updated.
CREATE TABLE run_rerun_history (
    run_id         uuid        NOT NULL REFERENCES runs (run_id),
    generation     integer     NOT NULL CHECK (generation >= 1),
    -- The settlement this row keeps: the run's status, verdict and failure reason then (the states are runs.status's).
    status         text        NOT NULL CHECK (status IN ('settled', 'failed')),
    verdict        text        CHECK (verdict IN ('passed', 'failed', 'inconclusive')),
    failure_reason text,
    finished_at    timestamptz,
    reopened_at    timestamptz NOT NULL DEFAULT now(),
    -- The gate table then, in gate order: [{"name", "planned", "passed", "failed", "errored", "decision"}].
    gates          jsonb       NOT NULL,
    -- What the reopening queued again: {"chunks": n, "cases": n, "by_type": {"<error type>": [{"ordinal", "id",
    -- "epochs": [..]}, ...]}} (the failed chunks' cases under "chunk_failed").
    rerun          jsonb       NOT NULL,
    PRIMARY KEY (run_id, generation),
    CHECK ((verdict IS NOT NULL) = (status = 'settled'))
);
