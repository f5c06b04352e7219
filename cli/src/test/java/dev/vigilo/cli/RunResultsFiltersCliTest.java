package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.TestPostgres;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo run results} with the results explorer's filters ({@code --evaluator}, {@code --error-type},
 * {@code --group}, {@code --tag}, {@code --search}) in-process on a real PostgreSQL and a local store with a real agent
 * process: each lists exactly the cases the dataset and the agent's answers say, in JSON lines and CSV, and names the
 * run does not have exit 3 in one line.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunResultsFiltersCliTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    static Path home;

    private CliRunner cli;
    private String run;

    @BeforeAll
    void setUp() throws IOException {
        cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        // Eight cases; the agent answers input.answer, which is wrong for cases 2 and 5 and a crash for case 6.
        // Cases 0..3 are group "core"; odd cases are tagged "odd".
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            cases.append("{\"id\":\"c")
                    .append(i)
                    .append("\",\"input\":{\"answer\":\"")
                    .append(i == 2 || i == 5 ? "Wrong" : i == 6 ? "crash" : Integer.toString(i))
                    .append("\"},\"expected\":\"")
                    .append(i)
                    .append("\"")
                    .append(i < 4 ? ",\"group\":\"core\"" : "")
                    .append(i % 2 == 1 ? ",\"tags\":[\"odd\"]" : "")
                    .append("}\n");
        }
        String profile = """
                name: filters
                agent: {kind: command, command: [sh, "%s"], max_attempts: 1, timeout_seconds: 30}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                """;
        run = ExecutedRun.execute(
                cli,
                home,
                cases,
                "a=$(sed -n 's/.*\"answer\":\"\\([^\"]*\\)\".*/\\1/p')\n"
                        + "if [ \"$a\" = crash ]; then echo boom >&2; exit 3; fi\necho \"$a\"\n",
                profile);
    }

    private List<String> ids(String... options) throws IOException {
        List<String> args = new ArrayList<>(List.of("run", "results", run));
        args.addAll(List.of(options));
        CliRunner.Result r = cli.run(args.toArray(String[]::new));
        assertThat(r.exitCode()).as(r.err()).isZero();
        List<String> out = new ArrayList<>();
        for (String l : r.out().split("\n")) {
            if (!l.isBlank()) {
                out.add(MAPPER.readTree(l).path("case_id").asText());
            }
        }
        return out;
    }

    @Test
    void eachFilterListsTheCasesTheDatasetAndTheAnswersSay() throws IOException {
        assertThat(ids()).containsExactly("c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7");
        assertThat(ids("--group", "core")).containsExactly("c0", "c1", "c2", "c3");
        assertThat(ids("--tag", "odd")).containsExactly("c1", "c3", "c5", "c7");
        assertThat(ids("--group", "core", "--tag", "odd")).containsExactly("c1", "c3");
        // The search finds the input (and output) "Wrong" whatever its case.
        assertThat(ids("--search", "wRONG")).containsExactly("c2", "c5");
        assertThat(ids("--evaluator", "exact", "--outcome", "failed")).containsExactly("c2", "c5");
        // The crashed case has no evaluator result: only its error type lists it.
        assertThat(ids("--evaluator", "exact")).doesNotContain("c6").hasSize(7);
        List<String> errored = ids("--outcome", "errored");
        assertThat(errored).containsExactly("c6");
        String type = MAPPER.readTree(cli.run("run", "results", run, "--outcome", "errored")
                        .out()
                        .strip())
                .at("/error/type")
                .asText();
        assertThat(ids("--error-type", type)).containsExactly("c6");
        assertThat(ids("--search", "no case has this")).isEmpty();
        // CSV keeps the filter.
        CliRunner.Result csv = cli.run("run", "results", run, "--format", "csv", "--tag", "odd", "--group", "core");
        assertThat(csv.exitCode()).as(csv.err()).isZero();
        assertThat(csv.out().strip().split("\n")).hasSize(3);
    }

    @Test
    void namesTheRunDoesNotHaveExitThreeInOneLine() {
        CliRunner.Result r = cli.run("run", "results", run, "--evaluator", "nope");
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.err().strip()).contains("no evaluator").contains("exact").doesNotContain("\n");
        CliRunner.Result junit = cli.run("run", "results", run, "--format", "junit", "--group", "core");
        assertThat(junit.exitCode()).isEqualTo(3);
        assertThat(junit.err()).contains("JUnit");
    }
}
