/**
 * Ending a run (docs/execution.md, "Settlement (exact rules)", "Cancellation"): settlement into a verdict from the chunks' receipts
 * and tallies, with its evidence, cancellation, pause and the reopening of a run to rerun its errors. The module's API: {@link
 * dev.vigilo.exec.settlement.RunCancellation}, {@link dev.vigilo.exec.settlement.RunPause}, {@link
 * dev.vigilo.exec.settlement.RunRerun}. Internal to exec although public: {@code Settlement} (the worker's
 * coordinator calls it). Uses {@code record} and the root package.
 */
package dev.vigilo.exec.settlement;
