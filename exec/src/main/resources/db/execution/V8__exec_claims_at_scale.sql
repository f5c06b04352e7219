-- Claims at scale (docs/execution.md, "Claims at scale"). A claim reads the claimable index (run, chunk order) from
-- the run's first entry and stops at the first claimable chunk. The entries a chunk leaves behind as it is claimed and
-- completed (its state is in the index's predicate, so those updates are never HOT) stay there, dead, until the
-- table is vacuumed, and they lie exactly where every claim starts reading. With the default thresholds (20% of the
-- table) a run of 10,000 chunks let about 2,000 of them pile up before a vacuum, and the pile grows with the run:
-- vacuum this table after every 1,000 changed rows instead, without the cost-based delay (its pages are few and
-- hot), so the dead entries a claim steps over stay bounded whatever the run's size. The free space left on each
-- page lets a lease renewal (only lease_expires_at changes) be a HOT update that adds no index entry.
ALTER TABLE exec_chunks SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 10000,
    autovacuum_vacuum_cost_delay = 0,
    fillfactor = 90
);
