package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.common.retry.RetryPolicy;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The error type of an attempt that ran out of re-sends names its cause (docs/datagen.md, "Back-off"): an endpoint
 * that keeps answering 503 is an {@code HttpStatusError}, one whose connection keeps failing (nothing listens on its
 * port) an {@code HttpError}, never an {@code HttpStatusError}. A real local endpoint and a real closed port; the
 * back-off is shortened to a millisecond so the 8 re-sends take no time.
 */
class ChatClientErrorTypeTest {
    @TempDir
    Path dir;

    private StepFailure failureAt(String url) throws Exception {
        Path yaml = dir.resolve("chat.yaml");
        Files.writeString(yaml, """
                name: chat
                input: seeds.jsonl
                id_field: id
                steps:
                  - name: ask
                    kind: chat
                    url: %s
                    model: m
                    messages: [{role: user, content: "hello {{id}}"}]
                """.formatted(url));
        ChatSpec chat = PipelineParser.parse(yaml).steps().get(0).chat();
        byte[] body = Json.canonical(ChatStep.request(
                        chat, "ask", Json.MAPPER.createObjectNode().put("id", "s0")))
                .getBytes(StandardCharsets.UTF_8);
        try (ChatClient client =
                new ChatClient(RetryPolicy.of(2, Duration.ofMillis(1), Duration.ofMillis(1)), System::nanoTime)) {
            return catchThrowableOfType(
                    () -> client.send(chat, body, null, SecretValues.NONE, 10, Duration.ofSeconds(10)),
                    StepFailure.class);
        }
    }

    @Test
    void aConnectionThatKeepsFailingIsAnHttpErrorNotAnHttpStatusError() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        // Nothing listens there now: every request is refused.
        StepFailure f = failureAt("http://127.0.0.1:" + port + "/v1/chat/completions");
        assertThat(f).isNotNull();
        assertThat(f.errorType).isEqualTo("HttpError");
        assertThat(f.dump).contains("still failed after 8 re-sends").contains("the connection failed");
        assertThat(f.requests).isEqualTo(ChatClient.MAX_RESENDS + 1);
    }

    @Test
    void anEndpointThatKeepsAnswering503IsAnHttpStatusError() throws Exception {
        try (OpenAiTestServer server = OpenAiTestServer.start()) {
            server.answerWith(r -> Reply.error(503, "overloaded"));
            StepFailure f = failureAt(server.chatUrl().toString());
            assertThat(f).isNotNull();
            assertThat(f.errorType).isEqualTo("HttpStatusError");
            assertThat(f.dump).contains("still failed after 8 re-sends").contains("HTTP 503");
            assertThat(server.requestCount()).isEqualTo(ChatClient.MAX_RESENDS + 1);
        }
    }
}
