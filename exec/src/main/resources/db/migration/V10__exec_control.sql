-- Execution records in the control database (docs/execution.md, "Control records"). Nothing here is per case: at
-- most 128 route rows and 64 gate rows per run.

-- What execution records beside the run statuses V3 admits: the verdict of a settled run, the reason of a failed
-- one (admission found an immutable conflict, or a chunk could not be executed), and when it ended.
ALTER TABLE runs
    ADD COLUMN verdict        text CHECK (verdict IN ('passed', 'failed')),
    ADD COLUMN failure_reason text,
    ADD COLUMN finished_at    timestamptz,
    ADD CONSTRAINT runs_verdict_settled CHECK ((verdict IS NOT NULL) = (status = 'settled'));

-- Execution databases this control database knows, by alias. The connection settings live in the execution
-- configuration (never credentials in SQL); the state is the mutable serviceability every bounded operation reads:
-- active placements take new work, draining ones only replay metadata already admitted.
CREATE TABLE exec_placements (
    alias         text        PRIMARY KEY CHECK (alias ~ '^[a-z][a-z0-9_-]{0,62}$'),
    state         text        NOT NULL CHECK (state IN ('active', 'draining')),
    -- The database's identity (system identifier, database name, schema) recorded when the alias was first seen: an
    -- alias re-pointed at another database is refused instead of silently splitting a run's records.
    binding       text        NOT NULL,
    registered_at timestamptz NOT NULL DEFAULT now()
);

-- The shared shard fence and route of each used shard of a run. Admission locks these rows FOR SHARE in ascending
-- shard order before its local writes; cancellation and shard moves lock them FOR UPDATE, so a tombstone or a move
-- is never missed by a concurrent admission page.
CREATE TABLE exec_shard_routes (
    run_id          uuid    NOT NULL REFERENCES runs (run_id),
    shard           integer NOT NULL CHECK (shard BETWEEN 0 AND 127),
    placement       text    NOT NULL REFERENCES exec_placements (alias),
    state           text    NOT NULL CHECK (state IN ('seeding', 'active', 'moving', 'tombstoned')),
    -- Increments on every move; workers and settlement read a shard's records only from its current placement.
    route_epoch     bigint  NOT NULL DEFAULT 1 CHECK (route_epoch >= 1),
    -- Chunks of the shard workers may claim (its first N by chunk order); published at activation, null before.
    dispatch_cursor bigint  CHECK (dispatch_cursor >= 0),
    PRIMARY KEY (run_id, shard)
);

-- The settled verdict per gate (written once, in the settlement transaction).
CREATE TABLE run_gate_results (
    run_id        uuid             NOT NULL REFERENCES runs (run_id),
    gate_index    integer          NOT NULL CHECK (gate_index BETWEEN 0 AND 63),
    name          text             NOT NULL,
    planned       bigint           NOT NULL CHECK (planned >= 0),
    passed        bigint           NOT NULL CHECK (passed >= 0),
    failed        bigint           NOT NULL CHECK (failed >= 0),
    errored       bigint           NOT NULL CHECK (errored >= 0),
    min_pass_rate double precision NOT NULL,
    passed_gate   boolean          NOT NULL,
    PRIMARY KEY (run_id, gate_index),
    CHECK (passed + failed + errored <= planned)
);
