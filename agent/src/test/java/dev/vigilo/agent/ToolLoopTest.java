package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.withVariable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.common.errors.InvalidInputException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The http agent's tool-calling loop against a real local OpenAI-compatible server and real command tools. */
class ToolLoopTest {
    @TempDir
    Path dir;

    OpenAiTestServer server;
    AgentEnvironment env;
    Path script;

    @BeforeEach
    void start() throws IOException {
        server = OpenAiTestServer.start();
        script = dir.resolve("test_tool.py");
        try (InputStream in = ToolLoopTest.class.getResourceAsStream("/tools/test_tool.py")) {
            Files.write(script, in.readAllBytes());
        }
        env = withVariable(env(dir), "TOOL_DIR", dir.toString());
    }

    @AfterEach
    void stop() {
        server.close();
    }

    /** An http agent with the tool {@code add} (and {@code meet}), running the test tool script. */
    ObjectNode config() {
        ObjectNode n = TestSupport.MAPPER.createObjectNode();
        n.put("kind", "http");
        n.put("url", server.chatUrl().toString());
        n.put("model", "test-model");
        n.put("timeout_seconds", 10);
        n.put("max_attempts", 1);
        ArrayNode tools = n.putArray("tools");
        for (String name : List.of("add", "meet")) {
            ObjectNode t = tools.addObject();
            t.put("name", name);
            t.put("description", name.equals("add") ? "Adds two numbers." : "Waits for another call.");
            ObjectNode schema = t.putObject("parameters").put("type", "object");
            if (name.equals("add")) {
                schema.putObject("properties")
                        .<ObjectNode>set(
                                "a", TestSupport.MAPPER.createObjectNode().put("type", "number"))
                        .set("b", TestSupport.MAPPER.createObjectNode().put("type", "number"));
            }
            t.putArray("command").add("python3").add(script.toString());
            t.put("timeout_seconds", 20);
        }
        return n;
    }

    /** The answerer of a model that sums with the tool: the tool's results, once they come, are the answer. */
    static Reply answerAfterTools(OpenAiTestServer.Request r) {
        if ("tool".equals(r.lastRole())) {
            StringBuilder s = new StringBuilder("results:");
            for (JsonNode m : r.messages()) {
                if (m.path("role").asText().equals("tool")) {
                    s.append(' ')
                            .append(m.path("tool_call_id").asText())
                            .append('=')
                            .append(m.path("content").asText().strip());
                }
            }
            return Reply.content(s.toString()).withUsage(20, 5);
        }
        return Reply.toolCalls("c1", "add", "{\"a\":17,\"b\":25}").withUsage(10, 3);
    }

    /** Records tool results as the observer sees them. */
    static final class Results implements AgentObserver {
        final List<String> seen = new CopyOnWriteArrayList<>();

        @Override
        public void onToolResult(int attempt, String callId, String name, String content, boolean isError) {
            seen.add(callId + "|" + name + "|" + (isError ? "error|" : "ok|") + content.strip());
        }
    }

    @Test
    void anAnswerWithToolCallsRunsTheToolsAndTheModelIsCalledAgainWithTheirResults() {
        server.answerWith(ToolLoopTest::answerAfterTools);
        Results results = new Results();
        try (Agent agent = Agents.create(config(), env)) {
            AgentOutcome o = agent.run(new AgentCall(caseOf("c", "What is 17 + 25?", null), results));
            assertThat(o.error()).isEmpty();
            assertThat(o.output()).contains("results: c1=42");
            assertThat(o.toolCalls()).containsExactly(new AgentToolCall("c1", "add", "{\"a\":17,\"b\":25}"));
            assertThat(o.attempts())
                    .singleElement()
                    .satisfies(a -> assertThat(a.usage())
                            .extracting(TokenUsage::promptTokens)
                            .containsExactly(10L, 20L));
        }
        assertThat(results.seen).containsExactly("c1|add|ok|42");
        List<OpenAiTestServer.Request> requests = server.requests();
        assertThat(requests).hasSize(2);
        JsonNode first = requests.get(0).body();
        assertThat(first.path("tools").get(0).path("function").path("name").asText())
                .isEqualTo("add");
        assertThat(first.path("tools")
                        .get(0)
                        .path("function")
                        .path("parameters")
                        .path("type")
                        .asText())
                .isEqualTo("object");
        assertThat(first.has("parallel_tool_calls")).isFalse();
        JsonNode messages = requests.get(1).messages();
        assertThat(messages).hasSize(3);
        assertThat(messages.get(1).path("role").asText()).isEqualTo("assistant");
        assertThat(messages.get(1).path("tool_calls").get(0).path("id").asText())
                .isEqualTo("c1");
        assertThat(messages.get(2).path("role").asText()).isEqualTo("tool");
        assertThat(messages.get(2).path("tool_call_id").asText()).isEqualTo("c1");
        assertThat(messages.get(2).path("content").asText()).isEqualTo("42\n");
    }

