package dev.vigilo.stats;

/**
 * One evaluator's result for one case: of one epoch, or reduced over a case's epochs by a {@link Reducer}.
 *
 * <p>An errored outcome (the agent call or the evaluator ended in an error) is never a pass: {@code passed} is
 * ignored when {@code errored} is true, and a reduced outcome that is errored has {@code passed == false}.
 *
 * @param passed  whether the evaluator passed the output
 * @param score   the evaluator's score (0 for an errored evaluator that produced none); finite
 * @param errored whether the epoch (or, reduced, any epoch) errored
 */
public record Outcome(boolean passed, double score, boolean errored) {

    /** Checks that the score is finite. */
    public Outcome {
        if (!Double.isFinite(score)) {
            throw new IllegalArgumentException("an outcome's score must be finite, got " + score);
        }
    }

    /** A passed outcome with the given score. */
    public static Outcome pass(double score) {
        return new Outcome(true, score, false);
    }

    /** A failed (not errored) outcome with the given score. */
    public static Outcome fail(double score) {
        return new Outcome(false, score, false);
    }

    /** An errored outcome (score 0, not passed). */
    public static Outcome error() {
        return new Outcome(false, 0.0, true);
    }
}
