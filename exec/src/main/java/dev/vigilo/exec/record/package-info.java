/**
 * The durable records exec's rooms share, each class with the SQL of the table or the format it owns: chunk leases
 * and states ({@code ChunkTables}), the processes holding them ({@code LeaseHolders}: a dead holder of this machine's
 * leases ends at once), chunk rows and their receipts read back ({@code ChunkRows}), the seed tables
 * admission writes ({@code SeedTables}, {@code ChunkSeed}, {@code RunSnapshot} with its format's
 * {@code RunSnapshotParser}, docs/formats/exec-snapshot.md), receipts ({@code Receipt} with {@code ReceiptParser},
 * docs/formats/exec-receipt.md), run rows and routes ({@code RunRecords}), the run's plan row ({@code PlanRecord}),
 * shard tallies ({@code ShardTallies}), the settled gate table ({@code GateTable}, {@code run_gate_results}), usage
 * and judge agreement as chunk rows and settlement record them ({@code UsageTallies}, {@code UsageTable},
 * {@code AgreementTallies}), a run's budget and its workers' grants ({@code BudgetTable}), a case's epochs reduced
 * ({@code EpochReduction}), transcript keys ({@code TranscriptStore}), which fleet limiter each endpoint of a
 * run uses ({@code RunLimiters}; the limiters themselves are the fleet module's), and the records of {@code vigilo run rerun-errors}: chunks
 * queued again and the rerun history ({@code RerunRecords}).
 *
 * <p>Internal to exec: nothing here is the module's API, though Java makes it public for the rooms. Uses only the
 * root package {@code dev.vigilo.exec}.
 */
package dev.vigilo.exec.record;
