/**
 * The evaluation statistics every module uses, one definition each (the formulas are written out in
 * {@code docs/execution.md}, section "Statistics"):
 *
 * <ul>
 *   <li>{@link dev.vigilo.stats.Reducer}: a profile's {@code epochs.reducer}, reducing one evaluator's epoch results
 *       for one case ({@link dev.vigilo.stats.Outcome}) to one;
 *   <li>{@link dev.vigilo.stats.Confidence}: a profile's {@code confidence} and its two-sided normal quantile;
 *   <li>{@link dev.vigilo.stats.Wilson} and {@link dev.vigilo.stats.ProportionInterval}: a pass rate, its standard
 *       error and its Wilson score interval;
 *   <li>{@link dev.vigilo.stats.BoundDecision}: a gate decided on the interval's bound, and how many cases would
 *       decide an inconclusive one;
 *   <li>{@link dev.vigilo.stats.PassAtK}: the unbiased pass@k and pass^k estimators over a histogram of epoch pass
 *       counts;
 *   <li>{@link dev.vigilo.stats.McNemar}: the exact two-sided McNemar test of two runs over the same cases;
 *   <li>{@link dev.vigilo.stats.PairedDifference}: the difference of their pass rates with Newcombe's interval;
 *   <li>{@link dev.vigilo.stats.KrippendorffAlpha}: the agreement of several judges (interval metric) from sums that
 *       add up over chunks.
 * </ul>
 *
 * <p>Every type is an immutable value or a final class of static functions; nothing holds mutable state. Invalid
 * arguments are {@link java.lang.IllegalArgumentException}s; those a user can cause through a profile
 * ({@link dev.vigilo.stats.Reducer#parse}, {@link dev.vigilo.stats.Confidence#of}) carry a message fit to follow the
 * profile key's location.
 */
package dev.vigilo.stats;
