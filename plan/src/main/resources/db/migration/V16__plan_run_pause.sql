-- Pause and resume (docs/execution.md, "Pause and resume"). A paused run is still executing (its held chunks finish
-- and complete, and it settles once every chunk is done) but not dispatchable: no worker claims its chunks. Beside
-- the state, why it was paused (for people: 'by vigilo run pause', later 'budget') and the state resume returns it
-- to (pending when no chunk was ever claimed, else running). Written only by dev.vigilo.plan.RunLifecycle.
ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check
    CHECK (status IN ('creating', 'pending', 'running', 'paused', 'settled', 'cancelled', 'failed'));
ALTER TABLE runs ADD COLUMN pause_reason text;
ALTER TABLE runs ADD COLUMN paused_from text CHECK (paused_from IN ('pending', 'running'));
ALTER TABLE runs ADD COLUMN paused_at timestamptz;
ALTER TABLE runs ADD CONSTRAINT runs_paused_fields
    CHECK ((status = 'paused') = (pause_reason IS NOT NULL AND paused_from IS NOT NULL AND paused_at IS NOT NULL));
