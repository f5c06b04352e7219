package dev.vigilo.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.process.ProcessRef;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shared embedded server, exercised with real processes: clients are separate JVMs ({@link ClientProcess}), the
 * server host is the detached JVM they start, PostgreSQL is real. A short idle grace keeps the test quick.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EmbeddedServerTest {

    private static final Duration GRACE = Duration.ofSeconds(1);
    // Covers the very first start in a fresh environment, which unpacks the PostgreSQL binaries.
    private static final Duration READY = Duration.ofSeconds(60);
    // Grace, plus the host's poll interval, plus a PostgreSQL fast shutdown, with a wide margin for a slow machine.
    private static final Duration STOPPED = Duration.ofSeconds(20);
    private static final Duration EXIT = Duration.ofSeconds(30);

    @TempDir
    Path directory;

    private EmbeddedLayout layout;

    @BeforeEach
    void layout() {
        layout = new EmbeddedLayout(directory.resolve("postgres"));
    }

    @AfterEach
    void leaveNoServerBehind() throws Exception {
        List<ProcessHandle> leftovers = processesOf(layout.root());
        // Clean up even when the test failed half-way: leave no server running on the machine.
        leftovers.forEach(ProcessHandle::destroyForcibly);
        Postmaster.clearOrphan(layout.dataDirectory(), Duration.ofSeconds(20));
        assertThat(leftovers)
                .as("processes still running for %s", layout.root())
                .extracting(p -> p.pid() + " " + p.info().commandLine().orElse("?"))
                .isEmpty();
    }

    /** Hosts and postmasters name the directory on their command line. */
    private static List<ProcessHandle> processesOf(Path root) {
        return ProcessHandle.allProcesses()
                .filter(ProcessRef::isRunning)
                .filter(p -> p.info()
                        .commandLine()
                        .map(line -> line.contains(root.toString()))
                        .orElse(false))
                .filter(p -> !p.info().commandLine().orElse("").contains(EmbeddedClientMain.class.getSimpleName()))
                .toList();
    }

    @Test
    void processesShareOneServerThatOutlivesEachClientButNotTheLast() throws Exception {
        try (ClientProcess a = hold();
                ClientProcess b = hold();
                ClientProcess c = hold()) {
            String readyA = a.awaitLine("READY", READY);
            String readyB = b.awaitLine("READY", READY);
            String readyC = c.awaitLine("READY", READY);
            // One server: the same port and the same postmaster (its start time identifies it).
            assertThat(Stream.of(readyB, readyC)).allSatisfy(line -> {
                assertThat(ClientProcess.field(line, "port")).isEqualTo(ClientProcess.field(readyA, "port"));
                assertThat(ClientProcess.field(line, "postmasterStart"))
                        .isEqualTo(ClientProcess.field(readyA, "postmasterStart"));
            });
            ServerState state = currentState();
            assertThat(state.port()).isEqualTo(ClientProcess.field(readyA, "port"));
            assertThat(alive(state.postmasterPid())).isTrue();
            assertThat(listClients()).hasSize(3);
            assertDurableSettings(state.port());

            awaitLiveClients(state, 3);
            assertThat(b.finish(EXIT)).isZero();
            // The host it may have started does not hold the client's output open.
            assertThat(b.outputClosedWithin(Duration.ofSeconds(5))).isTrue();
            assertThat(c.finish(EXIT)).isZero();
            // The host's own account, not a wait on the wall clock: it saw the one client left and keeps serving.
            awaitLiveClients(state, 1);
            assertThat(Files.readString(layout.logFile())).doesNotContain("stopping PostgreSQL");
            assertThat(currentState()).isEqualTo(state);
            assertThat(alive(state.postmasterPid())).isTrue();

            try (ClientProcess d = hold()) {
                String readyD = d.awaitLine("READY", READY);
                assertThat(ClientProcess.field(readyD, "postmasterStart"))
                        .isEqualTo(ClientProcess.field(readyA, "postmasterStart"));
                assertThat(d.finish(EXIT)).isZero();
            }
            assertThat(a.finish(EXIT)).isZero();
            awaitStopped(state);
            assertThat(listClients()).isEmpty();
        }
    }

    @Test
    void killedClientDoesNotKeepTheServerAlive() throws Exception {
        try (ClientProcess client = hold()) {
            client.awaitLine("READY", READY);
            ServerState state = currentState();
            client.kill();
            awaitStopped(state);
            assertThat(listClients()).isEmpty();
        }
    }

    @Test
    void dataSurvivesServerRestarts() throws Exception {
        ServerState first;
        try (ClientProcess writer = client("write", "kept")) {
            writer.awaitLine("READY", READY);
            first = currentState();
            writer.awaitLine("CLOSED", EXIT);
            assertThat(writer.finish(EXIT)).isZero();
        }
        awaitStopped(first);
        try (ClientProcess reader = client("read")) {
            reader.awaitLine("READY", READY);
            ServerState second = currentState();
            assertThat(reader.awaitLine("ROWS=", EXIT)).isEqualTo("ROWS=kept");
            assertThat(reader.finish(EXIT)).isZero();
            assertThat(second.postmasterPid()).isNotEqualTo(first.postmasterPid());
            awaitStopped(second);
        }
    }

    @Test
    void postmasterOrphanedByAKilledHostIsReplaced() throws Exception {
        try (ClientProcess a = hold()) {
            a.awaitLine("READY", READY);
            ServerState first = currentState();
            ProcessHandle.of(first.host().pid()).orElseThrow().destroyForcibly();
            awaitGone(first.host().pid());
            // pg_ctl detached the postmaster, so it outlives its host.
            assertThat(alive(first.postmasterPid())).isTrue();

            try (ClientProcess b = hold()) {
                b.awaitLine("READY", READY);
                ServerState second = currentState();
                assertThat(second.host().pid()).isNotEqualTo(first.host().pid());
                assertThat(alive(first.postmasterPid())).isFalse();
                assertThat(alive(second.postmasterPid())).isTrue();
                // The recorded port is reused, so clients of the old server reconnect to the new one.
                assertThat(second.port()).isEqualTo(first.port());
                assertThat(b.finish(EXIT)).isZero();
                assertThat(a.finish(EXIT)).isZero();
                awaitStopped(second);
            }
        }
    }

    @Test
    void longRunningClientsRestartADeadServerExactlyOnceAndCarryOn() throws Exception {
        try (ClientProcess a = client("serve");
                ClientProcess b = client("serve");
                ClientProcess c = client("serve")) {
            long started = ClientProcess.field(a.awaitLine("READY", READY), "postmasterStart");
            b.awaitLine("READY", READY);
            c.awaitLine("READY", READY);
            ServerState dead = currentState();
            long hostsBefore = hostStarts();
            // The host and its server die at once (the OOM killer, a kill -9 of both): no command is started after,
            // so only the three running clients can bring the server back.
            ProcessHandle.of(dead.host().pid()).ifPresent(ProcessHandle::destroyForcibly);
            ProcessHandle.of(dead.postmasterPid()).ifPresent(ProcessHandle::destroyForcibly);
            awaitGone(dead.host().pid());
            awaitGone(dead.postmasterPid());

            ServerState restarted = awaitNewHost(dead);
            assertThat(restarted.port()).as("the port is reused").isEqualTo(dead.port());
            long again = ClientProcess.field(a.queryUntilOk(READY), "postmasterStart");
            assertThat(again).isNotEqualTo(started);
            assertThat(ClientProcess.field(b.queryUntilOk(READY), "postmasterStart"))
                    .isEqualTo(again);
            assertThat(ClientProcess.field(c.queryUntilOk(READY), "postmasterStart"))
                    .isEqualTo(again);
            // All three found the host gone; the server lock let exactly one of them start a new one.
            assertThat(hostStarts() - hostsBefore).isEqualTo(1);
            assertThat(currentState()).isEqualTo(restarted);

            assertThat(a.finish(EXIT)).isZero();
            assertThat(b.finish(EXIT)).isZero();
            assertThat(c.finish(EXIT)).isZero();
            awaitStopped(restarted);
        }
    }

    @Test
    void aLongRunningClientReplacesAKilledHostWhosePostmasterLivesOn() throws Exception {
        try (ClientProcess client = client("serve")) {
            long started = ClientProcess.field(client.awaitLine("READY", READY), "postmasterStart");
            ServerState first = currentState();
            ProcessHandle.of(first.host().pid()).orElseThrow().destroyForcibly();
            awaitGone(first.host().pid());

            // Without a host nobody would stop the server after the last client: the client replaces the host.
            ServerState second = awaitNewHost(first);
            assertThat(alive(first.postmasterPid())).isFalse();
            assertThat(second.port()).isEqualTo(first.port());
            assertThat(ClientProcess.field(client.queryUntilOk(READY), "postmasterStart"))
                    .isNotEqualTo(started);
            assertThat(client.finish(EXIT)).isZero();
            awaitStopped(second);
        }
    }

    @Test
    void crashedServerRestartsWithCommittedData() throws Exception {
        try (ClientProcess client = hold()) {
            client.awaitLine("READY", READY);
            ServerState crashed = currentState();
            try (Connection connection = DriverManager.getConnection(jdbcUrl(crashed.port()));
                    Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE persisted (v text NOT NULL)");
                statement.execute("INSERT INTO persisted (v) VALUES ('committed before the crash')");
            }
            // Everything dies at once, as in a power cut; postmaster.pid and the clients' files stay behind.
            client.kill();
            ProcessHandle.of(crashed.host().pid()).ifPresent(ProcessHandle::destroyForcibly);
            ProcessHandle.of(crashed.postmasterPid()).ifPresent(ProcessHandle::destroyForcibly);
            awaitGone(crashed.host().pid());
            awaitGone(crashed.postmasterPid());
            assertThat(layout.dataDirectory().resolve("postmaster.pid")).exists();

            try (ClientProcess reader = client("read")) {
                reader.awaitLine("READY", READY);
                ServerState restarted = currentState();
                assertThat(reader.awaitLine("ROWS=", EXIT)).isEqualTo("ROWS=committed before the crash");
                assertThat(reader.finish(EXIT)).isZero();
                awaitStopped(restarted);
            }
        }
    }

    @Test
    void serverStopsWhenItsDirectoryIsDeleted() throws Exception {
        try (ClientProcess client = hold()) {
            client.awaitLine("READY", READY);
            ServerState state = currentState();
            // As when a test deletes its temporary Vigilo home, or a user their ~/.vigilo, while a command runs:
            // pg_ctl can no longer find the server, so the host must stop it by pid.
            deleteTree(layout.root());
            awaitGone(state.postmasterPid());
            awaitGone(state.host().pid());
            assertThat(client.finish(EXIT)).isZero();
        }
    }

    @Test
    void severalOpensInOneProcessAreCountedSeparately() throws Exception {
        EmbeddedOptions options = new EmbeddedOptions(GRACE, READY);
        ControlSettings settings = new ControlSettings.Embedded(layout.root());
        ControlDatabase first = ControlDatabase.open(settings, List.of(Migrations.DEFAULT_LOCATION), options);
        ServerState state = currentState();
        try (ControlDatabase second = ControlDatabase.open(settings, List.of(Migrations.DEFAULT_LOCATION), options)) {
            assertThat(second.description())
                    .matches("embedded PostgreSQL 17\\.\\S+ at " + layout.root() + " \\(port " + state.port() + "\\)");
            awaitLiveClients(state, 2);
            first.close();
            first.close();
            // The host saw the second handle still registered (were both gone, it would say 0 and stop).
            awaitLiveClients(state, 1);
            assertThat(Files.readString(layout.logFile())).doesNotContain("stopping PostgreSQL");
            assertThat(currentState()).isEqualTo(state);
            int one = second.jdbi()
                    .withHandle(
                            h -> h.createQuery("SELECT 1").mapTo(Integer.class).one());
            assertThat(one).isEqualTo(1);
        }
        awaitStopped(state);
    }

    @Test
    void serverThatCannotStartIsReportedWithItsLog() throws Exception {
        Files.createDirectories(layout.root());
        Files.writeString(layout.dataDirectory(), "a file where the data directory should be");
        EmbeddedOptions options = new EmbeddedOptions(GRACE, READY);
        long started = System.nanoTime();
        assertThatThrownBy(() -> ControlDatabase.open(new ControlSettings.Embedded(layout.root()), List.of(), options))
                .isInstanceOf(ControlDatabaseException.class)
                .hasMessageContaining("failed to start")
                .hasMessageContaining(layout.logFile().toString())
                .hasMessageContaining("--control-db / VIGILO_CONTROL_DB")
                .satisfies(e -> assertThat(((ControlDatabaseException) e).target())
                        .isEqualTo(layout.root().toString()));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(READY);
        assertThat(listClients()).isEmpty();
        assertThat(layout.stateFile()).doesNotExist();
    }

    private ClientProcess hold() throws Exception {
        return client("hold");
    }

    private ClientProcess client(String... command) throws Exception {
        return ClientProcess.start(layout.root(), GRACE, command);
    }

    private ServerState currentState() {
        return ServerState.readFrom(layout.stateFile())
                .orElseThrow(() -> new AssertionError("no " + layout.stateFile()));
    }

    /** Waits for a host other than {@code dead}'s to publish its state, and returns it. */
    private ServerState awaitNewHost(ServerState dead) throws Exception {
        long deadline = System.nanoTime() + READY.toNanos();
        while (true) {
            var state = ServerState.readFrom(layout.stateFile())
                    .filter(s -> s.host().pid() != dead.host().pid() && s.host().isAlive());
            if (state.isPresent()) {
                return state.get();
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new AssertionError(
                        "no new server host within " + READY + "; log:\n" + Files.readString(layout.logFile()));
            }
            Thread.sleep(50);
        }
    }

    /**
     * Waits until the latest count of live clients by {@code state}'s host (each host logs each change to server.log,
     * after the line of its start) is {@code expected}; a later host's counts do not count.
     */
    private void awaitLiveClients(ServerState state, int expected) throws Exception {
        String start = "[vigilo-host] host pid " + state.host().pid() + " starting PostgreSQL";
        long deadline = System.nanoTime() + STOPPED.toNanos();
        while (true) {
            List<String> counts = new java.util.ArrayList<>();
            boolean ours = false;
            for (String l : Files.readAllLines(layout.logFile())) {
                if (l.contains("[vigilo-host] host pid ")) {
                    ours = l.contains(start);
                } else if (ours && l.contains("[vigilo-host] live clients: ")) {
                    counts.add(l.substring(l.indexOf("live clients: ") + "live clients: ".length()));
                }
            }
            if (!counts.isEmpty() && counts.get(counts.size() - 1).equals(Integer.toString(expected))) {
                return;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new AssertionError("host " + state.host().pid() + " did not count " + expected
                        + " live clients within " + STOPPED + " (its counts: " + counts + "); log:\n"
                        + Files.readString(layout.logFile()));
            }
            Thread.sleep(50);
        }
    }

    /** How many hosts have started in this directory: each logs one "starting PostgreSQL" line to server.log. */
    private long hostStarts() throws IOException {
        try (Stream<String> lines = Files.lines(layout.logFile())) {
            return lines.filter(l -> l.contains("[vigilo-host] host pid ") && l.contains(" starting PostgreSQL in "))
                    .count();
        }
    }

    private List<Path> listClients() throws Exception {
        try (Stream<Path> files = Files.list(layout.clientsDirectory())) {
            return files.toList();
        }
    }

    private static String jdbcUrl(int port) {
        return "jdbc:postgresql://localhost:" + port + "/" + EmbeddedServerHost.DATABASE + "?user="
                + EmbeddedServerHost.USER;
    }

    private void assertDurableSettings(int port) throws SQLException {
        try (Connection connection = DriverManager.getConnection(jdbcUrl(port));
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(
                        "SELECT current_setting('fsync'), current_setting('synchronous_commit')")) {
            rows.next();
            assertThat(rows.getString(1)).isEqualTo("on");
            assertThat(rows.getString(2)).isEqualTo("on");
        }
    }

    private void awaitStopped(ServerState state) throws Exception {
        long deadline = System.nanoTime() + STOPPED.toNanos();
        while (Files.exists(layout.stateFile())
                || alive(state.postmasterPid())
                || state.host().isAlive()) {
            if (System.nanoTime() - deadline >= 0) {
                throw new AssertionError(
                        "server not stopped within " + STOPPED + " (state file " + Files.exists(layout.stateFile())
                                + ", postmaster " + alive(state.postmasterPid()) + ", host "
                                + state.host().isAlive() + "); log:\n"
                                + Files.readString(layout.logFile()));
            }
            Thread.sleep(50);
        }
    }

    private static void deleteTree(Path root) throws Exception {
        // PostgreSQL may create files while we delete; retry until the tree is gone.
        for (int attempt = 0; Files.exists(root); attempt++) {
            try (Stream<Path> paths = Files.walk(root)) {
                paths.sorted(Comparator.reverseOrder())
                        .forEach(path -> path.toFile().delete());
            } catch (UncheckedIOException | IOException e) {
                if (attempt > 50) {
                    throw e;
                }
            }
        }
    }

    private static boolean alive(long pid) {
        return ProcessRef.isRunning(pid);
    }

    private static void awaitGone(long pid) throws InterruptedException {
        long deadline = System.nanoTime() + STOPPED.toNanos();
        while (alive(pid)) {
            if (System.nanoTime() - deadline >= 0) {
                throw new AssertionError("process " + pid + " still running");
            }
            Thread.sleep(20);
        }
    }
}
