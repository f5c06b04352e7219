package dev.vigilo.exec;

import java.math.BigDecimal;
import java.util.Objects;
import java.util.Optional;

/**
 * One gate's row of a run's gate table (docs/execution.md, "Settlement"). A case selected by the gate either ran
 * (passed, failed or errored) or never ran (its chunk failed, or the run was cancelled before it); cases that never
 * ran count against the pass rate because {@code pass_rate = passed / planned}. The error rate ({@code errored /
 * planned}) is reported apart from the failure rate ({@code failed / planned}).
 *
 * @param name        the gate's name
 * @param planned     cases the plan's gate selects (frozen at preparation)
 * @param passed      cases where every required evaluator of the gate passed
 * @param failed      executed cases that neither passed nor errored
 * @param errored     cases whose agent (after its retries) or a required evaluator ended in an error
 * @param minPassRate the gate's threshold
 * @param passedGate  whether {@code pass_rate >= min_pass_rate}; empty while the run is still executing (the table is
 *                    then partial)
 */
public record GateResult(
        String name,
        long planned,
        long passed,
        long failed,
        long errored,
        double minPassRate,
        Optional<Boolean> passedGate) {
    public GateResult {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(passedGate, "passedGate");
        if (planned < 0 || passed < 0 || failed < 0 || errored < 0 || passed + failed + errored > planned) {
            throw new IllegalArgumentException("gate " + name + ": " + passed + " passed, " + failed + " failed, "
                    + errored + " errored of " + planned + " planned");
        }
    }

    /**
     * The final row of a gate: decides {@code passed_gate} exactly in decimal, {@code passed >= min_pass_rate x
     * planned} (the threshold as written, so 9 of 10 meets 0.9 without binary rounding).
     */
    public static GateResult decided(
            String name, long planned, long passed, long failed, long errored, double minPassRate) {
        boolean ok = BigDecimal.valueOf(passed)
                        .compareTo(BigDecimal.valueOf(minPassRate).multiply(BigDecimal.valueOf(planned)))
                >= 0;
        return new GateResult(name, planned, passed, failed, errored, minPassRate, Optional.of(ok));
    }

    /** A row of a run still executing: counts so far, no decision. */
    public static GateResult partial(
            String name, long planned, long passed, long failed, long errored, double minPassRate) {
        return new GateResult(name, planned, passed, failed, errored, minPassRate, Optional.empty());
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
