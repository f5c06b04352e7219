package dev.vigilo.common.input;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The --out rule's write: whole file or nothing, never replacing without --force. */
class OutputFilesTest {
    @TempDir
    Path dir;

    @Test
    void writesTheWholeFileAndReturnsTheContentsResult() throws IOException {
        Path out = dir.resolve("results.jsonl");
        int lines = OutputFiles.write(out, "--out", false, file -> {
            file.write("a\nb\n".getBytes(UTF_8));
            return 2;
        });
        assertThat(lines).isEqualTo(2);
        assertThat(Files.readString(out)).isEqualTo("a\nb\n");
        assertThat(names()).containsExactly("results.jsonl");
    }

    @Test
    void aFileThatAppearedMeanwhileIsKeptWithoutForceAndReplacedWithIt() throws IOException {
        Path out = dir.resolve("results.jsonl");
        OutputFiles.check(out, "--out", false);
        Files.writeString(out, "someone else's");
        assertThatThrownBy(() -> OutputFiles.write(out, "--out", false, file -> {
                    file.write("mine".getBytes(UTF_8));
                    return null;
                }))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("--out " + out + " already exists; choose another --out, or pass --force to replace it");
        assertThat(Files.readString(out)).isEqualTo("someone else's");
        OutputFiles.write(out, "--out", true, file -> {
            file.write("mine".getBytes(UTF_8));
            return null;
        });
        assertThat(Files.readString(out)).isEqualTo("mine");
        assertThat(names()).containsExactly("results.jsonl");
    }

    @Test
    void aFailedWriteIsUnavailableAndLeavesNothing() throws IOException {
        Path out = dir.resolve("results.jsonl");
        assertThatThrownBy(() -> OutputFiles.write(out, "--out", false, file -> {
                    file.write("half".getBytes(UTF_8));
                    throw new UncheckedIOException(new IOException("No space left on device"));
                }))
                .isInstanceOf(UnavailableException.class)
                .hasMessage("cannot write " + out + ": No space left on device");
        assertThat(names()).isEmpty();
    }

    private List<String> names() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }
}
