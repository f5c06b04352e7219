/**
 * Where a run's shards live (docs/execution.md, "Shard moves"): the shard routes a worker claims
 * from ({@code ShardRoutes}) and moving a shard between execution databases ({@code ShardMover}, {@code ShardCopy}).
 * The module's API: {@link dev.vigilo.exec.placement.ShardMover}. Internal to exec although public: {@code
 * ShardRoutes} (the worker reads it). Uses {@code record} and the root package.
 */
package dev.vigilo.exec.placement;