    @Test
    void parallelCallsRunAtOnceAndTheirResultsKeepCallOrder() {
        // Each call waits until the other one has started: they meet only when run at the same time.
        server.enqueue(Reply.toolCalls(
                "m1", "meet", "{\"me\":\"x\",\"other\":\"y\"}", "m2", "meet", "{\"me\":\"y\",\"other\":\"x\"}"));
        server.answerWith(ToolLoopTest::answerAfterTools);
        Results results = new Results();
        try (Agent agent = Agents.create(config(), env)) {
            AgentOutcome o = agent.run(new AgentCall(caseOf("c", "meet", null), results));
            assertThat(o.output()).contains("results: m1=met y m2=met x");
        }
        assertThat(results.seen).containsExactly("m1|meet|ok|met y", "m2|meet|ok|met x");
    }

    @Test
    void withoutParallelCallsTheRequestSaysSoAndCallsRunOneAfterAnother() {
        server.enqueue(Reply.toolCalls("", "add", "{\"a\":1,\"b\":2}", "", "add", "{\"a\":3,\"b\":4}"));
        server.answerWith(ToolLoopTest::answerAfterTools);
        ObjectNode c = config();
        c.put("parallel_tool_calls", false);
        try (Agent agent = Agents.create(c, env)) {
            AgentOutcome o = agent.run(AgentCall.of(caseOf("c", "sum", null)));
            // Calls without ids get ones assigned: call_<model call>_<position>.
            assertThat(o.output()).contains("results: call_1_1=3 call_1_2=7");
        }
        assertThat(server.requests().get(0).body().path("parallel_tool_calls").asBoolean(true))
                .isFalse();
    }

    @Test
    void unknownToolsBadArgumentsAndFailingToolsAreErrorResultsForTheModel() {
        server.enqueue(Reply.toolCalls(
                "u",
                "delete_file",
                "{}",
                "j",
                "add",
                "{\"a\":1,",
                "s",
                "add",
                "{\"a\":\"one\",\"b\":2}",
                "f",
                "add",
                "{\"fail\":3}"));
        server.answerWith(ToolLoopTest::answerAfterTools);
        Results results = new Results();
        try (Agent agent = Agents.create(config(), env)) {
            AgentOutcome o = agent.run(new AgentCall(caseOf("c", "break things", null), results));
            assertThat(o.error()).isEmpty();
            assertThat(o.toolCalls()).extracting(AgentToolCall::id).containsExactly("u", "j", "s", "f");
        }
        assertThat(results.seen).hasSize(4);
        assertThat(results.seen.get(0))
                .startsWith("u|delete_file|error|unknown tool \"delete_file\"; the tools are: add, meet");
        assertThat(results.seen.get(1)).startsWith("j|add|error|the arguments of tool add are not valid JSON");
        assertThat(results.seen.get(2))
                .startsWith("s|add|error|the arguments of tool add do not match its parameters schema: at /a:");
        assertThat(results.seen.get(3))
                .isEqualTo("f|add|error|tool add exited with status 3; stderr ends: tool failed on purpose");
        JsonNode messages = server.requests().get(1).messages();
        assertThat(messages.get(5).path("content").asText()).startsWith("tool add exited with status 3");
    }

    @Test
    void aToolOverItsTimeoutIsKilledAndItsErrorGoesToTheModel() {
        server.enqueue(Reply.toolCalls("h", "add", "{\"hang\":true}"));
        server.answerWith(ToolLoopTest::answerAfterTools);
        ObjectNode c = config();
        ((ObjectNode) c.path("tools").get(0)).put("timeout_seconds", 1);
        Results results = new Results();
        try (Agent agent = Agents.create(c, env)) {
            AgentOutcome o = agent.run(new AgentCall(caseOf("c", "hang", null), results));
            assertThat(o.error()).isEmpty();
        }
        assertThat(results.seen).singleElement().asString().startsWith("h|add|error|tool add did not finish within 1");
    }

