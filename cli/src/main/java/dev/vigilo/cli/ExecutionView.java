package dev.vigilo.cli;

import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateDecision;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.settlement.RunPause;
import dev.vigilo.plan.Profile;
import dev.vigilo.stats.PassAtK;
import dev.vigilo.stats.ProportionInterval;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The human view of a run's execution: progress, verdict and the gate table, as {@code run status}, {@code run watch}
 * and {@code quickstart} print them. Plain text, fixed columns, no colours.
 */
final class ExecutionView {
    private ExecutionView() {}

    /**
     * Progress, verdict, the gate table and the failure reason of {@code s}.
     *
     * @param requested whether execution was requested (a creating run without it is held by --prepare-only)
     */
    static void print(PrintWriter out, ExecutionStatus s, boolean requested) {
        ExecutionStatus.Progress p = s.execution();
        if (s.status().equals("creating")) {
            out.println(
                    requested
                            ? "execution: requested, waiting for admission (`vigilo run create` admits it; a running"
                                    + " `vigilo worker` resumes an interrupted admission)"
                            : "execution: not requested (held by --prepare-only)");
        } else {
            out.printf(
                    "progress: %d of %d chunks done%s, %d of %d cases done%n",
                    p.chunksDone(),
                    p.chunks(),
                    p.chunksFailed() > 0 ? " (" + p.chunksFailed() + " failed)" : "",
                    p.casesDone(),
                    p.cases());
        }
        if (p.chunksRequeuedAfterExpiry() > 0) {
            // A worker that died, was cut off from the database or stalled: its chunks ran again elsewhere.
            out.printf(
                    "requeued after a lease expiry: %d chunk%s (claimed again after the worker holding %s stopped"
                            + " renewing its lease)%n",
                    p.chunksRequeuedAfterExpiry(),
                    p.chunksRequeuedAfterExpiry() == 1 ? "" : "s",
                    p.chunksRequeuedAfterExpiry() == 1 ? "it" : "them");
        }
        if (!p.unreachable().isEmpty()) {
            long unknown = p.shards().stream().filter(x -> !x.known()).count();
            out.printf(
                    "unreachable now: execution database%s %s (progress of %d shard%s unknown, not counted above)%n",
                    p.unreachable().size() == 1 ? "" : "s",
                    String.join(", ", p.unreachable()),
                    unknown,
                    unknown == 1 ? "" : "s");
        }
        for (ExecutionStatus.Wait w : s.waiting()) {
            out.println(waiting(w));
        }
        s.runUsage().ifPresent(u -> out.println("usage: " + u.line()));
        s.agreementLine(ExecutionStatus.ALL_CASES)
                .ifPresent(line -> out.println("judge agreement (Krippendorff's alpha): " + line));
        out.println("verdict: " + verdict(s));
        if (!s.gates().isEmpty()) {
            printGates(out, s.gates());
        }
        s.failureReason().ifPresent(r -> out.println("failure reason: " + r));
        s.budget().ifPresent(b -> out.println(b.line()));
        s.paused()
                .ifPresent(x -> out.println(x.line()
                        + (x.reason().equals(RunPause.BUDGET)
                                ? " (it cannot cover the next model call); `vigilo run resume " + s.runId()
                                        + " --budget-usd N` raises it to N and continues it"
                                : "; `vigilo run resume " + s.runId() + "` continues it")));
        s.limiters().forEach(l -> out.println("limiter " + l.line()));
    }

    /**
     * {@code waiting for the store since 2026-11-30T05:47:18Z (local:/srv/objects, 1 worker): cannot write ...}: what
     * the run's workers wait for; their chunks keep their attempts.
     */
    static String waiting(ExecutionStatus.Wait w) {
        return w.describe() + " (" + CommandSupport.oneLine(w.target()) + ", " + w.workers() + " worker"
                + (w.workers() == 1 ? "" : "s") + "): " + CommandSupport.oneLine(w.error());
    }

    /** {@code passed}, {@code failed}, {@code inconclusive}, or what the run's state means instead. */
    static String verdict(ExecutionStatus s) {
        if (s.verdict().isPresent()) {
            return s.verdict().get();
        }
        return switch (s.status()) {
            case "failed" -> "none (the run failed before every case could run)";
            case "cancelled" -> "none (the run was cancelled)";
            default -> "not yet (the run has not settled)";
        };
    }

