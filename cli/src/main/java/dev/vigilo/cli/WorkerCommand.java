package dev.vigilo.cli;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.worker.Worker;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo worker}: executes the chunks of dispatchable runs until stopped (docs/execution.md, "Workers"). Start
 * as many as wanted, on any machines that share the control database and the object store. SIGTERM or Ctrl-C stops
 * it gracefully: it stops claiming, interrupts running agents, gives held chunks back to the queue, prints its summary
 * and exits 130.
 */
@Command(
        name = "worker",
        mixinStandardHelpOptions = true,
        description = {
            "Execute the chunks of dispatchable runs: claim, run the agent and evaluators per case, commit a receipt"
                    + " per chunk, settle runs whose chunks all ended, and resume admissions whose creator stopped.",
            "Runs until stopped; SIGTERM or Ctrl-C gives held chunks back to the queue and exits 130. With"
                    + " --exit-when-idle it exits 0 once no run has work left (for scripts and CI).",
            "Progress goes to stderr (one line per settled run; on a terminal also a summary every 10 s); the exit"
                    + " summary to stdout."
        })
final class WorkerCommand implements Callable<Integer> {
    /** Cases run at once by default: enough to overlap agents that wait on I/O, modest for a laptop. */
    static final int DEFAULT_CONCURRENCY = 4;

    @Spec
    CommandSpec spec;

    @Option(
            names = "--concurrency",
            paramLabel = "N",
            defaultValue = "" + DEFAULT_CONCURRENCY,
            description = "Cases (and chunks) executed at once, 1..256 (default ${DEFAULT-VALUE}).")
    int concurrency;

    @Option(names = "--exit-when-idle", description = "Exit 0 once no run has claimable or leased work left.")
    boolean exitWhenIdle;

    @Option(names = "--json", description = "Print the exit summary as one JSON object.")
    boolean json;

    @Override
    public Integer call() {
        if (concurrency < 1 || concurrency > 256) {
            throw new InvalidInputException("--concurrency must be between 1 and 256, got " + concurrency
                    + "; for example --concurrency " + DEFAULT_CONCURRENCY);
        }
        PrintWriter out = CommandSupport.out(spec);
        PrintWriter err = CommandSupport.err(spec);
        try (SignalStop signal = SignalStop.install();
                Connections connections = CommandSupport.root(spec).connections()) {
            Placements placements = connections.placements();
            Worker.Report report;
            Worker worker;
            try (WorkerProgress progress =
                    new WorkerProgress(err, new ExecutionStatusReader(placements), System.console() != null)) {
                worker = new Worker(
                        placements,
                        connections.storage(),
                        Worker.Options.defaults(concurrency, exitWhenIdle),
                        progress);
                signal.onSignal(worker::stop);
                synchronized (err) {
                    err.printf(
                            "worker %s: concurrency %d, execution databases %s; %s%n",
                            worker.id(),
                            concurrency,
                            String.join(", ", placements.aliases()),
                            exitWhenIdle ? "exits when no work is left" : "stop with Ctrl-C");
                    err.flush();
                }
                report = worker.run();
            }
            String stopped = signal.signalled() ? "signal" : exitWhenIdle ? "idle" : "stopped";
            if (json) {
                out.println(Json.write(summary(worker, stopped, report)));
            } else {
                out.printf(
                        "worker %s stopped (%s): %d chunks completed, %d cases executed, %d chunks requeued,"
                                + " %d chunks failed, %d results fenced, %d admissions resumed, %d runs settled%n",
                        worker.id(),
                        stopped,
                        report.chunksCompleted(),
                        report.casesExecuted(),
                        report.chunksRequeued(),
                        report.chunksFailed(),
                        report.chunksFenced(),
                        report.admissions(),
                        report.settlements());
            }
            out.flush();
            err.flush();
            return signal.signalled() ? ExitCode.INTERRUPTED : ExitCode.OK;
        }
    }

    private static Map<String, Object> summary(Worker worker, String stopped, Worker.Report r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("worker_id", worker.id().toString());
        m.put("stopped", stopped);
        m.put("chunks_completed", r.chunksCompleted());
        m.put("cases_executed", r.casesExecuted());
        m.put("chunks_requeued", r.chunksRequeued());
        m.put("chunks_failed", r.chunksFailed());
        m.put("chunks_fenced", r.chunksFenced());
        m.put("admissions", r.admissions());
        m.put("settlements", r.settlements());
        return m;
    }
}
