package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.shAgent;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.sandbox.KeptFile;
import dev.vigilo.agent.sandbox.SandboxAttempt;
import dev.vigilo.agent.sandbox.SandboxKind;
import dev.vigilo.agent.sandbox.SandboxSettings;
import dev.vigilo.agent.sandbox.Sandboxes;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real podman containers around real command agents, from an image this test builds ({@code podman import} of a
 * busybox root file system: no registry is reachable from test machines). As for bwrap, each isolation test shows a
 * command failing in the container that succeeds on the host. Skipped without podman or busybox, saying why; with
 * {@code VIGILO_REQUIRE_PODMAN=1} it fails instead.
 *
 * <p>Where {@code runc} is installed the containers use it ({@code CONTAINERS_CONF} naming a file with {@code runtime
 * = "runc"}): crun, podman's default on Debian, cannot start containers on cgroup v1 hosts such as the test machines
 * ("cgroups in hybrid mode not supported"); docs/formats/agent-protocol.md, "Sandboxes".
 */
class PodmanSandboxTest {
    private static final String IMAGE = "localhost/vigilo-test-busybox:1";

    @TempDir
    Path dir;

    private Sandboxes sandboxes;
    private Map<String, String> variables;

    @BeforeEach
    void open() throws Exception {
        SandboxSupport.requirePodman();
        Optional<Path> busybox = Sandboxes.find("busybox", System.getenv());
        if (busybox.isEmpty() && "1".equals(System.getenv("VIGILO_REQUIRE_PODMAN"))) {
            fail("busybox is not on the PATH and VIGILO_REQUIRE_PODMAN=1: install busybox-static for the test image");
        }
        assumeTrue(
                busybox.isPresent(),
                "busybox is not on the PATH: the podman test image cannot be built (apt-get"
                        + " install busybox-static)");
        variables = new HashMap<>(System.getenv());
        if (Sandboxes.find("runc", variables).isPresent()) {
            Path conf = dir.resolve("containers.conf");
            Files.writeString(conf, "[engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\n");
            variables.put("CONTAINERS_CONF", conf.toString());
        }
        buildImage(busybox.get());
        sandboxes = Sandboxes.open(dir.resolve("sandboxes"), "t-" + UUID.randomUUID(), variables);
    }

    @AfterEach
    void close() {
        if (sandboxes != null) {
            sandboxes.close();
        }
    }

    /** A root file system of busybox and its applets' links, imported as {@link #IMAGE}. */
    private void buildImage(Path busybox) throws Exception {
        Path rootfs = Files.createDirectories(dir.resolve("rootfs/bin"));
        Files.copy(busybox, rootfs.resolve("busybox"));
        for (String applet : List.of("sh", "cat", "echo", "dd", "sleep", "nc", "test", "mkdir", "ls")) {
            Files.createSymbolicLink(rootfs.resolve(applet), Path.of("busybox"));
        }
        Files.createDirectories(dir.resolve("rootfs/tmp"));
        Files.createDirectories(dir.resolve("rootfs/work"));
        Path tar = dir.resolve("rootfs.tar");
        command(List.of("tar", "-C", dir.resolve("rootfs").toString(), "-cf", tar.toString(), "."));
        command(List.of("podman", "import", tar.toString(), IMAGE));
    }

    private void command(List<String> argv) throws Exception {
        ProcessBuilder b = new ProcessBuilder(argv).redirectErrorStream(true);
        b.environment().putAll(variables);
        Process p = b.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as("%s: %s", argv, out).isZero();
    }

    private static SandboxSettings podman(Optional<Long> memoryMb, Optional<Integer> pids, Optional<Path> workdir) {
        return new SandboxSettings(
                SandboxKind.PODMAN, false, workdir, memoryMb, pids, List.of("*.patch"), Optional.of(IMAGE));
    }

    private AgentOutcome run(String script, Optional<SandboxAttempt> sandbox) {
        ObjectNode config = shAgent(script);
        config.put("timeout_seconds", 120);
        try (Agent agent = Agents.create(config, env(dir).withVariables(variables))) {
            return agent.run(new AgentCall(
                    caseOf("c", "{\"id\":\"c\",\"input\":\"x\"}"), AgentObserver.NONE, 1, CaseBudget.NONE, sandbox));
        }
    }

    private AgentOutcome inContainer(String script, SandboxSettings settings) {
        try (SandboxAttempt attempt = sandboxes.start(settings, "case")) {
            return run(script, Optional.of(attempt));
        }
    }

    @Test
    void theAgentRunsInTheImageOnACopyOfWorkdirAndItsFilesAreKept() throws IOException {
        Path workdir = Files.createDirectories(dir.resolve("task"));
        Files.writeString(workdir.resolve("input.txt"), "42\n");
        Path target = dir.resolve("outside.txt");
        try (SandboxAttempt attempt =
                sandboxes.start(podman(Optional.empty(), Optional.empty(), Optional.of(workdir)), "case")) {
            AgentOutcome o = run(
                    "cat input.txt > fix.patch && (echo x > '" + target + "' 2>/dev/null || echo refused)",
                    Optional.of(attempt));
            assertThat(o.output()).contains("refused");
            assertThat(attempt.keptFiles())
                    .extracting(KeptFile::path, k -> new String(k.bytes(), StandardCharsets.UTF_8))
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("fix.patch", "42\n"));
        }
        assertThat(target).doesNotExist();
        assertThat(run("echo x > '" + target + "' && echo wrote", Optional.empty())
                        .output())
                .contains("wrote");
    }

    @Test
    void aConnectionToTheHostFailsInTheContainer() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            // The server answers one connection and closes it, so nc on the host ends when it is served.
            CompletableFuture<Void> accepted = CompletableFuture.runAsync(() -> {
                try (Socket s = server.accept()) {
                    s.getOutputStream().write('k');
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            String script = "busybox nc 127.0.0.1 " + server.getLocalPort() + " </dev/null && echo connected";
            AgentOutcome contained = inContainer(script, podman(Optional.empty(), Optional.empty(), Optional.empty()));
            assertThat(contained.status()).isEqualTo(AgentOutcome.Status.ERROR);
            assertThat(accepted).isNotDone();
            assertThat(run(script, Optional.empty()).output()).contains("kconnected");
            accepted.get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void forkingPastThePidsLimitFailsInTheContainer() {
        String script = "i=0; while [ $i -lt 300 ]; do sleep 600 >/dev/null 2>&1 & i=$((i+1)); done; echo forked";
        AgentOutcome contained = inContainer(script, podman(Optional.empty(), Optional.of(32), Optional.empty()));
        assertThat(contained.status()).isEqualTo(AgentOutcome.Status.ERROR);
        assertThat(run(script, Optional.empty()).output()).contains("forked");
    }

    @Test
    void allocatingPastTheMemoryLimitFailsInTheContainer() {
        String script = "dd if=/dev/zero of=/dev/null bs=192M count=1 2>/dev/null && echo allocated";
        AgentOutcome contained = inContainer(script, podman(Optional.of(64L), Optional.empty(), Optional.empty()));
        assertThat(contained.status()).isEqualTo(AgentOutcome.Status.ERROR);
        assertThat(contained.error().orElseThrow().message()).contains("status 137");
        assertThat(run(script, Optional.empty()).output()).contains("allocated");
    }
}
