package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.withVariable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.common.errors.InvalidInputException;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The http agent against a real local OpenAI-compatible server. */
class HttpAgentTest {
    static final String KEY = "sk-test-0123456789secret";

    @TempDir
    Path dir;

    OpenAiTestServer server;
    AgentEnvironment env;

    @BeforeEach
    void start() {
        server = OpenAiTestServer.start();
        env = withVariable(env(dir), "TEST_OPENAI_KEY", KEY);
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
        n.put("api_key_env", "TEST_OPENAI_KEY");
        n.put("timeout_seconds", 10);
        n.put("connect_timeout_seconds", 5);
        return n;
    }

    AgentOutcome run(ObjectNode config, CaseRecord c) {
        try (Agent agent = Agents.create(config, env)) {
            return agent.run(AgentCall.of(c));
        }
    }

    AgentOutcome run(Reply... replies) {
        server.enqueue(replies);
        return run(config(), caseOf("q-1", "What is 2 + 2?", "4"));
    }

    @Test
    void answersWithTheMessageContentAndSendsAWellFormedRequest() {
        ObjectNode config = config();
        config.put("system_prompt", "Answer with a number only.");
        config.put("max_tokens", 16);
        config.put("temperature", 0.0);
        AgentOutcome o = run(config, caseOf("q-1", Map.of("question", "What is 2 + 2?"), "4"));
        assertThat(o.status()).isEqualTo(AgentOutcome.Status.OK);
        assertThat(o.output()).contains("echo: {\"question\":\"What is 2 + 2?\"}");
        assertThat(o.usage())
                .as("priced as the model the endpoint answered as")
                .contains(new TokenUsage("test", 5, 6, 11, 0));
        assertThat(o.attempts().get(0).usage()).containsExactly(o.usage().orElseThrow());
        assertThat(o.attempts()).hasSize(1);
        OpenAiTestServer.Request r = server.requests().get(0);
        assertThat(r.method()).isEqualTo("POST");
        assertThat(r.path()).isEqualTo("/v1/chat/completions");
        assertThat(r.authorization()).isEqualTo("Bearer " + KEY);
        assertThat(r.headers().get("content-type")).isEqualTo("application/json");
        assertThat(r.body())
                .isEqualTo(TestSupport.q("{'model':'test-model','messages':["
                        + "{'role':'system','content':'Answer with a number only.'},"
                        + "{'role':'user','content':'{\\'question\\':\\'What is 2 + 2?\\'}'}],"
                        + "'max_tokens':16,'temperature':0.0}"));
    }

    @Test
    void aStringInputIsSentAsTextAndNoKeyMeansNoAuthorization() {
        ObjectNode config = config();
        config.remove("api_key_env");
        AgentOutcome o = run(config, caseOf("q", "plain text", null));
        assertThat(o.output()).contains("echo: plain text");
        assertThat(server.requests().get(0).authorization()).isNull();
        assertThat(server.requests().get(0).body().get("messages"))
                .isEqualTo(TestSupport.q("[{'role':'user','content':'plain text'}]"));
    }

    @Test
    void aMissingKeyVariableFailsUpFrontNamingIt() {
        ObjectNode config = config();
        config.put("api_key_env", "VIGILO_TEST_UNSET_KEY_VARIABLE");
        assertThatThrownBy(() -> Agents.create(config, env))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("agent.api_key_env: environment variable VIGILO_TEST_UNSET_KEY_VARIABLE is not set; export"
                        + " it with the endpoint's API key before running the worker");
        assertThat(server.requestCount()).isZero();
    }

    @Test
    void rateLimitingHonoursRetryAfterThenSucceeds() {
        long start = System.nanoTime();
        AgentOutcome o = run(Reply.rateLimited(Duration.ofSeconds(1)), Reply.content("4"));
        assertThat(o.output()).contains("4");
        assertThat(o.attempts()).hasSize(2);
        assertThat(o.attempts().get(0).error().orElseThrow().type()).isEqualTo(AgentErrorType.RATE_LIMITED);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
        assertThat(o.elapsed()).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
        assertThat(server.requestCount()).isEqualTo(2);
    }

    @Test
    void aLongRetryAfterIsCappedAndRateLimitingEndsInAnErrorWhenItPersists() {
        env = env.withBackoff(Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofMillis(200));
        long start = System.nanoTime();
        AgentOutcome o = run(
                Reply.rateLimited(Duration.ofHours(1)),
                Reply.rateLimited(Duration.ofHours(1)),
                Reply.rateLimited(Duration.ofHours(1)));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        AgentError e = o.error().orElseThrow();
        assertThat(e.type()).isEqualTo(AgentErrorType.RATE_LIMITED);
        assertThat(e.message()).contains("429").contains("Rate limit reached").contains("--concurrency");
        assertThat(o.attempts()).hasSize(3);
    }

