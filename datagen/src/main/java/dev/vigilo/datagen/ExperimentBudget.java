package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.fleet.CostBudget;
import java.math.BigDecimal;
import java.util.Objects;

/**
 * An experiment's budget as {@code datagen status} shows it (docs/datagen.md, "Fleet limits and budget"): the row of
 * the control database's {@code fleet_budgets} that every process of the experiment charges, read through {@link
 * CostBudget#read}. {@code --json} keys (snake_case, decimals as exact strings): {@code max_cost, charged, spent,
 * reserved, remaining, calls}.
 *
 * @param maxCost the limit in force: the last admitting process's, or the one recorded by the last run when no call
 *     was admitted yet
 * @param spent what the calls that ended cost (settled)
 * @param reserved what calls not settled hold: in flight, or lost with a process that died (counted as spent)
 * @param calls calls admitted
 */
public record ExperimentBudget(BigDecimal maxCost, BigDecimal spent, BigDecimal reserved, long calls) {
    public ExperimentBudget {
        Objects.requireNonNull(maxCost, "maxCost");
        Objects.requireNonNull(spent, "spent");
        Objects.requireNonNull(reserved, "reserved");
    }

    /** The budget's row, or nothing charged yet under {@code recordedMax}. */
    static ExperimentBudget of(java.util.Optional<CostBudget.State> row, BigDecimal recordedMax) {
        return row.map(s -> new ExperimentBudget(s.maxCost(), s.settled(), s.reserved(), s.calls()))
                .orElseGet(() -> new ExperimentBudget(recordedMax, BigDecimal.ZERO, BigDecimal.ZERO, 0));
    }

    /** Spent plus reserved: what admission compares with the limit. */
    public BigDecimal charged() {
        return spent.add(reserved);
    }

    /** What may still be charged before calls are refused (0 once reached). */
    public BigDecimal remaining() {
        BigDecimal r = maxCost.subtract(charged());
        return r.signum() < 0 ? BigDecimal.ZERO : r;
    }

    /**
     * One line of {@code datagen status}: {@code budget max_cost M  charged C  spent S  reserved R  remaining X  calls
     * N}.
     */
    public String toText() {
        return "budget max_cost " + plain(maxCost) + "  charged " + plain(charged()) + "  spent " + plain(spent)
                + "  reserved " + plain(reserved) + "  remaining " + plain(remaining()) + "  calls " + calls;
    }

    ObjectNode toJson() {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("max_cost", plain(maxCost));
        o.put("charged", plain(charged()));
        o.put("spent", plain(spent));
        o.put("reserved", plain(reserved));
        o.put("remaining", plain(remaining()));
        o.put("calls", calls);
        return o;
    }

    static String plain(BigDecimal d) {
        return d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString();
    }
}
