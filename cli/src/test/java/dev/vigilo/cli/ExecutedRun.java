package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

/**
 * A run executed to the end through the CLI for tests of the commands that read results: the cases are uploaded, the
 * profile names a command agent (a shell script in the test's home), the run is created with a fresh id and an
 * in-process {@code vigilo worker --exit-when-idle} executes every case. Each step must exit 0, or the set-up fails with
 * that step's error output.
 */
final class ExecutedRun {
    /** The usual agent script: prints the case's {@code input.answer}. */
    static final String ECHO_ANSWER = "sed -n 's/.*\"answer\":\"\\([^\"]*\\)\".*/\\1/p'\n";

    private ExecutedRun() {}

    /**
     * Uploads {@code casesJsonl}, writes {@code agentScript} to {@code answer.sh} in {@code home}, creates a run of
     * {@code profileTemplate} (its one {@code %s} is the script's path) and executes it.
     *
     * @return the run's id
     */
    static String execute(CliRunner cli, Path home, CharSequence casesJsonl, String agentScript, String profileTemplate)
            throws IOException {
        Path file = Files.writeString(home.resolve("cases.jsonl"), casesJsonl);
        CliRunner.Result up = cli.run("dataset", "upload", file.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        Path script = Files.writeString(home.resolve("answer.sh"), agentScript);
        String run = UUID.randomUUID().toString();
        CliRunner.Result created = cli.run(
                "run",
                "create",
                "--profile",
                profileTemplate.formatted(script),
                "--dataset-upload-id",
                up.out().trim(),
                "--run-id",
                run);
        assertThat(created.exitCode()).as(created.err()).isZero();
        CliRunner.Result worker = cli.run("worker", "--exit-when-idle");
        assertThat(worker.exitCode()).as(worker.err()).isZero();
        return run;
    }
}
