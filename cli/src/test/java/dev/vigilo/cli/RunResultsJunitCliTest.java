package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.control.TestPostgres;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * {@code vigilo run results --format junit [--out FILE]} in-process on a real PostgreSQL and a local store with a real
 * agent process: the report's suites and counts (read with the JDK's XML parser), the same document to stdout and to
 * a file, {@code --out}'s rules, and a bad {@code --format} (exit 3, one line).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunResultsJunitCliTest {
    @TempDir
    static Path home;

    private CliRunner cli;
    private String run;

    @BeforeAll
    void setUp() throws IOException {
        cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        // Eight cases; the agent answers input.answer, which is wrong for cases 2 and 5. Cases 0..3 are "core".
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            cases.append("{\"id\":\"c")
                    .append(i)
                    .append("\",\"input\":{\"answer\":\"")
                    .append(i == 2 || i == 5 ? "wrong" : Integer.toString(i))
                    .append("\"},\"expected\":\"")
                    .append(i)
                    .append("\"")
                    .append(i < 4 ? ",\"group\":\"core\"" : "")
                    .append("}\n");
        }
        String profile = """
                name: junit
                agent: {kind: command, command: [sh, "%s"], max_attempts: 1, timeout_seconds: 30}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.7}
                  - {name: core, required_evaluators: [exact], groups: [core], min_pass_rate: 1.0}
                """;
        run = ExecutedRun.execute(cli, home, cases, ExecutedRun.ECHO_ANSWER, profile);
    }

    @Test
    void resultsAreFilteredByOutcomeAndGateAsJsonLinesOrCsv() throws Exception {
        CliRunner.Result failedInCore = cli.run("run", "results", run, "--gate", "core", "--outcome", "failed");
        assertThat(failedInCore.exitCode()).as(failedInCore.err()).isZero();
        List<String> lines =
                failedInCore.out().lines().filter(l -> !l.isBlank()).toList();
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0)).contains("\"case_id\":\"c2\"").contains("\"core\":\"failed\"");

        CliRunner.Result csv = cli.run("run", "results", run, "--gate", "core", "--format", "csv");
        assertThat(csv.exitCode()).as(csv.err()).isZero();
        List<String> rows = csv.out().lines().toList();
        assertThat(rows.get(0))
                .isEqualTo("case_id,ordinal,shard,chunk,status,attempts,output,evaluators,gates,error,usage,"
                        + "epoch_passes,epochs,kept_files,override");
        assertThat(rows).hasSize(1 + 4); // the gate table: core planned 4

        CliRunner.Result junitFiltered = cli.run("run", "results", run, "--format", "junit", "--outcome", "failed");
        assertThat(junitFiltered.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(junitFiltered.err())
                .contains("select cases of --format jsonl or csv; a JUnit report always has every gate's cases")
                .hasLineCount(1);
        CliRunner.Result bad = cli.run("run", "results", run, "--outcome", "great");
        assertThat(bad.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(bad.err())
                .contains("--outcome: unknown case outcome \"great\"")
                .hasLineCount(1);
    }

    @Test
    void theJunitReportHasOneSuitePerGateWithTheGateTablesCounts() throws Exception {
        Path out = home.resolve("results.xml");
        CliRunner.Result written = cli.run("run", "results", run, "--format", "junit", "--out", out.toString());
        assertThat(written.exitCode()).as(written.err()).isZero();
        assertThat(written.out())
                .isEqualTo("wrote 12 test cases (3 failures, 0 errors, 0 skipped) in 2 suites of run " + run + " to "
                        + out + System.lineSeparator());

        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(out.toFile());
        Element root = doc.getDocumentElement();
        assertThat(root.getTagName()).isEqualTo("testsuites");
        assertThat(root.getAttribute("name")).isEqualTo("vigilo run " + run);
        assertThat(root.getAttribute("tests")).isEqualTo("12");
        assertThat(root.getAttribute("failures")).isEqualTo("3");
        NodeList suites = root.getElementsByTagName("testsuite");
        assertThat(suites.getLength()).isEqualTo(2);
        // The gate table: all 8 planned, 6 passed, 2 failed; core 4 planned, 3 passed, 1 failed.
        Element all = (Element) suites.item(0);
        Element core = (Element) suites.item(1);
        assertThat(List.of(
                        all.getAttribute("name"),
                        all.getAttribute("tests"),
                        all.getAttribute("failures"),
                        all.getAttribute("errors"),
                        all.getAttribute("skipped")))
                .containsExactly("all", "8", "2", "0", "0");
        assertThat(List.of(
                        core.getAttribute("name"),
                        core.getAttribute("tests"),
                        core.getAttribute("failures"),
                        core.getAttribute("errors"),
                        core.getAttribute("skipped")))
                .containsExactly("core", "4", "1", "0", "0");
        NodeList failures = core.getElementsByTagName("failure");
        assertThat(failures.getLength()).isEqualTo(1);
        Element failure = (Element) failures.item(0);
        assertThat(((Element) failure.getParentNode()).getAttribute("name")).isEqualTo("c2");
        assertThat(((Element) failure.getParentNode()).getAttribute("classname"))
                .isEqualTo("core");
        assertThat(failure.getAttribute("message")).isEqualTo("exact failed (score 0.0)");
        assertThat(failure.getTextContent()).contains("output:\nwrong");

        // The same document on stdout; --out keeps an existing file without --force and never leaves a part.
        CliRunner.Result stdout = cli.run("run", "results", run, "--format", "junit");
        assertThat(stdout.exitCode()).as(stdout.err()).isZero();
        assertThat(stdout.out()).isEqualTo(Files.readString(out, StandardCharsets.UTF_8));
        CliRunner.Result refused = cli.run("run", "results", run, "--format", "junit", "--out", out.toString());
        assertThat(refused.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(refused.err()).contains("already exists", "--force").hasLineCount(1);
        CliRunner.Result forced =
                cli.run("run", "results", run, "--format", "junit", "--out", out.toString(), "--force");
        assertThat(forced.exitCode()).as(forced.err()).isZero();
        try (Stream<Path> files = Files.list(home)) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(f -> f.contains(".tmp"));
        }

        // The default is still JSON lines, also when named.
        CliRunner.Result jsonl = cli.run("run", "results", run, "--format", "jsonl");
        assertThat(jsonl.exitCode()).as(jsonl.err()).isZero();
        assertThat(jsonl.out()).isEqualTo(cli.run("run", "results", run).out());
        assertThat(jsonl.out().lines()).hasSize(8).allMatch(l -> l.startsWith("{\"case_id\":"));
    }

    @Test
    void anUnknownFormatIsRefusedInOneLineBeforeAnythingIsRead() {
        Path out = home.resolve("never.xml");
        CliRunner.Result r = cli.run("run", "results", run, "--format", "xml", "--out", out.toString());
        assertThat(r.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(r.err())
                .hasLineCount(1)
                .startsWith("vigilo: error: --format: ")
                .contains("'xml'", "jsonl", "junit");
        assertThat(r.out()).isEmpty();
        assertThat(out).doesNotExist();
    }
}
