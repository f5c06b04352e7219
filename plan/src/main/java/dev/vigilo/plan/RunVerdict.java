package dev.vigilo.plan;

/**
 * The verdict of a settled run ({@code runs.verdict}; {@code verdict} in {@code run status}): recorded next to the
 * state {@link RunState#SETTLED}, never instead of it, and present exactly when the run is settled (the
 * {@code runs_verdict_settled} check constraint). A verdict is an outcome of a run that ended, not a state a run is
 * in: {@link #INCONCLUSIVE} (a gate deciding on its interval could not decide) is a verdict of a settled run, and
 * {@link RunState} does not know it.
 */
public enum RunVerdict {
    /** Every gate passed. */
    PASSED("passed"),
    /** At least one gate failed. */
    FAILED("failed"),
    /** No gate failed, and at least one gate deciding on its interval could not decide (docs/execution.md). */
    INCONCLUSIVE("inconclusive");

    private final String spelling;

    RunVerdict(String spelling) {
        this.spelling = spelling;
    }

    /** The spelling in SQL, JSON and text, e.g. {@code passed}. */
    public String spelling() {
        return spelling;
    }

    /** The verdict with this spelling. */
    public static RunVerdict fromSpelling(String spelling) {
        for (RunVerdict v : values()) {
            if (v.spelling.equals(spelling)) {
                return v;
            }
        }
        throw new IllegalArgumentException("unknown run verdict \"" + spelling + "\"");
    }

    /** The spelling, so that text output never shows the constant's name. */
    @Override
    public String toString() {
        return spelling;
    }
}
