package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.shAgent;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
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
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real bwrap sandboxes around real command agents: each test runs one command that does something a sandbox must
 * stop (write outside its work directory, connect to a socket this test listens on, fork hundreds of processes,
 * allocate past the memory limit) and shows that it fails inside the sandbox and succeeds without it, so what is
 * proven is isolation, not only that commands still run. Without bwrap the tests are skipped, saying why; with
 * {@code VIGILO_REQUIRE_SANDBOX=1} (what .ci/run sets) they fail instead.
 */
class SandboxIsolationTest {
    @TempDir
    Path dir;

    private Sandboxes sandboxes;

    @BeforeEach
    void open() {
        SandboxSupport.requireBwrap();
        sandboxes = Sandboxes.open(dir.resolve("sandboxes"), "t-" + UUID.randomUUID(), System.getenv());
    }

    @AfterEach
    void close() {
        if (sandboxes != null) {
            sandboxes.close();
        }
    }

    private static SandboxSettings bwrap(boolean network, Optional<Long> memoryMb, Optional<Integer> pids) {
        return new SandboxSettings(
                SandboxKind.BWRAP, network, Optional.empty(), memoryMb, pids, List.of("*.patch"), Optional.empty());
    }

    private static final SandboxSettings PLAIN = bwrap(false, Optional.empty(), Optional.empty());

    /** Runs {@code script} as a command agent, in {@code sandbox} when given. */
    private AgentOutcome run(String script, Optional<SandboxAttempt> sandbox) {
        ObjectNode config = shAgent(script);
        config.put("timeout_seconds", 120);
        try (Agent agent = Agents.create(config, env(dir))) {
            return agent.run(new AgentCall(
                    caseOf("c", "{\"id\":\"c\",\"input\":\"x\"}"), AgentObserver.NONE, 1, CaseBudget.NONE, sandbox));
        }
    }

    private AgentOutcome inSandbox(String script, SandboxSettings settings) {
        try (SandboxAttempt attempt = sandboxes.start(settings, "case")) {
            return run(script, Optional.of(attempt));
        }
    }

    @Test
    void writingOutsideTheWorkDirectoryFailsInTheSandboxOnly() throws IOException {
        Path target = dir.resolve("outside.txt");
        String script = "echo escaped > '" + target + "' && echo wrote";
        AgentOutcome sandboxed = inSandbox(script, PLAIN);
        assertThat(sandboxed.status()).isEqualTo(AgentOutcome.Status.ERROR);
        assertThat(target).doesNotExist();
        // System directories are there, read-only.
        Path probe = Path.of("/etc/vigilo-sandbox-probe-" + UUID.randomUUID());
        try {
            AgentOutcome etc = inSandbox("touch " + probe + " && echo wrote", PLAIN);
            assertThat(etc.status()).isEqualTo(AgentOutcome.Status.ERROR);
            // Nor can a command started by a root worker remount them writable: it has no capabilities.
            AgentOutcome remount = inSandbox(
                    "mount -o remount,rw,bind /etc; touch " + probe + " && echo wrote; grep CapEff /proc/self/status",
                    PLAIN);
            assertThat(remount.status()).isEqualTo(AgentOutcome.Status.OK);
            assertThat(remount.output().orElseThrow()).doesNotContain("wrote").contains("CapEff:\t0000000000000000");
            assertThat(probe).doesNotExist();
        } finally {
            Files.deleteIfExists(probe);
        }

        AgentOutcome host = run(script, Optional.empty());
        assertThat(host.output()).contains("wrote");
        assertThat(target).exists();
    }

    @Test
    void anHttpAgentsCommandToolsRunInTheSandboxToo() throws IOException {
        Path target = dir.resolve("tool-outside.txt");
        String probe = "pwd; (echo escaped > '" + target + "') 2>/dev/null && echo wrote || echo blocked";
        try (OpenAiTestServer server = OpenAiTestServer.start()) {
            // The model calls the tool once, then answers with what the tool printed.
            server.answerWith(r -> {
                if (!"tool".equals(r.lastRole())) {
                    return OpenAiTestServer.Reply.toolCalls("c1", "probe", "{}");
                }
                JsonNode last = r.messages().get(r.messages().size() - 1);
                return OpenAiTestServer.Reply.content(
                        "tool said: " + last.path("content").asText().strip());
            });
            ObjectNode config = TestSupport.MAPPER
                    .createObjectNode()
                    .put("kind", "http")
                    .put("url", server.chatUrl().toString())
                    .put("model", "m")
                    .put("max_attempts", 1)
                    .put("timeout_seconds", 60);
            ObjectNode tool = config.putArray("tools").addObject();
            tool.put("name", "probe").put("description", "Writes a file outside its directory.");
            tool.putObject("parameters").put("type", "object");
            tool.putArray("command").add("sh").add("-c").add(probe);
            AgentOutcome sandboxed;
            AgentOutcome host;
            try (Agent agent = Agents.create(config, env(dir))) {
                try (SandboxAttempt attempt = sandboxes.start(PLAIN, "case")) {
                    sandboxed = agent.run(new AgentCall(
                            caseOf("c", "{\"id\":\"c\",\"input\":\"x\"}"),
                            AgentObserver.NONE,
                            1,
                            CaseBudget.NONE,
                            Optional.of(attempt)));
                }
                assertThat(sandboxed.output()).contains("tool said: /work\nblocked");
                assertThat(target).doesNotExist();
                host = agent.run(new AgentCall(
                        caseOf("c", "{\"id\":\"c\",\"input\":\"x\"}"),
                        AgentObserver.NONE,
                        1,
                        CaseBudget.NONE,
                        Optional.empty()));
            }
            assertThat(host.output()).hasValueSatisfying(o -> assertThat(o).endsWith("wrote"));
            assertThat(target).exists();
        }
    }

