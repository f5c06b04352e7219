/**
 * Execution of a published plan (docs/execution.md): admission into execution databases, workers that claim chunk
 * leases and run the agent and evaluators per case, chunk receipts, settlement into a verdict, and cancellation.
 */
package dev.vigilo.exec;
