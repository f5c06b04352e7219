-- Rerun errors (docs/execution.md, "Rerun errors"). A chunk queued again by `vigilo run rerun-errors` records the
-- settlement generation it executes for and the receipt it was done with before (its previous receipt): the worker
-- executes again only the errored cases (or epochs) of that receipt, carries the others forward, and writes a new
-- receipt (version 6) that references it. A failed chunk queued again whole has a generation and no previous receipt.
-- Both stay after the completion (the new receipt names them too); NULL for chunks never queued again.
ALTER TABLE exec_chunks ADD COLUMN rerun_generation integer CHECK (rerun_generation >= 2);
ALTER TABLE exec_chunks ADD COLUMN previous_receipt_key text;
ALTER TABLE exec_chunks ADD COLUMN previous_receipt_length bigint;
ALTER TABLE exec_chunks ADD COLUMN previous_receipt_sha256 text;
ALTER TABLE exec_chunks ADD CONSTRAINT exec_chunks_previous_receipt
    CHECK ((previous_receipt_key IS NULL) = (previous_receipt_sha256 IS NULL)
           AND (previous_receipt_key IS NULL) = (previous_receipt_length IS NULL)
           AND (previous_receipt_key IS NULL OR rerun_generation IS NOT NULL));
