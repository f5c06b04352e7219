-- Usage (docs/execution.md, "Usage and cost"). A done chunk whose receipt is of version 4 records, with its tallies,
-- the tokens and cost of its cases' model calls summed per scope and per role and model:
--   {"*": {"agent/<model>": [calls, input_tokens, cached_input_tokens, output_tokens, "<cost_usd>" | null], ...},
--    "<gate>": {...the same over the cases the gate selects...}}
-- Every number adds up over chunks and shards, so status and settlement sum them by aggregate SQL with no row per
-- case; a null cost (a model without a price) stays null in any sum. NULL for chunks of receipts before version 4.
ALTER TABLE exec_chunks ADD COLUMN usage jsonb;
ALTER TABLE exec_chunks ADD CONSTRAINT exec_chunks_usage_done CHECK (usage IS NULL OR state = 'done');

-- Judge agreement (docs/execution.md, "Judge agreement"). A done chunk whose receipt is of version 4 and holds panel
-- results records, per scope and panel, the summable sums of Krippendorff's alpha over its executions' scored votes
-- (stats KrippendorffAlpha.Sums: pairable values, their sum, sum of squares, within-unit disagreement):
--   {"<scope>": {"<panel>": [n, "<sum>", "<sum of squares>", "<disagreement>"]}}
-- Exact decimals as strings, summed as numeric. NULL when the chunk has no panel with two scored votes.
ALTER TABLE exec_chunks ADD COLUMN agreement jsonb;
ALTER TABLE exec_chunks ADD CONSTRAINT exec_chunks_agreement_done CHECK (agreement IS NULL OR state = 'done');
