-- An execution database (docs/execution.md, "Execution records"): the scheduling rows and results of the shards
-- placed on it. One row per chunk (at most 100 cases), never one per case; no case payload.

-- This database's identity, drawn once: the control database records it per placement alias, so an alias
-- re-pointed at another database is noticed instead of splitting a run's records.
CREATE TABLE exec_identity (
    database_id uuid    NOT NULL DEFAULT gen_random_uuid(),
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton)
);
INSERT INTO exec_identity DEFAULT VALUES;

-- The common run snapshot: immutable plan references and frozen gate policy, identical in every placement.
CREATE TABLE exec_runs (
    run_id              uuid    PRIMARY KEY,
    snapshot_sha256     text    NOT NULL CHECK (snapshot_sha256 ~ '^[0-9a-f]{64}$'),
    -- The snapshot document itself (plan root, configuration, dataset identity, gate policy) as compact JSON.
    snapshot            text    NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now()
);

-- Per-shard snapshot: the published manifest's totals and hashes and the frozen planned gate counts.
CREATE TABLE exec_run_shards (
    run_id            uuid    NOT NULL REFERENCES exec_runs (run_id),
    shard             integer NOT NULL CHECK (shard BETWEEN 0 AND 127),
    cases             bigint  NOT NULL CHECK (cases > 0),
    chunks            bigint  NOT NULL CHECK (chunks > 0),
    projection_sha256 text    NOT NULL,
    settlement_sha256 text    NOT NULL,
    -- Planned count per gate, in gate order (JSON array of numbers).
    gate_counts       text    NOT NULL,
    -- open: claims and completions allowed; cancelled: the run was cancelled; moved: the shard now lives elsewhere.
    state             text    NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'cancelled', 'moved')),
    route_epoch       bigint  NOT NULL DEFAULT 1,
    PRIMARY KEY (run_id, shard)
);

-- One scheduling row per chunk. The lease generation increments on every claim: a worker's writes carry the
-- generation it claimed with, so a worker whose lease was taken over matches no row.
CREATE TABLE exec_chunks (
    run_id            uuid        NOT NULL,
    chunk_index       bigint      NOT NULL CHECK (chunk_index >= 0),
    shard             integer     NOT NULL,
    -- Position of the chunk within its shard (chunk_index / 128), compared with the shard's dispatch cursor.
    shard_seq         bigint      NOT NULL CHECK (shard_seq >= 0),
    chunk_id          uuid        NOT NULL,
    first_ordinal     bigint      NOT NULL CHECK (first_ordinal >= 0),
    case_count        integer     NOT NULL CHECK (case_count BETWEEN 1 AND 100),
    membership_sha256 text        NOT NULL,
    chunk_key         text        NOT NULL,
    chunk_length      bigint      NOT NULL CHECK (chunk_length > 0),
    chunk_sha256      text        NOT NULL,
    state             text        NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'leased', 'done', 'failed')),
    lease_owner       uuid,
    lease_generation  bigint      NOT NULL DEFAULT 0 CHECK (lease_generation >= 0),
    lease_expires_at  timestamptz,
    attempts          integer     NOT NULL DEFAULT 0,
    not_before        timestamptz,
    last_error        text,
    -- Set once, by the fenced completion: the receipt and its tallies (per gate, in gate order).
    receipt_key       text,
    receipt_length    bigint,
    receipt_sha256    text,
    cases_executed    integer,
    cases_errored     integer,
    gate_passed       bigint[],
    gate_failed       bigint[],
    gate_errored      bigint[],
    finished_at       timestamptz,
    PRIMARY KEY (run_id, chunk_index),
    FOREIGN KEY (run_id, shard) REFERENCES exec_run_shards (run_id, shard),
    CHECK ((state = 'done') = (receipt_key IS NOT NULL)),
    CHECK ((state = 'leased') = (lease_owner IS NOT NULL))
);

-- Claims look for claimable chunks of a run in chunk order.
CREATE INDEX exec_chunks_claimable ON exec_chunks (run_id, chunk_index) WHERE state IN ('queued', 'leased');
