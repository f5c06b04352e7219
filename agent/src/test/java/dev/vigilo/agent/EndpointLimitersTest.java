package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.MAPPER;
import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.withVariable;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.llm.ChatCall;
import dev.vigilo.llm.ChatExchange;
import dev.vigilo.llm.ChatLimiter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one point where limiters plug in: the http agent and each judge (a panel's judges too) ask
 * {@link EndpointLimiters} for their endpoint's limiter once, send every call through it, and send a call again
 * without spending an attempt when the limiter takes its failure as its own.
 */
class EndpointLimitersTest {
    @TempDir
    Path dir;

    OpenAiTestServer server;
    final List<EndpointLimiters.Endpoint> asked = new CopyOnWriteArrayList<>();
    final List<ChatExchange> settled = new CopyOnWriteArrayList<>();

    /** Admits at once; takes every 503 as its own (as an open circuit does). */
    final ChatLimiter circuitLike = new ChatLimiter() {
        private final List<ChatCall> failed = new CopyOnWriteArrayList<>();

        @Override
        public Duration reserve(ChatCall call) {
            return Duration.ZERO;
        }

        @Override
        public void settle(ChatCall call, ChatExchange exchange) {
            settled.add(exchange);
            if (exchange.status() == 503) {
                failed.add(call);
            }
        }

        @Override
        public boolean resend(ChatCall call) {
            return failed.remove(call);
        }
    };

    AgentEnvironment env;

    @BeforeEach
    void start() {
        server = OpenAiTestServer.start();
        env = withVariable(env(dir), "K", "sk-limit-0123456789").withLimiters(EndpointLimiters.all(List.of(e -> {
            asked.add(e);
            return circuitLike;
        })));
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void theAgentsFailuresTheLimiterTakesAreSentAgainWithinOneAttempt() {
        ObjectNode config = MAPPER.createObjectNode()
                .put("kind", "http")
                .put("url", server.chatUrl().toString())
                .put("model", "m")
                .put("api_key_env", "K")
                .put("max_attempts", 1);
        config.putObject("rate_limit").put("requests_per_minute", 60);
        server.enqueue(Reply.error(503, "down"), Reply.error(503, "down"), Reply.content("4"));
        AgentOutcome o;
        try (Agent agent = Agents.create(config, env)) {
            o = agent.run(AgentCall.of(caseOf("q", "2+2?", "4")));
        }
        assertThat(o.status()).isEqualTo(AgentOutcome.Status.OK);
        assertThat(o.output()).contains("4");
        assertThat(o.attempts()).hasSize(1);
        assertThat(server.requestCount()).isEqualTo(3);
        assertThat(settled).hasSize(3);
        assertThat(asked).hasSize(1);
        EndpointLimiters.Endpoint e = asked.get(0);
        assertThat(e.at()).isEqualTo("agent");
        assertThat(e.url()).isEqualTo(server.chatUrl());
        assertThat(e.model()).isEqualTo("m");
        assertThat(e.apiKeyEnv()).contains("K");
        assertThat(e.settings().path("rate_limit").path("requests_per_minute").asInt())
                .isEqualTo(60);
        assertThat(e.toString()).doesNotContain("sk-limit");
    }

    @Test
    void judgesAndPanelJudgesAskForTheirEndpointsLimiter() {
        ArrayNode plan = MAPPER.createArrayNode();
        ObjectNode judge = plan.addObject()
                .put("index", 0)
                .put("name", "quality")
                .put("kind", "judge")
                .put("url", server.chatUrl().toString())
                .put("model", "jm")
                .put("rubric", "Grade {{output}}.")
                .put("max_attempts", 1)
                .put("timeout_seconds", 5);
        judge.putObject("scale").put("min", 0).put("max", 10);
        ObjectNode panel = plan.addObject()
                .put("index", 1)
                .put("name", "pan")
                .put("kind", "panel")
                .put("aggregate", "mean");
        for (String n : List.of("a", "b")) {
            ObjectNode j = panel.withArray("judges")
                    .addObject()
                    .put("name", n)
                    .put("url", server.chatUrl().toString())
                    .put("model", "m-" + n)
                    .put("rubric", "Grade {{output}}.")
                    .put("max_attempts", 1)
                    .put("timeout_seconds", 5);
            j.putObject("scale").put("min", 0).put("max", 10);
        }
        server.enqueue(Reply.error(503, "down"), Reply.judgement(9, "good"));
        server.answerWith(r -> Reply.judgement(9, "good"));
        try (EvaluatorSet set = Evaluators.fromPlan(plan, env)) {
            List<EvaluatorResult> r = set.evaluate(1L, caseOf("c", "q", "4"), "4");
            assertThat(r.get(0).status())
                    .as("the 503 was the limiter's: no attempt spent")
                    .isEqualTo(EvaluatorResult.Status.PASSED);
        }
        assertThat(asked)
                .extracting(EndpointLimiters.Endpoint::at)
                .containsExactly("evaluators.quality", "evaluators.pan.judges.a", "evaluators.pan.judges.b");
    }
}
