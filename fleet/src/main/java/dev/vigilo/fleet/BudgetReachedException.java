package dev.vigilo.fleet;

import dev.vigilo.common.errors.ConflictException;

/**
 * A {@link CostBudget} refused a call: what was charged already reaches its limit. A conflict with durable state
 * (exit 4): the caller stops taking new calls and says how to raise the limit.
 */
public final class BudgetReachedException extends ConflictException {
    private final transient CostBudget.State state;

    /** The budget of {@code scope} reached its limit at {@code state}. */
    public BudgetReachedException(String scope, CostBudget.State state) {
        super("the budget of " + scope + " is reached: "
                + state.charged().stripTrailingZeros().toPlainString()
                + " charged (" + state.settled().stripTrailingZeros().toPlainString() + " spent, "
                + state.reserved().stripTrailingZeros().toPlainString() + " reserved) of max_cost "
                + state.maxCost().stripTrailingZeros().toPlainString());
        this.state = state;
    }

    /** The budget's row when the call was refused. */
    public CostBudget.State state() {
        return state;
    }
}
