package dev.vigilo.common.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ProcessTree} against real processes that daemonize themselves (subshell, setsid, exit). */
class ProcessTreeTest {
    @TempDir
    Path dir;

    private final List<Long> started = new java.util.ArrayList<>();

    @AfterEach
    void killLeftovers() {
        started.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    }

    @Test
    void tagsAreAppendedToAnInheritedTag() {
        Map<String, String> env = new HashMap<>();
        ProcessTree outer = ProcessTree.tag(env);
        assertThat(env).containsEntry(ProcessTree.VARIABLE, outer.token());
        ProcessTree inner = ProcessTree.tag(env);
        assertThat(env).containsEntry(ProcessTree.VARIABLE, outer.token() + ":" + inner.token());
        assertThat(inner.token()).hasSize(32).isNotEqualTo(outer.token());
    }

    @Test
    void aDaemonizedProcessOfTheTreeIsKilledAndOthersAreLeftAlone() throws Exception {
        ProcessBuilder mine = daemonizing(dir.resolve("mine.pid"));
        ProcessTree tree = ProcessTree.tag(mine.environment());
        ProcessBuilder other = daemonizing(dir.resolve("other.pid"));
        ProcessTree.tag(other.environment());
        Process root = mine.start();
        assertThat(other.start().waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(root.waitFor(20, TimeUnit.SECONDS)).isTrue();
        long daemon = pid(dir.resolve("mine.pid"));
        long unrelated = pid(dir.resolve("other.pid"));
        assertThat(ProcessHandle.of(daemon).map(ProcessHandle::parent).flatMap(p -> p))
                .as("the daemon is no longer the root's descendant")
                .isNotEqualTo(Optional.of(root.toHandle()));

        assertThat(tree.reap(Optional.of(root.toHandle()))).isEqualTo(1);

        awaitEnded(daemon);
        assertThat(ProcessTree.isGone(ProcessHandle.of(unrelated).orElseThrow()))
                .as("a process of another tree is not touched")
                .isFalse();
        assertThat(tree.reap(Optional.empty()))
                .as("a second reap finds nothing")
                .isZero();
    }

    @Test
    void anInnerTreeIsPartOfTheOuterOne() throws Exception {
        Map<String, String> outerEnv = new HashMap<>(System.getenv());
        ProcessTree outer = ProcessTree.tag(outerEnv);
        ProcessBuilder inner = daemonizing(dir.resolve("inner.pid"));
        inner.environment().putAll(outerEnv);
        ProcessTree.tag(inner.environment());
        assertThat(inner.start().waitFor(20, TimeUnit.SECONDS)).isTrue();
        long daemon = pid(dir.resolve("inner.pid"));

        assertThat(outer.reap(Optional.empty())).isEqualTo(1);
        awaitEnded(daemon);
    }

    /** {@code sh} that starts {@code sleep} in a new session through a subshell, waits for its pid, and exits. */
    private ProcessBuilder daemonizing(Path pidFile) {
        String script = "(setsid sh -c 'echo $$ > \"" + pidFile + ".tmp\"; mv \"" + pidFile + ".tmp\" \"" + pidFile
                + "\"; exec sleep 1000' </dev/null >/dev/null 2>&1 &)\n"
                + "while [ ! -s '" + pidFile + "' ]; do sleep 0.02; done\n";
        return new ProcessBuilder("sh", "-c", script).redirectErrorStream(true);
    }

    private long pid(Path file) throws IOException {
        long pid = Long.parseLong(Files.readString(file).strip());
        started.add(pid);
        return pid;
    }

    private static void awaitEnded(long pid) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ProcessHandle.of(pid).filter(p -> !ProcessTree.isGone(p)).isPresent() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(ProcessHandle.of(pid).filter(p -> !ProcessTree.isGone(p)))
                .as("process %d has ended", pid)
                .isEmpty();
    }
}
