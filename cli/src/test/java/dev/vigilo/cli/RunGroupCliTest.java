package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.plan.GroupProfiles;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunGroups;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Run groups in-process on a real PostgreSQL, a local store and real agent processes (docs/run-preparation.md, "Run
 * groups"; docs/cli.md): bad agents files refused in one line with exit 3 and nothing created, a group of three
 * command agents created, repeated idempotently, refused under the same name with other agents (exit 4), executed by
 * a real worker and summarised by {@code run status GROUP} (text and JSON) and {@code run groups}; and a group left
 * as a command killed after recording it leaves it (members recorded, no runs), finished by repeating the command.
 */
class RunGroupCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;

    @Test
    void aGroupOfThreeAgentsIsCreatedExecutedAndSummarised() throws IOException {
        String url = TestPostgres.newDatabaseUrl();
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", url));
        // Eight cases: input.answer is wrong for cases 2 and 5; input.n is always right.
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            cases.append("{\"id\":\"c")
                    .append(i)
                    .append("\",\"input\":{\"answer\":\"")
                    .append(i == 2 || i == 5 ? "wrong" : Integer.toString(i))
                    .append("\",\"n\":\"")
                    .append(i)
                    .append("\"},\"expected\":\"")
                    .append(i)
                    .append("\"}\n");
        }
        Path file = Files.writeString(home.resolve("cases.jsonl"), cases);
        CliRunner.Result up = cli.run("dataset", "upload", file.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        String dataset = up.out().trim();
        Path answer = Files.writeString(home.resolve("answer.sh"), ExecutedRun.ECHO_ANSWER);
        Path right = Files.writeString(home.resolve("right.sh"), "sed -n 's/.*\"n\":\"\\([^\"]*\\)\".*/\\1/p'\n");
        Path profile = Files.writeString(home.resolve("profile.yaml"), """
                name: trio
                agent: {kind: command, command: [sh, "%s"], max_attempts: 1, timeout_seconds: 30}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.7}
                """.formatted(answer));
        Path agents = Files.writeString(home.resolve("agents.yaml"), """
                agents:
                  - name: answer
                    agent: {kind: command, command: [sh, "%s"], max_attempts: 1, timeout_seconds: 30}
                  - name: three
                    agent: {kind: command, command: [sh, -c, "cat >/dev/null; echo 3"], timeout_seconds: 30}
                  - name: right
                    agent: {kind: command, command: [sh, "%s"], timeout_seconds: 30}
                """.formatted(answer, right));

        // Bad inputs: one line, exit 3, no group and no run.
        Path twice = Files.writeString(home.resolve("twice.yaml"), """
                agents:
                  - name: a
                    agent: {kind: command, command: [echo, x]}
                  - name: a
                    agent: {kind: command, command: [echo, y]}
                """);
        Path broken = Files.writeString(home.resolve("broken.yaml"), """
                agents:
                  - name: fine
                    agent: {kind: command, command: [echo, x]}
                  - name: broken
                    agent: {kind: command, timeout_seconds: -5}
                """);
        Path notAList = Files.writeString(home.resolve("notalist.yaml"), "agents: {name: x}\n");
        record Bad(List<String> args, String says) {}
        for (Bad bad : List.of(
                new Bad(List.of("--agents", home.resolve("missing.yaml").toString()), "missing.yaml"),
                new Bad(List.of("--agents", twice.toString()), twice + ":4:"),
                new Bad(List.of("--agents", broken.toString()), broken + ":5:"),
                new Bad(List.of("--agents", notAList.toString()), "non-empty list 'agents'"),
                new Bad(
                        List.of(
                                "--agents",
                                agents.toString(),
                                "--run-id",
                                UUID.randomUUID().toString()),
                        "--run-id"),
                new Bad(List.of("--agents", agents.toString(), "--group", "bad name!"), "group name"),
                new Bad(List.of("--group", "lonely"), "--agents"))) {
            List<String> args = new ArrayList<>(
                    List.of("run", "create", "--profile-file", profile.toString(), "--dataset-upload-id", dataset));
            args.addAll(bad.args());
            CliRunner.Result r = cli.run(args.toArray(String[]::new));
            assertThat(r.exitCode()).as(bad + ": " + r.err()).isEqualTo(3);
            assertThat(r.err().strip().lines()).as(bad.toString()).hasSize(1);
            assertThat(r.err()).as(bad.toString()).contains(bad.says());
        }
        CliRunner.Result dup = cli.run(
                "run",
                "create",
                "--profile-file",
                profile.toString(),
                "--dataset-upload-id",
                dataset,
                "--agents",
                twice.toString());
        assertThat(dup.err()).contains("agent name \"a\" appears twice");
        CliRunner.Result bad = cli.run(
                "run",
                "create",
                "--profile-file",
                profile.toString(),
                "--dataset-upload-id",
                dataset,
                "--agents",
                broken.toString());
        assertThat(bad.err()).contains("agent \"broken\"").contains("command");
        assertThat(groups(cli).path("groups")).isEmpty();

        // The group: three runs, named by the profile (the default group name).
        String[] create = {
            "run",
            "create",
            "--profile-file",
            profile.toString(),
            "--dataset-upload-id",
            dataset,
            "--agents",
            agents.toString()
        };
        CliRunner.Result made = cli.run(create);
        assertThat(made.exitCode()).as(made.err()).isZero();
        assertThat(made.out())
                .startsWith("group trio (")
                .contains("3 runs")
                .contains("  answer: run ")
                .contains("  three: run ")
                .contains("  right: run ")
                .contains(" pending: plan ready");
        JsonNode before = status(cli, "trio");
        // Repeating the command changes nothing: the same group and runs.
        CliRunner.Result again = cli.run(create);
        assertThat(again.exitCode()).as(again.err()).isZero();
        JsonNode after = status(cli, "trio");
        assertThat(after.path("group_id")).isEqualTo(before.path("group_id"));
        assertThat(after.path("members")).hasSize(3);
        for (int i = 0; i < 3; i++) {
            assertThat(after.path("members").get(i).path("run_id"))
                    .isEqualTo(before.path("members").get(i).path("run_id"));
        }
        // The same name with other agents is a conflict (exit 4), and creates nothing.
        CliRunner.Result other = cli.run(
                "run",
                "create",
                "--profile-file",
                profile.toString(),
                "--dataset-upload-id",
                dataset,
                "--agents",
                broken.toString().replace("broken", "twice"),
                "--group",
                "trio");
        assertThat(other.exitCode()).as(other.err()).isEqualTo(3); // twice.yaml: refused before the name is looked at
        Path two = Files.writeString(home.resolve("two.yaml"), """
                agents:
                  - name: answer
                    agent: {kind: command, command: [sh, "%s"], max_attempts: 1, timeout_seconds: 30}
                """.formatted(answer));
        CliRunner.Result clash = cli.run(
                "run",
                "create",
                "--profile-file",
                profile.toString(),
                "--dataset-upload-id",
                dataset,
                "--agents",
                two.toString(),
                "--group",
                "trio");
        assertThat(clash.exitCode()).as(clash.err()).isEqualTo(4);
        assertThat(clash.err()).contains("group \"trio\" already exists");

        CliRunner.Result worker = cli.run("worker", "--exit-when-idle");
        assertThat(worker.exitCode()).as(worker.err()).isZero();

        CliRunner.Result text = cli.run("run", "status", "trio");
        assertThat(text.exitCode()).as(text.err()).isZero();
        List<String> lines = text.out().strip().lines().toList();
        assertThat(lines.get(0)).startsWith("group trio (").contains("3 runs on dataset " + dataset);
        assertThat(lines.get(0)).doesNotContain("incomplete");
        assertThat(lines.get(1))
                .startsWith("AGENT")
                .contains("STATUS")
                .contains("VERDICT")
                .contains("COST");
        assertThat(lines.get(2))
                .startsWith("answer ")
                .contains("settled")
                .contains("passed")
                .contains("all 75.0%");
        assertThat(lines.get(3))
                .startsWith("three ")
                .contains("settled")
                .contains("failed")
                .contains("all 12.5%");
        assertThat(lines.get(4))
                .startsWith("right ")
                .contains("settled")
                .contains("passed")
                .contains("all 100.0%");
        JsonNode done = status(cli, "trio");
        assertThat(done.path("members").get(1).path("agent").asText()).isEqualTo("three");
        assertThat(done.path("members").get(1).path("verdict").asText()).isEqualTo("failed");
        assertThat(done.path("members")
                        .get(2)
                        .path("gates")
                        .get(0)
                        .path("pass_rate")
                        .asDouble())
                .isEqualTo(1.0);
        // By id too, and each member's run is an ordinary run named PROFILE:AGENT.
        assertThat(status(cli, done.path("group_id").asText()).path("name").asText())
                .isEqualTo("trio");
        CliRunner.Result member = cli.run(
                "run", "status", done.path("members").get(0).path("run_id").asText());
        assertThat(member.exitCode()).as(member.err()).isZero();
        assertThat(member.out()).contains("settled");
        CliRunner.Result unknown = cli.run("run", "status", "no-such-group");
        assertThat(unknown.exitCode()).isEqualTo(3);
        assertThat(unknown.err()).contains("no run group \"no-such-group\"");

        CliRunner.Result listed = cli.run("run", "groups");
        assertThat(listed.exitCode()).as(listed.err()).isZero();
        assertThat(listed.out()).contains("trio  ").contains("3 runs (answer, three, right)");

        // A create killed after recording its group (kill -9 between the group's transaction and the first run) leaves
        // the group with its members' run ids and no runs: run status says so, and repeating the command finishes it.
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(url))) {
            GroupProfiles.Expansion x = GroupProfiles.expand(ProfileInput.file(profile), agents);
            new RunGroups(control.jdbi())
                    .record(
                            "halfway",
                            UUID.fromString(dataset),
                            x.profilesSha256(),
                            x.members().stream()
                                    .map(GroupProfiles.Member::agentName)
                                    .toList());
        }
        CliRunner.Result half = cli.run("run", "status", "halfway");
        assertThat(half.exitCode()).as(half.err()).isZero();
        assertThat(half.out()).contains("incomplete: 3 run(s) not created yet").contains("not created");
        List<String> resume = new ArrayList<>(List.of(create));
        resume.addAll(List.of("--group", "halfway"));
        CliRunner.Result finished = cli.run(resume.toArray(String[]::new));
        assertThat(finished.exitCode()).as(finished.err()).isZero();
        JsonNode whole = status(cli, "halfway");
        assertThat(whole.path("completed_at").isNull()).isFalse();
        for (JsonNode m : whole.path("members")) {
            assertThat(m.path("status").asText()).isEqualTo("pending");
        }
    }

    private static JsonNode status(CliRunner cli, String group) throws IOException {
        CliRunner.Result r = cli.run("run", "status", group, "--json");
        assertThat(r.exitCode()).as(r.err()).isZero();
        return JSON.readTree(r.out());
    }

    private static JsonNode groups(CliRunner cli) throws IOException {
        CliRunner.Result r = cli.run("run", "groups", "--json");
        assertThat(r.exitCode()).as(r.err()).isZero();
        return JSON.readTree(r.out());
    }
}
