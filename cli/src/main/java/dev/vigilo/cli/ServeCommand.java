package dev.vigilo.cli;

import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.web.Dashboard;
import dev.vigilo.web.DashboardOptions;
import dev.vigilo.web.DashboardSources;
import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code vigilo serve}: the web dashboard over runs, transcripts, datasets and datagen (docs/web.md). */
@Command(
        name = "serve",
        mixinStandardHelpOptions = true,
        description = {
            "Serve the web dashboard: runs (gates, live progress, cases), transcripts, datasets, datagen experiments,"
                    + " a JSON API under /api/ and Prometheus metrics at /metrics. Read-only apart from cancelling"
                    + " a run. Runs until Ctrl-C.",
            "Binds 127.0.0.1 by default. Any other --bind requires an access token on every request: one is"
                    + " generated and printed unless --token or VIGILO_SERVE_TOKEN gives it."
        })
final class ServeCommand implements Callable<Integer> {
    static final String TOKEN_VARIABLE = "VIGILO_SERVE_TOKEN";

    @Spec
    CommandSpec spec;

    @Option(names = "--port", paramLabel = "N", description = "Port to listen on (default 7070; 0 for any free port).")
    int port = DashboardOptions.DEFAULT_PORT;

    @Option(
            names = "--bind",
            paramLabel = "ADDR",
            description = "Address to listen on (default 127.0.0.1). Another address requires the access token.")
    String bind = DashboardOptions.LOOPBACK;

    @Option(
            names = "--token",
            paramLabel = "TOKEN",
            description = "The access token (16..256 characters; overrides " + TOKEN_VARIABLE + "). Required on every"
                    + " request when given.")
    String token;

    @Option(names = "--durable-root", paramLabel = "R", description = DatagenCommand.DURABLE_ROOT_HELP)
    String durableRoot;

    @Option(names = "--store", paramLabel = "NAME", description = DatagenCommand.STORE_HELP)
    String store;

    @Override
    public Integer call() {
        VigiloCommand root = CommandSupport.root(spec);
        Optional<String> given =
                Optional.ofNullable(token).or(() -> root.environment().get(TOKEN_VARIABLE));
        DashboardOptions options = new DashboardOptions(bind, port, given);
        LogRoot datagen = DatagenCommand.durableRoot(durableRoot, store, root);
        PrintWriter out = CommandSupport.out(spec);
        try (Connections c = root.connections()) {
            DashboardSources sources = DashboardSources.all(
                            c.control().jdbi(),
                            c.placements(),
                            c.storage(),
                            Optional.of(datagen),
                            List.of(),
                            List.of(root.environment().vigiloHome()))
                    .withWorkerCommand(workerCommand(root));
            try (Dashboard dashboard = Dashboard.start(options, sources)) {
                out.println("Vigilo dashboard: " + dashboard.url("/"));
                if (dashboard.tokenRequired()) {
                    out.println(
                            given.isPresent()
                                    ? "every request needs the access token you gave (open the URL above, or send"
                                            + " \"Authorization: Bearer TOKEN\")"
                                    : "access token: " + dashboard.token()
                                            + " (every request needs it: open the URL above,"
                                            + " or send \"Authorization: Bearer TOKEN\")");
                }
                out.println("listening on " + bind + ":" + dashboard.port() + "; Ctrl-C stops it");
                out.flush();
                waitUntilInterrupted();
                out.println("stopped");
            }
        }
        return ExitCode.OK;
    }

    /**
     * The command line that starts a worker for this installation, shown on a run page while no worker works on its
     * run: this build's launcher ({@code ./vigilo} when the server runs in the launcher's directory, else its absolute
     * path; {@code vigilo} when the jar does not sit in a checkout beside one), {@code worker --exit-when-idle}, and
     * the global options this server was given ({@code --control-db} with its credentials masked by {@link
     * dev.vigilo.common.errors.Secrets#mask}).
     */
    static String workerCommand(VigiloCommand root) {
        StringBuilder b = new StringBuilder(launcher()).append(" worker --exit-when-idle");
        if (root.controlDb != null) {
            b.append(" --control-db ").append(dev.vigilo.common.errors.Secrets.mask(root.controlDb));
        }
        if (root.storageConfig != null) {
            b.append(" --storage-config ").append(root.storageConfig.toAbsolutePath());
        }
        if (root.executionConfig != null) {
            b.append(" --execution-config ").append(root.executionConfig.toAbsolutePath());
        }
        return b.toString();
    }

    /** The {@code vigilo} launcher of this build: the script two directories above {@code cli/target/vigilo-cli.jar}. */
    private static String launcher() {
        try {
            java.nio.file.Path jar = java.nio.file.Path.of(ServeCommand.class
                            .getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .toAbsolutePath();
            java.nio.file.Path target = jar.getParent();
            if (target != null
                    && target.getParent() != null
                    && target.getParent().getParent() != null) {
                java.nio.file.Path script = target.getParent().getParent().resolve("vigilo");
                if (java.nio.file.Files.isExecutable(script)) {
                    java.nio.file.Path cwd =
                            java.nio.file.Path.of("").toAbsolutePath().normalize();
                    return script.getParent().normalize().equals(cwd)
                            ? "./vigilo"
                            : script.normalize().toString();
                }
            }
        } catch (java.net.URISyntaxException | RuntimeException e) {
            // No code source to go by: the command's own name.
        }
        return "vigilo";
    }

    /** Serves until Ctrl-C (or the calling thread is interrupted); then the dashboard closes. */
    static void waitUntilInterrupted() {
        Interruptible.run(() -> {
            try {
                Thread.sleep(Long.MAX_VALUE);
            } catch (InterruptedException e) {
                // Ctrl-C: stop serving.
            }
            return null;
        });
    }
}
