package dev.vigilo.exec;

import dev.vigilo.plan.Profile;
import dev.vigilo.plan.RunVerdict;
import dev.vigilo.stats.BoundDecision;
import dev.vigilo.stats.Confidence;
import dev.vigilo.stats.PassAtK;
import dev.vigilo.stats.ProportionInterval;
import dev.vigilo.stats.Wilson;
import java.math.BigDecimal;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One gate's row of a run's gate table (docs/execution.md, "Settlement" and "Statistics"). A case selected by the
 * gate either ran (passed, failed or errored) or never ran (its chunk failed, or the run was cancelled before it);
 * cases that never ran count against the pass rate because {@code pass_rate = passed / planned}, and the interval is
 * over the planned cases for the same reason. The error rate ({@code errored / planned}) is reported apart from the
 * failure rate ({@code failed / planned}).
 *
 * @param name        the gate's name
 * @param planned     cases the plan's gate selects (frozen at preparation)
 * @param passed      cases where every required evaluator of the gate passed
 * @param failed      executed cases that neither passed nor errored
 * @param errored     cases whose agent (after its retries) or a required evaluator ended in an error
 * @param minPassRate the gate's threshold
 * @param decide      whether the gate decides on the point rate or on its interval
 * @param confidence  the level of the gate's interval
 * @param decision    what the gate decided; empty while the run is still executing (the table is then partial)
 * @param passAtK     in a run of several epochs, the epoch pass histogram of the gate's executed cases that did not
 *                    error (so pass@k for k = 1..n, docs/execution.md, "Statistics"); empty with one epoch
 */
