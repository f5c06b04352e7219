package dev.vigilo.web;

import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.datagen.ExperimentStatus;
import dev.vigilo.datagen.Experiments;
import dev.vigilo.exec.view.RunCatalog;
import io.javalin.http.Context;
import io.javalin.router.Endpoint;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code /metrics} of {@code vigilo serve} (Prometheus text format, through Micrometer). What the databases and logs
 * say is read when scraped, at most once per {@link #FRESH} (datagen logs once per {@link #DATAGEN_FRESH}, at most
 * {@link #MAX_EXPERIMENTS} of them, since each is folded whole):
 *
 * <ul>
 *   <li>{@code vigilo_runs{status}}: runs by status;
 *   <li>{@code vigilo_active_run_chunks{state}}, {@code vigilo_active_run_cases_done},
 *       {@code vigilo_active_run_cases_planned}: chunks and cases of the runs still executing;
 *   <li>{@code vigilo_run_pending_chunks{run}}: the queued chunks of each run still executing (what a worker
 *       autoscaler follows, docs/deployment.md);
 *   <li>{@code vigilo_workers_leasing}: workers holding a live chunk lease (their heartbeats keep it);
 *   <li>{@code vigilo_execution_databases_unreachable};
 *   <li>{@code vigilo_datagen_items{pipeline,experiment,status}}, {@code
 *       vigilo_datagen_failures{pipeline,experiment,error_type}};
 *   <li>{@code vigilo_http_server_requests_seconds{method,route,status}}: this server's own answers, by route
 *       template (see {@link #route});
 *   <li>JVM memory, threads, GC, CPU and uptime.
 * </ul>
 */
final class DashboardMetrics implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DashboardMetrics.class);
    static final Duration FRESH = Duration.ofSeconds(5);
    static final Duration DATAGEN_FRESH = Duration.ofSeconds(30);
    static final int MAX_EXPERIMENTS = 50;

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Optional<RunCatalog> runs;
    private final Optional<LogRoot> datagenRoot;
    private final MultiGauge runsByStatus;
    private final MultiGauge chunksByState;
    private final MultiGauge pendingByRun;
    private final MultiGauge datagenItems;
    private final MultiGauge datagenFailures;
    private final AtomicLong casesDone = new AtomicLong();
    private final AtomicLong casesPlanned = new AtomicLong();
    private final AtomicLong workers = new AtomicLong();
    private final AtomicLong unreachable = new AtomicLong();
    private final JvmGcMetrics gc = new JvmGcMetrics();
    private long refreshedAt = Long.MIN_VALUE;
    private long datagenRefreshedAt = Long.MIN_VALUE;

    DashboardMetrics(DashboardSources sources) {
        this.runs = sources.databases().map(d -> new RunCatalog(d.placements()));
        this.datagenRoot = sources.datagenRoot();
        runsByStatus =
                MultiGauge.builder("vigilo_runs").description("Runs by status").register(registry);
        chunksByState = MultiGauge.builder("vigilo_active_run_chunks")
                .description("Chunks of the runs still executing (pending or running), by state")
                .register(registry);
        pendingByRun = MultiGauge.builder("vigilo_run_pending_chunks")
                .description("Queued chunks (claimable, not leased) of each run still executing: the pending work"
                        + " workers scale on")
                .register(registry);
        datagenItems = MultiGauge.builder("vigilo_datagen_items")
                .description("Datagen items by experiment and status")
                .register(registry);
        datagenFailures = MultiGauge.builder("vigilo_datagen_failures")
                .description("Datagen failed attempts (FAILED events) by experiment and error type")
                .register(registry);
        registry.gauge("vigilo_active_run_cases_done", casesDone);
        registry.gauge("vigilo_active_run_cases_planned", casesPlanned);
        registry.gauge("vigilo_workers_leasing", workers);
        registry.gauge("vigilo_execution_databases_unreachable", unreachable);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        gc.bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
    }

    MeterRegistry registry() {
        return registry;
    }

    void scrape(Context ctx) {
        refresh();
        ctx.contentType("text/plain; version=0.0.4; charset=utf-8").result(registry.scrape());
    }

    /** Reads the databases (and the datagen logs) again when what was read is older than the bounds above. */
    synchronized void refresh() {
        long now = System.nanoTime();
        if (runs.isPresent() && (refreshedAt == Long.MIN_VALUE || now - refreshedAt >= FRESH.toNanos())) {
            List<MultiGauge.Row<?>> rows = new ArrayList<>();
            for (Map.Entry<String, Long> e : runs.get().countByStatus().entrySet()) {
                rows.add(MultiGauge.Row.of(Tags.of("status", e.getKey()), e.getValue()));
            }
            runsByStatus.register(rows, true);
            RunCatalog.ActiveCounts c = runs.get().activeCounts();
            List<MultiGauge.Row<?>> chunks = new ArrayList<>();
            c.chunksByState().forEach((s, n) -> chunks.add(MultiGauge.Row.of(Tags.of("state", s), n)));
            chunksByState.register(chunks, true);
            List<MultiGauge.Row<?>> pending = new ArrayList<>();
            c.queuedByRun().forEach((run, n) -> pending.add(MultiGauge.Row.of(Tags.of("run", run.toString()), n)));
            // Overwrite: a run that stopped executing disappears from the scrape.
            pendingByRun.register(pending, true);
            casesDone.set(c.casesDone());
            casesPlanned.set(c.casesPlanned());
            workers.set(c.workersLeasing());
            unreachable.set(c.unreachable().size());
            refreshedAt = now;
        }
        if (datagenRoot.isPresent()
                && (datagenRefreshedAt == Long.MIN_VALUE || now - datagenRefreshedAt >= DATAGEN_FRESH.toNanos())) {
            List<MultiGauge.Row<?>> items = new ArrayList<>();
            List<MultiGauge.Row<?>> failures = new ArrayList<>();
            List<Experiments.ExperimentRef> all = Experiments.list(datagenRoot.get());
            for (Experiments.ExperimentRef e : all.subList(0, Math.min(all.size(), MAX_EXPERIMENTS))) {
                try {
                    ExperimentStatus s = Experiments.status(datagenRoot.get(), e.pipeline(), e.experiment());
                    Tags t = Tags.of("pipeline", e.pipeline(), "experiment", e.experiment());
                    items.add(MultiGauge.Row.of(t.and("status", "completed"), s.completed()));
                    items.add(MultiGauge.Row.of(t.and("status", "filtered"), s.filtered()));
                    items.add(MultiGauge.Row.of(t.and("status", "failed"), s.failed()));
                    items.add(MultiGauge.Row.of(t.and("status", "running"), s.running()));
                    s.failuresByType()
                            .forEach((type, n) -> failures.add(MultiGauge.Row.of(t.and("error_type", type), n)));
                } catch (RuntimeException ex) {
                    LOG.warn(
                            "metrics: cannot read experiment {}/{}: {}", e.pipeline(), e.experiment(), ex.getMessage());
                }
            }
            datagenItems.register(items, true);
            datagenFailures.register(failures, true);
            datagenRefreshedAt = now;
        }
    }

    /** Times one answered request (runs after every handler). */
    void recordRequest(Context ctx) {
        Long start = ctx.attribute("vigilo.start");
        if (start == null) {
            return;
        }
        Timer.builder("vigilo_http_server_requests")
                .description("Answers of this server")
                .tags("method", ctx.method().name(), "route", route(ctx), "status", Integer.toString(ctx.statusCode()))
                .register(registry)
                .record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    }

    /**
     * The template of the route that answered ({@code /runs/{run}}), never the path itself, so the label's values are
     * bounded by the routes: static files are {@code static}, anything no route matched is {@code unmatched}. (An
     * after-handler's own endpoint is {@code *}, so it is not the one to ask.)
     */
    static String route(Context ctx) {
        Endpoint matched;
        try {
            matched = ctx.endpoints().matchedHttpEndpoint();
        } catch (RuntimeException e) {
            matched = null;
        }
        if (matched != null) {
            return matched.path;
        }
        String path = ctx.path();
        return path.startsWith("/static/") || path.startsWith("/webjars/") ? "static" : "unmatched";
    }

    @Override
    public void close() {
        gc.close();
        registry.close();
    }
}
