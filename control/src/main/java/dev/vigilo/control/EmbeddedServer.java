package dev.vigilo.control;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.process.ProcessRef;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Client side of the shared embedded server: joins the server of a directory, starting a host for it if none is
 * serving, and registers this process as a client so the host keeps the server up until it is done.
 *
 * <p>Protocol, all under {@code server.lock}: register {@code clients/<pid>...}; if {@code server.properties} names
 * a live host whose PostgreSQL accepts connections, use it; otherwise stop a postmaster orphaned by a dead host,
 * launch a new host and wait for it to publish its state. The host stops only under the same lock, after finding no
 * live client, so a server is never stopped under a registered client. A registered client whose host dies
 * ({@link HostWatch}) goes through the same steps under the same lock ({@link #rejoin}), so of several clients finding
 * it gone at once the first starts a host and the others join it.
 */
final class EmbeddedServer {

    private static final Duration ORPHAN_STOP_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration HOST_EXIT_TIMEOUT = Duration.ofSeconds(15);
    private static final Duration REACHABLE_GRACE = Duration.ofSeconds(5);
    private static final int LOG_TAIL_LINES = 20;

    private EmbeddedServer() {}

    /**
     * Joins (or starts) the server in {@code directory}.
     *
     * @throws ControlDatabaseException if the server can neither be joined nor started within
     *                                  {@link EmbeddedOptions#startTimeout()}
     */
    static Lease acquire(Path directory, EmbeddedOptions options) {
        EmbeddedLayout layout = new EmbeddedLayout(directory);
        String where = layout.root().toString();
        try {
            Files.createDirectories(layout.clientsDirectory());
        } catch (IOException e) {
            throw new ControlDatabaseException(
                    where,
                    "Cannot create the embedded PostgreSQL directory " + where + ": " + e
                            + ". Check the permissions of the Vigilo home, or use an existing server with --control-db / VIGILO_CONTROL_DB.",
                    e);
        }
        ClientRegistry registry = new ClientRegistry(layout.clientsDirectory());
        return underLock(layout, options, () -> {
            Path clientFile = registry.register(ProcessRef.current());
            try {
                return new Lease(layout, options, joinOrStart(layout, options), clientFile);
            } catch (InterruptedException | RuntimeException e) {
                Files.deleteIfExists(clientFile);
                throw e;
            }
        });
    }

    /**
     * For a client already registered ({@code clientFile}) whose host is gone: under the lock, as {@link #acquire}
     * does, joins the host another client started meanwhile or starts one, and returns its state. Registers the client
     * again if its file went missing.
     *
     * @throws ControlDatabaseException if no host can be joined or started now (retrying later may help)
     */
    static ServerState rejoin(EmbeddedLayout layout, EmbeddedOptions options, Path clientFile) {
        return underLock(layout, options, () -> {
            if (!Files.exists(clientFile)) {
                Files.createDirectories(clientFile.getParent());
                Files.writeString(clientFile, "pid=" + ProcessHandle.current().pid() + "\n");
            }
            return joinOrStart(layout, options);
        });
    }

    /** What runs under the server lock. */
    private interface Locked<T> {
        T run() throws InterruptedException, IOException;
    }

    /** Runs {@code action} holding {@code server.lock}, reporting every failure as one clear error. */
    private static <T> T underLock(EmbeddedLayout layout, EmbeddedOptions options, Locked<T> action) {
        String where = layout.root().toString();
        // A client may hold the lock for a whole host start; wait a little longer than that.
        Duration lockTimeout = options.startTimeout().plus(ORPHAN_STOP_TIMEOUT).plus(HOST_EXIT_TIMEOUT);
        try {
            ServerLock lock = ServerLock.acquire(layout.lockFile(), lockTimeout);
            try {
                return action.run();
            } finally {
                lock.close();
            }
        } catch (ServerLock.LockTimeoutException e) {
            throw new ControlDatabaseException(
                    where,
                    "Another Vigilo process has held " + layout.lockFile() + " for over " + lockTimeout.toSeconds()
                            + " s while starting the embedded PostgreSQL server; see " + layout.logFile() + ".",
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancelledException(
                    "Interrupted while joining the embedded PostgreSQL server in " + where + ".", e);
        } catch (IOException | UncheckedIOException e) {
            throw new ControlDatabaseException(
                    where,
                    "Cannot use the embedded PostgreSQL directory " + where + ": " + e.getMessage()
                            + ". Check its permissions and free space.",
                    e);
        } catch (IllegalStateException e) {
            throw new ControlDatabaseException(
                    where,
                    "Cannot start the embedded PostgreSQL server in " + where + ": " + e.getMessage() + ". See "
                            + layout.logFile() + ".",
                    e);
        }
    }

    private static ServerState joinOrStart(EmbeddedLayout layout, EmbeddedOptions options)
            throws InterruptedException, IOException {
        Optional<ServerState> published = ServerState.readFrom(layout.stateFile());
        if (published.isPresent() && published.get().host().isAlive()) {
            ServerState state = published.get();
            if (awaitReachable(state.port(), REACHABLE_GRACE)) {
                return state;
            }
            // The host lives but PostgreSQL does not answer (the host exits when the postmaster dies, so this is
            // a host that is stuck); replace it rather than leave every client failing.
            terminate(state.host(), layout);
        }
        // No host: a postmaster may have outlived one killed with -9. Stop it so a new host can own the data.
        Postmaster.clearOrphan(layout.dataDirectory(), ORPHAN_STOP_TIMEOUT);
        Files.deleteIfExists(layout.stateFile());
        return startHost(layout, options, published.map(ServerState::port).orElse(0));
    }

    private static ServerState startHost(EmbeddedLayout layout, EmbeddedOptions options, int preferredPort)
            throws InterruptedException {
        String token = newToken();
        Process host = HostLauncher.launch(layout, token, options.idleGrace(), preferredPort);
        long deadline = System.nanoTime() + options.startTimeout().toNanos();
        while (true) {
            Optional<ServerState> state = ServerState.readFrom(layout.stateFile())
                    .filter(s -> s.token().equals(token));
            if (state.isPresent() && isReachable(state.get().port())) {
                return state.get();
            }
            if (!host.isAlive() && state.isEmpty()) {
                throw new ControlDatabaseException(
                        layout.root().toString(),
                        "The embedded PostgreSQL server in " + layout.root()
                                + " failed to start (server host exited with status " + host.exitValue() + "). See "
                                + layout.logFile()
                                + "; its last lines:\n" + tail(layout.logFile())
                                + "\nTo use an existing PostgreSQL server instead, set --control-db / VIGILO_CONTROL_DB.",
                        null);
            }
            if (System.nanoTime() - deadline >= 0) {
                host.destroy();
                if (!host.waitFor(HOST_EXIT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    host.destroyForcibly();
                }
                throw new ControlDatabaseException(
                        layout.root().toString(),
                        "The embedded PostgreSQL server in " + layout.root()
                                + " did not start within "
                                + options.startTimeout().toSeconds() + " s. See " + layout.logFile()
                                + "; its last lines:\n" + tail(layout.logFile())
                                + "\nTo use an existing PostgreSQL server instead, set --control-db / VIGILO_CONTROL_DB.",
                        null);
            }
            Thread.sleep(50);
        }
    }

    private static void terminate(ProcessRef host, EmbeddedLayout layout) throws InterruptedException {
        Optional<ProcessHandle> handle = ProcessHandle.of(host.pid());
        if (handle.isEmpty()) {
            return;
        }
        handle.get().destroy(); // SIGTERM: the host's shutdown hook stops PostgreSQL and withdraws its state
        long deadline = System.nanoTime() + HOST_EXIT_TIMEOUT.toNanos();
        while (ProcessRef.isRunning(handle.get())) {
            if (System.nanoTime() - deadline >= 0) {
                throw new IllegalStateException("the server host (pid " + host.pid() + ") for " + layout.root()
                        + " serves no connections and does not exit; kill it and retry");
            }
            Thread.sleep(50);
        }
    }

    private static boolean awaitReachable(int port, Duration grace) throws InterruptedException {
        long deadline = System.nanoTime() + grace.toNanos();
        while (!isReachable(port)) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.sleep(100);
        }
        return true;
    }

    private static boolean isReachable(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static String newToken() {
        byte[] bytes = new byte[12];
        new SecureRandom().nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(cannot read " + log + ": " + e.getMessage() + ")";
        }
    }

    /**
     * This process's hold on the server: while it is open the server keeps running, and a {@link HostWatch} replaces
     * the host should it die (the server with it, or alone). {@link #close()} stops the watch and unregisters; it is
     * idempotent, and a process that dies without closing is unregistered by the host.
     */
    static final class Lease implements AutoCloseable {
        private final Path clientFile;
        private final HostWatch watch;
        private final AtomicBoolean closed = new AtomicBoolean();

        Lease(EmbeddedLayout layout, EmbeddedOptions options, ServerState state, Path clientFile) {
            this.clientFile = Objects.requireNonNull(clientFile, "clientFile");
            this.watch = HostWatch.start(layout, state, () -> rejoin(layout, options, clientFile));
        }

        int port() {
            return watch.state().port();
        }

        String jdbcUrl() {
            return "jdbc:postgresql://localhost:" + port() + "/" + EmbeddedServerHost.DATABASE + "?user="
                    + EmbeddedServerHost.USER;
        }

        @Override
        public void close() {
            if (closed.getAndSet(true)) {
                return;
            }
            // First the watch, so that it cannot start a host for a client that is leaving.
            watch.close();
            try {
                Files.deleteIfExists(clientFile);
            } catch (IOException e) {
                // The host prunes the file once this process has exited; the server only lives a little longer.
            }
        }
    }
}
