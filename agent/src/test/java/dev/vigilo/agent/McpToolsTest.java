package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.agent.sandbox.SandboxAttempt;
import dev.vigilo.agent.sandbox.SandboxKind;
import dev.vigilo.agent.sandbox.SandboxSettings;
import dev.vigilo.agent.sandbox.Sandboxes;
import dev.vigilo.common.errors.InvalidInputException;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An http agent's {@code mcp_servers}: a real MCP server ({@link TestMcpServer}, a child JVM using the same SDK) is
 * started per attempt, its tools offered and called through the loop against the scripted OpenAI-compatible server,
 * and stopped with the attempt.
 */
class McpToolsTest {
    @TempDir
    Path dir;

    OpenAiTestServer server;
    AgentEnvironment env;
    /** In the server's argv, to find its process. */
    final String marker = "mcp-test-" + UUID.randomUUID();

    @BeforeEach
    void start() {
        server = OpenAiTestServer.start();
        env = TestSupport.withVariable(env(dir), "FAIL_TEXT", "secret-value-7");
    }

    @AfterEach
    void stop() {
        server.close();
    }

    ObjectNode config() {
        ObjectNode n = TestSupport.MAPPER.createObjectNode();
        n.put("kind", "http");
        n.put("url", server.chatUrl().toString());
        n.put("model", "test-model");
        n.put("timeout_seconds", 20);
        n.put("max_attempts", 1);
        ObjectNode m = n.putArray("mcp_servers").addObject();
        m.put("name", "calc");
        m.putArray("command")
                .add(Path.of(System.getProperty("java.home"), "bin", "java").toString())
                .add("-cp")
                .add(System.getProperty("java.class.path"))
                .add(TestMcpServer.class.getName())
                .add(marker);
        m.put("timeout_seconds", 30);
        return n;
    }

    boolean serverRunning() {
        return ProcessHandle.allProcesses()
                .anyMatch(p -> p.info()
                        .arguments()
                        .map(a -> List.of(a).contains(marker))
                        .orElse(false));
    }

    @Test
    void theModelCallsTheServersToolsAndGetsTheirResultsErrorsIncluded() {
        server.answerWith(r -> {
            if ("tool".equals(r.lastRole())) {
                StringBuilder s = new StringBuilder("results:");
                for (JsonNode msg : r.messages()) {
                    if (msg.path("role").asText().equals("tool")) {
                        s.append(' ').append(msg.path("tool_call_id").asText()).append('=');
                        s.append(msg.path("content").asText().strip());
                    }
                }
                return Reply.content(s.toString());
            }
            return Reply.toolCalls("c1", "add", "{\"a\":17,\"b\":25}", "c2", "fail", "{}");
        });
        ToolLoopTest.Results results = new ToolLoopTest.Results();
        // The server prints a secret of the worker's: masked in what is recorded and in the output, as for command
        // tools.
        env = env.withSecrets(env.secrets().and("secret-value-7"));
        try (Agent agent = Agents.create(config(), env)) {
            AgentOutcome o = agent.run(new AgentCall(caseOf("c", "What is 17 + 25?", null), results));
            assertThat(o.error()).isEmpty();
            assertThat(o.output()).contains("results: c1=42 c2=no such file: ***");
            assertThat(o.toolCalls()).extracting(AgentToolCall::name).containsExactly("add", "fail");
        }
        // The error result reaches the model (and the observer) as is_error.
        assertThat(results.seen).hasSize(2);
        assertThat(results.seen.get(0)).isEqualTo("c1|add|ok|42");
        assertThat(results.seen.get(1))
                .startsWith("c2|fail|error|no such file:")
                .doesNotContain("secret-value-7");
        // The tools were offered as functions from tools/list.
        ArrayNode offered = (ArrayNode) server.requests().get(0).body().get("tools");
        assertThat(offered.findValuesAsText("name")).containsExactly("add", "fail", "pwd", "crash");
        assertThat(serverRunning()).isFalse();
    }

    @Test
    void theExampleServerIsListedAndCalledThroughTheSdk() {
        Path root = Path.of("").toAbsolutePath();
        while (!Files.exists(root.resolve("examples/tools/calc_mcp_server.py"))) {
            root = root.getParent();
            assertThat(root)
                    .as("examples/tools/calc_mcp_server.py above the working directory")
                    .isNotNull();
        }
        ObjectNode c = config();
        ((ArrayNode) c.get("mcp_servers").get(0).get("command"))
                .removeAll()
                .add("python3")
                .add(root.resolve("examples/tools/calc_mcp_server.py").toString());
        server.enqueue(Reply.toolCalls(
                "p",
                "calculator",
                "{\"op\":\"power\",\"a\":3,\"b\":5}",
                "z",
                "calculator",
                "{\"op\":\"divide\",\"a\":1,\"b\":0}"));
        server.answerWith(ToolLoopTest::answerAfterTools);
        ToolLoopTest.Results results = new ToolLoopTest.Results();
        try (Agent agent = Agents.create(c, env)) {
            AgentOutcome o = agent.run(new AgentCall(caseOf("c", "What is 3 ^ 5?", null), results));
            assertThat(o.error()).isEmpty();
            assertThat(o.output()).contains("results: p=243 z=cannot compute: division by zero");
        }
        // The example's schema (from tools/list) is what the model was offered; its failure is an error result.
        JsonNode offered = server.requests().get(0).body().get("tools").get(0).get("function");
        assertThat(offered.path("name").asText()).isEqualTo("calculator");
        assertThat(offered.path("parameters").path("required").toString()).isEqualTo("[\"op\",\"a\",\"b\"]");
        assertThat(results.seen)
                .containsExactly("p|calculator|ok|243", "z|calculator|error|cannot compute: division" + " by zero");
    }

