-- What workers are waiting for (docs/execution.md, "Outages"): one row per worker and service it cannot reach now,
-- written while the outage lasts and deleted when it ends, so that `run status` and the dashboard can say "waiting
-- for the store since ..." about the runs that use it. Advisory: nothing decides anything from these rows. A row whose
-- worker stopped refreshing it (killed while waiting) is ignored after a minute and deleted after an hour.
CREATE TABLE exec_worker_waits (
    worker_id  uuid        NOT NULL,
    -- 'store' (target: the store binding, as run_plans.storage_binding names it) or 'database' (target: the
    -- execution database's alias, as exec_shard_routes.placement names it).
    service    text        NOT NULL CHECK (service IN ('store', 'database')),
    target     text        NOT NULL,
    -- When the worker's first operation failed for this outage (its clock).
    since      timestamptz NOT NULL,
    -- The latest failure's message, one line, credentials masked, at most 500 characters.
    last_error text        NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (worker_id, service, target)
);

CREATE INDEX exec_worker_waits_target ON exec_worker_waits (service, target);
