/**
 * Fleet-wide limits on model calls, kept in the control database the caller opened (docs/execution.md, "Fleet rate
 * limit" and "Circuit breaker"; docs/datagen.md, "Fleet limits and budget"): {@link dev.vigilo.fleet.ProcessLimiters}
 * holds a process's {@link dev.vigilo.fleet.FleetLimiter}s (llm {@code ChatLimiter}s admitting calls from permits
 * leased in batches) and their lease thread, {@link dev.vigilo.fleet.LimiterTable} owns the limiter rows and {@link
 * dev.vigilo.fleet.LimiterState} their one transition; {@link dev.vigilo.fleet.CostBudget} is a cost budget shared by
 * every process spending from it. Shared by exec's workers and datagen's runs; knows nothing of runs or experiments.
 */
package dev.vigilo.fleet;