    @Test
    void serverErrorsAreRetriedUpToMaxAttempts() {
        ObjectNode config = config();
        config.put("max_attempts", 4);
        server.enqueue(
                Reply.error(500, "internal"),
                Reply.error(502, "bad gateway"),
                Reply.error(503, "overloaded"),
                Reply.error(500, "still broken"));
        AgentOutcome o = run(config, caseOf("q", "x", null));
        AgentError e = o.error().orElseThrow();
        assertThat(e.type()).isEqualTo(AgentErrorType.HTTP_STATUS);
        assertThat(e.message()).contains("HTTP 500").contains("still broken").contains("the endpoint failed");
        assertThat(e.retryable()).isTrue();
        assertThat(o.attempts()).hasSize(4);
        assertThat(server.requestCount()).isEqualTo(4);
        assertThat(run(Reply.error(503, "x"), Reply.content("back")).output()).contains("back");
        assertThat(run(Reply.error(408, "slow"), Reply.content("ok")).attempts())
                .hasSize(2);
    }

    @Test
    void clientErrorsAreNotRetriedAndNeverPrintTheKey() {
        AgentOutcome o = run(Reply.error(401, "Incorrect API key provided: " + KEY));
        AgentError e = o.error().orElseThrow();
        assertThat(e.type()).isEqualTo(AgentErrorType.HTTP_STATUS);
        assertThat(e.retryable()).isFalse();
        assertThat(e.message())
                .contains("HTTP 401")
                .contains("Incorrect API key provided: ***")
                .contains("check the API key in $TEST_OPENAI_KEY")
                .doesNotContain(KEY);
        assertThat(o.attempts()).hasSize(1);
        AgentOutcome notFound = run(Reply.error(404, "The model `test-model` does not exist"));
        assertThat(notFound.error().orElseThrow().message()).contains("check agent.url and agent.model");
        assertThat(notFound.attempts()).hasSize(1);
    }

    @Test
    void credentialsInTheUrlAreNotPrinted() {
        ObjectNode config = config();
        String url = server.chatUrl().toString().replace("http://", "http://user:pw-secret@") + "?key=q-secret";
        config.put("url", url);
        server.enqueue(Reply.error(400, "bad request"));
        AgentOutcome o = run(config, caseOf("q", "x", null));
        assertThat(o.error().orElseThrow().message())
                .contains(server.chatUrl().toString())
                .doesNotContain("secret");
    }

    @Test
    void malformedAnswersAreInvalidResponsesAndRetried() {
        AgentOutcome o = run(Reply.raw(200, "{\"choices\": [ {\"mess"), Reply.content("fine"));
        assertThat(o.output()).contains("fine");
        assertThat(o.attempts().get(0).error().orElseThrow().type()).isEqualTo(AgentErrorType.INVALID_RESPONSE);
        assertThat(o.attempts().get(0).error().get().message()).contains("not JSON");
        AgentOutcome noChoices = run(
                Reply.raw(200, "{\"object\": \"chat.completion\"}"),
                Reply.raw(200, "{\"choices\": []}"),
                Reply.raw(200, "{\"choices\": [{\"message\": {\"role\": \"assistant\"}}]}"));
        assertThat(noChoices.error().orElseThrow().type()).isEqualTo(AgentErrorType.INVALID_RESPONSE);
        assertThat(noChoices.error().get().message()).contains("neither text content nor tool calls");
        assertThat(noChoices.attempts())
                .extracting(a -> a.error().orElseThrow().message())
                .allSatisfy(m -> assertThat(m).containsAnyOf("choices[0].message", "neither"));
    }

    @Test
    void aTruncatedBodyIsAConnectionFailureAndRetried() {
        AgentOutcome o = run(Reply.truncated("a long answer that will be cut"), Reply.content("whole"));
        assertThat(o.output()).contains("whole");
        AgentError first = o.attempts().get(0).error().orElseThrow();
        assertThat(first.type()).isEqualTo(AgentErrorType.CONNECTION_FAILED);
        assertThat(first.message()).contains("failed before the answer was complete");
    }

