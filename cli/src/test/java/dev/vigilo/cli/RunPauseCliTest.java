package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.control.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo run pause [--now]} and {@code vigilo run resume [--budget-usd N]}: what each prints, that both are
 * repeatable (exit 0), what {@code run status} shows of a pause and of a budget, and the documented exit codes for an
 * unknown run (3), an ended one (4) and a budget raise that cannot apply (3). The CLI runs in-process (the exit code
 * is what {@code Cli.run} hands the launcher), and the ended run's refusal once more as a real process, whose exit
 * status must be the same.
 */
class RunPauseCliTest {
    @TempDir
    Path home;

    private CliRunner.Result vigilo(String db, String... args) {
        return new CliRunner(home, Map.of(), List.of("--control-db", db)).run(args);
    }

    @Test
    void pauseAndResumePrintWhatTheyDidAndRefuseWhatTheyCannot() throws Exception {
        String db = TestPostgres.newDatabaseUrl();
        Path cases = home.resolve("cases.jsonl");
        Files.writeString(cases, "{\"id\":\"a\",\"input\":\"1\",\"expected\":\"1\"}\n");
        CliRunner.Result up = vigilo(db, "dataset", "upload", cases.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        Path profile = home.resolve("profile.yaml");
        Files.writeString(profile, """
                name: pause
                agent: {kind: command, command: ["cat"]}
                evaluators: [{name: exact, kind: exact_match}]
                gates: [{name: all, required_evaluators: [exact], min_pass_rate: 0.5}]
                """);
        String run = UUID.randomUUID().toString();
        CliRunner.Result created = vigilo(
                db,
                "run",
                "create",
                "--profile-file",
                profile.toString(),
                "--dataset-upload-id",
                up.out().trim(),
                "--run-id",
                run);
        assertThat(created.exitCode()).as(created.err()).isZero();

        CliRunner.Result paused = vigilo(db, "run", "pause", run);
        assertThat(paused.exitCode()).as(paused.err()).isZero();
        assertThat(paused.out()).startsWith("run " + run + " paused: workers claim none of its chunks");
        CliRunner.Result again = vigilo(db, "run", "pause", run);
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out().trim()).isEqualTo("run " + run + " is already paused");
        CliRunner.Result status = vigilo(db, "run", "status", run);
        assertThat(status.out()).contains("paused since ").contains(": by vigilo run pause; `vigilo run resume " + run);

        CliRunner.Result resumed = vigilo(db, "run", "resume", run);
        assertThat(resumed.exitCode()).as(resumed.err()).isZero();
        assertThat(resumed.out()).startsWith("run " + run + " resumed (pending)");
        CliRunner.Result notPaused = vigilo(db, "run", "resume", run);
        assertThat(notPaused.out().trim()).isEqualTo("run " + run + " is not paused (pending)");

        // --now: an interrupting pause, said so and shown as its reason; a run without a budget cannot be raised.
        CliRunner.Result now = vigilo(db, "run", "pause", run, "--now");
        assertThat(now.exitCode()).as(now.err()).isZero();
        assertThat(now.out()).contains("those they hold are interrupted and given back");
        assertThat(vigilo(db, "run", "status", run).out()).contains(": by vigilo run pause --now; ");
        CliRunner.Result noBudget = vigilo(db, "run", "resume", run, "--budget-usd", "10");
        assertThat(noBudget.exitCode()).isEqualTo(3);
        assertThat(noBudget.err()).contains("has no budget (its profile gives none)");
        CliRunner.Result zero = vigilo(db, "run", "resume", run, "--budget-usd", "0");
        assertThat(zero.exitCode()).isEqualTo(3);
        assertThat(zero.err()).contains("--budget-usd 0: a budget is a total greater than 0");
        assertThat(vigilo(db, "run", "resume", run).exitCode()).isZero();

        CliRunner.Result unknown = vigilo(db, "run", "pause", UUID.randomUUID().toString());
        assertThat(unknown.exitCode()).isEqualTo(3);
        assertThat(vigilo(db, "run", "cancel", run).exitCode()).isZero();
        CliRunner.Result ended = vigilo(db, "run", "pause", run);
        assertThat(ended.exitCode()).isEqualTo(4);
        assertThat(ended.err())
                .contains("is already cancelled; there is nothing to pause")
                .doesNotContain("\n\t");
        VigiloProcess.Result endedProcess =
                VigiloProcess.run(home, Map.of(), List.of(), 120, "--control-db", db, "run", "pause", run);
        assertThat(endedProcess.exitCode()).isEqualTo(4);
        assertThat(endedProcess.err()).contains("is already cancelled; there is nothing to pause");

        // A run with a budget: status shows it; a raise must exceed it, then it is in force.
        Path budgeted = home.resolve("budget.yaml");
        Files.writeString(budgeted, Files.readString(profile) + "budget: {max_cost_usd: 5.00}\n");
        String run2 = UUID.randomUUID().toString();
        assertThat(vigilo(
                                db,
                                "run",
                                "create",
                                "--profile-file",
                                budgeted.toString(),
                                "--dataset-upload-id",
                                up.out().trim(),
                                "--run-id",
                                run2)
                        .exitCode())
                .isZero();
        assertThat(vigilo(db, "run", "status", run2).out()).contains("budget $5: $0 spent, $0 reserved");
        assertThat(vigilo(db, "run", "status", run2, "--json").out())
                .contains("\"budget\":{\"max_cost_usd\":\"5\",\"max_tokens\":null,\"spent_cost_usd\":\"0\"");
        CliRunner.Result lower = vigilo(db, "run", "resume", run2, "--budget-usd", "3");
        assertThat(lower.exitCode()).isEqualTo(3);
        assertThat(lower.err())
                .contains("--budget-usd 3: run " + run2 + "'s budget is already $5; give a larger total");
        CliRunner.Result raised = vigilo(db, "run", "resume", run2, "--budget-usd", "10");
        assertThat(raised.exitCode()).as(raised.err()).isZero();
        assertThat(raised.out().trim()).isEqualTo("run " + run2 + " is not paused (pending)");
        assertThat(vigilo(db, "run", "status", run2).out()).contains("budget $10: $0 spent");
    }
}
