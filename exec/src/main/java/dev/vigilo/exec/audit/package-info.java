/**
 * {@code vigilo verify} of an ended run (docs/execution.md, "Verification"): the plan, every chunk's receipt and
 * transcripts, and the settlement recomputed from them. The module's API: {@link dev.vigilo.exec.audit.RunVerifier};
 * the rest is package-private. Reads the records ({@code record}), never the worker, admission or settlement.
 */
package dev.vigilo.exec.audit;
