-- Resume from partial receipts (docs/execution.md, "Resume from partial receipts"). While a worker holds a chunk it
-- writes its finished case entries in batches as immutable partial receipt objects (vigilo.exec.partial-receipt,
-- docs/formats/exec-partial-receipt.md), each naming its predecessor; the chunk row references the newest of the
-- chain (key, length, SHA-256) and how many case entries the chain holds, set by one update fenced by the lease's
-- owner and generation. A worker that claims the chunk after its holder died reads the chain through this reference,
-- carries its entries forward and executes only the chunk's other cases. One reference per chunk row, nothing per
-- case; cleared when the chunk completes or fails, and when rerun-errors queues it again. NULL when no partial was
-- written.
ALTER TABLE exec_chunks ADD COLUMN partial_key text;
ALTER TABLE exec_chunks ADD COLUMN partial_length bigint;
ALTER TABLE exec_chunks ADD COLUMN partial_sha256 text;
ALTER TABLE exec_chunks ADD COLUMN partial_cases integer CHECK (partial_cases >= 1);
ALTER TABLE exec_chunks ADD CONSTRAINT exec_chunks_partial
    CHECK ((partial_key IS NULL) = (partial_length IS NULL)
           AND (partial_key IS NULL) = (partial_sha256 IS NULL)
           AND (partial_key IS NULL) = (partial_cases IS NULL));
