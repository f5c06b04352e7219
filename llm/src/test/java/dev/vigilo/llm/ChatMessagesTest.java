package dev.vigilo.llm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Request bodies as they go on the wire, answers as they are parsed, Retry-After values as they are read. */
class ChatMessagesTest {
    private static JsonNode json(String s) throws Exception {
        return Json.MAPPER.readTree(s);
    }

    private static String text(JsonNode n) throws Exception {
        return Json.MAPPER.writeValueAsString(n);
    }

    @Test
    void aPlainRequestKeepsItsMembersInOrder() throws Exception {
        ChatRequest r = ChatRequest.of("m", List.of(ChatMessage.of("system", "be brief"), ChatMessage.of("user", "hi")))
                .withSampling(Optional.of(64), Optional.of(0.5));
        assertThat(text(r.toJson()))
                .isEqualTo("{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
                        + "{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":64,\"temperature\":0.5}");
    }

    @Test
    void parametersToolsSeedAndAResponseSchemaAreSent() throws Exception {
        ObjectNode params =
                JsonNodeFactory.instance.objectNode().put("top_p", 0.9).put("n", 2);
        ChatRequest r = ChatRequest.of("m", List.of(ChatMessage.of("user", "q")))
                .withParameters(params)
                .withSeed(Optional.of(7L))
                .withTools(List.of(new ChatTool("lookup", Optional.of("finds"), json("{\"type\":\"object\"}"))))
                .withResponseFormat(Optional.of(ResponseFormat.jsonSchema("verdict", json("{\"type\":\"object\"}"))));
        assertThat(text(r.toJson()))
                .isEqualTo(("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"q\"}],"
                        + "\"top_p\":0.9,\"n\":2,\"seed\":7,"
                        + "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"lookup\","
                        + "\"description\":\"finds\",\"parameters\":{\"type\":\"object\"}}}],"
                        + "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"verdict\","
                        + "\"schema\":{\"type\":\"object\"}}}}"));
        assertThat(text(ResponseFormat.jsonObject().toJson())).isEqualTo("{\"type\":\"json_object\"}");
    }

    @Test
    void theTurnsOfAToolLoopAreSent() throws Exception {
        ToolCall call = new ToolCall(Optional.of("c1"), "lookup", "{\"q\":1}");
        assertThat(text(ChatMessage.assistantCalls(List.of(call)).toJson()))
                .isEqualTo(
                        "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\","
                                + "\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"arguments\":\"{\\\"q\\\":1}\"}}]}");
        assertThat(text(ChatMessage.toolResult("c1", "found").toJson()))
                .isEqualTo("{\"role\":\"tool\",\"content\":\"found\",\"tool_call_id\":\"c1\"}");
    }

    @Test
    void textContentFinishReasonReasoningAndUsageAreRead() throws Exception {
        ChatAnswer a = ChatAnswer.parse(json("{\"choices\":[{\"message\":{\"content\":\"yes\","
                + "\"reasoning_content\":\"because\",\"reasoning\":\"ignored\"},\"finish_reason\":\"stop\"},"
                + "{\"index\":5,\"message\":{\"content\":\"no\",\"reasoning\":\"r\"}}],"
                + "\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":-3}}"));
        assertThat(a.choices()).hasSize(2);
        ChatChoice first = a.choices().get(0);
        assertThat(first.index()).isZero();
        assertThat(first.contentKind()).isEqualTo(ChatChoice.ContentKind.TEXT);
        assertThat(first.text()).contains("yes");
        assertThat(first.finishReason()).contains("stop");
        assertThat(first.reasoning()).contains("because");
        assertThat(a.choices().get(1).index()).isEqualTo(5);
        assertThat(a.choices().get(1).reasoning()).contains("r");
        assertThat(a.choices().get(1).finishReason()).isEmpty();
        assertThat(a.usage()).contains(new Usage(10, 0, 10));
    }

    @Test
    void contentPartsAreJoinedAndKept() throws Exception {
        ChatChoice c = ChatAnswer.parse(json("{\"choices\":[{\"message\":{\"content\":[{\"type\":\"text\","
                        + "\"text\":\"a\"},{\"type\":\"image_url\"},{\"type\":\"text\",\"text\":\"b\"}]}}]}"))
                .first()
                .orElseThrow();
        assertThat(c.contentKind()).isEqualTo(ChatChoice.ContentKind.PARTS);
        assertThat(c.text()).contains("ab");
        assertThat(c.parts())
                .containsExactly(
                        new ChatChoice.ContentPart(Optional.of("text"), Optional.of("a")),
                        new ChatChoice.ContentPart(Optional.of("image_url"), Optional.empty()),
                        new ChatChoice.ContentPart(Optional.of("text"), Optional.of("b")));
    }

    @Test
    void toolCallsAreRead() throws Exception {
        ChatChoice c = ChatAnswer.parse(json("{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":["
                        + "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}},"
                        + "{\"function\":{\"name\":\"g\"}}]},\"finish_reason\":\"tool_calls\"}],"
                        + "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":9}}"))
                .first()
                .orElseThrow();
        assertThat(c.contentKind()).isEqualTo(ChatChoice.ContentKind.ABSENT);
        assertThat(c.text()).isEmpty();
        assertThat(c.toolCalls())
                .containsExactly(new ToolCall(Optional.of("c1"), "f", "{}"), new ToolCall(Optional.empty(), "g", ""));
        assertThat(c.finishReason()).contains("tool_calls");
    }

    @Test
    void anAnswerWithoutChoicesOrUsageHasNone() throws Exception {
        ChatAnswer a = ChatAnswer.parse(json("{\"choices\":{},\"usage\":5}"));
        assertThat(a.choices()).isEmpty();
        assertThat(a.first()).isEmpty();
        assertThat(a.usage()).isEmpty();
        assertThat(ChatAnswer.parse(json("{\"choices\":[{\"message\":{\"content\":7}}]}"))
                        .first()
                        .orElseThrow()
                        .contentKind())
                .isEqualTo(ChatChoice.ContentKind.OTHER);
    }

    @Test
    void retryAfterIsSecondsOrAnHttpDate() {
        Instant now = Instant.parse("2026-01-02T03:04:05Z");
        assertThat(RetryAfter.parse("2", now)).contains(Duration.ofSeconds(2));
        assertThat(RetryAfter.parse(" 1.5 ", now)).contains(Duration.ofMillis(1500));
        assertThat(RetryAfter.parse("Fri, 02 Jan 2026 03:04:15 GMT", now)).contains(Duration.ofSeconds(10));
        assertThat(RetryAfter.parse("Thu, 01 Jan 2026 00:00:00 GMT", now)).contains(Duration.ZERO);
        assertThat(RetryAfter.parse("-4", now)).contains(Duration.ZERO);
        assertThat(RetryAfter.parse("soon", now)).isEmpty();
        assertThat(RetryAfter.parse("NaN", now)).isEmpty();
    }
}
