package dev.vigilo.common.process;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Whether a recorded process still runs: a live one does, an exited one and a recycled pid do not. */
class ProcessRefTest {
    @Test
    void thisProcessIsAliveWithItsStartTimeAndNotWithAnother() {
        ProcessRef me = ProcessRef.current();
        assertThat(me.pid()).isEqualTo(ProcessHandle.current().pid());
        assertThat(me.isAlive()).isTrue();
        // Same pid, another start time: a recycled pid, not this process.
        assertThat(new ProcessRef(me.pid(), me.startEpochMilli() - 60_000).isAlive())
                .isFalse();
        assertThat(new ProcessRef(me.pid(), ProcessRef.UNKNOWN_START).isAlive()).isTrue();
    }

    @Test
    void anExitedProcessIsNotAlive() throws Exception {
        Process child = new ProcessBuilder("true").start();
        ProcessRef ref = ProcessRef.of(child.toHandle());
        child.waitFor();
        assertThat(ref.isAlive()).isFalse();
        assertThat(ProcessRef.isRunning(ref.pid())).isFalse();
    }

    @Test
    void aZombieCountsAsDead() throws Exception {
        // The shell's child exits after the shell has become cat (exec), which never reaps it. A child that exited at
        // once could be reaped by the shell itself before its exec (dash collects finished jobs), so it sleeps first.
        Process shell = new ProcessBuilder("sh", "-c", "sleep 1 & echo $!; exec cat >/dev/null").start();
        try {
            long zombie =
                    Long.parseLong(new java.io.BufferedReader(new java.io.InputStreamReader(shell.getInputStream()))
                            .readLine()
                            .strip());
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (ProcessRef.isRunning(zombie)) {
                assertThat(System.nanoTime() - deadline)
                        .as("pid %d still running", zombie)
                        .isNegative();
                Thread.sleep(10);
            }
            // It exited but was not reaped: the plain JDK check still calls it alive.
            assertThat(ProcessHandle.of(zombie).map(ProcessHandle::isAlive).orElse(false))
                    .isTrue();
        } finally {
            shell.destroyForcibly().waitFor();
        }
    }

    @Test
    void theHostNameIsKnownHere() {
        assertThat(LocalHost.name())
                .hasValueSatisfying(name -> assertThat(name).isNotBlank().doesNotContain("\n"));
    }

    @Test
    void theProcessNamespaceIsThisBootsAndThisPidNamespaces() throws Exception {
        String boot = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/sys/kernel/random/boot_id"))
                .strip();
        assertThat(LocalHost.processNamespace())
                .hasValueSatisfying(
                        id -> assertThat(id).startsWith(boot + "/pid:[").endsWith("]"));
        // A child process of the same namespace reports the same identity: what its holder rows would record.
        Process child = new ProcessBuilder("readlink", "/proc/self/ns/pid").start();
        String childNamespace =
                new String(child.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
        assertThat(child.waitFor()).isZero();
        assertThat(LocalHost.processNamespace()).hasValue(boot + "/" + childNamespace);
    }
}
