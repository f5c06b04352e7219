package dev.vigilo.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.process.ProcessRef;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded server's small parts, without PostgreSQL. */
class InternalsTest {

    @TempDir
    Path directory;

    @Test
    void parsesDurationsAsIsoOrMilliseconds() {
        assertThat(EmbeddedOptions.parseDuration("PT1.5S")).isEqualTo(Duration.ofMillis(1500));
        assertThat(EmbeddedOptions.parseDuration(" 250 ")).isEqualTo(Duration.ofMillis(250));
        assertThatThrownBy(() -> EmbeddedOptions.parseDuration("10 seconds"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("10 seconds");
        assertThatThrownBy(() -> new EmbeddedOptions(Duration.ofSeconds(-1), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void stateFileRoundTripsAndAGarbledOneCountsAsAbsent() throws Exception {
        Path file = directory.resolve("server.properties");
        assertThat(ServerState.readFrom(file)).isEmpty();
        ServerState state = new ServerState("t0k3n", 5432, ProcessRef.current(), 42);
        state.writeTo(file);
        assertThat(ServerState.readFrom(file)).contains(state);
        ServerState.deleteIfOwned(file, "another token");
        assertThat(file).exists();
        ServerState.deleteIfOwned(file, "t0k3n");
        assertThat(file).doesNotExist();
        Files.writeString(file, "port=not a number\n");
        assertThat(ServerState.readFrom(file)).isEmpty();
    }

    @Test
    void registryCountsLiveClientsAndPrunesTheRest() throws Exception {
        Path clients = directory.resolve("clients");
        ClientRegistry registry = new ClientRegistry(clients);
        assertThat(registry.pruneAndCountLive()).isZero();
        Path mine = registry.register(ProcessRef.current());
        Path again = registry.register(ProcessRef.current());
        assertThat(mine).isNotEqualTo(again);

        Process exited = new ProcessBuilder("true").start();
        exited.waitFor();
        Path dead = Files.createFile(clients.resolve(exited.pid() + ".0.dead"));
        // Same pid as this JVM but another start time: a recycled pid, not this process.
        Path recycled = Files.createFile(clients.resolve(ProcessHandle.current().pid() + ".12345.old"));
        Path garbage = Files.createFile(clients.resolve("not-a-client"));

        assertThat(registry.pruneAndCountLive()).isEqualTo(2);
        assertThat(dead).doesNotExist();
        assertThat(recycled).doesNotExist();
        assertThat(garbage).doesNotExist();
        Files.delete(mine);
        assertThat(registry.pruneAndCountLive()).isEqualTo(1);
    }

    @Test
    void aSecondLockHolderInTheSameProcessWaits() throws Exception {
        Path file = directory.resolve("server.lock");
        try (ServerLock held = ServerLock.acquire(file, Duration.ofSeconds(1))) {
            assertThat(held).isNotNull();
            assertThatThrownBy(() -> ServerLock.acquire(file, Duration.ofMillis(200)))
                    .isInstanceOf(ServerLock.LockTimeoutException.class)
                    .hasMessageContaining(file.toString());
        }
        ServerLock.acquire(file, Duration.ofSeconds(1)).close();
    }

    @Test
    void settingsValidateAndNormalize() {
        assertThat(new ControlSettings.Embedded(Path.of("a/../b")).directory())
                .isEqualTo(Path.of("b").toAbsolutePath());
        assertThatThrownBy(() -> new ControlSettings.Embedded(null)).isInstanceOf(NullPointerException.class);
    }
}
