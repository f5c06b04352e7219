package dev.vigilo.cli;

import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.worker.Worker;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * What {@code vigilo worker} reports on stderr while it runs: one line per run it settles (its verdict and gates, or
 * why it failed) and, on a terminal only, a summary every {@link #SUMMARY_EVERY} while work goes on. Thread-safe:
 * the worker's threads call it.
 */
final class WorkerProgress implements Worker.Listener, AutoCloseable {
    static final Duration SUMMARY_EVERY = Duration.ofSeconds(10);

    private final PrintWriter err;
    private final ExecutionStatusReader reader;
    private final AtomicLong chunks = new AtomicLong();
    private final AtomicLong cases = new AtomicLong();
    /** Cases carried forward (partial receipt chains, a rerun's kept cases): not executed here. */
    private final AtomicLong carried = new AtomicLong();

    private final AtomicLong reported = new AtomicLong();
    private final ScheduledExecutorService summary;

    WorkerProgress(PrintWriter err, ExecutionStatusReader reader, boolean terminal) {
        this.err = err;
        this.reader = reader;
        if (terminal) {
            summary = Executors.newSingleThreadScheduledExecutor(Threads.daemonFactory("worker-progress"));
            long every = SUMMARY_EVERY.toMillis();
            summary.scheduleWithFixedDelay(this::summarize, every, every, TimeUnit.MILLISECONDS);
        } else {
            summary = null;
        }
    }

    @Override
    public void chunkCompleted(UUID runId, long chunkIndex, int caseCount) {
        chunks.incrementAndGet();
        cases.addAndGet(caseCount);
    }

    @Override
    public void casesCarried(UUID runId, long chunkIndex, int count) {
        carried.addAndGet(count);
    }

    @Override
    public void runSettled(UUID runId, String status, Duration took) {
        String line;
        try {
            line = describe(reader.status(runId));
        } catch (RuntimeException e) {
            line = "run " + runId + " " + status;
        }
        synchronized (err) {
            err.println(line);
            err.flush();
        }
    }

    /** One line about a run that ended: {@code run ID settled: verdict passed (overall PASS 75.0% >= 70.0%, ...)}. */
    static String describe(ExecutionStatus s) {
        if (s.status().equals("failed")) {
            return "run " + s.runId() + " failed: "
                    + CommandSupport.oneLine(s.failureReason().orElse("(no reason)"));
        }
        String gates = s.gates().stream().map(WorkerProgress::gate).collect(Collectors.joining(", "));
        return "run " + s.runId() + " " + s.status() + ": verdict "
                + s.verdict().orElse("none") + (gates.isEmpty() ? "" : " (" + gates + ")");
    }

    /** {@code math FAIL 83.3% < 90.0%}; an inconclusive gate is never PASS or FAIL: {@code math INCONCLUSIVE 95% CI ...}. */
    private static String gate(GateResult g) {
        return g.name() + " " + ExecutionView.result(g) + " " + ExecutionView.rule(g);
    }

    private void summarize() {
        String line = summaryLine();
        if (line == null) {
            return; // nothing new: stay quiet
        }
        synchronized (err) {
            err.println(line);
            err.flush();
        }
    }

    /**
     * {@code worker: 12 chunks, 1100 cases executed so far} (and {@code , 100 carried forward} once a chunk carried
     * some: a resumed chunk's partial receipts, a rerun's kept cases), or null when no chunk completed since.
     */
    String summaryLine() {
        long done = cases.get() + carried.get();
        if (done == reported.getAndSet(done)) {
            return null;
        }
        long c = carried.get();
        return "worker: " + chunks.get() + " chunks, " + cases.get() + " cases executed"
                + (c == 0 ? "" : ", " + c + " carried forward") + " so far";
    }

    @Override
    public void close() {
        if (summary != null) {
            summary.shutdownNow();
        }
    }
}
