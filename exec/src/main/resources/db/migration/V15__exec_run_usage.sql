-- Usage and cost (docs/execution.md, "Usage and cost"). Settlement records, in its one transaction, the tokens and
-- cost of a run's model calls per scope ('*' for every case, or a gate's name for the cases it selects), role (agent,
-- judge) and model, summed from the chunk rows of receipts of version 4. cost_usd is NULL when the model has no price
-- in the run's pricing (never a silent 0). Owned by exec's record.UsageTable; runs settled before it have no rows.
CREATE TABLE run_usage (
    run_id uuid NOT NULL REFERENCES runs (run_id),
    scope text NOT NULL,
    role text NOT NULL CHECK (role IN ('agent', 'judge')),
    model text NOT NULL,
    calls bigint NOT NULL CHECK (calls > 0),
    input_tokens bigint NOT NULL CHECK (input_tokens >= 0),
    cached_input_tokens bigint NOT NULL CHECK (cached_input_tokens BETWEEN 0 AND input_tokens),
    output_tokens bigint NOT NULL CHECK (output_tokens >= 0),
    cost_usd numeric CHECK (cost_usd >= 0),
    PRIMARY KEY (run_id, scope, role, model)
);

-- Judge agreement: settlement records, per scope and panel evaluator, the sums of Krippendorff's alpha (interval
-- metric) over the run's panel results, summed from the chunk rows; alpha is computed from them when read. Owned by
-- exec's record.AgreementTallies.
CREATE TABLE run_agreement (
    run_id uuid NOT NULL REFERENCES runs (run_id),
    scope text NOT NULL,
    evaluator text NOT NULL,
    n bigint NOT NULL CHECK (n >= 2),
    sum_scores numeric NOT NULL,
    sum_squares numeric NOT NULL CHECK (sum_squares >= 0),
    disagreement numeric NOT NULL CHECK (disagreement >= 0),
    PRIMARY KEY (run_id, scope, evaluator)
);
