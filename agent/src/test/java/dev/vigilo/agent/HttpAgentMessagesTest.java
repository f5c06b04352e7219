package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.q;
import static dev.vigilo.agent.TestSupport.withVariable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The http agent's {@code messages} template against a real local OpenAI-compatible server: the exact bytes sent. */
class HttpAgentMessagesTest {
    @TempDir
    Path dir;

    OpenAiTestServer server;
    AgentEnvironment env;

    @BeforeEach
    void start() {
        server = OpenAiTestServer.start();
        env = withVariable(env(dir), "TEST_OPENAI_KEY", "sk-test-0123456789secret");
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
        n.put("timeout_seconds", 10);
        return n;
    }

    ObjectNode withMessages(String messagesJson) {
        ObjectNode c = config();
        c.set("messages", q(messagesJson));
        return c;
    }

    static final CaseRecord CASE = caseOf(
            "q-7",
            "{\"id\":\"q-7\",\"input\":{\"question\":\"What is 2 + 2?\",\"choices\":[3,4],\"hint\":null},"
                    + "\"expected\":\"4\",\"metadata\":{\"lang\":\"en\",\"level\":2}}");

    String sent(ObjectNode config, CaseRecord c) {
        try (Agent agent = Agents.create(config, env)) {
            assertThat(agent.run(AgentCall.of(c)).status()).isEqualTo(AgentOutcome.Status.OK);
        }
        return server.requests().get(server.requests().size() - 1).bodyText();
    }

    @Test
    void rendersEveryPlaceholderIntoTheTurnsInOrder() {
        ObjectNode config =
                withMessages("[{'role':'system','content':'Answer in {{metadata.lang}}, level {{metadata.level}}.'},"
                        + "{'role':'user','content':'Case {{ case.id }}: {{input.question}} Choices: {{input.choices}}'},"
                        + "{'role':'assistant','content':'Noted.'},"
                        + "{'role':'user','content':'All of it: {{input}}'}]");
        config.put("max_tokens", 16);
        // Strings verbatim, other JSON compact with sorted keys (choices, hint, question), numbers as JSON.
        assertThat(sent(config, CASE))
                .isEqualTo("{\"model\":\"test-model\",\"messages\":["
                        + "{\"role\":\"system\",\"content\":\"Answer in en, level 2.\"},"
                        + "{\"role\":\"user\",\"content\":\"Case q-7: What is 2 + 2? Choices: [3,4]\"},"
                        + "{\"role\":\"assistant\",\"content\":\"Noted.\"},"
                        + "{\"role\":\"user\",\"content\":\"All of it: {\\\"choices\\\":[3,4],\\\"hint\\\":null,"
                        + "\\\"question\\\":\\\"What is 2 + 2?\\\"}\"}],"
                        + "\"max_tokens\":16}");
    }

    @Test
    void whatTheCaseLacksRendersAsNothing() {
        ObjectNode config =
                withMessages("[{'role':'user','content':'[{{input.nope}}][{{input.hint}}][{{metadata.none}}]'}]");
        assertThat(sent(config, CASE)).contains("\"content\":\"[][][]\"");
        // A string input has no fields, a case without metadata no keys.
        ObjectNode fields =
                withMessages("[{'role':'user','content':'{{input}}|{{input.question}}|{{metadata.lang}}'}]");
        assertThat(sent(fields, caseOf("q-8", "plain text", null))).contains("\"content\":\"plain text||\"");
    }

    @Test
    void textThatLooksLikeAPlaceholderInAValueIsNotRenderedAgain() {
        ObjectNode config = withMessages("[{'role':'user','content':'{{input}} $1 \\\\ {not} {{input}}'}]");
        assertThat(sent(config, caseOf("q-9", "{{case.id}} $0", null)))
                .contains("\"content\":\"{{case.id}} $0 $1 \\\\ {not} {{case.id}} $0\"");
    }

    @Test
    void withoutMessagesTheRequestIsTheBytesItAlwaysWas() {
        // Pinned from the request sent before messages existed (system prompt, then the input as the user message).
        ObjectNode config = config();
        config.put("system_prompt", "Answer with a number only.");
        config.put("max_tokens", 16);
        config.put("temperature", 0.0);
        assertThat(sent(config, caseOf("q-1", Map.of("question", "What is 2 + 2?"), "4")))
                .isEqualTo("{\"model\":\"test-model\",\"messages\":["
                        + "{\"role\":\"system\",\"content\":\"Answer with a number only.\"},"
                        + "{\"role\":\"user\",\"content\":\"{\\\"question\\\":\\\"What is 2 + 2?\\\"}\"}],"
                        + "\"max_tokens\":16,\"temperature\":0.0}");
        assertThat(sent(config(), caseOf("q-2", "plain text", null)))
                .isEqualTo("{\"model\":\"test-model\",\"messages\":[{\"role\":\"user\",\"content\":\"plain text\"}]}");
    }

    @Test
    void theObserverSeesTheRenderedRequest() {
        List<JsonNode> seen = new CopyOnWriteArrayList<>();
        AgentObserver observer = new AgentObserver() {
            @Override
            public void onRequest(int attempt, JsonNode request) {
                seen.add(request);
            }
        };
        try (Agent agent = Agents.create(withMessages("[{'role':'user','content':'Q: {{input.question}}'}]"), env)) {
            agent.run(new AgentCall(CASE, observer));
        }
        assertThat(seen).singleElement().isEqualTo(server.requests().get(0).body());
        assertThat(seen.get(0).path("messages").path(0).path("content").asText())
                .isEqualTo("Q: What is 2 + 2?");
    }

    @Test
    void aTemplateTheProfileReaderWouldRefuseIsRefusedBeforeAnyRequest() {
        assertThatThrownBy(() -> Agents.create(withMessages("[{'role':'user','content':'{{output}}'}]"), env))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("agent.messages[0].content: unknown placeholder {{output}}: use {{input}},"
                        + " {{input.FIELD}}, {{metadata.KEY}} or {{case.id}}");
        assertThatThrownBy(() -> Agents.create(withMessages("[{'role':'tool','content':'x'}]"), env))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("agent.messages[0].role: must be system, user or assistant");
        assertThatThrownBy(() -> Agents.create(withMessages("[{'role':'system','content':'x'}]"), env))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("agent.messages: needs at least one user message");
        ObjectNode both = withMessages("[{'role':'user','content':'{{input}}'}]");
        both.put("system_prompt", "s");
        assertThatThrownBy(() -> Agents.create(both, env))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("agent.messages: is given beside system_prompt");
        assertThat(server.requestCount()).isZero();
    }
}
