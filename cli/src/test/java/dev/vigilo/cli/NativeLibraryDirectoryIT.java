package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.sessionlog.LockFileEpochSource;
import dev.vigilo.sessionlog.SessionHeader;
import dev.vigilo.sessionlog.SessionLogWriter;
import dev.vigilo.sessionlog.WriterOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real {@code vigilo} process (the packaged jar) whose temporary directories cannot be written still judges an
 * intact {@code .zstd} session log correctly: zstd-jni unpacks its native library into the first writable one, and
 * when there is none at all the command says so in one line and exits 5, never a verdict on the log.
 *
 * <p>Tests run as root in CI, where permissions stop nothing; an unusable directory here is a regular file standing
 * where the directory should be, which no user can create files in.
 */
class NativeLibraryDirectoryIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Path home;
    private Path notADirectory;
    private Path log;

    @BeforeEach
    void setUp() throws Exception {
        home = Files.createDirectories(dir.resolve("home"));
        // Vigilo home's tmp is a file: nothing can be created "in" it.
        Files.writeString(home.resolve("tmp"), "not a directory");
        notADirectory = Files.writeString(dir.resolve("scratch-file"), "not a directory");
        log = intactLog(dir.resolve("session.jsonl.zstd"));
    }

    @Test
    void anUnwritableTemporaryDirectoryFallsBackToAWritableOne() throws Exception {
        Path system = Files.createDirectories(dir.resolve("system-tmp"));
        List<String> unwritableTmpdir = List.of("-Djava.io.tmpdir=" + notADirectory);
        for (String command : List.of("verify", "cat")) {
            VigiloProcess.Result r = VigiloProcess.run(
                    home,
                    Map.of("TMPDIR", system.toString()),
                    unwritableTmpdir,
                    120,
                    "session",
                    command,
                    log.toString());
            assertThat(r.exitCode()).as(command + ": " + r.err()).isZero();
            assertThat(r.err()).as(command).doesNotContain("Error", "Exception");
            if (command.equals("verify")) {
                assertThat(r.out()).startsWith("ACCEPT events=").contains(" compression=zstd ");
            } else {
                assertThat(r.out()).contains("\"todo/write\"");
            }
        }
    }

    @Test
    void withoutAnyWritableDirectoryTheCommandSaysSoInOneLine() throws Exception {
        List<String> unwritableTmpdir = List.of("-Djava.io.tmpdir=" + notADirectory);
        for (String command : List.of("verify", "cat")) {
            VigiloProcess.Result r = VigiloProcess.run(
                    home,
                    Map.of("TMPDIR", notADirectory.toString()),
                    unwritableTmpdir,
                    120,
                    "session",
                    command,
                    log.toString());
            assertThat(r.exitCode()).as(command + ": " + r.err()).isEqualTo(ExitCode.UNAVAILABLE);
            assertThat(r.err())
                    .as(command)
                    .hasLineCount(1)
                    .startsWith("vigilo: error: cannot load zstd-jni's native library (needed to read and write"
                            + " .zstd session logs) from " + notADirectory + ": ")
                    .contains("point java.io.tmpdir at one that is")
                    .doesNotContain("ExceptionInInitializerError", "REJECT", "\tat ");
            assertThat(r.out()).as(command).doesNotContain("REJECT", "ACCEPT");
        }
    }

    /** A log of three events written by Vigilo's writer, in this JVM (whose temporary directory is fine). */
    private static Path intactLog(Path file) throws Exception {
        SessionHeader header = new SessionHeader("native-library-test", "/tmp", 1760000000000L, 0);
        try (SessionLogWriter w =
                SessionLogWriter.create(file, header, new LockFileEpochSource(), WriterOptions.defaults())) {
            List<ObjectNode> batch = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                ObjectNode n = JSON.createObjectNode();
                n.put("type", "todo/write")
                        .put("time", 1000 + i)
                        .putObject("data")
                        .putArray("todos")
                        .add("t" + i);
                batch.add(n);
            }
            w.append(batch);
        }
        return file;
    }
}