public record GateResult(
        String name,
        long planned,
        long passed,
        long failed,
        long errored,
        double minPassRate,
        Profile.Decide decide,
        Confidence confidence,
        Optional<GateDecision> decision,
        Optional<PassAtK> passAtK) {
    public GateResult {
        Objects.requireNonNull(passAtK, "passAtK");
        if (passAtK.isPresent() && passAtK.get().cases() != passed + failed) {
            throw new IllegalArgumentException("gate " + name + ": the epoch pass histogram counts "
                    + passAtK.get().cases() + " cases, not the " + (passed + failed) + " that passed or failed");
        }
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(decide, "decide");
        Objects.requireNonNull(confidence, "confidence");
        Objects.requireNonNull(decision, "decision");
        if (planned < 0 || passed < 0 || failed < 0 || errored < 0 || passed + failed + errored > planned) {
            throw new IllegalArgumentException("gate " + name + ": " + passed + " passed, " + failed + " failed, "
                    + errored + " errored of " + planned + " planned");
        }
        if (decide == Profile.Decide.POINT && decision.equals(Optional.of(GateDecision.INCONCLUSIVE))) {
            throw new IllegalArgumentException("gate " + name + ": a point decision is never inconclusive");
        }
    }

    /** A row without epoch pass counts (a run of one epoch). */
    public GateResult(
            String name,
            long planned,
            long passed,
            long failed,
            long errored,
            double minPassRate,
            Profile.Decide decide,
            Confidence confidence,
            Optional<GateDecision> decision) {
        this(name, planned, passed, failed, errored, minPassRate, decide, confidence, decision, Optional.empty());
    }

    /**
     * The final row of a gate, decided by its rule. {@code point}: passed when {@code passed >= min_pass_rate x
     * planned}, exactly in decimal (the threshold as written, so 9 of 10 meets 0.9 without binary rounding), else
     * failed. {@code bound}: passed when the interval's lower bound is at least {@code min_pass_rate}, failed when
     * its upper bound is below it, else inconclusive.
     */
    public static GateResult decided(
            String name,
            long planned,
            long passed,
            long failed,
            long errored,
            double minPassRate,
            Profile.Decide decide,
            Confidence confidence) {
        GateResult open = partial(name, planned, passed, failed, errored, minPassRate, decide, confidence);
        GateDecision decision = switch (decide) {
            case POINT ->
                BigDecimal.valueOf(passed)
                                        .compareTo(
                                                BigDecimal.valueOf(minPassRate).multiply(BigDecimal.valueOf(planned)))
                                >= 0
                        ? GateDecision.PASSED
                        : GateDecision.FAILED;
            case BOUND ->
                switch (BoundDecision.of(open.interval(), minPassRate)) {
                    case PASSED -> GateDecision.PASSED;
                    case FAILED -> GateDecision.FAILED;
                    case INCONCLUSIVE -> GateDecision.INCONCLUSIVE;
                };
        };
        return open.withDecision(decision);
    }

    /** A row of a run still executing: counts so far, no decision. */
    public static GateResult partial(
            String name,
            long planned,
            long passed,
            long failed,
            long errored,
            double minPassRate,
            Profile.Decide decide,
            Confidence confidence) {
        return new GateResult(
                name, planned, passed, failed, errored, minPassRate, decide, confidence, Optional.empty());
    }

    /** This row with {@code decision} recorded. */
    public GateResult withDecision(GateDecision decision) {
        return new GateResult(
                name,
                planned,
                passed,
                failed,
                errored,
                minPassRate,
                decide,
                confidence,
                Optional.of(decision),
                passAtK);
    }

    /** This row with the epoch pass histogram of its passed and failed cases. */
    public GateResult withPassAtK(PassAtK histogram) {
        return new GateResult(
                name,
                planned,
                passed,
                failed,
                errored,
                minPassRate,
                decide,
                confidence,
                decision,
                Optional.of(histogram));
    }

    /**
     * The run's verdict over its decided gates: {@code failed} if any gate failed, else {@code inconclusive} if any
     * gate is, else {@code passed}.
     *
     * @throws IllegalArgumentException when a gate is not decided
     */
    public static RunVerdict verdict(List<GateResult> gates) {
        boolean inconclusive = false;
        for (GateResult g : gates) {
            GateDecision d = g.decision()
                    .orElseThrow(() -> new IllegalArgumentException("gate " + g.name() + " is not decided"));
            if (d == GateDecision.FAILED) {
                return RunVerdict.FAILED;
            }
            inconclusive |= d == GateDecision.INCONCLUSIVE;
        }
        return inconclusive ? RunVerdict.INCONCLUSIVE : RunVerdict.PASSED;
    }

    /** Whether the gate passed; empty while undecided. */
    public Optional<Boolean> passedGate() {
        return decision.map(d -> d == GateDecision.PASSED);
    }

    /** The pass rate with its standard error and Wilson interval at {@link #confidence}, over the planned cases. */
    public ProportionInterval interval() {
        return Wilson.interval(passed, planned, confidence);
    }

    /**
     * For a settled inconclusive gate, how many cases in all, at the observed rate, would decide it (so {@code n' -
     * planned} more); empty when decided, when the rate sits on the threshold, or beyond 10^9 cases.
     */
    public OptionalLong casesToDecide() {
        if (!decision.equals(Optional.of(GateDecision.INCONCLUSIVE))) {
            return OptionalLong.empty();
        }
        return BoundDecision.casesToDecide(interval(), minPassRate);
    }

    /**
     * pass@k for k = 1..n, keyed by k as a string in k order, as the {@code pass_at_k} JSON object gives it; empty
     * with one epoch.
     */
    public java.util.Map<String, Double> passAtKByK() {
        java.util.Map<String, Double> out = new java.util.LinkedHashMap<>();
        passAtK.ifPresent(p -> {
            for (int k = 1; k <= p.epochs(); k++) {
                out.put(Integer.toString(k), p.passAt(k));
            }
        });
        return out;
    }

    /**
     * The pass@k a viewer shows, keyed by k in k order: every k for up to 5 epochs, else k = 1, 2, 5, 10, 20, 50, ...
     * below n, and n (so a table stays narrow however many epochs ran); empty with one epoch.
     */
    public java.util.Map<Integer, Double> passAtKShown() {
        java.util.Map<Integer, Double> out = new java.util.LinkedHashMap<>();
        passAtK.ifPresent(p -> shownK(p.epochs()).forEach(k -> out.put(k, p.passAt(k))));
        return out;
    }

    /** The k {@link #passAtKShown} shows for n epochs. */
    public static List<Integer> shownK(int n) {
        List<Integer> ks = new java.util.ArrayList<>();
        if (n <= 5) {
            for (int k = 1; k <= n; k++) {
                ks.add(k);
            }
            return ks;
        }
        for (long decade = 1; decade < n; decade *= 10) {
            for (long step : new long[] {1, 2, 5}) {
                if (decade * step < n) {
                    ks.add((int) (decade * step));
                }
            }
        }
        ks.add(n);
        return ks;
    }

    /**
     * What an inconclusive gate of a run of several epochs adds to its cases-to-decide advice (docs/execution.md,
     * "Cases, not epochs"): its interval is over cases, so more epochs never decide it.
     */
    public static final String EPOCHS_DO_NOT_DECIDE = "more epochs would not decide it: the interval counts cases";

    /** The advice's addition for this gate: {@link #EPOCHS_DO_NOT_DECIDE} with epochs, else nothing. */
    public String epochsAdvice() {
        return passAtK.isPresent() ? "; " + EPOCHS_DO_NOT_DECIDE : "";
    }

    /** Cases that ran: {@code passed + failed + errored}. */
    public long executed() {
        return passed + failed + errored;
    }

    /** Cases selected by the gate that never ran: {@code planned - executed}. */
    public long notExecuted() {
        return planned - executed();
    }

    /** {@code passed / planned} (0 when nothing is planned). */
    public double passRate() {
        return rate(passed);
    }

    /** {@code failed / planned}. */
    public double failureRate() {
        return rate(failed);
    }

    /** {@code errored / planned}. */
    public double errorRate() {
        return rate(errored);
    }

    private double rate(long n) {
        return planned == 0 ? 0.0 : (double) n / planned;
    }
}
