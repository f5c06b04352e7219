package dev.vigilo.web;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import io.javalin.Javalin;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * {@code /metrics}, {@code /healthz} and {@code /readyz}, for a process that is not the dashboard (a worker: pass {@code
 * new WorkerMetrics(endpoint.registry())} as its {@link dev.vigilo.exec.worker.Worker.Listener}; {@code vigilo worker
 * --metrics-port} does). {@code /metrics} is Prometheus text, with the JVM's meters, under the same access rules as
 * the dashboard ({@link DashboardOptions}: loopback by default, a token on every request for any other bind, loopback
 * host names only on a loopback bind). The probes answer without the token (they tell only whether the process is
 * alive and ready, so orchestrators can call them): {@code /healthz} 200 {@code ok} while the process serves,
 * {@code /readyz} 200 {@code ready} or 503 {@code not ready: REASON} as its {@link Readiness} says. Everything else
 * answers 404.
 */
public final class MetricsEndpoint implements AutoCloseable {
    /** The probe paths, answered without the access token. */
    static final Set<String> PROBES = Set.of("/healthz", "/readyz");

    /**
     * Whether the process can do its work now, asked on every {@code /readyz}: empty when ready, else why not, one
     * line naming no secret. Called on a request thread; must return within a few seconds.
     */
    @FunctionalInterface
    public interface Readiness {
        /** Always ready. */
        Readiness ALWAYS = Optional::empty;

        /** Empty when ready; otherwise the reason it is not. */
        Optional<String> notReady();
    }

    private final Javalin app;
    private final PrometheusMeterRegistry registry;
    private final JvmGcMetrics gc;
    private final String token;
    private final boolean tokenRequired;

    private MetricsEndpoint(
            Javalin app, PrometheusMeterRegistry registry, JvmGcMetrics gc, String token, boolean tokenRequired) {
        this.app = app;
        this.registry = registry;
        this.gc = gc;
        this.token = token;
        this.tokenRequired = tokenRequired;
    }

    /**
     * Starts listening, always ready.
     *
     * @throws InvalidInputException the bind address is not an IP address
     * @throws UnavailableException  the port cannot be bound
     */
    public static MetricsEndpoint start(DashboardOptions options) {
        return start(options, Readiness.ALWAYS);
    }

    /**
     * Starts listening; {@code /readyz} asks {@code readiness}.
     *
     * @throws InvalidInputException the bind address is not an IP address
     * @throws UnavailableException  the port cannot be bound
     */
    public static MetricsEndpoint start(DashboardOptions options, Readiness readiness) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(readiness, "readiness");
        boolean loopback = options.loopback();
        boolean required = !loopback || options.token().isPresent();
        String token = options.token().orElseGet(AccessGuard::random);
        AccessGuard guard = new AccessGuard(loopback, options.bind(), token, required);
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        JvmGcMetrics gc = new JvmGcMetrics();
        gc.bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        Javalin app = Javalin.create(config -> {
            config.startup.showJavalinBanner = false;
            config.startup.showOldJavalinVersionWarning = false;
            config.jetty.host = options.bind();
            config.jetty.port = options.port();
            var r = config.routes;
            r.before(ctx -> {
                if (PROBES.contains(ctx.path())) {
                    guard.checkHost(ctx);
                } else {
                    guard.check(ctx);
                }
            });
            r.get(
                    "/metrics",
                    ctx -> ctx.contentType("text/plain; version=0.0.4; charset=utf-8")
                            .result(registry.scrape()));
            r.get(
                    "/healthz",
                    ctx -> ctx.contentType("text/plain; charset=utf-8").result("ok\n"));
            r.get("/readyz", ctx -> {
                Optional<String> why = readiness.notReady();
                ctx.status(why.isPresent() ? 503 : 200)
                        .contentType("text/plain; charset=utf-8")
                        .result(why.map(w -> "not ready: " + w).orElse("ready") + "\n");
            });
            r.exception(
                    AccessGuard.Refused.class,
                    (e, ctx) -> ctx.status(e.status)
                            .contentType("text/plain; charset=utf-8")
                            .result(e.getMessage() + "\n"));
            r.error(
                    404,
                    ctx -> ctx.contentType("text/plain; charset=utf-8")
                            .result("only /metrics, /healthz and /readyz are served here\n"));
        });
        try {
            app.start();
        } catch (RuntimeException e) {
            gc.close();
            registry.close();
            throw new UnavailableException(
                    "cannot listen on " + options.bind() + ":" + options.port() + " (" + e.getMessage()
                            + "); choose another port or address",
                    e);
        }
        return new MetricsEndpoint(app, registry, gc, token, required);
    }

    /** The registry served; add meters to it. */
    public MeterRegistry registry() {
        return registry;
    }

    public int port() {
        return app.port();
    }

    /** The access token (to print when it was generated for a non-loopback bind). */
    public String token() {
        return token;
    }

    /** Whether every request needs the token. */
    public boolean tokenRequired() {
        return tokenRequired;
    }

    @Override
    public void close() {
        app.stop();
        gc.close();
        registry.close();
    }
}
