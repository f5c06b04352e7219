package dev.vigilo.common.io;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.crash.CrashSweep;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The crash-safe write: its outcomes on success, on failure, and after a halt at each of its boundaries. */
class AtomicFilesTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void replaceWritesTheWholeContentAndLeavesNoTemporaryFile() throws IOException {
        Path target = dir.resolve("state.json");
        AtomicFiles.replace(target, "old".getBytes(UTF_8));
        AtomicFiles.replace(target, "new".getBytes(UTF_8));
        assertThat(Files.readString(target)).isEqualTo("new");
        assertThat(names()).containsExactly("state.json");
    }

    @Test
    void createNewNeverReplacesAnExistingFile() throws IOException {
        Path target = dir.resolve("out.jsonl");
        Files.writeString(target, "keep me");
        assertThatThrownBy(() -> AtomicFiles.write(target, AtomicFiles.Mode.CREATE_NEW, out -> {
                    out.write("other".getBytes(UTF_8));
                    return null;
                }))
                .isInstanceOf(FileAlreadyExistsException.class);
        assertThat(Files.readString(target)).isEqualTo("keep me");
        assertThat(names()).containsExactly("out.jsonl");
    }

    @Test
    void aFailingContentLeavesTheTargetAsItWasAndNoTemporaryFile() throws IOException {
        Path target = dir.resolve("out.jsonl");
        Files.writeString(target, "old");
        assertThatThrownBy(() -> AtomicFiles.write(target, AtomicFiles.Mode.REPLACE, out -> {
                    out.write("half of the new".getBytes(UTF_8));
                    throw new IOException("disk full");
                }))
                .hasMessage("disk full");
        assertThat(Files.readString(target)).isEqualTo("old");
        assertThat(names()).containsExactly("out.jsonl");
    }

    @Test
    void aStreamWriteIsFlushedBeforeItIsPublishedAndReturnsTheContentsResult() throws IOException {
        Path target = dir.resolve("big.bin");
        byte[] line = "0123456789abcdef\n".getBytes(UTF_8);
        long n = AtomicFiles.write(target, AtomicFiles.Mode.CREATE_NEW, out -> {
            for (int i = 0; i < 10_000; i++) {
                out.write(line);
            }
            return 10_000L;
        });
        assertThat(n).isEqualTo(10_000L);
        assertThat(Files.size(target)).isEqualTo(10_000L * line.length);
    }

    @Test
    void temporaryNamesAreRecognizedAsTheTargetsOnly() {
        Path target = dir.resolve("session.jsonl");
        Path tmp = AtomicFiles.tempBeside(target);
        assertThat(tmp.getParent()).isEqualTo(dir);
        assertThat(AtomicFiles.isTemporaryOf(tmp, target)).isTrue();
        assertThat(AtomicFiles.isTemporaryOf(tmp, dir.resolve("session.jsonl.manifest")))
                .isFalse();
        assertThat(AtomicFiles.isTemporaryOf(target, target)).isFalse();
        assertThat(AtomicFiles.tempBeside(target)).isNotEqualTo(tmp);
    }

    @Test
    void aHaltAtEachBoundaryLeavesTheOldOrTheNewContentNeverAMixture() throws IOException {
        Path target = dir.resolve("state.json");
        CrashSweep sweep = new CrashSweep(ReplaceMain.class.getName(), CrashSweep.FAST_START, dir.resolve("work"));
        Files.createDirectories(dir.resolve("work"));
        Files.writeString(target, "old content");
        assertThat(sweep.trace(TIMEOUT, target.toString(), "new content"))
                .containsExactly("test.replace.tmp", "test.replace.rename");
        assertThat(Files.readString(target)).isEqualTo("new content");

        for (int point = 1; point <= 2; point++) {
            Files.writeString(target, "old content");
            CrashSweep.Outcome o = sweep.haltAt(point, TIMEOUT, target.toString(), "new content");
            assertThat(o.halted()).as(o.err()).isTrue();
            // Both boundaries come before the rename: the old content is whole, and at most a temporary file
            // (written and forced before the second boundary) is left beside it.
            assertThat(Files.readString(target)).isEqualTo("old content");
            try (Stream<Path> files = Files.list(dir)) {
                assertThat(files.filter(f ->
                                !f.equals(target) && !f.getFileName().toString().equals("work")))
                        .allMatch(f -> AtomicFiles.isTemporaryOf(f, target))
                        .hasSizeLessThanOrEqualTo(point - 1);
            }
        }
    }

    private List<String> names() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }
}