    @Test
    void interruptingTheCallKillsTheRunningToolAndCancelsTheCall() throws Exception {
        server.enqueue(Reply.toolCalls("h", "add", "{\"hang\":true,\"started\":\"pid\"}"));
        Path pidFile = dir.resolve("pid");
        java.util.concurrent.atomic.AtomicReference<AgentOutcome> outcome =
                new java.util.concurrent.atomic.AtomicReference<>();
        try (Agent agent = Agents.create(config(), env)) {
            Thread t = new Thread(() -> outcome.set(agent.run(AgentCall.of(caseOf("c", "hang", null)))));
            t.start();
            // Wait for the event (the tool has started and written its pid), not for a time.
            while (!Files.exists(pidFile) || Files.readString(pidFile).isEmpty()) {
                assertThat(t.isAlive()).as("the call is still running").isTrue();
                Thread.onSpinWait();
            }
            long pid = Long.parseLong(Files.readString(pidFile).strip());
            t.interrupt();
            t.join();
            assertThat(outcome.get().cancelled()).isTrue();
            assertThat(outcome.get().error().orElseThrow().message()).contains("tool add was cancelled");
            // Killed by the time the call returned (SIGKILL and a wait until it is a zombie or gone); the JVM's
            // reaper collects the zombie on its own thread a moment later, and only then does isAlive say false.
            // A tool left running would make this wait time out.
            ProcessHandle.of(pid)
                    .ifPresent(h -> assertThat(h.onExit())
                            .as("the tool's process is killed")
                            .succeedsWithin(Duration.ofSeconds(30)));
        }
        assertThat(server.requestCount()).isEqualTo(1);
    }

    @Test
    void aModelThatKeepsCallingToolsEndsTheAttemptAtMaxTurnsWithoutRetries() {
        server.answerWith(r -> Reply.toolCalls("c", "add", "{\"a\":1,\"b\":1}").withUsage(5, 1));
        ObjectNode c = config();
        c.put("max_turns", 3);
        c.put("max_attempts", 3);
        try (Agent agent = Agents.create(c, env)) {
            AgentOutcome o = agent.run(AgentCall.of(caseOf("c", "loop", null)));
            assertThat(o.error()).hasValueSatisfying(e -> {
                assertThat(e.type()).isEqualTo(AgentErrorType.MAX_TURNS);
                assertThat(e.message()).contains("agent.max_turns (3)");
            });
            assertThat(o.attempts())
                    .singleElement()
                    .satisfies(a -> assertThat(a.usage()).hasSize(3));
        }
        assertThat(server.requestCount()).isEqualTo(3);
    }

    @Test
    void aRateLimitedModelCallRetriesTheWholeAttempt() {
        server.enqueue(Reply.toolCalls("c1", "add", "{\"a\":17,\"b\":25}"), Reply.rateLimited(Duration.ZERO));
        server.answerWith(ToolLoopTest::answerAfterTools);
        ObjectNode c = config();
        c.put("max_attempts", 2);
        try (Agent agent = Agents.create(c, env)) {
            AgentOutcome o = agent.run(AgentCall.of(caseOf("c", "add", null)));
            assertThat(o.output()).contains("results: c1=42");
            assertThat(o.attempts()).hasSize(2);
            assertThat(o.attempts().get(0).error().orElseThrow().type()).isEqualTo(AgentErrorType.RATE_LIMITED);
        }
        // attempt 1: tool call, 429; attempt 2: tool call, answer
        assertThat(server.requestCount()).isEqualTo(4);
    }

    @Test
    void theCaseTokenLimitCountsEveryModelCallOfTheLoop() {
        server.answerWith(r -> Reply.toolCalls("c", "add", "{\"a\":1,\"b\":1}").withUsage(30, 10));
        CaseBudget budget =
                new CaseBudget(Optional.empty(), Optional.of(100L), Optional.empty(), u -> Optional.empty());
        try (Agent agent = Agents.create(config(), env)) {
            AgentOutcome o = agent.run(new AgentCall(caseOf("c", "loop", null), AgentObserver.NONE, 1, budget));
            assertThat(o.error()).hasValueSatisfying(e -> {
                assertThat(e.type()).isEqualTo(AgentErrorType.LIMIT_EXCEEDED);
                assertThat(e.message())
                        .startsWith("limits.case_tokens: the case used 120 tokens, over its limit of 100");
            });
        }
        assertThat(server.requestCount()).isEqualTo(3);
    }

