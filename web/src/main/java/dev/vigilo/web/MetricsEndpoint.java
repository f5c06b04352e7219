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

/**
 * {@code /metrics} alone, for a process that is not the dashboard (a worker: pass {@code new
 * WorkerMetrics(endpoint.registry())} as its {@link dev.vigilo.exec.worker.Worker.Listener}). Prometheus text format, with
 * the JVM's meters; the same access rules as the dashboard ({@link DashboardOptions}: loopback by default, a token on
 * every request for any other bind, loopback host names only on a loopback bind). Everything else answers 404.
 */
public final class MetricsEndpoint implements AutoCloseable {
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
     * Starts listening.
     *
     * @throws InvalidInputException the bind address is not an IP address
     * @throws UnavailableException  the port cannot be bound
     */
    public static MetricsEndpoint start(DashboardOptions options) {
        Objects.requireNonNull(options, "options");
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
            r.before(guard::check);
            r.get(
                    "/metrics",
                    ctx -> ctx.contentType("text/plain; version=0.0.4; charset=utf-8")
                            .result(registry.scrape()));
            r.exception(
                    AccessGuard.Refused.class,
                    (e, ctx) -> ctx.status(e.status)
                            .contentType("text/plain; charset=utf-8")
                            .result(e.getMessage() + "\n"));
            r.error(404, ctx -> ctx.contentType("text/plain; charset=utf-8").result("only /metrics is served here\n"));
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
