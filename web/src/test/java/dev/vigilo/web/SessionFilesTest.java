package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.NotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The confinement of session logs opened by path: the path as written and the path the file system resolves it to
 * must both lie inside, one way out per test.
 */
class SessionFilesTest {
    @TempDir
    Path dir;

    private Path root;
    private Path outside;
    private Path inside;
    private SessionFiles files;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createDirectories(dir.resolve("home"));
        outside = Files.createDirectories(dir.resolve("outside"));
        inside = Files.writeString(root.resolve("a.jsonl.zstd"), "a log");
        files = new SessionFiles(List.of(), List.of(root));
    }

    @Test
    void aLogInsideTheRootIsOpenedAsWrittenOrNormalized() throws IOException {
        assertThat(files.resolve(inside.toString())).isEqualTo(inside.toRealPath());
        Files.createDirectories(root.resolve("sub"));
        assertThat(files.resolve(root + "/sub/../a.jsonl.zstd")).isEqualTo(inside.toRealPath());
        // A link inside the root to a log inside it is fine both ways.
        Path link = Files.createSymbolicLink(root.resolve("b.jsonl.zstd"), inside);
        assertThat(files.resolve(link.toString())).isEqualTo(inside.toRealPath());
    }

    @Test
    void dotDotThatClimbsOutIsRefusedBeforeTheFileIsTouched() {
        assertThatThrownBy(() -> files.resolve(root + "/../outside/none.jsonl.zstd"))
                .isInstanceOf(SessionFiles.Forbidden.class);
    }

    @Test
    void aPathWrittenOutsideIsRefusedEvenWhenItResolvesInside() throws IOException {
        // outside/link.jsonl.zstd -> home/a.jsonl.zstd: the resolved path is allowed, the path as written is not.
        Path link = Files.createSymbolicLink(outside.resolve("link.jsonl.zstd"), inside);
        assertThatThrownBy(() -> files.resolve(link.toString())).isInstanceOf(SessionFiles.Forbidden.class);
        assertThatThrownBy(() -> files.resolve(root + "/../outside/link.jsonl.zstd"))
                .isInstanceOf(SessionFiles.Forbidden.class);
    }

    @Test
    void aSymbolicLinkInsideThatPointsOutsideIsRefused() throws IOException {
        Path secret = Files.writeString(outside.resolve("secret.jsonl.zstd"), "secret");
        Path link = Files.createSymbolicLink(root.resolve("link.jsonl.zstd"), secret);
        assertThatThrownBy(() -> files.resolve(link.toString()))
                .isInstanceOf(SessionFiles.Forbidden.class)
                .hasMessageContaining("symbolic link");
    }

    @Test
    void dotDotAfterALinkedDirectoryIsJudgedWhereTheFileSystemGoes() throws IOException {
        // home/d -> outside/d: "home/d/../secret.jsonl.zstd" reads as home/secret.jsonl.zstd once normalized, but
        // the file system follows d first and opens outside/secret.jsonl.zstd.
        Files.writeString(outside.resolve("secret.jsonl.zstd"), "secret");
        Files.writeString(root.resolve("secret.jsonl.zstd"), "a decoy inside");
        Path target = Files.createDirectories(outside.resolve("d"));
        Files.createSymbolicLink(root.resolve("d"), target);
        assertThatThrownBy(() -> files.resolve(root + "/d/../secret.jsonl.zstd"))
                .isInstanceOf(SessionFiles.Forbidden.class)
                .hasMessageContaining("symbolic link");
    }

    @Test
    void aFileGivenOnTheCommandLineIsOpenedByTheNameGivenOrItsRealPath() throws IOException {
        Path log = Files.writeString(outside.resolve("given.jsonl"), "a log");
        Path link = Files.createSymbolicLink(dir.resolve("given-link.jsonl"), log);
        SessionFiles given = new SessionFiles(List.of(link), List.of());
        assertThat(given.resolve(link.toString())).isEqualTo(log.toRealPath());
        assertThat(given.resolve(log.toString())).isEqualTo(log.toRealPath());
        Path other = Files.writeString(outside.resolve("other.jsonl"), "another log");
        assertThatThrownBy(() -> given.resolve(other.toString())).isInstanceOf(SessionFiles.Forbidden.class);
    }

    @Test
    void aRootGivenThroughALinkAcceptsPathsWrittenEitherWay() throws IOException {
        Path linkedRoot = Files.createSymbolicLink(dir.resolve("home-link"), root);
        SessionFiles linked = new SessionFiles(List.of(), List.of(linkedRoot));
        assertThat(linked.resolve(linkedRoot + "/a.jsonl.zstd")).isEqualTo(inside.toRealPath());
        assertThat(linked.resolve(inside.toString())).isEqualTo(inside.toRealPath());
        assertThatThrownBy(() -> linked.resolve(root + "/missing.jsonl.zstd")).isInstanceOf(NotFoundException.class);
    }

    @Test
    void theListShowsTheLogsBelowTheRootNewestFirstFollowsNoLinkAndIsBounded() throws IOException {
        Path deep = Files.createDirectories(root.resolve("sessions/demo"));
        Path newer = Files.writeString(deep.resolve("session.jsonl.zstd"), "newer log");
        Files.setLastModifiedTime(inside, java.nio.file.attribute.FileTime.fromMillis(1_000_000_000_000L));
        Files.setLastModifiedTime(newer, java.nio.file.attribute.FileTime.fromMillis(1_700_000_000_000L));
        Files.writeString(root.resolve("notes.txt"), "not a log");
        Files.writeString(outside.resolve("far.jsonl.zstd"), "outside");
        Files.createSymbolicLink(root.resolve("link"), outside);
        SessionFiles.Found found = files.list(10, 1_000);
        assertThat(found.logs().stream().map(SessionFiles.Listed::path).toList())
                .as("newest first; the link to outside is not followed; other names are not logs")
                .containsExactly(
                        root.toRealPath().resolve("sessions/demo/session.jsonl.zstd"),
                        root.toRealPath().resolve("a.jsonl.zstd"));
        assertThat(found.logs().get(0).bytes()).isEqualTo("newer log".length());
        assertThat(found.stopped()).isFalse();
        // Each listed path opens.
        for (SessionFiles.Listed l : found.logs()) {
            assertThat(files.resolve(l.path().toString())).isEqualTo(l.path().toRealPath());
        }
        // At most max, the newest; a bound on the entries looked at stops the walk and says so.
        assertThat(files.list(1, 1_000).logs()).hasSize(1);
        SessionFiles.Found bounded = files.list(10, 2);
        assertThat(bounded.stopped()).isTrue();
        assertThat(bounded.looked()).isEqualTo(2);
    }
}
