package dev.vigilo.plan;

/**
 * The status of a run ({@code runs.status}; {@code status} in {@code run create}/{@code run status} output). Each
 * state has one spelling, used in SQL, JSON and text alike; the {@code runs.status} check constraint admits exactly
 * these spellings (migration {@code V3__plan_run_states.sql}).
 *
 * <p>Lifecycle: {@link #CREATING} until the plan is published with execution requested, then {@link #PENDING};
 * execution moves a run to {@link #RUNNING} and ends it in {@link #SETTLED} (with a verdict, passed or failed),
 * {@link #CANCELLED} or {@link #FAILED} (with a reason). Run preparation writes only creating and pending; the
 * verdict and the failure reason are recorded by execution next to the state, not in it.
 */
public enum RunState {
    /** Preparation holds the run: its plan is preparing, rejected, or published and held by --prepare-only. */
    CREATING("creating"),
    /** The plan is published and execution was requested; waiting to be dispatched. */
    PENDING("pending"),
    /** Workers execute the run's chunks. */
    RUNNING("running"),
    /**
     * Paused by {@code vigilo run pause} (the reason is recorded beside it): still executing, so its held chunks finish
     * and it settles once every chunk is done, but not dispatchable: no chunk of it is claimed until it is resumed.
     */
    PAUSED("paused"),
    /** Every shard settled; the run carries a verdict (passed or failed). Terminal. */
    SETTLED("settled"),
    /** The run was cancelled; committed results stay. Terminal. */
    CANCELLED("cancelled"),
    /** Execution stopped on an error it cannot retry; the run carries the reason. Terminal. */
    FAILED("failed");

    private final String spelling;

    RunState(String spelling) {
        this.spelling = spelling;
    }

    /** The spelling in SQL, JSON and text, e.g. {@code creating}. */
    public String spelling() {
        return spelling;
    }

    /** The state with this spelling. */
    public static RunState fromSpelling(String spelling) {
        for (RunState s : values()) {
            if (s.spelling.equals(spelling)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown run status \"" + spelling + "\"");
    }

    /** The spelling, so that text output never shows the constant's name. */
    @Override
    public String toString() {
        return spelling;
    }
}
