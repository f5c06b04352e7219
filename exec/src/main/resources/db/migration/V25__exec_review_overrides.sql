-- Human review (docs/execution.md, "Human review"; docs/formats/review-override.md). A reviewer overrides the outcome
-- of one executed case (pass or fail) with a note; each override is one row here and one immutable, content-addressed
-- object in the run's store that the row references (length and SHA-256), so `vigilo verify` can check the row
-- against the object. Append-only: a later override of the same case supersedes the earlier one (which stays), and
-- nothing is ever updated or deleted. Written only by exec's record.ReviewRecords.
CREATE TABLE run_review_overrides (
    run_id           uuid        NOT NULL REFERENCES runs (run_id),
    -- 1, 2, ... per run, in the order the overrides were recorded.
    seq              bigint      NOT NULL CHECK (seq >= 1),
    ordinal          bigint      NOT NULL CHECK (ordinal >= 0),
    case_id          text        NOT NULL,
    outcome          text        NOT NULL CHECK (outcome IN ('pass', 'fail')),
    -- The machine outcome the override overrides (over every gate, as a case page shows it), and the digest of the
    -- case's recorded execution then: a case executed again (`run rerun-errors`) has another digest, so the override
    -- is stale.
    original_outcome text        NOT NULL CHECK (original_outcome IN ('passed', 'failed', 'errored')),
    execution_sha256 text        NOT NULL,
    reviewer         text        NOT NULL,
    note             text        NOT NULL,
    created_at       timestamptz NOT NULL,
    -- The seq of the override of the same case this one supersedes (null for a case's first).
    supersedes       bigint,
    record_key       text        NOT NULL,
    record_length    bigint      NOT NULL,
    record_sha256    text        NOT NULL,
    PRIMARY KEY (run_id, seq),
    UNIQUE (run_id, supersedes)
);

CREATE INDEX run_review_overrides_case ON run_review_overrides (run_id, ordinal, seq);
