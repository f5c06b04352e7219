package dev.vigilo.agent.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.UnavailableException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worker-owned root without running a sandbox: which owners are dead, the argv built for bwrap and podman, and the
 * problems a worker reports for a run it cannot serve.
 */
class SandboxesTest {
    @TempDir
    Path dir;

    private static final Map<String, String> NO_PROGRAMS = Map.of("PATH", "/nonexistent");

    @Test
    void aLiveOwnerIsKeptAndDeadOnesAreRemoved() throws IOException {
        Path root = dir.resolve("root");
        try (Sandboxes live = Sandboxes.open(root, "live", NO_PROGRAMS)) {
            // A dead worker: its lock file is there but nobody holds it.
            Files.createDirectories(root.resolve("dead/1-case/work"));
            Files.writeString(root.resolve("dead/1-case/work/f"), "x");
            Files.createFile(root.resolve("dead.lock"));
            // A dead worker that got as far as removing its lock: a directory alone.
            Files.createDirectories(root.resolve("orphan/2-case"));
            // A worker of another process, alive: its lock is held (here by a channel of this test).
            Files.createDirectories(root.resolve("other"));
            try (FileChannel ch = FileChannel.open(
                            root.resolve("other.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                    var held = ch.lock();
                    Sandboxes next = Sandboxes.open(root, "next", NO_PROGRAMS)) {
                assertThat(next.removedOwners()).containsExactlyInAnyOrder("dead", "orphan");
                assertThat(root.resolve("dead")).doesNotExist();
                assertThat(root.resolve("dead.lock")).doesNotExist();
                assertThat(root.resolve("orphan")).doesNotExist();
                assertThat(root.resolve("other")).exists();
                assertThat(root.resolve("live")).exists();
                assertThat(next.directory()).isEqualTo(root.resolve("next"));
            }
            assertThatThrownBy(() -> Sandboxes.open(root, "live", NO_PROGRAMS))
                    .isInstanceOf(UnavailableException.class)
                    .hasMessageContaining("owner live is locked");
        }
        assertThat(root.resolve("live")).doesNotExist();
        assertThat(root.resolve("live.lock")).doesNotExist();
    }

    @Test
    void aMissingProgramIsOneClearProblem() {
        try (Sandboxes s = Sandboxes.open(dir.resolve("root"), "w", NO_PROGRAMS)) {
            SandboxSettings bwrap = new SandboxSettings(
                    SandboxKind.BWRAP,
                    false,
                    Optional.empty(),
                    Optional.empty(),
                    Optional.empty(),
                    List.of(),
                    Optional.empty());
            assertThat(s.problem(bwrap))
                    .hasValueSatisfying(p -> assertThat(p)
                            .contains("needs the program bwrap, which is not on this worker's PATH")
                            .contains("apt-get install bubblewrap"));
            SandboxSettings podman = new SandboxSettings(
                    SandboxKind.PODMAN,
                    false,
                    Optional.empty(),
                    Optional.empty(),
                    Optional.empty(),
                    List.of(),
                    Optional.of("img"));
            assertThatThrownBy(() -> s.require(podman))
                    .isInstanceOf(dev.vigilo.common.errors.InvalidInputException.class)
                    .hasMessageContaining("apt-get install podman");
            assertThat(s.problem(SandboxSettings.NONE)).isEmpty();
        }
    }

    @Test
    void bwrapSharesTheNetworkOnlyWhenAllowed() {
        Path work = dir.resolve("w");
        Path tmp = dir.resolve("t");
        SandboxSettings closed = new SandboxSettings(
                SandboxKind.BWRAP,
                false,
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                List.of(),
                Optional.empty());
        List<String> argv = Launchers.bwrap(closed, work, tmp, List.of("sh", "-c", "true"));
        assertThat(argv).startsWith("bwrap", "--die-with-parent", "--new-session", "--unshare-all");
        assertThat(argv).doesNotContain("--share-net");
        assertThat(String.join(" ", argv))
                .contains("--bind " + work + " /work")
                .contains("--bind " + tmp + " /tmp")
                .contains("--chdir /work")
                .endsWith("-- sh -c true");
        SandboxSettings open = new SandboxSettings(
                SandboxKind.BWRAP,
                true,
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                List.of(),
                Optional.empty());
        assertThat(Launchers.bwrap(open, work, tmp, List.of("x"))).contains("--share-net");
    }

    @Test
    void podmanGetsTheLimitsTheMountsAndVariableNamesNeverValues() {
        SandboxSettings s = new SandboxSettings(
                SandboxKind.PODMAN,
                false,
                Optional.empty(),
                Optional.of(512L),
                Optional.of(64),
                List.of(),
                Optional.of("localhost/agent:1"));
        List<String> argv = Launchers.podman(
                s,
                "vigilo-w-1-1",
                "w",
                Path.of("/r/w/1/work"),
                Path.of("/r/w/1/tmp"),
                List.of("PATH", "API_KEY", "VIGILO_EPOCH"),
                new Launchers.HardLimits(Optional.of(20000L), Optional.of(96000L)),
                List.of("python3", "agent.py"));
        assertThat(String.join(" ", argv))
                .startsWith("podman run --rm -i --name vigilo-w-1-1 --label vigilo.sandbox.owner=w --network none"
                        + " --cap-drop all --security-opt no-new-privileges")
                .contains("--memory 512m --memory-swap 512m --pids-limit 64")
                .contains("--ulimit nofile=20000:20000 --ulimit nproc=64:64")
                .contains("-v /r/w/1/work:/work:rw -v /r/w/1/tmp:/tmp:rw -w /work")
                .contains("-e API_KEY -e VIGILO_EPOCH")
                .doesNotContain("-e PATH")
                .endsWith("localhost/agent:1 python3 agent.py");
    }
}
