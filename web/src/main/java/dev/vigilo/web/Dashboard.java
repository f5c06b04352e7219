package dev.vigilo.web;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.Causes;
import dev.vigilo.common.errors.DatabaseErrors;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import io.javalin.http.staticfiles.Location;
import java.net.URI;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code vigilo serve}: the web dashboard and its JSON API over runs, transcripts, datasets and datagen experiments,
 * and {@code /metrics} (docs/web.md). Read-only apart from cancelling, pausing and resuming a run. Pages are rendered on the server;
 * large lists page on the server with keyset cursors, so no request loads a whole run.
 *
 * <p>Binds a loopback address unless told otherwise; any other bind requires an access token (given, or generated
 * here and available from {@link #token()} to print). {@link #close()} stops the server; the sources stay open (the
 * caller owns them).
 */
public final class Dashboard implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Dashboard.class);
    /** The dashboard's one mapper for what it writes (pages' JSON API, errors); reads go through {@link StoredJson}. */
    static final ObjectMapper JSON = new ObjectMapper();

    static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
            + " connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

    private final Javalin app;
    private final String token;
    private final boolean tokenRequired;
    private final String host;
    private final Stores stores;
    private final DashboardMetrics metrics;
    private final Optional<RunPages> runs;

    private Dashboard(
            Javalin app,
            String token,
            boolean tokenRequired,
            String host,
            Stores stores,
            DashboardMetrics metrics,
            Optional<RunPages> runs) {
        this.runs = runs;
        this.app = app;
        this.token = token;
        this.tokenRequired = tokenRequired;
        this.host = host;
        this.stores = stores;
        this.metrics = metrics;
    }

    /**
     * Starts the server.
     *
     * @throws InvalidInputException the bind address is not one of this machine
     * @throws UnavailableException  the port cannot be bound (in use, or not permitted)
     */
    public static Dashboard start(DashboardOptions options, DashboardSources sources) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(sources, "sources");
        boolean loopback = options.loopback();
        boolean required = !loopback || options.token().isPresent();
        String token = options.token().orElseGet(AccessGuard::random);
        AccessGuard guard = new AccessGuard(loopback, options.bind(), token, required);
        Optional<DashboardSources.Databases> databases = sources.databases();
        Stores stores = new Stores(databases.map(DashboardSources.Databases::storage));
        DashboardMetrics metrics = new DashboardMetrics(sources);
        Views views = new Views(
                guard.csrf(), databases.isPresent(), sources.datagenRoot().isPresent());
        Optional<RunPages> runs = databases.map(d -> new RunPages(d, stores, views, sources.workerCommand()));
        Optional<ComparePages> comparisons = runs.map(p -> new ComparePages(databases.get(), p.cases(), views));
        Optional<DatasetPages> datasets = databases.map(d -> new DatasetPages(d, stores, views));
        DatagenPages datagen = new DatagenPages(sources, views);
        SessionPages sessions =
                new SessionPages(new SessionFiles(sources.sessionFiles(), sources.sessionRoots()), views);
        Javalin app = Javalin.create(config -> {
            config.startup.showJavalinBanner = false;
            config.startup.showOldJavalinVersionWarning = false;
            config.jetty.host = options.bind();
            config.jetty.port = options.port();
            // Forms are tiny; anything bigger is not from this dashboard.
            config.http.maxRequestSize = 64 * 1024;
            config.staticFiles.enableWebjars();
            config.staticFiles.add(s -> {
                s.hostedPath = "/static";
                s.directory = "web/static";
                s.location = Location.CLASSPATH;
            });
            var r = config.routes;
            r.before(ctx -> {
                ctx.attribute("vigilo.start", System.nanoTime());
                securityHeaders(ctx);
                guard.check(ctx);
            });
            r.after(metrics::recordRequest);
            r.get("/", ctx -> ctx.redirect(databases.isPresent() ? "/runs" : "/sessions", HttpStatus.FOUND));
            r.get("/favicon.ico", ctx -> ctx.redirect("/static/favicon.svg", HttpStatus.MOVED_PERMANENTLY));
            runs.ifPresent(p -> {
                r.get("/runs", p::listPage);
                r.get("/runs/{run}", p::runPage);
                r.get("/runs/{run}/cases", p::casesPage);
                r.get("/runs/{run}/results.jsonl", p::resultsDownload);
                r.get("/runs/{run}/results.csv", p::resultsDownload);
                r.get("/runs/{run}/cases/{ordinal}", p::casePage);
                r.get("/runs/{run}/cases/{ordinal}/transcript", p.transcripts()::page);
                r.get("/runs/{run}/cases/{ordinal}/files/{index}", p::keptFile);
                r.post("/runs/{run}/cancel", p::cancelForm);
                r.post("/runs/{run}/pause", p::pauseForm);
                r.post("/runs/{run}/resume", p::resumeForm);
                r.get("/api/runs", p::listApi);
                r.get("/api/runs/{run}", p::runApi);
                r.get("/api/runs/{run}/throughput", p::throughputApi);
                r.get("/api/runs/{run}/cases", p::casesApi);
                r.get("/api/runs/{run}/cases/{ordinal}", p::caseApi);
                r.get("/api/runs/{run}/cases/{ordinal}/transcript", p.transcripts()::api);
                r.post("/api/runs/{run}/cancel", p::cancelApi);
                r.post("/api/runs/{run}/pause", p::pauseApi);
                r.post("/api/runs/{run}/resume", p::resumeApi);
            });
            // ---- human review (docs/web.md, "Human review"): the case page's form, its API, the run's overrides
            runs.map(RunPages::reviews).ifPresent(p -> {
                r.post("/runs/{run}/cases/{ordinal}/review", p::form);
                r.post("/api/runs/{run}/cases/{ordinal}/review", p::api);
                r.get("/api/runs/{run}/reviews", p::listApi);
            });
            // ---- end of human review
            // ---- the compare page's downloads of its flipped cases (docs/web.md)
            comparisons.ifPresent(p -> {
                r.get("/runs/{run}/compare/{other}/flips.jsonl", p::flipsDownload);
                r.get("/runs/{run}/compare/{other}/flips.csv", p::flipsDownload);
            });
            // ---- the results explorer (issue 28): case URLs by case id; the list itself keeps /runs/{run}/cases.
            runs.ifPresent(p -> {
                r.get("/runs/{run}/case", p.explorer()::caseById);
                r.get("/matrix", p.matrix()::page);
                r.get("/api/matrix", p.matrix()::api);
            });
            // ---- run groups (docs/web.md, "Run groups"): their list; a group opens as the matrix of its runs
            runs.ifPresent(p -> {
                r.get("/groups", p.groupList()::listPage);
                r.get("/api/groups", p.groupList()::listApi);
                r.get("/groups/{group}", p::groupPage);
                r.get("/api/groups/{group}", p::groupApi);
            });
            comparisons.ifPresent(p -> {
                r.get("/runs/{run}/compare", p::form);
                r.get("/runs/{run}/compare/{other}", p::page);
                r.get("/api/runs/{run}/compare/{other}", p::api);
            });
            datasets.ifPresent(p -> {
                r.get("/datasets", p::listPage);
                r.get("/datasets/{dataset}", p::datasetPage);
                r.get("/api/datasets", p::listApi);
                r.get("/api/datasets/{dataset}", p::datasetApi);
                r.get("/api/datasets/{dataset}/cases", p::casesApi);
            });
            r.get("/datagen", datagen::listPage);
            r.get("/datagen/{pipeline}/{experiment}", datagen::experimentPage);
            r.get("/datagen/{pipeline}/{experiment}/item", datagen::itemPage);
            r.get("/sessions", sessions::listPage);
            r.get("/sessions/view", sessions::viewPage);
            r.get("/metrics", metrics::scrape);
            r.get("/api/datagen", datagen::listApi);
            r.get("/api/datagen/{pipeline}/{experiment}", datagen::experimentApi);
            r.get("/api/datagen/{pipeline}/{experiment}/items", datagen::itemsApi);
            r.get("/api/datagen/{pipeline}/{experiment}/item", datagen::itemApi);
            r.get("/api/sessions/view", sessions::viewApi);
            r.exception(AccessGuard.Refused.class, (e, ctx) -> error(ctx, views, e.status, e.getMessage()));
            r.exception(VigiloException.class, (e, ctx) -> error(ctx, views, HttpErrors.status(e), e.getMessage()));
            r.exception(Exception.class, (e, ctx) -> {
                Optional<UnavailableException> down = DatabaseErrors.unavailable(e, "database", "retry");
                if (down.isPresent()) {
                    // An outage, not a bug: one line for the reader, no stack trace in the log.
                    LOG.warn("{} {}: {}", ctx.method(), ctx.path(), down.get().getMessage());
                    error(ctx, views, HttpStatus.SERVICE_UNAVAILABLE, down.get().getMessage());
                    return;
                }
                LOG.error("{} {} failed", ctx.method(), ctx.path(), e);
                error(ctx, views, HttpStatus.INTERNAL_SERVER_ERROR, "internal error (a bug): " + e);
            });
            r.error(404, ctx -> {
                // A 404 this dashboard answered (a run or case not found) has its page already; anything else (no
                // route matched: the framework's plain text) gets the dashboard's own page or JSON.
                if (ctx.attribute(ERROR_WRITTEN) == null) {
                    error(
                            ctx,
                            views,
                            HttpStatus.NOT_FOUND,
                            "no such page: " + ctx.path()
                                    + (ctx.path().startsWith("/api/") ? "" : "; the runs are listed at /runs"));
                }
            });
        });
        try {
            runs.ifPresent(RunPages::warm);
        } catch (RuntimeException e) {
            runs.ifPresent(RunPages::close);
            stores.close();
            metrics.close();
            throw e;
        }
        try {
            app.start();
        } catch (RuntimeException e) {
            runs.ifPresent(RunPages::close);
            stores.close();
            metrics.close();
            throw new UnavailableException(
                    "cannot listen on " + options.bind() + ":" + options.port() + " (" + Causes.rootMessage(e)
                            + "); choose another --port or --bind",
                    e);
        }
        return new Dashboard(app, token, required, options.bind(), stores, metrics, runs);
    }

    private static void securityHeaders(Context ctx) {
        ctx.header("Content-Security-Policy", CSP);
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.header("X-Frame-Options", "DENY");
        ctx.header("Referrer-Policy", "same-origin");
        ctx.header("Cache-Control", "no-store");
    }

    /** An error as JSON under {@code /api/}, as one line of text at {@code /metrics}, as a page elsewhere. */
    /** Request attribute: the response is an error this dashboard wrote (its page or JSON). */
    private static final String ERROR_WRITTEN = "vigilo.error-written";

    static void error(Context ctx, Views views, HttpStatus status, String message) {
        ctx.status(status);
        ctx.attribute(ERROR_WRITTEN, true);
        if (ctx.path().equals("/metrics")) {
            ctx.contentType("text/plain; charset=utf-8").result(message + "\n");
            return;
        }
        if (ctx.path().startsWith("/api/")) {
            ObjectNode o =
                    JSON.createObjectNode().put("status", status.getCode()).put("error", message);
            ctx.contentType("application/json").result(o.toString());
            return;
        }
        Map<String, Object> m = views.page(status.getCode() + " " + status.getMessage(), "none");
        m.put("status", status.getCode());
        m.put("reason", status.getMessage());
        m.put("message", message);
        views.render(ctx, "error", m);
    }

    /** Writes {@code value} as the JSON response. */
    static void json(Context ctx, Object value) {
        try {
            ctx.contentType("application/json").result(JSON.writeValueAsBytes(value));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON: " + e.getMessage(), e);
        }
    }

    /** The port the server listens on. */
    public int port() {
        return app.port();
    }

    /** The access token: required on every request when {@link #tokenRequired()}, else only for API writes. */
    public String token() {
        return token;
    }

    /** Whether every request needs the token (a non-loopback bind, or a token given). */
    public boolean tokenRequired() {
        return tokenRequired;
    }

    /**
     * The URL of {@code path} (starting with {@code /}) on this server, with the token landing when one is required,
     * so a browser opened on it is let in.
     */
    public URI url(String path) {
        String h = host.contains(":") ? "[" + host + "]" : host;
        if (h.equals("0.0.0.0") || h.equals("[::]")) {
            h = "127.0.0.1";
        }
        String sep = path.contains("?") ? "&" : "?";
        return URI.create("http://" + h + ":" + port() + path + (tokenRequired ? sep + "token=" + token : ""));
    }

    /** The registry behind {@code /metrics}: other components (a worker in the same process) may add meters. */
    public io.micrometer.core.instrument.MeterRegistry registry() {
        return metrics.registry();
    }

    @Override
    public void close() {
        app.stop();
        runs.ifPresent(RunPages::close);
        stores.close();
        metrics.close();
    }
}
