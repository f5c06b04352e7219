package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.shAgent;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The epoch of an agent call as agents see it: {@code VIGILO_EPOCH} for command agents, the request's {@code seed}
 * for http agents with {@code seed_per_epoch} (docs/formats/agent-protocol.md), against real child processes and a
 * real local OpenAI-compatible server.
 */
class AgentEpochTest {
    @TempDir
    Path dir;

    OpenAiTestServer server;

    @BeforeEach
    void start() {
        server = OpenAiTestServer.start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private ObjectNode httpConfig() {
        ObjectNode n = TestSupport.MAPPER.createObjectNode();
        n.put("kind", "http");
        n.put("url", server.chatUrl().toString());
        n.put("model", "test-model");
        n.put("timeout_seconds", 10);
        n.put("connect_timeout_seconds", 5);
        return n;
    }

    private AgentOutcome run(ObjectNode config, AgentCall call) {
        try (Agent agent = Agents.create(config, env(dir))) {
            return agent.run(call);
        }
    }

    private static CaseRecord aCase() {
        return caseOf("q-1", "What is 2 + 2?", "4");
    }

    @Test
    void aCallIsInEpochOneUnlessGivenAnotherAndEpochsCountFromOne() {
        assertThat(AgentCall.of(aCase()).epoch()).isEqualTo(1);
        assertThat(new AgentCall(aCase(), AgentObserver.NONE).epoch()).isEqualTo(1);
        assertThat(new AgentCall(aCase(), AgentObserver.NONE, 7).epoch()).isEqualTo(7);
        assertThatThrownBy(() -> new AgentCall(aCase(), AgentObserver.NONE, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("epoch must be at least 1 (epochs count from 1), got 0");
        assertThatThrownBy(() -> new AgentCall(aCase(), AgentObserver.NONE, -3))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void seedPerEpochSendsTheEpochAsTheSeedOnEveryAttemptOfTheCall() {
        ObjectNode config = httpConfig();
        config.put("seed_per_epoch", true);
        config.put("max_attempts", 3);
        server.enqueue(Reply.error(503, "overloaded"), Reply.rateLimited(Duration.ZERO), Reply.content("4"));
        List<JsonNode> observed = new CopyOnWriteArrayList<>();
        AgentObserver observer = new AgentObserver() {
            @Override
            public void onRequest(int attempt, JsonNode request) {
                observed.add(request);
            }
        };

        AgentOutcome o = run(config, new AgentCall(aCase(), observer, 3));

        assertThat(o.status()).isEqualTo(AgentOutcome.Status.OK);
        assertThat(o.output()).contains("4");
        assertThat(o.attempts()).hasSize(3);
        assertThat(o.attempts().get(0).error().orElseThrow().type()).isEqualTo(AgentErrorType.HTTP_STATUS);
        assertThat(o.attempts().get(1).error().orElseThrow().type()).isEqualTo(AgentErrorType.RATE_LIMITED);
        List<OpenAiTestServer.Request> received = server.requests();
        assertThat(received).hasSize(3);
        JsonNode expected = TestSupport.q(
                "{'model':'test-model','messages':[{'role':'user','content':'What is 2 + 2?'}],'seed':3}");
        // The first attempt and both retries: the same body, the seed an integer 3.
        assertThat(received).allSatisfy(r -> {
            assertThat(r.body()).isEqualTo(expected);
            assertThat(r.body().get("seed").isIntegralNumber()).isTrue();
        });
        // The transcript records what was sent (as text: the built body holds the seed as a long node).
        assertThat(observed)
                .hasSize(3)
                .allSatisfy(b -> assertThat(TestSupport.json(b))
                        .isEqualTo(
                                "{\"model\":\"test-model\",\"messages\":[{\"role\":\"user\",\"content\":\"What is 2 + 2?\"}],"
                                        + "\"seed\":3}"));
    }

    @Test
    void seedPerEpochFollowsTheEpochOfEachCall() {
        ObjectNode config = httpConfig();
        config.put("seed_per_epoch", true);
        try (Agent agent = Agents.create(config, env(dir))) {
            assertThat(agent.run(AgentCall.of(aCase())).status()).isEqualTo(AgentOutcome.Status.OK);
            assertThat(agent.run(new AgentCall(aCase(), AgentObserver.NONE, 2)).status())
                    .isEqualTo(AgentOutcome.Status.OK);
            assertThat(agent.run(new AgentCall(aCase(), AgentObserver.NONE, 100))
                            .status())
                    .isEqualTo(AgentOutcome.Status.OK);
        }
        assertThat(server.requests())
                .extracting(r -> r.body().path("seed").asLong(-1))
                .containsExactly(1L, 2L, 100L);
    }

    @Test
    void withoutSeedPerEpochNoSeedIsSentInAnyEpoch() {
        ObjectNode absent = httpConfig();
        ObjectNode off = httpConfig();
        off.put("seed_per_epoch", false);
        for (ObjectNode config : List.of(absent, off)) {
            config.put("max_attempts", 2);
            server.enqueue(Reply.error(500, "internal"), Reply.content("4"));
            AgentOutcome o = run(config, new AgentCall(aCase(), AgentObserver.NONE, 3));
            assertThat(o.status()).isEqualTo(AgentOutcome.Status.OK);
            assertThat(o.attempts()).hasSize(2);
        }
        List<OpenAiTestServer.Request> received = server.requests();
        assertThat(received).hasSize(4);
        // Exactly the body sent before epochs existed: no seed key at all.
        JsonNode unchanged =
                TestSupport.q("{'model':'test-model','messages':[{'role':'user','content':'What is 2 + 2?'}]}");
        assertThat(received).allSatisfy(r -> {
            assertThat(r.body().has("seed")).isFalse();
            assertThat(r.body()).isEqualTo(unchanged);
        });
    }

    @Test
    void aCommandAgentReadsItsEpochFromVigiloEpoch() {
        ObjectNode config = shAgent("printf '%s' \"${VIGILO_EPOCH-unset}\"");
        assertThat(run(config, new AgentCall(aCase(), AgentObserver.NONE, 2)).output())
                .contains("2");
        assertThat(run(config, new AgentCall(aCase(), AgentObserver.NONE, 17)).output())
                .contains("17");
        // Without epochs the variable is still set, to 1.
        assertThat(run(config, AgentCall.of(aCase())).output()).contains("1");
    }

    @Test
    void everyAttemptOfACommandCallSeesTheSameEpoch() {
        Path marker = dir.resolve("tried");
        ObjectNode config = shAgent("if [ -e '" + marker + "' ]; then printf '%s|%s' \"$VIGILO_EPOCH\""
                + " \"$VIGILO_ATTEMPT\"; else printf '%s' \"$VIGILO_EPOCH\" > '" + marker + "'; exit 1; fi");
        config.put("max_attempts", 2);
        AgentOutcome o = run(config, new AgentCall(aCase(), AgentObserver.NONE, 4));
        assertThat(o.status()).isEqualTo(AgentOutcome.Status.OK);
        assertThat(o.attempts()).hasSize(2);
        assertThat(o.output()).contains("4|2");
        assertThat(marker).hasContent("4");
    }

    @Test
    void theWorkersVigiloEpochIsReplacedByTheCallsEpoch() {
        ObjectNode config = shAgent("printf '%s' \"$VIGILO_EPOCH\"");
        ((ObjectNode) config.get("env")).put("VIGILO_EPOCH", "99");
        AgentEnvironment worker = TestSupport.withVariable(env(dir), "VIGILO_EPOCH", "98");
        try (Agent agent = Agents.create(config, worker)) {
            assertThat(agent.run(new AgentCall(aCase(), AgentObserver.NONE, 5)).output())
                    .contains("5");
        }
    }
}
