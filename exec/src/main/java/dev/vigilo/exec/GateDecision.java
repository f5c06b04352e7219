package dev.vigilo.exec;

/**
 * What a settled gate decided (docs/execution.md, "Statistics"): a gate deciding on the point rate ({@code decide:
 * point}) passes or fails; one deciding on its interval ({@code decide: bound}) may also be inconclusive, when the
 * interval straddles its {@code min_pass_rate}.
 */
public enum GateDecision {
    /** The gate met its threshold (on the point rate, or with its whole interval). */
    PASSED("passed"),
    /** The gate missed its threshold (on the point rate, or with its whole interval). */
    FAILED("failed"),
    /** The interval holds the threshold: more cases (or a lower confidence) are needed to decide. */
    INCONCLUSIVE("inconclusive");

    private final String spelling;

    GateDecision(String spelling) {
        this.spelling = spelling;
    }

    /** The spelling in SQL, JSON and text. */
    public String spelling() {
        return spelling;
    }

    /** The decision with this spelling. */
    public static GateDecision fromSpelling(String spelling) {
        for (GateDecision d : values()) {
            if (d.spelling.equals(spelling)) {
                return d;
            }
        }
        throw new IllegalArgumentException("unknown gate decision \"" + spelling + "\"");
    }

    @Override
    public String toString() {
        return spelling;
    }
}
