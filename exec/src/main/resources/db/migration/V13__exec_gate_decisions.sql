-- Decisions on confidence bounds (docs/execution.md, "Statistics"). A settled run's verdict may be inconclusive (no
-- gate failed and a gate deciding on its interval could not decide); each gate row records how it decided, at which
-- confidence, what it decided and the interval it decided on. Rows settled before this migration keep NULL in the
-- new figures: they decided on the point rate at 0.95 (the column defaults), their decision is their passed_gate,
-- and readers recompute their interval from the counts.
ALTER TABLE runs DROP CONSTRAINT runs_verdict_check;
ALTER TABLE runs ADD CONSTRAINT runs_verdict_check CHECK (verdict IN ('passed', 'failed', 'inconclusive'));

ALTER TABLE run_gate_results
    ADD COLUMN decide     text             NOT NULL DEFAULT 'point' CHECK (decide IN ('point', 'bound')),
    ADD COLUMN confidence double precision NOT NULL DEFAULT 0.95 CHECK (confidence BETWEEN 0.5 AND 0.999),
    ADD COLUMN decision   text             CHECK (decision IN ('passed', 'failed', 'inconclusive')),
    ADD COLUMN stderr     double precision CHECK (stderr >= 0),
    ADD COLUMN ci_low     double precision CHECK (ci_low BETWEEN 0 AND 1),
    ADD COLUMN ci_high    double precision CHECK (ci_high BETWEEN 0 AND 1),
    ADD CONSTRAINT run_gate_results_decision_passed CHECK (decision IS NULL OR (decision = 'passed') = passed_gate),
    ADD CONSTRAINT run_gate_results_point_decides CHECK (decide = 'bound' OR decision IS DISTINCT FROM 'inconclusive'),
    ADD CONSTRAINT run_gate_results_interval CHECK ((decision IS NULL) = (ci_low IS NULL)
        AND (ci_low IS NULL) = (ci_high IS NULL) AND (ci_low IS NULL) = (stderr IS NULL) AND ci_low <= ci_high);
