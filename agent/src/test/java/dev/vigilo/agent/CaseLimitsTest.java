package dev.vigilo.agent;

import static dev.vigilo.agent.CommandAgentTest.assertEnded;
import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.shAgent;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-case limits ({@link CaseBudget}) over real child processes and the real local test endpoint: {@code
 * case_seconds} stops a command (its whole process tree) and a request mid-attempt and lets no attempt start after
 * it; {@code case_tokens} and {@code case_cost_usd} end a call whose attempts' tokens go over, failed attempts'
 * tokens included.
 */
class CaseLimitsTest {
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

    private static CaseBudget seconds(long s) {
        return new CaseBudget(
                Optional.of(Duration.ofSeconds(s)), Optional.empty(), Optional.empty(), u -> Optional.empty());
    }

    private AgentOutcome run(ObjectNode config, CaseBudget budget) {
        try (Agent agent = Agents.create(config, env(dir))) {
            return agent.run(new AgentCall(caseOf("q-1", "What is 2 + 2?", "4"), AgentObserver.NONE, 1, budget));
        }
    }

    private ObjectNode http() {
        ObjectNode config = new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode();
        config.put("kind", "http")
                .put("url", server.chatUrl().toString())
                .put("model", "m")
                .put("max_attempts", 3);
        return config;
    }

    @Test
    void caseSecondsKillsACommandAndItsDetachedChildMidAttemptAndIsNotRetried() throws Exception {
        Path pid = dir.resolve("detached.pid");
        ObjectNode config = shAgent("(setsid sh -c 'echo $$ > \"" + pid + ".tmp\"; mv \"" + pid + ".tmp\" \"" + pid
                + "\"; exec sleep 60') &\nwhile [ ! -s '" + pid + "' ]; do sleep 0.02; done\nexec sleep 60");
        config.put("timeout_seconds", 60);
        config.put("max_attempts", 3);
        AgentOutcome o = run(config, seconds(1));
        AgentError e = o.error().orElseThrow();
        assertThat(e.type()).isEqualTo(AgentErrorType.LIMIT_EXCEEDED);
        assertThat(e.retryable()).isFalse();
        assertThat(e.message()).startsWith("limits.case_seconds: the case ran ").contains("over its limit of 1 s");
        assertThat(o.attempts())
                .as("the limit is the case's, not the attempt's: no retry")
                .hasSize(1);
        assertEnded(Long.parseLong(Files.readString(pid).strip()));
    }

    @Test
    void caseSecondsAbortsARequestThatOutlivesIt() {
        server.enqueue(OpenAiTestServer.Reply.content("late").withLatency(Duration.ofSeconds(30)));
        ObjectNode config = http();
        config.put("timeout_seconds", 60);
        AgentOutcome o = run(config, seconds(1));
        assertThat(o.error().orElseThrow().type()).isEqualTo(AgentErrorType.LIMIT_EXCEEDED);
        assertThat(o.attempts()).hasSize(1);
    }

    @Test
    void tokensOfFailedAttemptsCountTowardsCaseTokens() {
        // Two answers the agent cannot use (no choices) that still report usage, then one it could use.
        server.enqueue(
                OpenAiTestServer.Reply.raw(200, "{\"model\":\"m\",\"choices\":[]}")
                        .withUsage(60, 10),
                OpenAiTestServer.Reply.raw(200, "{\"model\":\"m\",\"choices\":[]}")
                        .withUsage(60, 10),
                OpenAiTestServer.Reply.content("4").withUsage(60, 10));
        CaseBudget budget =
                new CaseBudget(Optional.empty(), Optional.of(100L), Optional.empty(), u -> Optional.empty());
        AgentOutcome o = run(http(), budget);
        AgentError e = o.error().orElseThrow();
        assertThat(e.type()).isEqualTo(AgentErrorType.LIMIT_EXCEEDED);
        assertThat(e.message())
                .isEqualTo("limits.case_tokens: the case used 140 tokens, over its limit of 100; stopped after"
                        + " attempt 2");
        assertThat(o.attempts()).hasSize(2);
        assertThat(o.attempts()).allSatisfy(a -> assertThat(a.usage()).isNotEmpty());
        assertThat(server.requests()).hasSize(2);
    }

    @Test
    void anAnswerOverCaseCostUsdIsNotTheOutput() {
        server.enqueue(OpenAiTestServer.Reply.content("4").withUsage(1_000_000, 0));
        // $2 per million input tokens: the one answer costs $2.
        CaseBudget budget = new CaseBudget(
                Optional.empty(),
                Optional.empty(),
                Optional.of(new BigDecimal("0.50")),
                used -> Optional.of(BigDecimal.valueOf(2L
                                * used.stream()
                                        .mapToLong(TokenUsage::promptTokens)
                                        .sum())
                        .movePointLeft(6)));
        AgentOutcome o = run(http(), budget);
        assertThat(o.output()).isEmpty();
        assertThat(o.error().orElseThrow().message())
                .isEqualTo("limits.case_cost_usd: the case cost $2, over its limit of $0.5; stopped after attempt 1");
    }

    @Test
    void withinItsLimitsACallIsUnchanged() {
        server.enqueue(OpenAiTestServer.Reply.content("4").withUsage(5, 1));
        CaseBudget budget = new CaseBudget(
                Optional.of(Duration.ofSeconds(60)), Optional.of(6L), Optional.empty(), u -> Optional.empty());
        AgentOutcome o = run(http(), budget);
        assertThat(o.output()).contains("4");
        assertThat(budget.exceededBy(List.of(o.usage().orElseThrow()))).isEmpty();
    }
}