    @Test
    void toolCallsWithoutTextAreTheOutputAsJson() {
        AgentOutcome o = run(Reply.toolCall("get_capital", "{\"country\":\"France\"}"));
        assertThat(o.status()).isEqualTo(AgentOutcome.Status.OK);
        assertThat(TestSupport.parse(o.output().orElseThrow()))
                .isEqualTo(TestSupport.q("{'tool_calls':[{'id':'call_1','type':'function','function':"
                        + "{'name':'get_capital','arguments':'{\\'country\\':\\'France\\'}'}}]}"));
    }

    @Test
    void contentPartsAreJoined() {
        assertThat(run(Reply.contentParts("Par", "is")).output()).contains("Paris");
    }

    @Test
    void aSlowEndpointTimesOutAndTheRetryAnswers() {
        ObjectNode config = config();
        config.put("timeout_seconds", 1);
        server.enqueue(Reply.content("late").withLatency(Duration.ofSeconds(20)), Reply.content("on time"));
        long start = System.nanoTime();
        AgentOutcome o = run(config, caseOf("q", "x", null));
        assertThat(o.output()).contains("on time");
        AgentError first = o.attempts().get(0).error().orElseThrow();
        assertThat(first.type()).isEqualTo(AgentErrorType.TIMEOUT);
        assertThat(first.message()).contains("did not answer within 1 s");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
    }