    @Test
    void aServerThatDiesMidAttemptErrorsTheAttemptWithItsStderr() {
        server.answerWith(r -> Reply.toolCalls("c1", "crash", "{}"));
        try (Agent agent = Agents.create(config(), env)) {
            AgentOutcome o = agent.run(new AgentCall(caseOf("c", "crash it", null), new ToolLoopTest.Results()));
            assertThat(o.error()).hasValueSatisfying(e -> {
                assertThat(e.type()).isEqualTo(AgentErrorType.MCP_SERVER_FAILED);
                assertThat(e.message()).contains("MCP server calc").contains("test server crashing on purpose");
            });
        }
        assertThat(serverRunning()).isFalse();
    }

    @Test
    void aToolNameOfferedTwiceErrorsTheAttempt() {
        ObjectNode c = config();
        ObjectNode t = c.putArray("tools").addObject();
        t.put("name", "add");
        t.putObject("parameters").put("type", "object");
        t.putArray("command").add("true");
        server.answerWith(r -> Reply.content("never asked"));
        try (Agent agent = Agents.create(c, env)) {
            AgentOutcome o = agent.run(new AgentCall(caseOf("c", "x", null), new ToolLoopTest.Results()));
            assertThat(o.error()).hasValueSatisfying(e -> {
                assertThat(e.type()).isEqualTo(AgentErrorType.MCP_SERVER_FAILED);
                assertThat(e.message()).contains("lists tool \"add\", which agent.tools offers already");
            });
        }
        assertThat(server.requests()).isEmpty();
        assertThat(serverRunning()).isFalse();
    }

    @Test
    void aServerThatCannotStartErrorsTheAttempt() {
        ObjectNode c = config();
        ((ArrayNode) c.get("mcp_servers").get(0).get("command"))
                .removeAll()
                .add(dir.resolve("missing").toString());
        try (Agent agent = Agents.create(c, env)) {
            AgentOutcome o = agent.run(new AgentCall(caseOf("c", "x", null), new ToolLoopTest.Results()));
            assertThat(o.error()).hasValueSatisfying(e -> {
                assertThat(e.type()).isEqualTo(AgentErrorType.MCP_SERVER_FAILED);
                assertThat(e.message()).contains("MCP server calc");
            });
        }
    }

    @Test
    void badServerEntriesAreRejectedWhenTheAgentIsBuilt() {
        ObjectNode c = config();
        ((ArrayNode) c.get("mcp_servers")).add(c.get("mcp_servers").get(0).deepCopy());
        assertThatThrownBy(() -> Agents.create(c, env))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("agent.mcp_servers[1].name")
                .hasMessageContaining("unique");
    }

    @Test
    void inASandboxTheServerRunsInTheCasesWorkDirectoryAndIsGoneAfterTheAttempt() throws IOException {
        SandboxSupport.requireBwrap();
        // The sandbox sees its work directory at /work (hiding the checkout): the server's classpath is copied there.
        Path task = Files.createDirectories(dir.resolve("task"));
        List<String> entries = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path from = Path.of(e);
            if (!Files.exists(from)) {
                continue;
            }
            String name = "cp/" + entries.size() + "-" + from.getFileName();
            try (Stream<Path> files = Files.walk(from)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Path to = task.resolve(name).resolve(from.relativize(f).toString());
                    if (Files.isDirectory(f)) {
                        Files.createDirectories(to);
                    } else {
                        Files.createDirectories(to.getParent());
                        Files.copy(f, to);
                    }
                }
            }
            entries.add(name);
        }
        ObjectNode c = config();
        ArrayNode command = (ArrayNode) c.get("mcp_servers").get(0).get("command");
        command.set(2, TestSupport.MAPPER.getNodeFactory().textNode(String.join(":", entries)));
        server.answerWith(r -> "tool".equals(r.lastRole())
                ? Reply.content("in "
                        + r.messages()
                                .get(r.messages().size() - 1)
                                .path("content")
                                .asText())
                : Reply.toolCalls("c1", "pwd", "{}"));
        try (Sandboxes sandboxes = Sandboxes.open(dir.resolve("sandboxes"), "t-" + UUID.randomUUID(), System.getenv());
                SandboxAttempt attempt = sandboxes.start(
                        new SandboxSettings(
                                SandboxKind.BWRAP,
                                false,
                                Optional.of(task),
                                Optional.empty(),
                                Optional.empty(),
                                List.of(),
                                Optional.empty()),
                        "case");
                Agent agent = Agents.create(c, env)) {
            AgentOutcome o = agent.run(new AgentCall(
                    caseOf("c", "{\"id\":\"c\",\"input\":\"x\"}"),
                    AgentObserver.NONE,
                    1,
                    CaseBudget.NONE,
                    Optional.of(attempt)));
            assertThat(o.error()).isEmpty();
            assertThat(o.output()).contains("in /work");
            assertThat(serverRunning()).isFalse();
        }
    }
}
