package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.control.TestPostgres;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files that are not regular files where Vigilo expects one: every file a command reads is checked before it is
 * opened, so a named pipe or a device gets one line and exit 3 at once instead of a command that blocks for ever.
 * Each test runs in a separate thread with a timeout, so a command that does block fails the test rather than
 * hanging the build; afterwards every pipe is opened for reading and writing once, which releases a reader stuck
 * in {@code open(2)}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class OddFilesCliTest {
    @TempDir
    static Path home;

    private CliRunner cli;
    private Path cases;
    private final List<Path> fifos = new ArrayList<>();

    @BeforeAll
    void setUp() throws IOException {
        cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        cases = Files.writeString(home.resolve("cases.jsonl"), "{\"id\":\"a\",\"input\":1}\n");
    }

    @AfterEach
    void releaseStuckReaders() {
        for (Path fifo : fifos) {
            // O_RDWR never blocks on a FIFO, and a reader blocked in open() proceeds once a writer exists.
            try (FileChannel ignored = FileChannel.open(fifo, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                // closing it gives that reader end-of-file
            } catch (IOException e) {
                // already removed
            }
        }
        fifos.clear();
    }

    private Path fifo(String name) throws Exception {
        Path path = home.resolve(UUID.randomUUID() + "-" + name);
        Process p = new ProcessBuilder("mkfifo", path.toString()).inheritIO().start();
        assertThat(p.waitFor()).as("mkfifo").isZero();
        fifos.add(path);
        return path;
    }

    /** One line on stderr naming the file and saying it is a named pipe, exit 3; returns the line. */
    private static String refusedPipe(CliRunner.Result r, Path fifo) {
        assertThat(r.exitCode()).as(r.err()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(r.err()).as(r.err()).startsWith("vigilo: error: ").hasLineCount(1);
        assertThat(r.err()).contains(fifo.toString(), "is a named pipe (FIFO), not a regular file");
        return r.err().strip();
    }

    @Test
    void aProfileFileThatIsAPipe() throws Exception {
        Path fifo = fifo("profile.yaml");
        String line = refusedPipe(
                cli.run(
                        "run",
                        "create",
                        "--profile-file",
                        fifo.toString(),
                        "--dataset-upload-id",
                        UUID.randomUUID().toString()),
                fifo);
        assertThat(line).contains("--profile-file");
    }

    @Test
    void aPipelineFileThatIsAPipe() throws Exception {
        Path fifo = fifo("pipeline.yaml");
        refusedPipe(
                cli.run("datagen", "run", fifo.toString(), "--experiment", "e", "--durable-root", home.toString()),
                fifo);
        assertThat(home.resolve("datagen_checkpoints")).doesNotExist();
    }

    @Test
    void aSeedInputThatIsAPipe() throws Exception {
        Path fifo = fifo("seeds.jsonl");
        Path pipeline = Files.writeString(
                home.resolve("seeded-" + UUID.randomUUID() + ".yaml"),
                "name: seeded\ninput: " + fifo.getFileName() + "\nsteps:\n"
                        + "  - name: t\n    kind: template\n    template: \"x\"\n    output_field: y\n");
        String line = refusedPipe(
                cli.run("datagen", "run", pipeline.toString(), "--experiment", "e", "--durable-root", home.toString()),
                fifo);
        assertThat(line).contains("seed input");
    }

    @Test
    void aStorageConfigThatIsAPipe() throws Exception {
        Path fifo = fifo("storage.toml");
        String line =
                refusedPipe(cli.run("--storage-config", fifo.toString(), "dataset", "upload", cases.toString()), fifo);
        assertThat(line).contains("storage config");
    }

    @Test
    void anExecutionConfigThatIsAPipe() throws Exception {
        Path fifo = fifo("execution.toml");
        String line = refusedPipe(cli.run("--execution-config", fifo.toString(), "placement", "list"), fifo);
        assertThat(line).contains("execution config");
    }

    @Test
    void sessionCommandsSayWhatTheFileIs() throws Exception {
        Path fifo = fifo("session.jsonl.zstd");
        for (List<String> command : List.of(
                List.of("session", "verify"),
                List.of("session", "cat"),
                List.of("session", "repair"),
                List.of("session", "compact"))) {
            List<String> args = new ArrayList<>(command);
            args.add(fifo.toString());
            assertThat(refusedPipe(cli.run(args.toArray(String[]::new)), fifo))
                    .as(args.toString())
                    .doesNotContain("no such");
        }
        CliRunner.Result devNull = cli.run("session", "verify", "/dev/null");
        assertThat(devNull.exitCode()).as(devNull.err()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(devNull.err())
                .hasLineCount(1)
                .contains("/dev/null is a character device (such as /dev/null), not a regular file")
                .doesNotContain("no such");
    }

    @Test
    void aLocalStoreRootThatIsAPipeIsInvalidConfiguration() throws Exception {
        Path fifo = fifo("objects");
        Path config = Files.writeString(
                home.resolve("storage-" + UUID.randomUUID() + ".toml"),
                "[stores.disk]\nkind = \"local\"\nroot = \"" + fifo + "\"\n");
        CliRunner.Result r = cli.run("--storage-config", config.toString(), "dataset", "upload", cases.toString());
        assertThat(r.exitCode()).as(r.err()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(r.err())
                .hasLineCount(1)
                .contains(
                        config.toString(),
                        "stores.disk.root",
                        fifo.toString(),
                        "is a named pipe (FIFO), not a directory");
    }
}
