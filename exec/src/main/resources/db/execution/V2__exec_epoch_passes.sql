-- Epochs (docs/execution.md, "Epochs" and "Statistics"). A chunk of a run of several epochs records, with its tallies,
-- its epoch pass histograms: for gate g (gate order) and 0 <= c <= n epochs, element g * (n + 1) + c + 1 counts the
-- chunk's cases the gate selects, not errored, with c of their n epochs passing it. Integers that add up over chunks
-- and shards, so settlement computes pass@k by aggregate SQL with no row per case. NULL for a run of one epoch and
-- for every chunk done before this migration.
ALTER TABLE exec_chunks ADD COLUMN gate_epoch_passes bigint[];
ALTER TABLE exec_chunks ADD CONSTRAINT exec_chunks_epoch_passes_done
    CHECK (gate_epoch_passes IS NULL OR state = 'done');
