-- Who holds a run's creation lease (docs/run-preparation.md, "Authority and recovery"): the creator or admitter
-- process that claimed it, by host name, pid and start time, so that a repeat on the same host takes over at once
-- the lease of a holder that no longer runs instead of waiting for it to expire. The columns describe the claim of
-- creation_holder_owner only: when that differs from creation_owner (a claim by a version before this migration, which
-- does not write them), they are ignored and the lease is waited out as before.
ALTER TABLE runs
    ADD COLUMN creation_holder_owner    uuid,
    ADD COLUMN creation_holder_host     text,
    ADD COLUMN creation_holder_pid      bigint CHECK (creation_holder_pid > 0),
    ADD COLUMN creation_holder_start_ms bigint;
