package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.withVariable;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A request the HTTP stack refuses to send (a key no header can carry) is one attempt, not retried, and never quotes the key. */
class HttpAgentRefusedCallTest {
    @TempDir
    Path dir;

    @Test
    void aKeyNoHeaderCanCarryFailsOnceWithoutSendingOrPrintingIt() {
        String key = "sk-refused-0123456789\nX-Injected: 1";
        try (OpenAiTestServer server = OpenAiTestServer.start()) {
            ObjectNode config = TestSupport.MAPPER.createObjectNode();
            config.put("kind", "http");
            config.put("url", server.chatUrl().toString());
            config.put("model", "test-model");
            config.put("api_key_env", "TEST_OPENAI_KEY");
            config.put("max_attempts", 3);
            AgentOutcome o;
            try (Agent agent = Agents.create(config, withVariable(env(dir), "TEST_OPENAI_KEY", key))) {
                o = agent.run(AgentCall.of(caseOf("q-1", "What is 2 + 2?", "4")));
            }
            assertThat(o.status()).isEqualTo(AgentOutcome.Status.ERROR);
            assertThat(o.attempts()).hasSize(1);
            AgentError e = o.error().orElseThrow();
            assertThat(e.type()).isEqualTo(AgentErrorType.CONNECTION_FAILED);
            assertThat(e.retryable()).isFalse();
            assertThat(e.message())
                    .isEqualTo("POST " + server.chatUrl() + " cannot be sent: the HTTP client refuses the request's"
                            + " headers; check that $TEST_OPENAI_KEY holds no line break or control character");
            assertThat(server.requestCount()).isZero();
        }
    }
}
