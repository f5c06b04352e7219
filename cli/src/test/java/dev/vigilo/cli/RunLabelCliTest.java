package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.view.RunCatalog;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo run create --label}: the label names the run after its profile's name where the dashboard names runs
 * (the run catalog's identity, its name filter), a repeat may leave it out but not change it, and a label that is
 * not printable or given with {@code --agents} is refused in one line with exit 3, nothing written.
 */
class RunLabelCliTest {
    @TempDir
    Path home;

    @Test
    void aLabelNamesTheRunAndARepeatCannotChangeIt() throws Exception {
        String url = TestPostgres.newDatabaseUrl();
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", url));
        Path cases = Files.writeString(
                home.resolve("cases.jsonl"),
                "{\"id\":\"a\",\"input\":\"1\",\"expected\":\"1\"}\n{\"id\":\"b\",\"input\":\"2\",\"expected\":\"2\"}\n");
        CliRunner.Result up = cli.run("dataset", "upload", cases.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        String dataset = up.out().trim();
        String profile = """
                name: quiz
                agent: {kind: command, command: [sh, -c, "cat"], timeout_seconds: 30}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 1.0}
                """;
        String run = UUID.randomUUID().toString();
        List<String> create = List.of(
                "run",
                "create",
                "--profile",
                profile,
                "--dataset-upload-id",
                dataset,
                "--run-id",
                run,
                "--prepare-only");

        CliRunner.Result labelled = cli.run(with(create, "--label", "baseline 2"));
        assertThat(labelled.exitCode()).as(labelled.err()).isZero();
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(url));
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            RunCatalog catalog = new RunCatalog(placements);
            RunCatalog.Identity identity =
                    catalog.identity(UUID.fromString(run)).runIdentity().orElseThrow();
            assertThat(identity.label()).contains("baseline 2");
            assertThat(identity.name()).isEqualTo("quiz · baseline 2");
            RunCatalog.Filter byLabel =
                    new RunCatalog.Filter(Optional.empty(), Optional.empty(), Optional.of("BASELINE"));
            assertThat(catalog.list(byLabel, Optional.empty(), 10).runs())
                    .extracting(RunCatalog.RunSummary::runId)
                    .containsExactly(UUID.fromString(run));
        }

        CliRunner.Result changed = cli.run(with(create, "--label", "other"));
        assertThat(changed.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(changed.err())
                .contains("label differs from the run's (recorded \"baseline 2\", given \"other\"); pass the same"
                        + " --label, or none")
                .hasLineCount(1);
        CliRunner.Result repeated = cli.run(create.toArray(String[]::new));
        assertThat(repeated.exitCode()).as(repeated.err()).isZero();

        String other = UUID.randomUUID().toString();
        CliRunner.Result control = cli.run(
                "run",
                "create",
                "--profile",
                profile,
                "--dataset-upload-id",
                dataset,
                "--run-id",
                other,
                "--label",
                "two\nlines");
        assertThat(control.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(control.err())
                .contains("--label: ", "control character U+000A")
                .hasLineCount(1);
        Path agents = Files.writeString(home.resolve("agents.yaml"), "agents: []\n");
        CliRunner.Result group = cli.run(
                "run",
                "create",
                "--profile",
                profile,
                "--dataset-upload-id",
                dataset,
                "--agents",
                agents.toString(),
                "--label",
                "x");
        assertThat(group.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(group.err()).contains("--label names one run").hasLineCount(1);
        CliRunner.Result status = cli.run("run", "status", other);
        assertThat(status.exitCode())
                .as("nothing was created for the refused label")
                .isNotZero();
    }

    private static String[] with(List<String> args, String... more) {
        List<String> all = new java.util.ArrayList<>(args);
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }
}
