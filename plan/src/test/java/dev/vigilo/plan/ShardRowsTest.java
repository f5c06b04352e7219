package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The {@code run_plan_shards} column shapes that publication writes and {@code run status} reads back. */
class ShardRowsTest {
    @Test
    void gateCountsAreACompactJsonListInGateOrderAndReadBackInThatOrder() {
        List<ShardTotals.GateCount> gates = List.of(
                new ShardTotals.GateCount("zeta", 300),
                new ShardTotals.GateCount("alpha \"quoted\"", 0),
                new ShardTotals.GateCount("math", 100));
        String json = ShardRows.gateCountsJson(gates);
        assertThat(json).isEqualTo("[[\"zeta\",300],[\"alpha \\\"quoted\\\"\",0],[\"math\",100]]");
        assertThat(ShardRows.gateCounts(json))
                .containsExactly(
                        java.util.Map.entry("zeta", 300L),
                        java.util.Map.entry("alpha \"quoted\"", 0L),
                        java.util.Map.entry("math", 100L));
        assertThat(ShardRows.placementAlias("round-robin:128", 17)).isEqualTo("control");
        assertThat(ShardRows.placementAlias("round-robin:128:a,b,c", 17)).isEqualTo("c");
        assertThat(ShardRows.placementAlias("round-robin:128:a", 17)).isEqualTo("a");
    }
}
