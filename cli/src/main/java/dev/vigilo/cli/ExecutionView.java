package dev.vigilo.cli;

import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateResult;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;

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
        out.println("verdict: " + verdict(s));
        if (!s.gates().isEmpty()) {
            printGates(out, s.gates());
        }
        s.failureReason().ifPresent(r -> out.println("failure reason: " + r));
    }

    /**
     * {@code waiting for the store since 2026-11-30T05:47:18Z (local:/srv/objects, 1 worker): cannot write ...}: what
     * the run's workers wait for; their chunks keep their attempts.
     */
    static String waiting(ExecutionStatus.Wait w) {
        return w.describe() + " (" + CommandSupport.oneLine(w.target()) + ", " + w.workers() + " worker"
                + (w.workers() == 1 ? "" : "s") + "): " + CommandSupport.oneLine(w.error());
    }

    /** {@code passed}, {@code failed}, or what the run's state means instead. */
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

    /** The gate table: one row per gate; the result column is PASS, FAIL, or - while the run executes. */
    static void printGates(PrintWriter out, List<GateResult> gates) {
        int width = Math.max(
                4, gates.stream().mapToInt(g -> g.name().length()).max().orElse(4));
        String row = "%-" + width + "s  %7s  %8s  %6s  %6s  %7s  %9s  %8s  %s%n";
        out.printf(
                row, "GATE", "PLANNED", "EXECUTED", "PASSED", "FAILED", "ERRORED", "PASS RATE", "MIN RATE", "RESULT");
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
                    percent(g.minPassRate()),
                    g.passedGate().map(ok -> ok ? "PASS" : "FAIL").orElse("-"));
        }
    }

    static String percent(double rate) {
        return String.format(Locale.ROOT, "%.1f%%", rate * 100);
    }
}
