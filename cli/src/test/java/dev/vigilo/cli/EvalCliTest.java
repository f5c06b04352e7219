package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.control.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo eval}: one command uploads, creates and executes with an in-process worker against a local
 * OpenAI-compatible test server, prints the gate table and verdict, and exits as {@code run watch} does (0 passed, 1
 * failed); a bad profile, dataset or option is refused (exit 3, usage 2) with nothing stored.
 */
class EvalCliTest {
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");

    @TempDir
    Path home;

    OpenAiTestServer llm;
    CliRunner cli;

    @BeforeEach
    void setUp() {
        llm = OpenAiTestServer.start();
        // Right for every case but every tenth.
        llm.answerWith(req -> {
            Matcher m = QUESTION.matcher(req.lastUserMessage());
            if (!m.find()) {
                return OpenAiTestServer.Reply.content("?");
            }
            long i = Long.parseLong(m.group(1));
            return OpenAiTestServer.Reply.content(i % 10 == 3 ? "wrong" : Long.toString(i * 2));
        });
        cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
    }

    @AfterEach
    void tearDown() {
        llm.close();
    }

    private Path cases(int n) throws Exception {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) {
            s.append("{\"id\":\"c")
                    .append(i)
                    .append("\",\"input\":\"what is ")
                    .append(i)
                    .append(" * 2\",\"expected\":\"")
                    .append(i * 2)
                    .append("\"}\n");
        }
        Path file = home.resolve("cases.jsonl");
        Files.writeString(file, s.toString());
        return file;
    }

    private Path profile(double minPassRate) throws Exception {
        Path p = home.resolve("profile-" + minPassRate + ".yaml");
        Files.writeString(p, """
                name: eval-test
                agent: {kind: http, url: "%s", model: test}
                evaluators: [{name: exact, kind: exact_match}]
                gates: [{name: all, required_evaluators: [exact], min_pass_rate: %s}]
                """.formatted(llm.chatUrl(), minPassRate));
        return p;
    }

    @Test
    void uploadsCreatesExecutesAndPrintsTheVerdictInOneCommand() throws Exception {
        Path file = cases(250);
        CliRunner.Result passed = cli.run(
                "eval",
                "--profile-file",
                profile(0.5).toString(),
                "--dataset",
                file.toString(),
                "--concurrency",
                "16",
                "--label",
                "first");
        assertThat(passed.exitCode()).as(passed.err()).isZero();
        assertThat(passed.err()).containsPattern("dataset [0-9a-f-]{36}: 250 cases uploaded");
        assertThat(passed.out())
                .contains("verdict: passed")
                .contains("PASS")
                .contains("progress: 3 of 3 chunks done, 250 of 250 cases done");
        String run = runId(passed.out());
        assertThat(llm.requestCount()).isEqualTo(250);
        // The run is an ordinary one: run status shows what eval printed.
        CliRunner.Result status = cli.run("run", "status", run);
        assertThat(status.out()).contains("verdict: passed").contains("settled");

        // Again on the uploaded dataset, with a gate it fails: exit 1, the verdict named on stderr, --json the
        // document of run status --json.
        String upload = Json.read(cli.run("dataset", "list", "--json").out())
                .get(0)
                .get("upload_id")
                .asText();
        CliRunner.Result failed =
                cli.run("eval", "--profile-file", profile(0.99).toString(), "--dataset-upload-id", upload, "--json");
        assertThat(failed.exitCode()).as(failed.err()).isEqualTo(1);
        assertThat(failed.err()).contains("settled with verdict failed");
        var doc = Json.read(failed.out());
        assertThat(doc.get("status").asText()).isEqualTo("settled");
        assertThat(doc.get("verdict").asText()).isEqualTo("failed");
        assertThat(doc.get("run_id").asText()).isNotEqualTo(run);
        assertThat(llm.requestCount()).isEqualTo(500);
        assertThat(Json.read(cli.run("dataset", "list", "--json").out()).size()).isEqualTo(1);
    }

    @Test
    void badInputIsRefusedBeforeAnythingIsStored() throws Exception {
        Path file = cases(5);
        Path badProfile = home.resolve("bad.yaml");
        Files.writeString(badProfile, "name: x\nagent: {kind: http}\n");
        CliRunner.Result r = cli.run("eval", "--profile-file", badProfile.toString(), "--dataset", file.toString());
        assertThat(r.exitCode()).as(r.err()).isEqualTo(3);
        assertThat(r.err().strip()).startsWith("vigilo: error: ").doesNotContain("\n");

        Path badCases = home.resolve("bad.jsonl");
        Files.writeString(badCases, "{\"id\":\"a\",\"input\":\"1\"}\nnot json\n");
        r = cli.run("eval", "--profile-file", profile(0.5).toString(), "--dataset", badCases.toString());
        assertThat(r.exitCode()).as(r.err()).isEqualTo(3);
        assertThat(r.err()).contains("bad.jsonl:2");

        r = cli.run(
                "eval",
                "--profile-file",
                profile(0.5).toString(),
                "--dataset-upload-id",
                "3b241101-e2bb-4255-8caf-4136c566a962",
                "--map",
                "id=a,input=b");
        assertThat(r.exitCode()).as(r.err()).isEqualTo(3);
        assertThat(r.err()).contains("--map describes a file to upload");

        r = cli.run(
                "eval", "--profile-file", profile(0.5).toString(), "--dataset", file.toString(), "--concurrency", "0");
        assertThat(r.exitCode()).as(r.err()).isEqualTo(3);
        assertThat(r.err()).contains("--concurrency must be between 1 and");

        r = cli.run(
                "eval",
                "--profile-file",
                profile(0.5).toString(),
                "--dataset",
                file.toString(),
                "--dataset-upload-id",
                "3b241101-e2bb-4255-8caf-4136c566a962");
        assertThat(r.exitCode()).isEqualTo(2);

        // An unknown dataset: refused by run create, no run.
        r = cli.run(
                "eval",
                "--profile-file",
                profile(0.5).toString(),
                "--dataset-upload-id",
                "3b241101-e2bb-4255-8caf-4136c566a962");
        assertThat(r.exitCode()).as(r.err()).isEqualTo(3);
        assertThat(r.err()).contains("no finalized dataset");

        assertThat(cli.run("dataset", "list", "--json").out().strip()).isEqualTo("[]");
        assertThat(llm.requestCount()).isZero();
    }

    @Test
    void anUnreachableControlDatabaseOpenedBesideTheUploadIsReportedInOneLine() throws Exception {
        // eval and dataset upload open the control database on a thread of their own while the file is read: its
        // failure still reaches the user as the command's one-line error with the exit code for an outage.
        Path file = cases(20);
        CliRunner away =
                new CliRunner(home, Map.of(), List.of("--control-db", "jdbc:postgresql://127.0.0.1:1/nothing"));
        for (List<String> args : List.of(
                List.of("eval", "--profile-file", profile(0.5).toString(), "--dataset", file.toString()),
                List.of("dataset", "upload", file.toString()))) {
            CliRunner.Result r = away.run(args.toArray(String[]::new));
            assertThat(r.exitCode()).as(args + ": " + r.err()).isEqualTo(ExitCode.UNAVAILABLE);
            assertThat(r.err().strip())
                    .as(args.toString())
                    .startsWith("vigilo: ")
                    .doesNotContain("\n");
            assertThat(r.err()).doesNotContain("\tat ");
        }
        // A bad file is refused as bad input: the file is read before the database is needed.
        Path badCases = home.resolve("bad.jsonl");
        Files.writeString(badCases, "not json\n");
        CliRunner.Result r = away.run("dataset", "upload", badCases.toString());
        assertThat(r.exitCode()).as(r.err()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(r.err()).contains("bad.jsonl:1");
        assertThat(llm.requestCount()).isZero();
    }

    private static String runId(String out) {
        Matcher m = Pattern.compile("^run ([0-9a-f-]{36})$", Pattern.MULTILINE).matcher(out);
        assertThat(m.find()).as(out).isTrue();
        return m.group(1);
    }
}
