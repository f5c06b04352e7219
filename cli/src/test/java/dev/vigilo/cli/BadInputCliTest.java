package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.control.TestPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bad inputs a new user tried: each one gets one line that says what, where and what to do, its documented
 * exit code, and changes nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputCliTest {
    private static final Path PIPELINE = Path.of("..", "examples", "datagen", "pipeline.yaml")
            .toAbsolutePath()
            .normalize();

    @TempDir
    static Path home;

    private CliRunner cli;
    private Path cases;

    @BeforeAll
    void setUp() throws IOException {
        cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        cases = Files.writeString(home.resolve("cases.jsonl"), "{\"id\":\"a\",\"input\":1}\n");
    }

    /** One line on stderr, the given exit code; returns the line. */
    private static String oneLine(CliRunner.Result r, int exitCode) {
        assertThat(r.exitCode()).as(r.err()).isEqualTo(exitCode);
        assertThat(r.err()).as(r.err()).startsWith("vigilo: error: ").hasLineCount(1);
        assertThat(r.err()).doesNotContain("\u001b", "\tat ", "Exception");
        return r.err().strip();
    }

    @Test
    void aWorkersConcurrencyAndProcessesOutOfRangeAreInputErrors() {
        assertThat(oneLine(cli.run("worker", "--concurrency", "4097"), ExitCode.INVALID_INPUT))
                .contains("--concurrency must be between 1 and 4096, got 4097");
        assertThat(oneLine(cli.run("worker", "--processes", "0"), ExitCode.INVALID_INPUT))
                .contains("--processes must be between 1 and 4096, got 0");
    }

    @Test
    void badExperimentAndPipelineNamesAreInputErrors() {
        String line = oneLine(
                cli.run(
                        "datagen",
                        "run",
                        PIPELINE.toString(),
                        "--experiment",
                        ".bad",
                        "--durable-root",
                        home.toString()),
                ExitCode.INVALID_INPUT);
        assertThat(line).contains("--experiment: \".bad\" is not a valid name", "not starting with '.'");
        for (String[] names : new String[][] {{"../quiz", "demo"}, {"quiz", "../ref"}}) {
            for (String command : List.of("status", "item", "export")) {
                List<String> args = new java.util.ArrayList<>(List.of("datagen", command));
                if (command.equals("item")) {
                    args.add("q1");
                }
                args.addAll(
                        List.of("--pipeline", names[0], "--experiment", names[1], "--durable-root", home.toString()));
                if (command.equals("export")) {
                    args.addAll(List.of("--out", home.resolve("x.jsonl").toString()));
                }
                assertThat(oneLine(cli.run(args.toArray(String[]::new)), ExitCode.INVALID_INPUT))
                        .as(args.toString())
                        .contains("is not a valid name");
            }
        }
        assertThat(home.resolve("datagen_checkpoints")).doesNotExist();
    }

    @Test
    void datasetNamesMustBePrintableAndIdsCanonical() {
        for (String name : List.of("two\nlines", "\u001b[2Jclear", "tab\there", "bell\u0007")) {
            String line =
                    oneLine(cli.run("dataset", "upload", cases.toString(), "--name", name), ExitCode.INVALID_INPUT);
            assertThat(line).contains("--name: ", "control character U+", "use printable characters only");
        }
        for (String id :
                List.of("1-2-3-4-5", "00000000-0000-0000-0000-000000000000", "3F2B6C1E-8D4A-4E7B-9C0D-1A2B3C4D5E6F")) {
            String line =
                    oneLine(cli.run("dataset", "upload", cases.toString(), "--upload-id", id), ExitCode.INVALID_INPUT);
            assertThat(line).contains("--upload-id: ");
            assertThat(oneLine(cli.run("dataset", "show", id), ExitCode.INVALID_INPUT))
                    .contains("UPLOAD_ID: ");
            assertThat(oneLine(cli.run("run", "status", id), ExitCode.INVALID_INPUT))
                    .contains("RUN_ID: ");
        }
        assertThat(cli.run("dataset", "list", "--json").out().strip()).isEqualTo("[]");
    }

    @Test
    void badMapsAndCsvFilesAreOneLineErrorsThatStoreNothing() throws Exception {
        String before = cli.run("dataset", "list", "--json").out();
        assertThat(oneLine(cli.run("dataset", "upload", cases.toString(), "--map", "input=q"), ExitCode.INVALID_INPUT))
                .isEqualTo("vigilo: error: --map: nothing is mapped onto \"id\"; add id=FIELD");
        Path csv = home.resolve("qa.csv");
        java.nio.file.Files.writeString(csv, "id,question\nq1,What?\n");
        assertThat(oneLine(cli.run("dataset", "upload", csv.toString()), ExitCode.INVALID_INPUT))
                .isEqualTo("vigilo: error: " + csv + ":1: column \"question\" is not a case field; name the columns"
                        + " id, input, expected, group, tags, metadata.KEY, or map them with --map");
        assertThat(cli.run("dataset", "list", "--json").out()).isEqualTo(before);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void uploadFromAFifoSaysARegularFileIsNeeded() throws Exception {
        Path fifo = home.resolve("cases.fifo");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertThat(mkfifo.waitFor()).isZero();
        String line = oneLine(cli.run("dataset", "upload", fifo.toString()), ExitCode.INVALID_INPUT);
        assertThat(line)
                .contains(
                        fifo.toString(), "is a named pipe (FIFO), not a regular file", "save the data to a file first");
    }

    @Test
    void yamlAndEncodingErrorsAreOneLineWithTheirLocation() throws IOException {
        Path profile = Files.writeString(home.resolve("bad-profile.yaml"), "name: p\nagent: [unclosed\n");
        String line = oneLine(
                cli.run(
                        "run",
                        "create",
                        "--profile-file",
                        profile.toString(),
                        "--dataset-upload-id",
                        java.util.UUID.randomUUID().toString()),
                ExitCode.INVALID_INPUT);
        assertThat(line)
                .containsPattern("not valid YAML at " + java.util.regex.Pattern.quote(profile.toString())
                        + ":\\d+:\\d+: .+; fix the syntax");

        Path latin1 =
                Files.write(home.resolve("latin1.yaml"), new byte[] {'n', 'a', 'm', 'e', ':', ' ', (byte) 0xE9, '\n'});
        line = oneLine(
                cli.run(
                        "run",
                        "create",
                        "--profile-file",
                        latin1.toString(),
                        "--dataset-upload-id",
                        java.util.UUID.randomUUID().toString()),
                ExitCode.INVALID_INPUT);
        assertThat(line).contains("not valid UTF-8 at " + latin1 + ":1:7: byte 0xE9; save the profile as UTF-8");

        Path pipeline = Files.writeString(home.resolve("bad-pipeline.yaml"), "name: p\nsteps: [\n  - a: b\n");
        line = oneLine(
                cli.run("datagen", "run", pipeline.toString(), "--experiment", "e", "--durable-root", home.toString()),
                ExitCode.INVALID_INPUT);
        assertThat(line)
                .containsPattern(java.util.regex.Pattern.quote(pipeline.toString())
                        + ":\\d+:\\d+: invalid YAML: .+; fix the syntax");
    }

    @Test
    void watchIntervalMustBePositive() {
        for (String interval : List.of("0", "-1", "NaN")) {
            String line = oneLine(
                    cli.run("run", "watch", java.util.UUID.randomUUID().toString(), "--interval", interval),
                    ExitCode.INVALID_INPUT);
            assertThat(line).contains("--interval must be between 0.01 and 86400 seconds");
        }
    }
}
