package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.TestPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo run compare A B --flips [--format jsonl|csv]} in-process on a real PostgreSQL with real agent
 * processes: run A answers cases 2 and 5 wrongly, run B answers every case; the flips are exactly c2 and c5
 * ({@code fail_to_pass}), as JSON lines and as CSV; bad option combinations exit 3 in one line.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCompareFlipsCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path home;

    private CliRunner cli;
    private String a;
    private String b;

    @BeforeAll
    void setUp() throws IOException {
        cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            cases.append("{\"id\":\"c")
                    .append(i)
                    .append("\",\"input\":{\"answer\":\"")
                    .append(Integer.toString(i))
                    .append("\"},\"expected\":\"")
                    .append(i)
                    .append("\"}\n");
        }
        Path file = Files.writeString(home.resolve("cases.jsonl"), cases);
        CliRunner.Result up = cli.run("dataset", "upload", file.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        // A: wrong for answers 2 and 5; B: always right.
        Path wrong = Files.writeString(
                home.resolve("wrong.sh"),
                "x=$(sed -n 's/.*\"answer\":\"\\([^\"]*\\)\".*/\\1/p'); case $x in 2|5) echo wrong;; *) echo $x;; esac\n");
        Path right = Files.writeString(home.resolve("right.sh"), "sed -n 's/.*\"answer\":\"\\([^\"]*\\)\".*/\\1/p'\n");
        a = create(up.out().trim(), wrong);
        b = create(up.out().trim(), right);
        CliRunner.Result worker = cli.run("worker", "--exit-when-idle");
        assertThat(worker.exitCode()).as(worker.err()).isZero();
    }

    private String create(String dataset, Path agent) {
        String profile = """
                name: flips
                agent: {kind: command, command: [sh, "%s"], max_attempts: 1, timeout_seconds: 30}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                """.formatted(agent);
        String run = UUID.randomUUID().toString();
        CliRunner.Result created =
                cli.run("run", "create", "--profile", profile, "--dataset-upload-id", dataset, "--run-id", run);
        assertThat(created.exitCode()).as(created.err()).isZero();
        return run;
    }

    @Test
    void theFlipsAreWrittenAsJsonLinesAndCsv() throws IOException {
        CliRunner.Result jsonl = cli.run("run", "compare", a, b, "--flips");
        assertThat(jsonl.exitCode()).as(jsonl.err()).isZero();
        List<String> lines = jsonl.out().lines().toList();
        assertThat(lines).hasSize(2);
        JsonNode first = JSON.readTree(lines.get(0));
        assertThat(first.path("case_id").asText()).isEqualTo("c2");
        assertThat(first.path("ordinal_a").asLong()).isEqualTo(2);
        assertThat(first.at("/changes/0/gate").asText()).isEqualTo("all");
        assertThat(first.at("/changes/0/a").asText()).isEqualTo("failed");
        assertThat(first.at("/changes/0/b").asText()).isEqualTo("passed");
        assertThat(first.at("/changes/0/change").asText()).isEqualTo("fail_to_pass");
        assertThat(JSON.readTree(lines.get(1)).path("case_id").asText()).isEqualTo("c5");

        CliRunner.Result csv = cli.run("run", "compare", a, b, "--flips", "--format", "csv");
        assertThat(csv.exitCode()).as(csv.err()).isZero();
        assertThat(csv.out().lines().toList())
                .containsExactly(
                        "case_id,ordinal_a,ordinal_b,gate,a,b,change",
                        "c2,2,2,all,failed,passed,fail_to_pass",
                        "c5,5,5,all,failed,passed,fail_to_pass");

        // A run compared with itself has no flip: the header alone.
        CliRunner.Result none = cli.run("run", "compare", a, a, "--flips", "--format", "csv");
        assertThat(none.out().lines().toList()).containsExactly("case_id,ordinal_a,ordinal_b,gate,a,b,change");

        for (List<String> bad : List.of(
                List.of("--format", "csv"), List.of("--flips", "--format", "xml"), List.of("--flips", "--json"))) {
            List<String> args = new java.util.ArrayList<>(List.of("run", "compare", a, b));
            args.addAll(bad);
            CliRunner.Result r = cli.run(args.toArray(String[]::new));
            assertThat(r.exitCode()).as(bad + ": " + r.err()).isEqualTo(3);
            assertThat(r.err().strip().lines()).as(bad.toString()).hasSize(1);
        }
    }
}
