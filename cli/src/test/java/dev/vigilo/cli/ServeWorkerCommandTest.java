package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worker command {@code vigilo serve} shows on a run page while no worker works on the run (docs/web.md, "Live
 * runs"): the launcher, {@code worker --exit-when-idle}, and the global options the server was given, a control
 * database password masked.
 */
class ServeWorkerCommandTest {
    @TempDir
    Path home;

    @Test
    void theCommandCarriesTheServersOptionsWithoutItsPassword() {
        VigiloCommand root =
                new VigiloCommand(new Environment(Map.of(Environment.HOME_VARIABLE, home.toString()), home));
        assertThat(ServeCommand.workerCommand(root)).matches("(\\./vigilo|/.*/vigilo|vigilo) worker --exit-when-idle");
        root.controlDb = "jdbc:postgresql://db:5432/vigilo?user=v&password=S3cret&ssl=true";
        root.storageConfig = Path.of("storage.toml");
        root.executionConfig = Path.of("/etc/vigilo/execution.toml");
        String command = ServeCommand.workerCommand(root);
        assertThat(command)
                .endsWith(" worker --exit-when-idle --control-db jdbc:postgresql://db:5432/vigilo?user=v&password=***"
                        + "&ssl=true --storage-config "
                        + Path.of("storage.toml").toAbsolutePath()
                        + " --execution-config /etc/vigilo/execution.toml")
                .doesNotContain("S3cret");
    }
}
