-- Every run status of dev.vigilo.plan.RunState, execution's included: running, settled (its verdict is recorded
-- beside it) and failed (its reason is recorded beside it) join creating, pending and cancelled.
ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check
    CHECK (status IN ('creating', 'pending', 'running', 'settled', 'cancelled', 'failed'));
