package dev.vigilo.control;

import dev.vigilo.common.process.ProcessRef;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The server host: a small detached JVM that owns the embedded PostgreSQL server of one directory. Not an API;
 * {@link HostLauncher} starts it as {@code java -cp <classpath> dev.vigilo.control.EmbeddedServerHost <directory>
 * <token> <idle-grace-millis> <preferred-port>} with stdout and stderr appended to {@code server.log}.
 *
 * <p>It exists because zonky stops its server when the JVM that started it exits; a Vigilo command must be able to
 * exit while other commands still use the server. The host
 * <ol>
 *   <li>starts PostgreSQL on {@code data/} (creating it on first use) and the {@code vigilo} database,</li>
 *   <li>publishes {@link ServerState} in {@code server.properties},</li>
 *   <li>prunes dead clients from {@code clients/} and, once none has been alive for the idle grace period, takes
 *       {@code server.lock}, checks again, removes the state file, stops PostgreSQL ({@code pg_ctl stop -m fast})
 *       and exits,</li>
 *   <li>also stops (and exits) when PostgreSQL dies under it, when its data directory is deleted, or when it is
 *       itself terminated (SIGTERM, SIGINT); if {@code pg_ctl stop} cannot stop the server, it signals the
 *       postmaster directly.</li>
 * </ol>
 * A host killed with SIGKILL leaves its postmaster running; the next client stops it ({@link Postmaster#clearOrphan})
 * before starting a new host.
 * Exit status: 0 after a clean stop, 1 if PostgreSQL failed to start or died, 2 on bad arguments.
 */
final class EmbeddedServerHost {

    /** The database Vigilo uses inside the embedded server (the {@code postgres} database stays for maintenance). */
    static final String DATABASE = "vigilo";

    static final String USER = "postgres";

    private final EmbeddedLayout layout;
    private final String token;
    private final Duration idleGrace;
    private final int preferredPort;
    private final ClientRegistry clients;
    private final AtomicBoolean stopped = new AtomicBoolean();

    EmbeddedServerHost(EmbeddedLayout layout, String token, Duration idleGrace, int preferredPort) {
        this.layout = Objects.requireNonNull(layout, "layout");
        this.token = Objects.requireNonNull(token, "token");
        this.idleGrace = Objects.requireNonNull(idleGrace, "idleGrace");
        this.preferredPort = preferredPort;
        this.clients = new ClientRegistry(layout.clientsDirectory());
    }

    public static void main(String[] args) {
        if (args.length != 4) {
            log("usage: EmbeddedServerHost <directory> <token> <idle-grace-millis> <preferred-port>");
            System.exit(2);
        }
        EmbeddedServerHost host;
        try {
            host = new EmbeddedServerHost(
                    new EmbeddedLayout(Path.of(args[0])),
                    args[1],
                    Duration.ofMillis(Long.parseLong(args[2])),
                    Integer.parseInt(args[3]));
        } catch (RuntimeException e) {
            log("bad arguments: " + e);
            System.exit(2);
            return;
        }
        System.exit(host.run());
    }

    int run() {
        log("host pid " + ProcessHandle.current().pid() + " starting PostgreSQL in " + layout.dataDirectory());
        Server server;
        try {
            server = start();
        } catch (IOException | RuntimeException e) {
            log("PostgreSQL failed to start: " + e);
            e.printStackTrace(System.out);
            return 1;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(server, "host terminated"), "vigilo-pg-stop"));
        try {
            ensureDatabase(server.postgres());
            new ServerState(token, server.postgres().getPort(), ProcessRef.current(), server.postmasterPid())
                    .writeTo(layout.stateFile());
            log("serving on port " + server.postgres().getPort() + ", postmaster pid " + server.postmasterPid()
                    + ", idle grace " + idleGrace.toMillis() + " ms");
            return watch(server);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop(server, "interrupted");
            return 1;
        } catch (SQLException | RuntimeException e) {
            log("host failed: " + e);
            e.printStackTrace(System.out);
            stop(server, "host failed");
            return 1;
        }
    }

    /** A started PostgreSQL and its postmaster's pid, which outlives pg_ctl's view of it if the data directory goes. */
    private record Server(EmbeddedPostgres postgres, long postmasterPid) {}

    private Server start() throws IOException {
        EmbeddedPostgres postgres = startPostgres();
        try {
            long postmasterPid = Postmaster.recordedPid(layout.dataDirectory())
                    .orElseThrow(() -> new IllegalStateException("PostgreSQL started but wrote no postmaster.pid"));
            return new Server(postgres, postmasterPid);
        } catch (RuntimeException e) {
            postgres.close();
            throw e;
        }
    }

    private EmbeddedPostgres startPostgres() throws IOException {
        return EmbeddedPostgres.builder()
                .setDataDirectory(layout.dataDirectory())
                .setCleanDataDirectory(false)
                // This JVM's exit is handled by our own hook, which also withdraws the state file.
                .setRegisterShutdownHook(false)
                .setPort(choosePort())
                .setPGStartupWait(Duration.ofSeconds(60))
                // zonky runs postgres with -F (fsync off) and synchronous_commit off, fine for throwaway test
                // databases but not for a persistent control database: later -c options override them.
                .setServerConfig("fsync", "on")
                .setServerConfig("synchronous_commit", "on")
                .setServerConfig("max_connections", "100")
                // TCP on loopback only. No Unix socket: its lock file in /tmp names the postmaster's pid and would
                // block the next start on the same port after a crash, and Vigilo connects over TCP anyway.
                .setServerConfig("listen_addresses", "localhost")
                .setServerConfig("unix_socket_directories", "")
                // Locale-independent collation: the data directory must not depend on the user's LANG or glibc.
                .setLocaleConfig("locale-provider", "builtin")
                .setLocaleConfig("builtin-locale", "C.UTF-8")
                .setLocaleConfig("locale", "C")
                .setOutputRedirector(ProcessBuilder.Redirect.INHERIT)
                .setErrorRedirector(ProcessBuilder.Redirect.INHERIT)
                .start();
    }

    /** Reuses the previous port when it is free, so clients of a server that was replaced reconnect transparently. */
    private int choosePort() throws IOException {
        if (preferredPort > 0) {
            try (ServerSocket probe = new ServerSocket(preferredPort, 1, InetAddress.getLoopbackAddress())) {
                return probe.getLocalPort();
            } catch (IOException e) {
                log("port " + preferredPort + " is taken, choosing another");
            }
        }
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return probe.getLocalPort();
        }
    }

    private static void ensureDatabase(EmbeddedPostgres postgres) throws SQLException {
        try (Connection connection = postgres.getPostgresDatabase().getConnection();
                Statement statement = connection.createStatement()) {
            boolean exists;
            try (ResultSet rows =
                    statement.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + DATABASE + "'")) {
                exists = rows.next();
            }
            if (!exists) {
                statement.execute("CREATE DATABASE " + DATABASE);
                log("created database " + DATABASE);
            }
        }
    }

    private int watch(Server server) throws InterruptedException {
        long pollMillis = Math.max(50, Math.min(1_000, idleGrace.toMillis() / 4));
        Instant idleSince = null;
        int lastLive = -1;
        while (true) {
            Thread.sleep(pollMillis);
            if (!ProcessRef.isRunning(server.postmasterPid())) {
                log("PostgreSQL (pid " + server.postmasterPid() + ") exited unexpectedly; see the lines above");
                stop(server, "postmaster died");
                return 1;
            }
            if (!Files.isDirectory(layout.dataDirectory())) {
                // Someone deleted the Vigilo home (or a test its temporary directory): nothing left to serve.
                stop(server, "data directory " + layout.dataDirectory() + " was removed");
                return 1;
            }
            int live = clients.pruneAndCountLive();
            if (live != lastLive) {
                // In server.log for whoever wonders why the server still runs (or stops): what the host saw.
                log("live clients: " + live);
                lastLive = live;
            }
            if (live > 0) {
                idleSince = null;
            } else if (idleSince == null) {
                idleSince = Instant.now();
            } else if (!Instant.now().isBefore(idleSince.plus(idleGrace)) && stopIfStillIdle(server)) {
                return 0;
            }
        }
    }

    /** Under the lock no client can be joining; if there is still none, withdraw and stop. */
    private boolean stopIfStillIdle(Server server) throws InterruptedException {
        ServerLock lock = ServerLock.acquire(layout.lockFile(), Duration.ofMinutes(10));
        try {
            if (clients.pruneAndCountLive() > 0) {
                return false;
            }
            // Withdraw first: a client that takes the lock after us must start a new host, not join this one.
            ServerState.deleteIfOwned(layout.stateFile(), token);
            stop(server, "no client for " + idleGrace.toMillis() + " ms");
            return true;
        } finally {
            lock.close();
        }
    }

    private void stop(Server server, String reason) {
        if (stopped.getAndSet(true)) {
            return;
        }
        log("stopping PostgreSQL: " + reason);
        try {
            ServerState.deleteIfOwned(layout.stateFile(), token);
        } catch (RuntimeException e) {
            log("cannot withdraw the state file: " + e);
        }
        try {
            server.postgres().close(); // pg_ctl stop -m fast; zonky logs rather than throws when that fails
        } catch (IOException | RuntimeException e) {
            log("pg_ctl stop failed: " + e);
        }
        // pg_ctl finds the server through postmaster.pid; without it (data directory removed) signal it directly.
        try {
            Optional<ProcessHandle> postmaster =
                    ProcessHandle.of(server.postmasterPid()).filter(ProcessRef::isRunning);
            if (postmaster.isPresent()) {
                log("PostgreSQL still running after pg_ctl stop; signalling pid " + server.postmasterPid());
                Postmaster.stop(postmaster.get(), Duration.ofSeconds(20));
            }
            log("PostgreSQL stopped");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log("interrupted while stopping PostgreSQL");
        } catch (RuntimeException e) {
            log("stopping PostgreSQL failed: " + e);
        }
    }

    private static void log(String message) {
        System.out.println(Instant.now() + " [vigilo-host] " + message);
        System.out.flush();
    }
}
