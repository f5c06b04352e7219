package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agent.cache: true} over the real local endpoint, with an in-memory {@link AnswerCache}: an identical request
 * is answered from the cache (nothing sent, no usage, marked cached, observed as such), a different one is sent and
 * kept, an unusable kept answer is sent again, and without {@code cache} nothing is looked up or kept.
 */
class HttpAgentCacheTest {
    @TempDir
    Path dir;

    OpenAiTestServer server;
    final Map<String, byte[]> kept = new ConcurrentHashMap<>();
    final AnswerCache cache = new AnswerCache() {
        @Override
        public Optional<byte[]> get(String key) {
            return Optional.ofNullable(kept.get(key));
        }

        @Override
        public void put(String key, byte[] answer) {
            kept.putIfAbsent(key, answer);
        }
    };

    @BeforeEach
    void start() {
        server = OpenAiTestServer.start();
        server.answerWith(req -> OpenAiTestServer.Reply.content("answer to " + req.lastUserMessage())
                .withUsage(7, 3));
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private ObjectNode config(boolean cached) {
        ObjectNode c = TestSupport.MAPPER.createObjectNode();
        c.put("kind", "http").put("url", server.chatUrl().toString()).put("model", "m");
        if (cached) {
            c.put("cache", true);
        }
        return c;
    }

    private AgentOutcome run(ObjectNode config, String question, AgentObserver observer) {
        try (Agent agent = Agents.create(config, env(dir).withAnswers(cache))) {
            return agent.run(new AgentCall(caseOf("q", question, null), observer, 1));
        }
    }

    @Test
    void anIdenticalRequestIsAnsweredFromTheCacheWithoutSendingOrPaying() {
        AgentOutcome first = run(config(true), "2 + 2?", AgentObserver.NONE);
        assertThat(first.cached()).isFalse();
        assertThat(first.usage()).isPresent();
        assertThat(server.requests()).hasSize(1);
        assertThat(kept).hasSize(1);

        List<String> seen = new ArrayList<>();
        AgentOutcome second = run(config(true), "2 + 2?", new AgentObserver() {
            @Override
            public void onCachedAnswer(int attempt, String key) {
                seen.add("cached " + attempt + " " + key);
            }

            @Override
            public void onResponse(int attempt, int status, com.fasterxml.jackson.databind.JsonNode response) {
                seen.add("response " + status);
            }
        });
        assertThat(server.requests()).as("nothing sent").hasSize(1);
        assertThat(second.cached()).isTrue();
        assertThat(second.output()).isEqualTo(first.output());
        assertThat(second.usage()).as("a cached answer costs nothing").isEmpty();
        assertThat(second.attempts())
                .hasSize(1)
                .allSatisfy(a -> assertThat(a.usage()).isEmpty());
        assertThat(seen).containsExactly("cached 1 " + kept.keySet().iterator().next(), "response 200");

        AgentOutcome other = run(config(true), "3 + 3?", AgentObserver.NONE);
        assertThat(other.cached()).isFalse();
        assertThat(server.requests()).hasSize(2);
        assertThat(kept).hasSize(2);
    }

    @Test
    void anUnusableKeptAnswerIsSentAgain() {
        run(config(true), "2 + 2?", AgentObserver.NONE);
        kept.replaceAll((k, v) -> "{\"choices\":[]}".getBytes(StandardCharsets.UTF_8));
        AgentOutcome again = run(config(true), "2 + 2?", AgentObserver.NONE);
        assertThat(again.cached()).isFalse();
        assertThat(again.output()).contains("answer to 2 + 2?");
        assertThat(again.attempts()).hasSize(2);
        assertThat(server.requests()).hasSize(2);
    }

    @Test
    void withoutCacheNothingIsLookedUpOrKept() {
        run(config(false), "2 + 2?", AgentObserver.NONE);
        run(config(false), "2 + 2?", AgentObserver.NONE);
        assertThat(server.requests()).hasSize(2);
        assertThat(kept).isEmpty();
    }
}
