package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launcher's class-data-sharing training workload runs its session log through verify and leaves nothing. */
class StartupTrainingTest {
    @TempDir
    Path home;

    @Test
    void trainingVerifiesItsLogAndLeavesNothingBehind() throws Exception {
        Path scratch = Files.createDirectories(home.resolve("tmp"));
        Environment environment = new Environment(Map.of(Environment.HOME_VARIABLE, home.toString()), home);

        assertThat(StartupTraining.run(environment, scratch)).isZero();
        try (var left = Files.list(scratch)) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void trainingFailsWhenItCannotWrite() throws Exception {
        Path notADirectory = Files.writeString(home.resolve("file"), "x");
        Environment environment = new Environment(Map.of(Environment.HOME_VARIABLE, home.toString()), home);

        assertThat(StartupTraining.run(environment, notADirectory)).isEqualTo(1);
    }
}
