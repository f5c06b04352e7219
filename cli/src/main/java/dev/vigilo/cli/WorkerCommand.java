package dev.vigilo.cli;

import dev.vigilo.agent.AgentEnvironment;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.web.DashboardOptions;
import dev.vigilo.web.MetricsEndpoint;
import dev.vigilo.web.WorkerMetrics;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
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
    /** Where the metrics access token comes from (never an option: it would show in the process list). */
    static final String METRICS_TOKEN_VARIABLE = "VIGILO_METRICS_TOKEN";

    @Spec
    CommandSpec spec;

    @Option(
            names = "--concurrency",
            paramLabel = "N",
            defaultValue = "" + DEFAULT_CONCURRENCY,
            description = "Case executions in flight at once, 1..4096 (default ${DEFAULT-VALUE}); an http agent"
                    + " without tools waits for its model without a thread.")
    int concurrency;

    @Option(names = "--exit-when-idle", description = "Exit 0 once no run has claimable or leased work left.")
    boolean exitWhenIdle;

    @Mixin
    JsonOption json;

    @Option(
            names = "--processes",
            paramLabel = "N",
            description = "Blocking calls run at once, 1..4096 (default: the concurrency, at most 256): command"
                    + " agents' processes, http agents with tools, judges and command evaluators; the rest queue.")
    Integer processes;

    @Option(
            names = "--metrics-port",
            paramLabel = "PORT",
            description = "Serve /metrics (Prometheus text), /healthz and /readyz on this port (0 for any free port;"
                    + " the address is printed to stderr). Off by default.")
    Integer metricsPort;

    @Option(
            names = "--metrics-bind",
            paramLabel = "ADDR",
            description = "Address the metrics listen on (default 127.0.0.1). Another address requires the token in "
                    + METRICS_TOKEN_VARIABLE + " on every /metrics request; the probes need none.")
    String metricsBind = DashboardOptions.LOOPBACK;

    @Override
    public Integer call() {
        if (concurrency < 1 || concurrency > Worker.Options.MAX_CONCURRENCY) {
            throw new InvalidInputException("--concurrency must be between 1 and " + Worker.Options.MAX_CONCURRENCY
                    + ", got " + concurrency + "; for example --concurrency " + DEFAULT_CONCURRENCY);
        }
        if (processes != null && (processes < 1 || processes > Worker.Options.MAX_CONCURRENCY)) {
            throw new InvalidInputException("--processes must be between 1 and " + Worker.Options.MAX_CONCURRENCY
                    + ", got " + processes + "; for example --processes 64");
        }
        Optional<DashboardOptions> metrics = metricsOptions();
        PrintWriter out = CommandSupport.out(spec);
        PrintWriter err = CommandSupport.err(spec);
        // The agents' HTTP client needs the TLS context at the first chunk; build it while the databases open.
        StartupWarmup.start(Set.of(StartupWarmup.Item.TLS_CONTEXT));
        try (SignalStop signal = SignalStop.install();
                Connections connections = CommandSupport.root(spec).connections()) {
            Placements placements = connections.placements();
            WorkerReadiness readiness =
                    new WorkerReadiness(connections.control().jdbi());
            Worker.Report report;
            Worker worker;
            try (MetricsEndpoint endpoint = metrics.map(o -> MetricsEndpoint.start(o, readiness))
                            .orElse(null);
                    WorkerProgress progress =
                            new WorkerProgress(err, new ExecutionStatusReader(placements), System.console() != null)) {
                Worker.Listener listener = endpoint == null
                        ? progress
                        : new BothListeners(progress, new WorkerMetrics(endpoint.registry()));
                Worker.Options options = Worker.Options.defaults(concurrency, exitWhenIdle);
                // Sandboxed cases get their directories under VIGILO_HOME/sandboxes/<worker id>/.
                worker = new Worker(
                        placements,
                        connections.storage(),
                        processes == null ? options : options.withProcesses(processes),
                        listener,
                        AgentEnvironment.system(),
                        CommandSupport.root(spec).environment().vigiloHome().resolve("sandboxes"));
                Worker stoppable = worker;
                signal.onSignal(() -> {
                    readiness.stopping();
                    stoppable.stop();
                });
                if (endpoint != null) {
                    synchronized (err) {
                        err.printf(
                                "worker metrics on http://%s:%d/metrics (probes /healthz, /readyz)%n",
                                metricsBind.contains(":") ? "[" + metricsBind + "]" : metricsBind, endpoint.port());
                        err.flush();
                    }
                }
                synchronized (err) {
                    err.printf(
                            "worker %s: concurrency %d, execution databases %s; %s%n",
                            worker.id(),
                            concurrency,
                            String.join(", ", placements.aliases()),
                            exitWhenIdle ? "exits when no work is left" : "stop with Ctrl-C");
                    err.flush();
                }
                readiness.started();
                try {
                    report = worker.run();
                } finally {
                    readiness.stopping();
                }
            }
            String stopped = signal.signalled() ? "signal" : exitWhenIdle ? "idle" : "stopped";
            if (json.requested()) {
                json.print(summary(worker, stopped, report));
            } else {
                out.printf(
                        "worker %s stopped (%s): %d chunks completed, %d cases executed, %d carried forward,"
                                + " %d chunks requeued,"
                                + " %d chunks failed, %d results fenced, %d admissions resumed, %d runs settled%n",
                        worker.id(),
                        stopped,
                        report.chunksCompleted(),
                        report.casesExecuted(),
                        report.casesCarried(),
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

    /** The metrics listener's options, when --metrics-port is given; checked before anything is opened. */
    private Optional<DashboardOptions> metricsOptions() {
        if (metricsPort == null) {
            return Optional.empty();
        }
        if (metricsPort < 0 || metricsPort > 65_535) {
            throw new InvalidInputException("--metrics-port " + metricsPort
                    + " is out of range; use 1..65535 (0 for any free port), for example --metrics-port 9400");
        }
        Optional<String> token = CommandSupport.root(spec).environment().get(METRICS_TOKEN_VARIABLE);
        DashboardOptions options;
        try {
            options = new DashboardOptions(metricsBind, metricsPort, token);
        } catch (InvalidInputException e) {
            // The dashboard's options name its own flag, --bind.
            throw new InvalidInputException(e.getMessage()
                    .replaceFirst("^--bind ", "--metrics-bind ")
                    .replace("the access token", METRICS_TOKEN_VARIABLE));
        }
        if (!options.loopback() && token.isEmpty()) {
            // A generated token would have to be printed, and a worker's output is often a log.
            throw new InvalidInputException("--metrics-bind " + metricsBind + " is not a loopback address: set "
                    + METRICS_TOKEN_VARIABLE + " to the access token (16..256 characters) scrapers must send");
        }
        return Optional.of(options);
    }

    private static Map<String, Object> summary(Worker worker, String stopped, Worker.Report r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("worker_id", worker.id().toString());
        m.put("stopped", stopped);
        m.put("chunks_completed", r.chunksCompleted());
        m.put("cases_executed", r.casesExecuted());
        m.put("cases_carried", r.casesCarried());
        m.put("chunks_requeued", r.chunksRequeued());
        m.put("chunks_failed", r.chunksFailed());
        m.put("chunks_fenced", r.chunksFenced());
        m.put("admissions", r.admissions());
        m.put("settlements", r.settlements());
        return m;
    }
}
