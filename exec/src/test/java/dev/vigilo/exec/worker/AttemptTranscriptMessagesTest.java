package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.junit.jupiter.api.Test;

/** An http agent's request in a transcript: the turns a messages template rendered are recorded as sent. */
class AttemptTranscriptMessagesTest {
    static final ObjectMapper JSON = new ObjectMapper();

    static JsonNode json(String singleQuoted) {
        try {
            return JSON.readTree(singleQuoted.replace('\'', '"'));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    static List<JsonNode> afterRequest(String userText, String request) {
        AttemptTranscript t = new AttemptTranscript(
                1, JSON.createObjectNode(), userText, AttemptTranscript.HTTP_PROVIDER, "test-model");
        t.request(json(request));
        return List.copyOf(t.events());
    }

    static List<String> types(List<? extends JsonNode> events) {
        return events.stream().map(e -> e.get("type").asText()).toList();
    }

    @Test
    void theDefaultTurnsAreWhatTheUserMessageAndHeaderAlreadySay() {
        List<String> plain =
                List.of("vigilo/case", "turn/start", "user/message", "step/start", "request/context", "request/header");
        assertThat(types(afterRequest(
                        "What is 2?", "{'model':'m','messages':[{'role':'user','content':'What is 2?'}]}")))
                .isEqualTo(plain);
        assertThat(types(afterRequest(
                        "{'q':1}".replace('\'', '"'),
                        "{'model':'m','messages':[{'role':'system','content':'Be brief.'},"
                                + "{'role':'user','content':'{\\'q\\':1}'}]}")))
                .isEqualTo(plain);
    }

    @Test
    void renderedTurnsAreRecordedAsSent() {
        String request = "{'model':'m','messages':[{'role':'system','content':'Answer in en.'},"
                + "{'role':'user','content':'Q: What is 2?'},{'role':'assistant','content':'OK'},"
                + "{'role':'user','content':'Go'}]}";
        List<JsonNode> events = afterRequest("What is 2?", request);
        assertThat(types(events)).endsWith("request/header", AttemptTranscript.MESSAGES);
        ObjectNode messages = (ObjectNode) events.get(events.size() - 1);
        assertThat(messages.get("ignorable").asBoolean()).isTrue();
        assertThat(messages.at("/data/attempt").asInt()).isEqualTo(1);
        assertThat(messages.at("/data/messages")).isEqualTo(json(request).get("messages"));
        // One user turn that is not the input as is (a template around it) is recorded too.
        assertThat(types(afterRequest(
                        "What is 2?", "{'model':'m','messages':[{'role':'user','content':'Q: What is 2?'}]}")))
                .endsWith(AttemptTranscript.MESSAGES);
    }
}
