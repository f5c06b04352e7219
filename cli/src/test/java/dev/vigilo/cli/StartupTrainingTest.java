package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher's class-data-sharing training workload runs its session log through verify, loads the classes of an
 * evaluation's commands and leaves nothing.
 */
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

    @Test
    void theClassListNamesTheClassesOfAnEvaluationsCommandsAndTheyLoad() throws Exception {
        List<String> names = StartupTraining.classList();
        // recorded from dataset upload, run create, worker and run status: their database and migration code too
        assertThat(names)
                .hasSizeGreaterThan(3_000)
                .contains(
                        "dev.vigilo.cli.DatasetUploadCommand",
                        "dev.vigilo.cli.RunCreateCommand",
                        "dev.vigilo.cli.WorkerCommand",
                        "dev.vigilo.control.ControlDatabase",
                        "org.flywaydb.core.Flyway",
                        "org.postgresql.Driver",
                        "com.zaxxer.hikari.HikariDataSource")
                .doesNotHaveDuplicates();
        // A list that no longer fits the build (classes renamed or removed since it was recorded) fails here: record
        // it again (docs/configuration.md, "Start-up").
        int loaded = StartupTraining.preload(StartupTraining.class.getClassLoader());
        assertThat(loaded).isGreaterThan(names.size() * 95 / 100);
    }
}