    @Test
    void theWorkDirectoryIsACopyOfWorkdirWhoseMatchingFilesAreKept() throws IOException {
        Path workdir = Files.createDirectories(dir.resolve("task"));
        Files.writeString(workdir.resolve("input.txt"), "42\n");
        SandboxSettings settings = new SandboxSettings(
                SandboxKind.BWRAP,
                false,
                Optional.of(workdir),
                Optional.empty(),
                Optional.empty(),
                List.of("*.patch", "out/**"),
                Optional.empty());
        Path workDirectory;
        try (SandboxAttempt attempt = sandboxes.start(settings, "case/1")) {
            workDirectory = attempt.workDirectory();
            AgentOutcome o = run(
                    "cat input.txt > fix.patch && mkdir -p out/deep && echo x > out/deep/y && echo n > no.txt"
                            + " && ln -s /etc/passwd leak.patch && pwd && echo $TMPDIR",
                    Optional.of(attempt));
            assertThat(o.output()).contains("/work\n/tmp");
            List<KeptFile> kept = attempt.keptFiles();
            assertThat(kept).extracting(KeptFile::path).containsExactly("fix.patch", "out/deep/y");
            assertThat(new String(kept.get(0).bytes(), StandardCharsets.UTF_8)).isEqualTo("42\n");
            // The original stays as it was.
            assertThat(workdir.resolve("fix.patch")).doesNotExist();
        }
        assertThat(workDirectory).doesNotExist();
        assertThat(sandboxes.directory()).isEmptyDirectory();
    }

    @Test
    void aConnectionToTheHostFailsInTheSandboxUnlessNetworkIsAllowed() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> accepted = CompletableFuture.runAsync(() -> {
                try (Socket s = server.accept()) {
                    s.getOutputStream().write('k');
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            String script = "bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + server.getLocalPort() + " && echo connected'";
            AgentOutcome sandboxed = inSandbox(script, PLAIN);
            assertThat(sandboxed.status()).isEqualTo(AgentOutcome.Status.ERROR);
            assertThat(sandboxed.error().orElseThrow().message()).contains("Connection refused");
            assertThat(accepted).isNotDone();

            AgentOutcome allowed = inSandbox(script, bwrap(true, Optional.empty(), Optional.empty()));
            assertThat(allowed.output()).contains("connected");
            accepted.get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void forkingPastThePidsLimitFailsInTheSandboxOnly() {
        String script = "i=0; while [ $i -lt 300 ]; do sleep 600 >/dev/null 2>&1 & i=$((i+1)); done; echo forked";
        AgentOutcome sandboxed = inSandbox(script, bwrap(false, Optional.empty(), Optional.of(32)));
        assertThat(sandboxed.status()).isEqualTo(AgentOutcome.Status.ERROR);
        assertThat(sandboxed.error().orElseThrow().message()).containsIgnoringCase("fork");

        AgentOutcome host = run(script, Optional.empty());
        assertThat(host.output()).contains("forked");
    }

    @Test
    void allocatingPastTheMemoryLimitFailsInTheSandboxOnly() {
        // dd holds one block of bs bytes and fills it: 192 MiB resident.
        String script = "dd if=/dev/zero of=/dev/null bs=192M count=1 2>/dev/null && echo allocated";
        AgentOutcome sandboxed = inSandbox(script, bwrap(false, Optional.of(64L), Optional.empty()));
        assertThat(sandboxed.status()).isEqualTo(AgentOutcome.Status.ERROR);
        // Killed by the kernel (cgroups: status 137) or refused the memory (prlimit: dd reports it).
        assertThat(sandboxed.error().orElseThrow().message()).containsAnyOf("status 137", "memory");

        AgentOutcome host = run(script, Optional.empty());
        assertThat(host.output()).contains("allocated");
        // Within the limit the same command runs in the sandbox.
        AgentOutcome small = inSandbox(
                "dd if=/dev/zero of=/dev/null bs=8M count=1 2>/dev/null && echo allocated",
                bwrap(false, Optional.of(64L), Optional.empty()));
        assertThat(small.output()).contains("allocated");
    }

    @Test
    void commandEvaluatorsRunInTheSandboxAndSeeTheAgentsFiles() {
        ArrayNode plan = TestSupport.MAPPER.createArrayNode();
        ObjectNode e = plan.addObject();
        e.put("index", 0);
        e.put("name", "patched");
        e.put("kind", "command");
        e.putArray("command")
                .add("sh")
                .add("-c")
                .add("test -f fix.patch && test ! -e '" + dir.resolve("evaluator-saw-host") + "' && echo 1 || echo 0");
        e.put("applies_to_cases", 1);
        try (EvaluatorSet set = Evaluators.fromPlan(plan, env(dir));
                SandboxAttempt attempt = sandboxes.start(PLAIN, "case")) {
            assertThat(run("echo diff > fix.patch; echo done", Optional.of(attempt))
                            .output())
                    .contains("done");
            java.nio.file.Files.writeString(dir.resolve("evaluator-saw-host"), "");
            EvaluatorResult r = set.evaluate(
                            1L,
                            caseOf("c", "{\"id\":\"c\",\"input\":\"x\"}"),
                            "done",
                            EvaluationContext.NONE.inSandbox(attempt))
                    .get(0);
            assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        } catch (IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }
}
