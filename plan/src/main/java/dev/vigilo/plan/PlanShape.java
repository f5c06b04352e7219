package dev.vigilo.plan;

import java.util.List;
import java.util.Optional;

/**
 * The fixed shape of every plan (docs/formats/plan-layout.md), declared here once for every module: at most
 * {@value #CHUNK_CASES} cases per chunk, {@value #SHARDS} logical shards with chunk {@code i} on shard
 * {@code i mod SHARDS}, and the frozen placement rule {@code round-robin:128:alias,alias,...} that spreads the shards
 * over execution databases. Changing a value here changes the plan format, so it needs a new format version.
 */
public final class PlanShape {
    /** Cases per execution chunk, at most. */
    public static final int CHUNK_CASES = 100;
    /** Logical shards; chunk i lives on shard i mod SHARDS. */
    public static final int SHARDS = 128;

    private static final String ROUND_ROBIN = "round-robin:" + SHARDS + ":";

    private PlanShape() {}

    /** The shard of chunk {@code chunkIndex}. */
    public static int shardOf(long chunkIndex) {
        return (int) (chunkIndex % SHARDS);
    }

    /** The frozen placement rule recorded with a run placed over {@code aliases}: {@code round-robin:128:a,b,...}. */
    public static String placementRule(List<String> aliases) {
        return ROUND_ROBIN + String.join(",", aliases);
    }

    /**
     * The aliases of a frozen placement rule, in order, as written (split at commas; an empty list part is kept as
     * written, callers decide what it means); empty when the rule is not a round-robin rule over the plan's shards,
     * as for runs frozen before placements existed ({@code round-robin:128}).
     */
    public static Optional<List<String>> placementAliases(String rule) {
        if (!rule.startsWith(ROUND_ROBIN)) {
            return Optional.empty();
        }
        return Optional.of(List.of(rule.substring(ROUND_ROBIN.length()).split(",")));
    }
}
