package dev.vigilo.plan;

/**
 * The verdict of a settled run ({@code runs.verdict}; {@code verdict} in {@code run status}): recorded next to the
 * state {@link RunState#SETTLED}, never instead of it, and present exactly when the run is settled (the
 * {@code runs_verdict_settled} check constraint). A verdict is an outcome of a run that ended, not a state a run is
 * in: an inconclusive verdict (wave 3: judges that cannot decide) joins this enum, with the migration that widens
 * {@code runs.verdict}'s check constraint, and leaves {@link RunState} as it is.
 */
public enum RunVerdict {
    /** Every gate passed. */
    PASSED("passed"),
    /** At least one gate failed. */
    FAILED("failed");

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
