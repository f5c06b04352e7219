package dev.vigilo.plan;

/**
 * The status of a run's plan ({@code run_plans.plan_status}; {@code creation_progress.plan_status} in output). Each
 * status has one spelling, used in SQL, JSON and text alike; the {@code run_plans.plan_status} check constraint
 * admits exactly these spellings.
 *
 * <p>A plan is {@link #PREPARING} from the run's first claim until it is either {@link #READY} (published: the
 * verified root is recorded) or {@link #REJECTED} (its inputs can never produce a plan); both are final.
 */
public enum PlanStatus {
    /** Plan files are being written and verified; the chunk cursor moves. */
    PREPARING("preparing"),
    /** Published: the verified manifest reference and the shard rows are recorded. */
    READY("ready"),
    /** Preparation can never succeed with the run's frozen inputs (e.g. a gate selects no case). */
    REJECTED("rejected");

    private final String spelling;

    PlanStatus(String spelling) {
        this.spelling = spelling;
    }

    /** The spelling in SQL, JSON and text, e.g. {@code ready}. */
    public String spelling() {
        return spelling;
    }

    /** Whether the plan can no longer change: ready or rejected. */
    public boolean isFinal() {
        return this != PREPARING;
    }

    /** The status with this spelling. */
    public static PlanStatus fromSpelling(String spelling) {
        for (PlanStatus s : values()) {
            if (s.spelling.equals(spelling)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown plan status \"" + spelling + "\"");
    }

    /** The spelling, so that text output never shows the constant's name. */
    @Override
    public String toString() {
        return spelling;
    }
}
