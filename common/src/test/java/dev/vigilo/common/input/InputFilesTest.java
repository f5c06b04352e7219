package dev.vigilo.common.input;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.InvalidInputException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

// Separate thread: if a check ever opened the pipe, the test would fail at the timeout instead of hanging.
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class InputFilesTest {
    @TempDir
    Path dir;

    @Test
    void aReadableRegularFileHasNoProblem() throws IOException {
        Path file = Files.writeString(dir.resolve("profile.yaml"), "x: 1\n");
        assertThat(InputFiles.problem(file)).isEmpty();
        assertThat(InputFiles.check(file, "--profile-file", "give a file")).isSameAs(file);
        Path link = Files.createSymbolicLink(dir.resolve("link.yaml"), file);
        assertThat(InputFiles.problem(link)).isEmpty();
    }

    @Test
    void aNamedPipeIsRefusedWithoutOpeningIt() throws Exception {
        Path fifo = mkfifo(dir.resolve("in.fifo"));
        assertThat(InputFiles.problem(fifo)).contains("is a named pipe (FIFO), not a regular file");
        assertThatThrownBy(() -> InputFiles.check(fifo, "--profile-file", "give the path of a YAML or JSON file"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("--profile-file " + fifo
                        + " is a named pipe (FIFO), not a regular file; give the path of a YAML or JSON file");
        assertThat(InputFiles.directoryProblem(fifo)).contains("is a named pipe (FIFO), not a directory");
    }

    @Test
    void devicesSocketsDirectoriesAndMissingFilesAreNamed() throws IOException {
        assertThat(InputFiles.problem(Path.of("/dev/null")))
                .contains("is a character device (such as /dev/null), not a regular file");
        assertThat(InputFiles.problem(dir)).contains("is a directory, not a regular file");
        assertThat(InputFiles.problem(dir.resolve("missing.yaml"))).contains("does not exist");
        Path socket = dir.resolve("s.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            assertThat(InputFiles.problem(socket)).contains("is a socket, not a regular file");
        }
        Path file = Files.writeString(dir.resolve("f"), "");
        assertThat(InputFiles.problem(file.resolve("below"))).contains("cannot be read (Not a directory)");
    }

    @Test
    void aDirectoryMayBeMissingButNotAnotherKind() throws IOException {
        assertThat(InputFiles.directoryProblem(dir)).isEmpty();
        assertThat(InputFiles.directoryProblem(dir.resolve("not-yet"))).isEmpty();
        Path file = Files.writeString(dir.resolve("objects"), "");
        assertThat(InputFiles.directoryProblem(file)).contains("is a regular file, not a directory");
        assertThat(InputFiles.directoryProblem(Path.of("/dev/null")))
                .contains("is a character device (such as /dev/null), not a directory");
    }

    private static Path mkfifo(Path path) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("mkfifo", path.toString()).inheritIO().start();
        assertThat(p.waitFor()).as("mkfifo").isZero();
        return path;
    }
}
