package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.sessionlog.LockFileEpochSource;
import dev.vigilo.sessionlog.SessionHeader;
import dev.vigilo.sessionlog.SessionLogWriter;
import dev.vigilo.sessionlog.WriterOptions;
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
 * Messages for odd input that passed before or said the wrong thing: each gets one line saying what, where and what
 * to do, its documented exit code, and changes nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class InputMessagesCliTest {
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
        assertThat(r.err()).doesNotContain("\u001b", "\tat ", "Exception", "REDACTED", "StreamReadConstraints");
        return r.err().strip();
    }

    @Test
    void aNameThatDidNotDecodeIsRefused() {
        // What the JVM makes of `--name $'ab\xffcd'` under a UTF-8 locale.
        String line =
                oneLine(cli.run("dataset", "upload", cases.toString(), "--name", "ab\ufffdcd"), ExitCode.INVALID_INPUT);
        assertThat(line).contains("--name: ", "U+FFFD", "at position 3", "character encoding");
        assertThat(cli.run("dataset", "list", "--json").out().strip()).isEqualTo("[]");
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS) // before, it served
    void serveBindsIpLiteralsOnly() {
        String line = oneLine(cli.run("serve", "--port", "0", "--bind", "localhost"), ExitCode.INVALID_INPUT);
        assertThat(line).contains("--bind \"localhost\" is not an IP address", "127.0.0.1");
    }

    @Test
    void configurationsSavedAsUtf16OrNestedTooDeeplySaySoWhere() throws IOException {
        Path wide = Files.write(home.resolve("wide.toml"), new byte[] {(byte) 0xFF, (byte) 0xFE, '[', 0, ']', 0});
        String line = oneLine(
                cli.run("--storage-config", wide.toString(), "dataset", "upload", cases.toString()),
                ExitCode.INVALID_INPUT);
        assertThat(line)
                .contains("storage config " + wide + ":1:1: is UTF-16 (little-endian) text", "save it as UTF-8")
                .doesNotContain("Invalid UTF-8 start byte");
        line = oneLine(cli.run("--execution-config", wide.toString(), "placement", "list"), ExitCode.INVALID_INPUT);
        assertThat(line).contains("execution config " + wide + ":1:1: is UTF-16 (little-endian) text");

        Path deep = Files.writeString(
                home.resolve("deep.toml"), "[placements.a]\nx = " + "[".repeat(1200) + "]".repeat(1200) + "\n");
        line = oneLine(cli.run("--execution-config", deep.toString(), "placement", "list"), ExitCode.INVALID_INPUT);
        // "x = " is 4 characters: the 998th bracket is level 1001 (the document and the two tables are levels 1-3).
        assertThat(line)
                .contains("execution config " + deep + ":2:1002: not valid TOML: nested deeper than 1000" + " levels");
        line = oneLine(
                cli.run("--storage-config", deep.toString(), "dataset", "upload", cases.toString()),
                ExitCode.INVALID_INPUT);
        assertThat(line).contains("storage config " + deep + ":2:1002: not valid TOML: nested deeper than 1000 levels");
    }

    @Test
    void aConfigurationFileThatIsMissingOrADirectoryIsRefusedByEveryCommand() throws IOException {
        Path missing = home.resolve("no-such.toml");
        Path directory = Files.createDirectories(home.resolve("a-directory.toml"));
        String someRun = java.util.UUID.randomUUID().toString();
        List<List<String>> commands = List.of(
                List.of("dataset", "list"),
                List.of("dataset", "show", someRun),
                List.of("run", "status", someRun),
                List.of("placement", "list"),
                List.of("run", "cancel", someRun),
                List.of("datagen", "status", "--pipeline", "p", "--experiment", "e"));
        for (List<String> command : commands) {
            for (String option : List.of("--storage-config", "--execution-config")) {
                List<String> args = new java.util.ArrayList<>(List.of(option, missing.toString()));
                args.addAll(command);
                String line = oneLine(cli.run(args.toArray(String[]::new)), ExitCode.INVALID_INPUT);
                assertThat(line).as(args.toString()).contains(missing.toString(), "does not exist");
                args.set(1, directory.toString());
                line = oneLine(cli.run(args.toArray(String[]::new)), ExitCode.INVALID_INPUT);
                assertThat(line).as(args.toString()).contains(directory.toString(), "is a directory");
            }
        }
        // The environment variable names the file the same way.
        CliRunner viaEnvironment = new CliRunner(
                home,
                Map.of(Environment.STORAGE_CONFIG_VARIABLE, missing.toString()),
                List.of("--control-db", TestPostgres.newDatabaseUrl()));
        assertThat(oneLine(viaEnvironment.run("dataset", "list"), ExitCode.INVALID_INPUT))
                .contains(missing.toString(), "does not exist");
    }

    @Test
    void pathsInSuccessMessagesAreEscaped() throws Exception {
        // A directory and output names with a line break, a tab and a terminal escape: each message stays one line
        // and shows them as \\uXXXX, so a name cannot rewrite what the terminal shows.
        Path odd = Files.createDirectories(home.resolve("logs\u001b[2J\nsecond"));
        Path log = odd.resolve("session.jsonl.zstd");
        SessionHeader header = new SessionHeader("input-messages", "/tmp", 1760000000000L, 0);
        try (SessionLogWriter w =
                SessionLogWriter.create(log, header, new LockFileEpochSource(), WriterOptions.defaults())) {
            ObjectNode event = JsonNodeFactory.instance.objectNode();
            event.put("type", "todo/write")
                    .put("time", 1000)
                    .putObject("data")
                    .putArray("todos")
                    .add("t");
            w.append(List.of(event));
        }
        Path compacted = home.resolve("compacted\tname\r.jsonl.zstd");
        Path repaired = home.resolve("repaired\u0007.jsonl.zstd");
        for (CliRunner.Result r : List.of(
                cli.run("session", "compact", log.toString(), "--out", compacted.toString()),
                cli.run("session", "repair", log.toString(), "--out", repaired.toString()))) {
            assertThat(r.exitCode()).as(r.err()).isZero();
            assertThat(r.out()).as(r.out()).hasLineCount(1).doesNotContain("\u001b", "\t", "\r", "\u0007");
            assertThat(r.out()).contains("logs\\u001b[2J\\u000asecond");
        }
        assertThat(cli.run(
                                "session",
                                "compact",
                                log.toString(),
                                "--out",
                                home.resolve("x.jsonl.zstd").toString(),
                                "--force")
                        .exitCode())
                .isZero();
        assertThat(Files.exists(compacted)).isTrue();
        assertThat(Files.exists(repaired)).isTrue();
    }
}