    /**
     * The gate table: one row per gate, with the Wilson interval of its pass rate at its confidence and its result
     * (PASS, FAIL, INCONCLUSIVE, or - while the run executes); then, in a run of several epochs, one line per gate
     * with its pass@k; then, per inconclusive gate, one line saying how many cases at its observed rate would decide
     * it.
     */
    static void printGates(PrintWriter out, List<GateResult> gates) {
        int width = Math.max(
                4, gates.stream().mapToInt(g -> g.name().length()).max().orElse(4));
        boolean oneLevel =
                gates.stream().map(g -> g.confidence().level()).distinct().count() <= 1;
        String ciHeader = (oneLevel && !gates.isEmpty() ? level(gates.get(0)) + " " : "") + "CI";
        String row = "%-" + width + "s  %7s  %8s  %6s  %6s  %7s  %9s  %-" + (oneLevel ? 16 : 24) + "s  %8s  %s%n";
        out.printf(
                row,
                "GATE",
                "PLANNED",
                "EXECUTED",
                "PASSED",
                "FAILED",
                "ERRORED",
                "PASS RATE",
                ciHeader,
                "MIN RATE",
                "RESULT");
        for (GateResult g : gates) {
            out.printf(
                    row,
                    g.name(),
                    g.planned(),
                    g.executed(),
                    g.passed(),
                    g.failed(),
                    g.errored(),
                    percent(g.passRate()),
                    interval(g) + (oneLevel ? "" : " at " + level(g)),
                    percent(g.minPassRate()),
                    result(g));
        }
        for (GateResult g : gates) {
            passAtK(g).ifPresent(out::println);
        }
        for (GateResult g : gates) {
            if (g.decision().equals(Optional.of(GateDecision.INCONCLUSIVE))) {
                out.println(inconclusive(g));
            }
        }
    }

    /**
     * For a run of several epochs, the line under the table with the gate's pass@k: {@code all pass@k over 120 cases
     * of 3 epochs: pass@1 0.62  pass@2 0.80  pass@3 0.91}; empty with one epoch.
     */
    static Optional<String> passAtK(GateResult g) {
        if (g.passAtK().isEmpty()) {
            return Optional.empty();
        }
        PassAtK p = g.passAtK().get();
        StringBuilder b = new StringBuilder(g.name())
                .append(" pass@k over ")
                .append(p.cases())
                .append(p.cases() == 1 ? " case" : " cases")
                .append(" of ")
                .append(p.epochs())
                .append(" epochs:");
        g.passAtKShown()
                .forEach((k, v) -> b.append(k == 1 ? " " : "  ")
                        .append("pass@")
                        .append(k)
                        .append(' ')
                        .append(String.format(Locale.ROOT, "%.2f", v)));
        return Optional.of(b.toString());
    }

    /** {@code PASS}, {@code FAIL}, {@code INCONCLUSIVE}, or {@code -} while undecided. */
    static String result(GateResult g) {
        return g.decision()
                .map(d -> switch (d) {
                    case PASSED -> "PASS";
                    case FAILED -> "FAIL";
                    case INCONCLUSIVE -> "INCONCLUSIVE";
                })
                .orElse("-");
    }

    /** The interval of the gate's pass rate: {@code [81.2%, 88.9%]}. */
    static String interval(GateResult g) {
        ProportionInterval i = g.interval();
        return "[" + percent(i.low()) + ", " + percent(i.high()) + "]";
    }

    /** The gate's confidence level as a percentage: {@code 95%}, {@code 99.9%}. */
    static String level(GateResult g) {
        return BigDecimal.valueOf(g.confidence().level())
                        .movePointRight(2)
                        .stripTrailingZeros()
                        .toPlainString()
                + "%";
    }

    /**
     * What the gate was decided on, after its name: {@code 75.0% >= 70.0%} or {@code 83.3% < 90.0%} for a gate
     * deciding on the point rate; for one deciding on the bound, its interval against the threshold: {@code 95% CI
     * [82.1%, 97.0%] >= 80.0%} (passed), {@code ... < 80.0%} (failed) or {@code ... holds 80.0%} (inconclusive).
     */
    static String rule(GateResult g) {
        String min = percent(g.minPassRate());
        if (g.decide() == Profile.Decide.POINT) {
            boolean met = g.passedGate().orElse(g.passRate() >= g.minPassRate());
            return percent(g.passRate()) + (met ? " >= " : " < ") + min;
        }
        String ci = level(g) + " CI " + interval(g);
        ProportionInterval i = g.interval();
        GateDecision d = g.decision()
                .orElse(
                        i.low() >= g.minPassRate()
                                ? GateDecision.PASSED
                                : i.high() < g.minPassRate() ? GateDecision.FAILED : GateDecision.INCONCLUSIVE);
        return ci
                + switch (d) {
                    case PASSED -> " >= ";
                    case FAILED -> " < ";
                    case INCONCLUSIVE -> " holds ";
                }
                + min;
    }

    /**
     * The line under the table for an inconclusive gate: {@code math is inconclusive: its 95% CI [59.6%, 98.2%] holds
     * its minimum 80.0%; 62 cases at the observed 90.0% (52 more than the 10 planned) would pass it}.
     */
    static String inconclusive(GateResult g) {
        ProportionInterval i = g.interval();
        String head = g.name() + " is inconclusive: its " + level(g) + " CI " + interval(g) + " holds its minimum "
                + percent(g.minPassRate()) + "; ";
        OptionalLong n = g.casesToDecide();
        if (n.isEmpty()) {
            return head + "no number of cases at the observed " + percent(i.rate()) + " would decide it"
                    + g.epochsAdvice();
        }
        return head + n.getAsLong() + " cases at the observed " + percent(i.rate()) + " ("
                + (n.getAsLong() - g.planned()) + " more than the " + g.planned() + " planned) would "
                + (i.rate() > g.minPassRate() ? "pass" : "fail") + " it" + g.epochsAdvice();
    }

    static String percent(double rate) {
        return String.format(Locale.ROOT, "%.1f%%", rate * 100);
    }
}
