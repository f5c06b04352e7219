-- Who holds chunk leases (docs/execution.md, "Resume after a kill"): one row per worker process per execution
-- database, keyed by the lease owner its claims write into exec_chunks.lease_owner, with the process's pid and start
-- time and the identity of the pid space it runs in (LocalHost.processNamespace: boot id and pid namespace). A worker
-- of the same pid space whose refresh finds a holder that no longer runs (pid gone, a zombie, or another start time:
-- a recycled pid) ends that holder's leases at once instead of waiting for them to expire; a worker of any other pid
-- space (another machine, another container) cannot judge the process and waits for the expiry as before. Nothing
-- here is per chunk or per case: a row lives as long as its worker (removed at its clean stop, by the worker that
-- finds it dead, or once it has held nothing and not been refreshed for a day).
CREATE TABLE exec_lease_holders (
    owner        uuid        PRIMARY KEY,
    -- For messages only: the judgement compares pid_space.
    host_name    text,
    pid_space    text,
    pid          bigint      NOT NULL CHECK (pid > 0),
    -- Process start in milliseconds since the epoch, NULL where the platform did not report it.
    start_ms     bigint,
    refreshed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Refreshes look for the holders of their own pid space.
CREATE INDEX exec_lease_holders_pid_space ON exec_lease_holders (pid_space);
