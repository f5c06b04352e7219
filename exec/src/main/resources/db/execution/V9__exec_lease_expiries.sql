-- Chunks requeued after a lease expiry (docs/execution.md, "Status"; `run status` shows them as
-- chunks_requeued_after_expiry). A claim that takes over a leased row (its lease expired, or a dead holder's lease was
-- ended by LeaseHolders) adds one: the previous holder's work on the chunk is lost and the chunk runs again. A worker's
-- own give-back (queued, no owner) does not count. Nothing else reads the column; it is per chunk, so the status sums
-- it with the other chunk counts in one aggregate.
ALTER TABLE exec_chunks ADD COLUMN lease_expiries integer NOT NULL DEFAULT 0 CHECK (lease_expiries >= 0);
