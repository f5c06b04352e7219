-- Epochs (docs/execution.md, "Statistics"). A gate of a run of n > 1 epochs records, with its counts, its epoch pass
-- histogram: element c + 1 counts the gate's executed cases that did not error with c of their n epochs passing it
-- (so its elements add up to passed + failed; settlement and `vigilo verify` check that), from which pass@k for
-- k = 1..n is computed. NULL for a run of one epoch and for every row settled before this migration.
ALTER TABLE run_gate_results
    ADD COLUMN epoch_passes bigint[] CHECK (epoch_passes IS NULL OR (cardinality(epoch_passes) BETWEEN 3 AND 101
        AND array_position(epoch_passes, NULL) IS NULL));
