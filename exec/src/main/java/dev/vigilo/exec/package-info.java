/**
 * Execution of a published plan (docs/execution.md): admission into execution databases, workers that claim chunk
 * leases and run the agent and evaluators per case, chunk receipts, settlement into a verdict, cancellation, shard
 * moves, the read-only views and the audit of an ended run, each in a room of its own (docs/architecture.md, "exec in
 * rooms").
 *
 * <p>This root package is the ground every room stands on. The module's API here: {@link
 * dev.vigilo.exec.Placements}, {@link dev.vigilo.exec.ExecutionConfig}, {@link dev.vigilo.exec.Service}, {@link
 * dev.vigilo.exec.OutageListener}, {@link dev.vigilo.exec.ExecutionStatus} and {@link dev.vigilo.exec.GateResult}.
 * Internal to exec although public (the rooms share them): {@code LocalTransactions}, {@code Outages}, {@code
 * OutageWaits}, {@code WaitingStore}, {@code WaitingReader}, {@code WaitBoard} and {@code ScratchDirs}. This package
 * uses no room.
 */
package dev.vigilo.exec;
