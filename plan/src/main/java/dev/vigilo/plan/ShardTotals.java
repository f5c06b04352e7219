package dev.vigilo.plan;

import dev.vigilo.storage.Sha256;
import java.util.List;
import java.util.Objects;

/**
 * One used shard's planned totals as the planner computed them: cases and chunks, the projection and settlement
 * folds (docs/formats/plan-chunk.md, "Folds"), and for every profile gate, in gate order, how many of the shard's
 * cases it selects. The manifest records the totals and folds; publication stores all of it ({@link ShardRows}).
 *
 * @param shard      the logical shard, 0..127
 * @param cases      cases on the shard, at least 1
 * @param chunks     chunks on the shard, at least 1
 * @param projection the ordered case id/hash fold of the shard's cases
 * @param settlement the chunk fold of the shard's chunks
 * @param gates      one planned count per profile gate, in profile gate order
 */
record ShardTotals(int shard, long cases, long chunks, Sha256 projection, Sha256 settlement, List<GateCount> gates) {
    ShardTotals {
        Objects.requireNonNull(projection, "projection");
        Objects.requireNonNull(settlement, "settlement");
        gates = List.copyOf(gates);
    }

    /** The cases of the shard that gate {@code gate} selects. */
    record GateCount(String gate, long planned) {
        GateCount {
            Objects.requireNonNull(gate, "gate");
        }
    }

    /** The manifest's record of this shard. */
    PlanManifest.Shard manifestShard() {
        return new PlanManifest.Shard(shard, cases, chunks, projection, settlement);
    }
}
