package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.checkpoint.LogRoot;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Chat steps against a real local OpenAI-compatible server (the agent module's test server): what is sent, what is
 * kept, structured output, rate limits, back-off on 429 and 5xx, usage and cost, the response cache, and retrying
 * failed items. Every run is a real pipeline run over a real checkpoint log.
 */
class ChatStepTest {
    @TempDir
    Path dir;

    OpenAiTestServer server;
    final List<Long> requestTimes = Collections.synchronizedList(new ArrayList<>());

    @BeforeEach
    void start() {
        server = OpenAiTestServer.start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    /** Runs {@code steps} over {@code n} seeds {"id": "sK", "q": "question K"} as experiment {@code exp}. */
    ExperimentStatus run(String exp, int n, String steps, String extraTop, PipelineRunner.Options opts)
            throws Exception {
        StringBuilder seeds = new StringBuilder();
        for (int i = 0; i < n; i++) {
            seeds.append("{\"id\": \"s")
                    .append(i)
                    .append("\", \"q\": \"question ")
                    .append(i)
                    .append("\"}\n");
        }
        Files.writeString(dir.resolve("seeds.jsonl"), seeds);
        Path yaml = dir.resolve("chat.yaml");
        Files.writeString(yaml, "name: chat\ninput: seeds.jsonl\nid_field: id\n" + extraTop + "steps:\n" + steps);
        return PipelineRunner.run(PipelineParser.parse(yaml), opts);
    }

    PipelineRunner.Options opts(String exp, int workers) {
        return new PipelineRunner.Options(LogRoot.local(dir.resolve("root")), exp, workers, DatagenProgress.NONE)
                .withEnvironment(Map.of("TEST_KEY", "sk-secret-123")::get);
    }

    JsonNode item(String exp, String id) {
        return Experiments.item(LogRoot.local(dir.resolve("root")), "chat", exp, id)
                .orElseThrow();
    }

    String url() {
        return server.chatUrl().toString();
    }

    @Test
    void sendsTemplatedMessagesParametersHeadersAndKeyAndKeepsContentFinishReasonReasoningAndUsage() throws Exception {
        server.answerWith(r -> {
            String q = r.lastUserMessage();
            ObjectNode root = Json.MAPPER.createObjectNode();
            ObjectNode choice =
                    root.putArray("choices").addObject().put("index", 0).put("finish_reason", "stop");
            choice.putObject("message")
                    .put("role", "assistant")
                    .put("content", "A:" + q)
                    .put("reasoning_content", "thinking about " + q);
            root.putObject("usage")
                    .put("prompt_tokens", 7)
                    .put("completion_tokens", 3)
                    .put("total_tokens", 10);
            return Reply.raw(200, Json.canonical(root)).withHeader("Content-Type", "application/json");
        });
        ExperimentStatus s = run("basic", 2, """
          - name: ask
            kind: chat
            url: %s
            model: test-model
            api_key_env: TEST_KEY
            headers: {X-Team: data}
            messages:
              - {role: system, content: "You answer briefly."}
              - {role: user, content: "Q: {{q}}"}
            temperature: 0.2
            top_p: 0.9
            max_tokens: 50
            stop: ["END"]
            seed: 7
        """.formatted(url()), "", opts("basic", 2));
        assertThat(s.completed()).isEqualTo(2);
        JsonNode body = server.requests().get(0).body();
        assertThat(body.path("model").asText()).isEqualTo("test-model");
        assertThat(body.path("messages").get(0).path("role").asText()).isEqualTo("system");
        assertThat(body.path("messages").get(1).path("content").asText()).startsWith("Q: question ");
        assertThat(body.path("temperature").asDouble()).isEqualTo(0.2);
        assertThat(body.path("top_p").asDouble()).isEqualTo(0.9);
        assertThat(body.path("max_tokens").asInt()).isEqualTo(50);
        assertThat(body.path("stop").get(0).asText()).isEqualTo("END");
        assertThat(body.path("seed").asInt()).isEqualTo(7);
        assertThat(body.has("response_format")).isFalse();
        assertThat(server.requests().get(0).authorization()).isEqualTo("Bearer sk-secret-123");
        assertThat(server.requests().get(0).headers()).containsEntry("x-team", "data");

        JsonNode fields = item("basic", "s1").path("fields");
        assertThat(fields.path("ask").asText()).isEqualTo("A:Q: question 1");
        assertThat(fields.path("ask_reasoning").asText()).isEqualTo("thinking about Q: question 1");
        assertThat(fields.path("ask_finish_reason").asText()).isEqualTo("stop");
        assertThat(fields.path("ask_usage").path("total_tokens").asInt()).isEqualTo(10);
        assertThat(s.usage().requests()).isEqualTo(2);
        assertThat(s.usage().promptTokens()).isEqualTo(14);
        assertThat(s.usage().completionTokens()).isEqualTo(6);
        assertThat(s.usage().cost()).as("no prices: no cost").isNull();
        assertThat(s.toJson()).doesNotContain("sk-secret-123");
    }

    @Test
    void structuredOutputIsValidatedRetriedWithTheValidatorsMessageAndMappedToFields() throws Exception {
        server.enqueue(
                Reply.content("this is not json").withUsage(5, 4),
                Reply.content("{\"answer\": \"x\", \"score\": 11}").withUsage(5, 6),
                Reply.content("{\"answer\": \"yes\", \"score\": 3}").withUsage(5, 6));
        ExperimentStatus s = run("schema", 1, """
          - name: judge
            kind: chat
            url: %s
            model: m
            retries: 2
            messages: [{role: user, content: "{{q}}"}]
            response_schema:
              type: object
              properties:
                answer: {type: string}
                score: {type: integer, maximum: 5}
              required: [answer, score]
            fields: {answer: verdict, score: score}
        """.formatted(url()), "", opts("schema", 1));
        assertThat(s.completed()).isEqualTo(1);
        JsonNode rf = server.requests().get(0).body().path("response_format");
        assertThat(rf.path("type").asText()).isEqualTo("json_schema");
        assertThat(rf.path("json_schema").path("schema").path("required").get(0).asText())
                .isEqualTo("answer");
        JsonNode it = item("schema", "s0");
        assertThat(it.path("fields").path("verdict").asText()).isEqualTo("yes");
        assertThat(it.path("fields").path("score").asInt()).isEqualTo(3);
        assertThat(it.path("fields").path("judge").path("answer").asText()).isEqualTo("yes");
        JsonNode failures = it.path("failures");
        assertThat(failures).hasSize(2);
        assertThat(failures.get(0).path("error_type").asText()).isEqualTo("InvalidStructuredOutput");
        assertThat(failures.get(1).path("error_type").asText()).isEqualTo("SchemaViolation");
        assertThat(failures.get(1).path("error_dump").asText())
                .contains("score")
                .contains("5");
        assertThat(failures.get(1).path("final_attempt").asBoolean()).isFalse();
        // Every attempt's tokens count, also those of rejected answers.
        assertThat(s.usage().requests()).isEqualTo(3);
        assertThat(s.usage().retries()).isEqualTo(2);
        assertThat(s.usage().promptTokens()).isEqualTo(15);
        assertThat(s.usage().completionTokens()).isEqualTo(16);
        assertThat(s.failuresByType()).containsEntry("SchemaViolation", 1L);
    }

    @Test
    void rateLimitBoundsTheMeasuredRequestRateAcrossConcurrentItems() throws Exception {
        server.answerWith(r -> {
            requestTimes.add(System.nanoTime());
            return Reply.content("ok").withUsage(1, 1);
        });
        long t0 = System.nanoTime();
        ExperimentStatus s = run("rate", 30, """
          - name: ask
            kind: chat
            url: %s
            model: m
            messages: [{role: user, content: "{{q}}"}]
            rate_limit: {requests_per_minute: 600}
        """.formatted(url()), "", opts("rate", 16));
        assertThat(s.completed()).isEqualTo(30);
        List<Long> times = new ArrayList<>(requestTimes);
        Collections.sort(times);
        assertThat(times).hasSize(30);
        // 600/min = 10/s with at most one second's worth (10) at once: 30 requests take at least 2 s, and no
        // one-second window holds more than 10 + 10.
        assertThat(times.get(29) - t0)
                .isGreaterThanOrEqualTo(Duration.ofMillis(1900).toNanos());
        for (int i = 0; i < times.size(); i++) {
            int inWindow = 0;
            for (long t : times) {
                if (t >= times.get(i) && t < times.get(i) + 1_000_000_000L) {
                    inWindow++;
                }
            }
            assertThat(inWindow)
                    .as("requests in the second after request %d", i)
                    .isLessThanOrEqualTo(20);
        }
        double perSecond = (times.size() - 10) / ((times.get(29) - times.get(0)) / 1e9);
        assertThat(perSecond).as("sustained rate").isLessThanOrEqualTo(10.5);
    }

    @Test
    void rateLimited429And5xxAreSentAgainWithoutUsingTheStepsRetries() throws Exception {
        server.enqueue(
                Reply.rateLimited(Duration.ofSeconds(1)),
                Reply.error(503, "overloaded"),
                Reply.raw(200, "{not json"),
                Reply.content("fine").withUsage(2, 1));
        long t0 = System.nanoTime();
        ExperimentStatus s = run("backoff", 1, """
          - name: ask
            kind: chat
            url: %s
            model: m
            retries: 1
            messages: [{role: user, content: "{{q}}"}]
        """.formatted(url()), "", opts("backoff", 1));
        assertThat(s.completed()).isEqualTo(1);
        assertThat(System.nanoTime() - t0).as("Retry-After honoured").isGreaterThanOrEqualTo(1_000_000_000L);
        assertThat(server.requestCount()).isEqualTo(4);
        JsonNode it = item("backoff", "s0");
        // The 429 and the 503 were sent again within attempt 1; the malformed answer used the one retry.
        assertThat(it.path("failures")).hasSize(1);
        assertThat(it.path("failures").get(0).path("error_type").asText()).isEqualTo("InvalidHttpResponse");
        assertThat(it.path("completed_steps").get(0).path("attempt").asInt()).isEqualTo(2);
        assertThat(s.usage().requests()).isEqualTo(4);
        assertThat(s.usage().retries()).isEqualTo(3);
    }

    @Test
    void usageAndCostAreSummedExactlyPerStepAndExperiment() throws Exception {
        AtomicInteger k = new AtomicInteger();
        server.answerWith(r -> {
            int i = Integer.parseInt(r.lastUserMessage().replaceAll("\\D", ""));
            k.incrementAndGet();
            return Reply.content("a" + i).withUsage(100 + i, 10 + i);
        });
        ExperimentStatus s = run("cost", 12, """
          - name: first
            kind: chat
            url: %1$s
            model: small
            messages: [{role: user, content: "{{q}}"}]
          - name: second
            kind: chat
            url: %1$s
            model: big
            messages: [{role: user, content: "{{q}}"}]
        """.formatted(url()), """
        prices:
          small: {prompt_per_million: 0.15, completion_per_million: 0.6}
          big: {prompt_per_million: 2.5, completion_per_million: 10}
        """, opts("cost", 4));
        assertThat(s.completed()).isEqualTo(12);
        long prompt = 0, completion = 0;
        for (int i = 0; i < 12; i++) {
            prompt += 100 + i;
            completion += 10 + i;
        }
        BigDecimal small = new BigDecimal("0.15")
                .multiply(BigDecimal.valueOf(prompt))
                .add(new BigDecimal("0.6").multiply(BigDecimal.valueOf(completion)))
                .movePointLeft(6);
        BigDecimal big = new BigDecimal("2.5")
                .multiply(BigDecimal.valueOf(prompt))
                .add(new BigDecimal("10").multiply(BigDecimal.valueOf(completion)))
                .movePointLeft(6);
        assertThat(s.usageByStep().get("first").promptTokens()).isEqualTo(prompt);
        assertThat(s.usageByStep().get("first").cost()).isEqualByComparingTo(small);
        assertThat(s.usageByStep().get("second").cost()).isEqualByComparingTo(big);
        assertThat(s.usage().cost()).isEqualByComparingTo(small.add(big));
        assertThat(s.usage().requests()).isEqualTo(24).isEqualTo(k.get());
        assertThat(s.usage().promptTokens()).isEqualTo(2 * prompt);
        assertThat(s.usage().completionTokens()).isEqualTo(2 * completion);
        // The same figures come back from the log alone.
        ExperimentStatus again = Experiments.status(LogRoot.local(dir.resolve("root")), "chat", "cost");
        assertThat(again.usage()).isEqualTo(s.usage());
        assertThat(Json.parse(s.toJson()).path("usage").path("cost").asText())
                .isEqualTo(small.add(big).stripTrailingZeros().toPlainString());
    }

    @Test
    void theCacheAnswersRepeatedRequestsWithoutCalls() throws Exception {
        String steps = """
          - name: ask
            kind: chat
            url: %s
            model: m
            cache: true
            messages: [{role: user, content: "same question"}]
          - name: other
            kind: chat
            url: %s
            model: m
            cache: true
            messages: [{role: user, content: "{{q}}"}]
        """.formatted(url(), url());
        ExperimentStatus first = run("c1", 5, steps, "", opts("c1", 1));
        assertThat(first.completed()).isEqualTo(5);
        // The five items ask "same question" once; each asks its own question once.
        assertThat(server.requestCount()).isEqualTo(1 + 5);
        assertThat(first.usageByStep().get("ask").cachedAnswers()).isEqualTo(4);
        assertThat(first.usageByStep().get("ask").requests()).isEqualTo(1);
        // A new experiment with the answers of the first: no call at all, the same fields.
        ExperimentStatus second = run("c2", 5, steps, "", opts("c2", 3).withCacheFrom(List.of("c1")));
        assertThat(second.completed()).isEqualTo(5);
        assertThat(server.requestCount()).isEqualTo(6);
        assertThat(second.usage().cachedAnswers()).isEqualTo(10);
        assertThat(second.usage().requests()).isZero();
        for (int i = 0; i < 5; i++) {
            assertThat(item("c2", "s" + i).path("fields"))
                    .isEqualTo(item("c1", "s" + i).path("fields"));
        }
    }

    @Test
    void anEndpointGivingTheKeyBackHasItMaskedInFieldsFailuresAndTheCache() throws Exception {
        String key = "sk-secret-123";
        server.answerWith(r -> {
            String auth = r.authorization();
            if (r.lastUserMessage().endsWith("question 1")) {
                // an error whose dump is cut (2,000 characters) inside the echoed header
                return Reply.raw(400, "y".repeat(1980) + " " + auth + " rejected");
            }
            return Reply.content("{\"answer\": \"the key is " + auth.substring(7) + "\", \"" + key + "\": 1}");
        });
        ExperimentStatus s = run("mask", 2, """
          - name: ask
            kind: chat
            url: %s
            model: test-model
            api_key_env: TEST_KEY
            messages: [{role: user, content: "Q: {{q}}"}]
            response_schema: {type: object}
            cache: true
            retries: 0
        """.formatted(url()), "", opts("mask", 1));
        assertThat(s.completed()).isEqualTo(1);
        assertThat(s.failed()).isEqualTo(1);
        assertThat(server.requests())
                .allSatisfy(r -> assertThat(r.authorization()).isEqualTo("Bearer " + key));
        JsonNode done = item("mask", "s0");
        assertThat(done.path("fields").path("ask").path("answer").asText()).isEqualTo("the key is ***");
        assertThat(done.path("fields").path("ask").has("***")).isTrue();
        JsonNode failed = item("mask", "s1");
        assertThat(failed.toString()).contains("Bearer ***");
        for (JsonNode it : List.of(done, failed)) {
            assertThat(it.toString()).doesNotContain(key).doesNotContain("sk-secr");
        }
        assertThat(s.toJson()).doesNotContain("sk-secr");
    }

    @Test
    void retryFailedRetriesItemsThatFailedFinallyKeepingTheirHistory() throws Exception {
        server.enqueue(Reply.content("{\"n\": \"not a number\"}"));
        server.answerWith(r -> Reply.content("{\"n\": 4}"));
        String steps = """
          - name: count
            kind: chat
            url: %s
            model: m
            messages: [{role: user, content: "{{q}}"}]
            response_schema: {type: object, properties: {n: {type: integer}}, required: [n]}
        """.formatted(url());
        ExperimentStatus first = run("rf", 1, steps, "", opts("rf", 1));
        assertThat(first.failed()).isEqualTo(1);
        // A plain rerun leaves the failed item alone.
        assertThat(run("rf", 1, steps, "", opts("rf", 1)).failed()).isEqualTo(1);
        assertThat(server.requestCount()).isEqualTo(1);
        ExperimentStatus retried = run("rf", 1, steps, "", opts("rf", 1).withRetryFailed(true));
        assertThat(retried.completed()).isEqualTo(1);
        assertThat(retried.failed()).isZero();
        JsonNode it = item("rf", "s0");
        assertThat(it.path("failures")).hasSize(1);
        assertThat(it.path("failures").get(0).path("final_attempt").asBoolean()).isTrue();
        assertThat(it.path("completed_steps").get(0).path("attempt").asInt()).isEqualTo(2);
        assertThat(it.path("fields").path("count").path("n").asInt()).isEqualTo(4);
    }
}
