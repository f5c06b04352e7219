package dev.vigilo.datagen;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * A parsed pipeline: its name (the log's pipeline segment), the seed JSONL, the field holding each
 * seed's item id (null: ids are {@code item-<line>}), the ordered steps, and the experiment's budget (null: none).
 */
public record PipelineSpec(String name, Path input, String idField, List<StepSpec> steps, Budget budget) {
    public PipelineSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(input, "input");
        steps = List.copyOf(steps);
    }

    /** Without a budget. */
    public PipelineSpec(String name, Path input, String idField, List<StepSpec> steps) {
        this(name, input, idField, steps, null);
    }

    /**
     * Whether a chat step (or a loop's chat body) has a {@code rate_limit} or a {@code circuit_breaker}: limits the
     * fleet shares.
     */
    public boolean fleetLimited() {
        for (StepSpec s : steps) {
            if (s.chat() != null && s.chat().fleetLimited()) {
                return true;
            }
            if (s.body() != null && s.body().chat() != null && s.body().chat().fleetLimited()) {
                return true;
            }
        }
        return false;
    }

    /** Whether a chat step (or a loop's chat body) has a {@code circuit_breaker}, which only the fleet has. */
    public boolean hasCircuitBreaker() {
        for (StepSpec s : steps) {
            if (s.chat() != null && s.chat().circuitBreaker() != null) {
                return true;
            }
            if (s.body() != null && s.body().chat() != null && s.body().chat().circuitBreaker() != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code budget: {max_cost}}: what an experiment's model calls may cost, over all its runs and processes, at the
     * pipeline's {@code prices} (docs/datagen.md, "Fleet limits and budget").
     *
     * @param maxCost the limit, in the prices' currency
     * @param source the pipeline file, named in the message that says how to raise it
     */
    public record Budget(BigDecimal maxCost, String source) {
        public Budget {
            Objects.requireNonNull(maxCost, "maxCost");
            Objects.requireNonNull(source, "source");
        }
    }
}