    @Test
    void aRefusedConnectionIsAConnectionFailure() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        ObjectNode config = config();
        config.put("url", "http://127.0.0.1:" + port + "/v1/chat/completions");
        config.put("max_attempts", 2);
        AgentOutcome o = run(config, caseOf("q", "x", null));
        AgentError e = o.error().orElseThrow();
        assertThat(e.type()).isEqualTo(AgentErrorType.CONNECTION_FAILED);
        assertThat(e.message()).contains("cannot connect to http://127.0.0.1:" + port);
        assertThat(o.attempts()).hasSize(2);
    }

    @Test
    void oversizedAnswersAreCutOffAndNotRetried() {
        AgentOutcome body = run(Reply.hugeContent(9 << 20));
        assertThat(body.error().orElseThrow().type()).isEqualTo(AgentErrorType.OUTPUT_TOO_LARGE);
        assertThat(body.error().get().message()).contains("larger than 8 MiB");
        assertThat(body.attempts()).hasSize(1);
        AgentOutcome content = run(Reply.hugeContent((1 << 20) + 1));
        assertThat(content.error().orElseThrow().type()).isEqualTo(AgentErrorType.OUTPUT_TOO_LARGE);
        assertThat(content.error().get().message()).contains("at most 1 MiB");
    }

    @Test
    void theObserverSeesEachRequestAndResponse() {
        List<String> seen = new CopyOnWriteArrayList<>();
        AgentObserver observer = new AgentObserver() {
            @Override
            public void onAttemptStart(int attempt) {
                seen.add("start " + attempt);
            }

            @Override
            public void onRequest(int attempt, JsonNode request) {
                seen.add("request " + attempt + " " + request.get("model").asText());
            }

            @Override
            public void onResponse(int attempt, int status, JsonNode response) {
                seen.add("response " + attempt + " " + status + " "
                        + (response.isTextual()
                                ? response.asText()
                                : response.path("choices")
                                        .path(0)
                                        .path("message")
                                        .path("content")
                                        .asText()));
            }

            @Override
            public void onAttemptEnd(AgentAttempt attempt) {
                seen.add("end " + attempt.number() + " "
                        + attempt.error().map(e -> e.type().code()).orElse("ok"));
            }
        };
        server.enqueue(Reply.raw(502, "<html>bad gateway</html>"), Reply.content("4"));
        try (Agent agent = Agents.create(config(), env)) {
            assertThat(agent.run(new AgentCall(caseOf("q", "x", null), observer))
                            .output())
                    .contains("4");
        }
        assertThat(seen)
                .containsExactly(
                        "start 1",
                        "request 1 test-model",
                        "response 1 502 <html>bad gateway</html>",
                        "end 1 http_status",
                        "start 2",
                        "request 2 test-model",
                        "response 2 200 4",
                        "end 2 ok");
    }

    @Test
    void interruptingTheCallerAbortsTheRequestPromptly() throws Exception {
        server.enqueue(Reply.content("never").withLatency(Duration.ofSeconds(30)));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Agent agent = Agents.create(config(), env)) {
            Future<AgentOutcome> f = pool.submit(() -> agent.run(AgentCall.of(caseOf("q", "x", null))));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (server.requestCount() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            long interruptedAt = System.nanoTime();
            pool.shutdownNow();
            AgentOutcome o = f.get(10, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(System.nanoTime() - interruptedAt)).isLessThan(Duration.ofSeconds(10));
            assertThat(o.cancelled()).isTrue();
            assertThat(o.attempts()).hasSize(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void interruptingTheWaitBetweenAttemptsCancels() throws Exception {
        server.enqueue(Reply.rateLimited(Duration.ofSeconds(25)));
        env = env.withBackoff(Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofSeconds(30));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        // The first attempt's end is the last event before the wait: an interrupt after it lands in the wait (or
        // just before it, which the wait honours at once), never in the attempt.
        CountDownLatch attemptEnded = new CountDownLatch(1);
        AgentObserver observer = new AgentObserver() {
            @Override
            public void onAttemptEnd(AgentAttempt attempt) {
                attemptEnded.countDown();
            }
        };
        try (Agent agent = Agents.create(config(), env)) {
            Future<AgentOutcome> f = pool.submit(() -> agent.run(new AgentCall(caseOf("q", "x", null), observer)));
            assertThat(attemptEnded.await(10, TimeUnit.SECONDS))
                    .as("the first attempt ended")
                    .isTrue();
            pool.shutdownNow();
            // Well before the 25 s Retry-After: the wait was cut short, not served.
            AgentOutcome o = f.get(15, TimeUnit.SECONDS);
            assertThat(o.cancelled()).isTrue();
            assertThat(o.error().orElseThrow().message())
                    .contains("while waiting to retry")
                    .contains("429");
            assertThat(server.requestCount()).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentCasesShareOneAgent() throws Exception {
        server.answerWith(r -> Reply.content("answer to " + r.lastUserMessage()).withLatency(Duration.ofMillis(50)));
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try (Agent agent = Agents.create(config(), env)) {
            List<Future<AgentOutcome>> futures = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                CaseRecord c = caseOf("c" + i, "question " + i, null);
                futures.add(pool.submit(() -> agent.run(AgentCall.of(c))));
            }
            for (int i = 0; i < 64; i++) {
                assertThat(futures.get(i).get(60, TimeUnit.SECONDS).output()).contains("answer to question " + i);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(server.requestCount()).isEqualTo(64);
    }

    /** Records each reservation's estimate and each settlement's outcome; refuses every call when {@code refuse}. */
    static final class RecordingLimiter implements dev.vigilo.llm.ChatLimiter {
        final boolean refuse;
        final List<Long> reserved = new CopyOnWriteArrayList<>();
        final List<dev.vigilo.llm.ChatExchange.Outcome> settled = new CopyOnWriteArrayList<>();

        RecordingLimiter(boolean refuse) {
            this.refuse = refuse;
        }

        @Override
        public Duration reserve(dev.vigilo.llm.ChatCall call) {
            if (refuse) {
                throw new dev.vigilo.common.errors.CancelledException("the run's budget cannot cover this call");
            }
            reserved.add(call.tokenEstimate());
            return Duration.ZERO;
        }

        @Override
        public void settle(dev.vigilo.llm.ChatCall call, dev.vigilo.llm.ChatExchange exchange) {
            settled.add(exchange.outcome());
        }
    }

    @Test
    void everyRequestReservesItsBodyAndMaxTokensFromTheRunsLimiterAndARefusedOneIsNeverSent() {
        RecordingLimiter limiter = new RecordingLimiter(false);
        env = env.withLimiters(endpoint -> limiter);
        ObjectNode config = config();
        config.put("max_tokens", 40);
        server.enqueue(Reply.content("4").withUsage(10, 1));
        AgentOutcome o = run(config, caseOf("q", "what is 2 + 2", null));
        assertThat(o.error()).isEmpty();
        long bodyBytes = server.requests().get(0).bodyText().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        assertThat(limiter.reserved).containsExactly(bodyBytes + 40);
        assertThat(limiter.settled).containsExactly(dev.vigilo.llm.ChatExchange.Outcome.ANSWERED);

        env = env.withLimiters(endpoint -> new RecordingLimiter(true));
        AgentOutcome refused = run(config, caseOf("q", "what is 2 + 2", null));
        assertThat(refused.error().orElseThrow().type()).isEqualTo(AgentErrorType.CANCELLED);
        assertThat(refused.error().orElseThrow().message()).contains("was not sent: the run's budget cannot cover");
        assertThat(server.requestCount()).as("nothing sent").isEqualTo(1);
    }
}