    @Test
    void theExampleCalculatorToolAnswersTheModel() {
        Path root = Path.of("").toAbsolutePath();
        while (!Files.exists(root.resolve("examples/tools/calc.py"))) {
            root = root.getParent();
            assertThat(root)
                    .as("examples/tools/calc.py above the working directory")
                    .isNotNull();
        }
        ObjectNode c = config();
        ObjectNode calc = (ObjectNode) c.path("tools").get(0);
        calc.put("name", "calculator");
        calc.putArray("command")
                .add("python3")
                .add(root.resolve("examples/tools/calc.py").toString());
        ((ObjectNode) calc.path("parameters")).remove("properties");
        server.enqueue(Reply.toolCalls(
                "d",
                "calculator",
                "{\"op\":\"divide\",\"a\":1024,\"b\":16}",
                "z",
                "calculator",
                "{\"op\":\"divide\",\"a\":1,\"b\":0}"));
        server.answerWith(ToolLoopTest::answerAfterTools);
        Results results = new Results();
        try (Agent agent = Agents.create(c, env)) {
            AgentOutcome o = agent.run(new AgentCall(caseOf("c", "What is 1024 / 16?", null), results));
            assertThat(o.output())
                    .contains(
                            "results: d=64 z=tool calculator exited with status 1;" + " stderr ends: division by zero");
        }
        assertThat(results.seen.get(1)).startsWith("z|calculator|error|");
    }

    @Test
    void aSecretAToolPrintsIsMaskedInWhatIsObservedAndInTheOutput() {
        String key = "sk-tool-secret-0123456789";
        AgentEnvironment keyed = withVariable(env, "TEST_AGENT_KEY", key);
        ObjectNode c = config();
        c.put("api_key_env", "TEST_AGENT_KEY");
        ObjectNode leak = (ObjectNode) c.path("tools").get(0);
        leak.putArray("command").add("sh").add("-c").add("cat >/dev/null; echo \"key=$TEST_AGENT_KEY\"");
        leak.putObject("parameters").put("type", "object");
        server.enqueue(Reply.toolCalls("k", "add", "{\"x\":\"" + key + "\"}"));
        server.answerWith(ToolLoopTest::answerAfterTools);
        Results results = new Results();
        List<String> requests = new CopyOnWriteArrayList<>();
        AgentObserver both = new AgentObserver() {
            @Override
            public void onToolResult(int attempt, String callId, String name, String content, boolean isError) {
                results.onToolResult(attempt, callId, name, content, isError);
            }

            @Override
            public void onRequest(int attempt, JsonNode request) {
                requests.add(request.toString());
            }
        };
        try (Agent agent = Agents.create(c, keyed)) {
            AgentOutcome o = agent.run(new AgentCall(caseOf("c", "leak", null), both));
            assertThat(o.output()).contains("results: k=key=***");
            assertThat(o.toolCalls())
                    .singleElement()
                    .satisfies(call -> assertThat(call.arguments()).doesNotContain(key));
        }
        assertThat(results.seen).containsExactly("k|add|ok|key=***");
        assertThat(requests).hasSize(2).noneMatch(r -> r.contains(key));
        // The model itself is sent the real result: masking is for what is recorded.
        assertThat(server.requests().get(1).messages().get(2).path("content").asText())
                .isEqualTo("key=" + key + "\n");
    }

    @Test
    void toolsAreCheckedWhenTheAgentIsBuilt() {
        ObjectNode dup = config();
        ((ObjectNode) dup.path("tools").get(1)).put("name", "add");
        assertThatThrownBy(() -> Agents.create(dup, env))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("agent.tools[1].name: repeats \"add\"");
        ObjectNode badSchema = config();
        ((ObjectNode) badSchema.path("tools").get(0)).putObject("parameters").put("type", 7);
        assertThatThrownBy(() -> Agents.create(badSchema, env))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("agent.tools[0].parameters: is not a usable JSON Schema");
        ObjectNode turns = config();
        turns.put("max_turns", 0);
        assertThatThrownBy(() -> Agents.create(turns, env))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("agent.max_turns: must be an integer in [1, 1000]");
    }
}
