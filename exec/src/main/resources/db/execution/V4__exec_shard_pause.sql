-- Pause (docs/execution.md, "Pause and resume"): while a run is paused its shard rows here say so, and claims skip
-- them at once, whatever a worker's cached list of dispatchable runs says. Renewals and completions of chunks already
-- held are unaffected (the shard stays open): a paused run's held chunks finish.
ALTER TABLE exec_run_shards ADD COLUMN paused boolean NOT NULL DEFAULT false;
