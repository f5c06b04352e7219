-- Run preparation control records (docs/run-preparation.md, "Control records"). No per-case rows anywhere:
-- run_plan_objects has one row per plan file (a chunk holds up to 100 cases), run_plan_shards at most 128 rows.
CREATE TABLE runs (
    run_id                    uuid        PRIMARY KEY,
    status                    text        NOT NULL CHECK (status IN ('creating', 'pending', 'cancelled')),
    dispatchable              boolean     NOT NULL DEFAULT false,
    -- The creation lease: who may mutate the run's preparation records, until when (database clock).
    creation_owner            uuid,
    creation_lease_expires_at timestamptz,
    created_at                timestamptz NOT NULL DEFAULT now(),
    updated_at                timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE run_plans (
    run_id                  uuid        PRIMARY KEY REFERENCES runs (run_id),
    -- Frozen inputs; a repeated create must match every one of them.
    dataset_upload_id       uuid        NOT NULL REFERENCES dataset_uploads (upload_id),
    dataset_source_sha256   text        NOT NULL,
    dataset_membership_uuid uuid        NOT NULL,
    dataset_case_count      bigint      NOT NULL CHECK (dataset_case_count > 0),
    storage_binding         text        NOT NULL,
    profile_sha256          text        NOT NULL CHECK (profile_sha256 ~ '^[0-9a-f]{64}$'),
    limits                  text        NOT NULL,
    evaluator_artifacts     text        NOT NULL,
    initial_placement       text        NOT NULL,
    plan_format_version     integer     NOT NULL,
    -- Authority and progress.
    plan_generation         bigint      NOT NULL DEFAULT 0 CHECK (plan_generation >= 0),
    plan_status             text        NOT NULL CHECK (plan_status IN ('preparing', 'ready', 'rejected')),
    plan_chunk_cursor       bigint      NOT NULL DEFAULT 0 CHECK (plan_chunk_cursor >= 0),
    expected_chunks         bigint      NOT NULL CHECK (expected_chunks > 0),
    execution_requested     boolean     NOT NULL DEFAULT false,
    -- Admission (a later issue) records its cursor and shard folds here.
    admission_cursor        bigint      NOT NULL DEFAULT 0,
    admission_folds         text,
    -- The published root: the manifest's verified reference, set once, in the publication transaction.
    root_key                text,
    root_length             bigint,
    root_sha256             text,
    rejection               text,
    published_at            timestamptz,
    CHECK (plan_chunk_cursor <= expected_chunks),
    CHECK ((plan_status = 'ready') = (root_key IS NOT NULL))
);

CREATE TABLE run_plan_objects (
    run_id                uuid    NOT NULL REFERENCES run_plans (run_id),
    object_key            text    NOT NULL,
    kind                  text    NOT NULL CHECK (kind IN ('chunk', 'index', 'gate', 'configuration', 'manifest')),
    chunk_index           bigint,
    length                bigint  NOT NULL CHECK (length > 0),
    sha256                text    NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    registered_generation bigint  NOT NULL,
    acknowledged          boolean NOT NULL DEFAULT false,
    PRIMARY KEY (run_id, object_key)
);

CREATE TABLE run_plan_shards (
    run_id            uuid    NOT NULL REFERENCES run_plans (run_id),
    shard             integer NOT NULL CHECK (shard BETWEEN 0 AND 127),
    cases             bigint  NOT NULL CHECK (cases > 0),
    chunks            bigint  NOT NULL CHECK (chunks > 0),
    projection_sha256 text    NOT NULL,
    settlement_sha256 text    NOT NULL,
    -- JSON list of [gate name, planned count] in profile gate order.
    gate_counts       text    NOT NULL,
    placement_alias   text    NOT NULL,
    PRIMARY KEY (run_id, shard)
);
