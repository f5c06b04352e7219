package dev.vigilo.plan;

/**
 * The plan generation: incremented by every claim of a run's creation lease. Every mutation names the generation it
 * was authorized under and is fenced when a newer claim exists. Ordered; never negative.
 */
public record PlanGeneration(long value) implements Comparable<PlanGeneration> {
    public PlanGeneration {
        if (value < 0) {
            throw new IllegalArgumentException("plan generation must be >= 0, got " + value);
        }
    }

    @Override
    public int compareTo(PlanGeneration o) {
        return Long.compare(value, o.value);
    }
}
