package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.TestPostgres;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo run review} and {@code vigilo run reviews} in-process on a real PostgreSQL and a local store with a
 * real agent process (docs/execution.md, "Human review"): overrides recorded with and without {@code --reviewer}, bad
 * input refused in one line with exit 3 and nothing written, a repeated override exit 4, the listing and the
 * recomputed gate table, {@code run status} showing the reviewed figures beside the unchanged machine verdict,
 * {@code run results} carrying the override and {@code vigilo verify} checking the records.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunReviewCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path home;

    private CliRunner cli;
    private String run;

    @BeforeAll
    void setUp() throws IOException {
        cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        // Eight cases; the agent answers input.answer, which is wrong for cases 2 and 5: 6 of 8 pass, below 0.8.
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            cases.append("{\"id\":\"c")
                    .append(i)
                    .append("\",\"input\":{\"answer\":\"")
                    .append(i == 2 || i == 5 ? "wrong" : Integer.toString(i))
                    .append("\"},\"expected\":\"")
                    .append(i)
                    .append("\"}\n");
        }
        String profile = """
                name: review
                agent: {kind: command, command: [sh, "%s"], max_attempts: 1, timeout_seconds: 30}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.8}
                """;
        run = ExecutedRun.execute(cli, home, cases, ExecutedRun.ECHO_ANSWER, profile);
    }

    private JsonNode reviews() throws IOException {
        CliRunner.Result r = cli.run("run", "reviews", run, "--json");
        assertThat(r.exitCode()).as(r.err()).isZero();
        return JSON.readTree(r.out());
    }

    @Test
    void reviewersOverrideCasesAndTheReviewedFiguresStandBesideTheMachineOnes() throws IOException {
        CliRunner.Result none = cli.run("run", "reviews", run);
        assertThat(none.exitCode()).as(none.err()).isZero();
        assertThat(none.out()).contains("has no review overrides");

        // Bad input: one line, exit 3, nothing written.
        for (List<String> bad : List.of(
                List.of("2", "--outcome", "maybe", "--note", "x"),
                List.of("2", "--outcome", "pass", "--note", "   "),
                List.of("two", "--outcome", "pass", "--note", "x"),
                List.of("99", "--outcome", "pass", "--note", "x"),
                List.of("2", "--outcome", "pass", "--note", "x", "--reviewer", "a\u001bb"))) {
            List<String> args = new java.util.ArrayList<>(List.of("run", "review", run));
            args.addAll(bad);
            CliRunner.Result r = cli.run(args.toArray(String[]::new));
            assertThat(r.exitCode()).as(bad + ": " + r.err()).isEqualTo(3);
            assertThat(r.err().strip().lines()).as(bad.toString()).hasSize(1);
        }
        assertThat(reviews().path("overrides")).isEmpty();

        CliRunner.Result first = cli.run(
                "run", "review", run, "2", "--outcome", "pass", "--note", "right in substance", "--reviewer", "alice");
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.out()).contains("case 2 (c2)").contains("failed overridden to pass by alice");

        // Without --reviewer the operating-system user is recorded.
        CliRunner.Result second = cli.run("run", "review", run, "5", "--outcome", "pass", "--note", "ok", "--json");
        assertThat(second.exitCode()).as(second.err()).isZero();
        JsonNode o = JSON.readTree(second.out());
        assertThat(o.path("reviewer").asText()).isEqualTo(System.getProperty("user.name"));
        assertThat(o.path("original").asText()).isEqualTo("failed");
        assertThat(o.path("seq").asLong()).isEqualTo(2);

        CliRunner.Result same = cli.run("run", "review", run, "5", "--outcome", "pass", "--note", "again");
        assertThat(same.exitCode()).as(same.err()).isEqualTo(4);
        assertThat(same.err()).contains("already overridden to pass");

        JsonNode listed = reviews();
        assertThat(listed.path("overrides")).hasSize(2);
        JsonNode gate = listed.path("reviewed").path("gates").get(0);
        assertThat(gate.path("passed").asLong()).isEqualTo(8);
        assertThat(gate.path("failed").asLong()).isZero();
        assertThat(gate.path("decision").asText()).isEqualTo("passed");
        assertThat(listed.path("reviewed").path("verdict").asText()).isEqualTo("passed");

        // run status: the machine verdict stays the recorded one, the reviewed one beside it.
        CliRunner.Result status = cli.run("run", "status", run, "--json");
        assertThat(status.exitCode()).as(status.err()).isZero();
        JsonNode s = JSON.readTree(status.out());
        assertThat(s.path("verdict").asText()).isEqualTo("failed");
        assertThat(s.path("gates").get(0).path("passed").asLong()).isEqualTo(6);
        assertThat(s.path("reviewed").path("verdict").asText()).isEqualTo("passed");
        CliRunner.Result text = cli.run("run", "status", run);
        assertThat(text.out())
                .contains("verdict: failed")
                .contains("reviewed gate table (2 overrides applied")
                .contains("reviewed verdict: passed");

        // A second opinion supersedes the first; the history stays listed.
        CliRunner.Result reversed = cli.run(
                "run", "review", run, "2", "--outcome", "fail", "--note", "the unit is missing", "--reviewer", "bob");
        assertThat(reversed.exitCode()).as(reversed.err()).isZero();
        assertThat(reversed.out()).contains("superseding override 1");
        CliRunner.Result list = cli.run("run", "reviews", run);
        assertThat(list.out()).contains("(superseded)").contains("by bob");
        // c2 back to failed, c5 still passed: 7 of 8, which still meets 0.8.
        assertThat(reviews()
                        .path("reviewed")
                        .path("gates")
                        .get(0)
                        .path("passed")
                        .asLong())
                .isEqualTo(7);

        // results carry the override in force.
        CliRunner.Result results = cli.run("run", "results", run);
        assertThat(results.exitCode()).as(results.err()).isZero();
        JsonNode c2 = results.out()
                .lines()
                .map(l -> {
                    try {
                        return JSON.readTree(l);
                    } catch (IOException e) {
                        throw new AssertionError(e);
                    }
                })
                .filter(n -> n.path("case_id").asText().equals("c2"))
                .findFirst()
                .orElseThrow();
        assertThat(c2.path("override").path("outcome").asText()).isEqualTo("fail");
        assertThat(c2.path("override").path("reviewer").asText()).isEqualTo("bob");

        CliRunner.Result verify = cli.run("verify", run);
        assertThat(verify.exitCode()).as(verify.err()).isZero();
        assertThat(verify.out()).contains("review: 3 override records verified (2 in force)");
    }
}
