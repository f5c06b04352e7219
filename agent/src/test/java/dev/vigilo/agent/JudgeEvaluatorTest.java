package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.MAPPER;
import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.withVariable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.common.errors.InvalidInputException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kind: judge} against a real local OpenAI-compatible server: every path over HTTP, no mocks. */
class JudgeEvaluatorTest {
    static final String KEY = "sk-judge-0123456789secret";

    @TempDir
    Path dir;

    OpenAiTestServer server;
    AgentEnvironment env;
    EvaluatorSet set;

    @BeforeEach
    void start() {
        server = OpenAiTestServer.start();
        env = withVariable(env(dir), "JUDGE_KEY", KEY);
    }

    @AfterEach
    void stop() {
        if (set != null) {
            set.close();
        }
        server.close();
    }

    ObjectNode judge(String rubric) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("name", "quality");
        n.put("kind", "judge");
        n.put("url", server.chatUrl().toString());
        n.put("model", "judge-model");
        n.put("api_key_env", "JUDGE_KEY");
        n.put("rubric", rubric);
        n.putObject("scale").put("min", 0).put("max", 10);
        n.put("pass_score", 0.7);
        n.put("max_attempts", 3);
        n.put("timeout_seconds", 5);
        return n;
    }

    ObjectNode judge() {
        return judge("Grade the answer to {{input}} against {{expected}}.");
    }

    EvaluatorSet build(ObjectNode... entries) {
        ArrayNode plan = MAPPER.createArrayNode();
        for (int i = 0; i < entries.length; i++) {
            entries[i].put("index", i);
            plan.add(entries[i]);
        }
        set = Evaluators.fromPlan(plan, env);
        return set;
    }

    EvaluatorResult evaluate(ObjectNode entry, String output) {
        return build(entry)
                .evaluate(1L, caseOf("c1", "What is 2+2?", "4"), output)
                .get(0);
    }

    @Test
    void aStructuredScoreAtOrAbovePassScorePasses() {
        server.enqueue(Reply.judgement(8, "correct and complete").withUsage(120, 15));
        EvaluatorResult r = evaluate(judge(), "4");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(r.score()).isEqualTo(0.8);
        assertThat(r.reason()).contains("correct and complete");
        assertThat(r.usage()).containsExactly(new TokenUsage("test", 120, 15, 135, 0));
        OpenAiTestServer.Request req = server.requests().get(0);
        assertThat(req.authorization()).isEqualTo("Bearer " + KEY);
        assertThat(req.body().path("model").asText()).isEqualTo("judge-model");
        assertThat(req.body().path("temperature").asDouble()).isEqualTo(0.0);
        JsonNode format = req.body().path("response_format");
        assertThat(format.path("type").asText()).isEqualTo("json_schema");
        JsonNode schema = format.path("json_schema").path("schema");
        assertThat(schema.path("required").toString()).isEqualTo("[\"score\",\"reason\"]");
        assertThat(schema.path("properties").path("score").toString())
                .isEqualTo("{\"type\":\"number\",\"minimum\":0.0,\"maximum\":10.0}");
    }

    @Test
    void aScoreBelowPassScoreFails() {
        server.enqueue(Reply.judgement(3, "wrong number"));
        EvaluatorResult r = evaluate(judge(), "5");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(r.score()).isEqualTo(0.3);
        assertThat(r.reason()).contains("wrong number");
    }

    @Test
    void gradesScoreTheirValueAndAskForAnEnum() {
        ObjectNode j = judge();
        j.remove("scale");
        j.putObject("grades").put("A", 1.0).put("B", 0.7).put("C", 0.4).put("F", 0.0);
        server.enqueue(Reply.judgement("B", "mostly right"));
        EvaluatorResult r = evaluate(j, "4");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(r.score()).isEqualTo(0.7);
        JsonNode score = server.requests()
                .get(0)
                .body()
                .path("response_format")
                .path("json_schema")
                .path("schema")
                .path("properties")
                .path("score");
        assertThat(score.toString()).isEqualTo("{\"type\":\"string\",\"enum\":[\"A\",\"B\",\"C\",\"F\"]}");
    }

    @Test
    void aJsonObjectInsideProseIsRead() {
        server.enqueue(
                Reply.content("Let me think. The answer is right.\n{\"score\": 9, \"reason\": \"right\"}\nDone."));
        EvaluatorResult r = evaluate(judge(), "4");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(r.score()).isEqualTo(0.9);
        assertThat(r.reason()).contains("right");
    }

    @Test
    void aFencedJsonAnswerIsRead() {
        server.enqueue(Reply.content("```json\n{\"score\": 10, \"reason\": \"exact\"}\n```"));
        EvaluatorResult r = evaluate(judge(), "4");
        assertThat(r.score()).isEqualTo(1.0);
        assertThat(r.reason()).contains("exact");
    }

    @Test
    void aScoreLineIsTheTextFallbackAndTheLastOneCounts() {
        server.enqueue(Reply.content("Reason: the answer is close but terse\nScore: 2\n**Score:** 6/10"));
        EvaluatorResult r = evaluate(judge(), "4");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(r.score()).isEqualTo(0.6);
        assertThat(r.reason()).contains("the answer is close but terse");
    }

    @Test
    void aGradeLineIsReadForGrades() {
        ObjectNode j = judge();
        j.remove("scale");
        j.putObject("grades").put("pass", 1.0).put("fail", 0.0);
        server.enqueue(Reply.content("The output is wrong.\ngrade: FAIL"));
        EvaluatorResult r = evaluate(j, "5");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(r.score()).isEqualTo(0.0);
        assertThat(r.reason()).contains("The output is wrong.");
    }

    @Test
    void garbageOnEveryAttemptIsUnscoredQuotingTheRawAnswerAndCountingEveryAttemptsTokens() {
        server.enqueue(
                Reply.content("I cannot grade this.").withUsage(10, 1),
                Reply.content("Still no.").withUsage(11, 2),
                Reply.content("I refuse to give a number " + "x".repeat(500)).withUsage(12, 3));
        EvaluatorResult r = evaluate(judge(), "4");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.ERROR);
        assertThat(r.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.UNSCORED);
        assertThat(r.error().orElseThrow().type().code()).isEqualTo("unscored");
        String message = r.error().orElseThrow().message();
        assertThat(message)
                .contains("judge \"quality\"", "attempt 3 of 3", "its answer: \"I refuse to give a number xxx")
                .contains(Reasons.CUT)
                .doesNotContain("x".repeat(300));
        assertThat(r.score()).isZero();
        assertThat(r.usage()).extracting(TokenUsage::promptTokens).containsExactly(10L, 11L, 12L);
        assertThat(server.requestCount()).isEqualTo(3);
    }

    @Test
    void aScoreOutsideTheScaleIsRetriedThenUnscored() {
        ObjectNode j = judge();
        j.put("max_attempts", 2);
        server.enqueue(Reply.judgement(11, "too good"), Reply.judgement(-1, "too bad"));
        EvaluatorResult r = evaluate(j, "4");
        assertThat(r.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.UNSCORED);
        assertThat(r.error().orElseThrow().message()).contains("the score -1 is outside the scale [0, 10]");
        assertThat(server.requestCount()).isEqualTo(2);
    }

    @Test
    void anUnscoredAnswerThenAGoodOneScores() {
        server.enqueue(Reply.raw(200, "not json at all"), Reply.judgement(7, "fine"));
        EvaluatorResult r = evaluate(judge(), "4");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(r.score()).isEqualTo(0.7);
    }

    @Test
    void rateLimitsAndServerErrorsAreRetriedThenTheAnswerCounts() {
        server.enqueue(
                Reply.rateLimited(Duration.ofSeconds(1)),
                Reply.error(503, "overloaded"),
                Reply.judgement(9, "good").withUsage(5, 5));
        long t0 = System.nanoTime();
        EvaluatorResult r = evaluate(judge(), "4");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(server.requestCount()).isEqualTo(3);
        // The 429's Retry-After of one second was honoured.
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(900));
        assertThat(r.usage()).hasSize(1);
    }

    @Test
    void serverErrorsOnEveryAttemptAreJudgeFailedNeverAFailedVerdict() {
        server.enqueue(Reply.error(500, "boom"), Reply.error(502, "boom"), Reply.error(503, "boom"));
        EvaluatorResult r = evaluate(judge(), "4");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.ERROR);
        assertThat(r.error().orElseThrow().type().code()).isEqualTo("judge_failed");
        assertThat(r.error().orElseThrow().message()).contains("answered HTTP 503", "attempt 3 of 3");
    }

    @Test
    void aRejectedRequestIsNotRetried() {
        server.enqueue(Reply.error(400, "bad model"));
        EvaluatorResult r = evaluate(judge(), "4");
        assertThat(r.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.JUDGE_FAILED);
        assertThat(r.error().orElseThrow().message()).contains("HTTP 400", "bad model", "check the judge's url");
        assertThat(server.requestCount()).isEqualTo(1);
    }

    @Test
    void aSlowJudgeTimesOut() {
        ObjectNode j = judge();
        j.put("timeout_seconds", 1);
        j.put("max_attempts", 1);
        server.enqueue(Reply.judgement(9, "late").withLatency(Duration.ofSeconds(3)));
        EvaluatorResult r = evaluate(j, "4");
        assertThat(r.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.TIMEOUT);
        assertThat(r.error().orElseThrow().message()).contains("did not answer within 1 s");
    }

    @Test
    void aTimeoutIsRetried() {
        ObjectNode j = judge();
        j.put("timeout_seconds", 1);
        server.enqueue(Reply.judgement(9, "late").withLatency(Duration.ofSeconds(3)), Reply.judgement(9, "ok"));
        EvaluatorResult r = evaluate(j, "4");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(r.reason()).contains("ok");
    }

    @Test
    void placeholdersAreRenderedExactly() {
        ObjectNode j = judge("Q={{input}} E={{ expected }} O={{output}} id={{case.id}} lang={{metadata.lang}}"
                + " n={{metadata.n}} none=[{{metadata.none}}] literal={\"a\": {\"b\": 1}}");
        server.enqueue(Reply.judgement(10, "ok"));
        CaseRecord c = caseOf(
                "case-7",
                "{\"id\":\"case-7\",\"input\":{\"q\":\"2+2\"},\"expected\":4,"
                        + "\"metadata\":{\"lang\":\"en\",\"n\":{\"a\":[1,2]}}}");
        EvaluatorResult r = build(j).evaluate(1L, c, "four\nlines").get(0);
        assertThat(r.passed()).isTrue();
        JsonNode messages = server.requests().get(0).body().path("messages");
        assertThat(messages.get(0).path("role").asText()).isEqualTo("system");
        // As docs/formats/agent-protocol.md "Judges" shows it.
        assertThat(messages.get(0).path("content").asText())
                .isEqualTo("You are an impartial grader. Grade the answer by the rubric in the user's message. Reply"
                        + " with only a JSON object {\"score\": ..., \"reason\": ...} where \"score\" is a number"
                        + " from 0 to 10 and \"reason\" says briefly why.");
        assertThat(messages.get(1).path("role").asText()).isEqualTo("user");
        // {{output}} is placed by the rubric, so the output is not appended again.
        assertThat(messages.get(1).path("content").asText())
                .isEqualTo("Q={\"q\":\"2+2\"} E=4 O=four\nlines id=case-7 lang=en n={\"a\":[1,2]} none=[]"
                        + " literal={\"a\": {\"b\": 1}}");
    }

    @Test
    void withoutOutputPlaceholderTheOutputFollowsTheRubric() {
        server.enqueue(Reply.judgement(10, "ok"));
        evaluate(judge("Is the answer to {{input}} right?"), "4");
        assertThat(server.requests().get(0).lastUserMessage())
                .isEqualTo("Is the answer to What is 2+2? right?\n\nThe answer to grade:\n4");
    }

    @Test
    void aRubricUsingExpectedOnACaseWithoutOneIsMissingExpectedWithoutARequest() {
        EvaluatorResult r =
                build(judge()).evaluate(1L, caseOf("c2", "q", null), "4").get(0);
        assertThat(r.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.MISSING_EXPECTED);
        assertThat(server.requestCount()).isZero();
    }

    @Test
    void secretsAreMaskedInWhatTheObserverSeesAndInTheReason() {
        // An endpoint that echoes the key in its answer (and the case that carries it) must not leak it.
        server.enqueue(Reply.judgement(8, "your key " + KEY + " is fine").withUsage(1, 1));
        List<String> seen = new CopyOnWriteArrayList<>();
        EvaluatorObserver observer = new EvaluatorObserver() {
            @Override
            public void onModelRequest(int evaluator, String name, int attempt, JsonNode request) {
                seen.add("request " + evaluator + " " + name + " " + attempt + " " + request);
            }

            @Override
            public void onModelResponse(
                    int evaluator, String name, int attempt, int status, JsonNode response, long millis) {
                seen.add("response " + evaluator + " " + name + " " + attempt + " " + status + " " + response);
            }
        };
        EvaluatorResult r = build(judge())
                .evaluate(
                        1L,
                        caseOf("c1", "the key is " + KEY, "4"),
                        "4",
                        new EvaluationContext(Duration.ZERO, List.of(), observer))
                .get(0);
        assertThat(r.passed()).isTrue();
        assertThat(r.reason().orElseThrow()).doesNotContain(KEY).contains("your key");
        assertThat(seen).hasSize(2);
        assertThat(seen.get(0))
                .startsWith("request 0 quality 1 ")
                .doesNotContain(KEY)
                .contains("the key is");
        assertThat(seen.get(1))
                .startsWith("response 0 quality 1 200 ")
                .doesNotContain(KEY)
                .contains("your key");
        // What was sent is the real text: masking is for what is recorded, not for the judge.
        assertThat(server.requests().get(0).lastUserMessage()).contains(KEY);
    }

    @Test
    void everyAttemptIsObserved() {
        server.enqueue(Reply.error(503, "x"), Reply.judgement(9, "ok"));
        List<String> seen = new CopyOnWriteArrayList<>();
        EvaluatorObserver observer = new EvaluatorObserver() {
            @Override
            public void onModelRequest(int evaluator, String name, int attempt, JsonNode request) {
                seen.add("request " + attempt);
            }

            @Override
            public void onModelResponse(
                    int evaluator, String name, int attempt, int status, JsonNode response, long millis) {
                seen.add("response " + attempt + " " + status);
            }
        };
        build(judge())
                .evaluate(1L, caseOf("c1", "q", "4"), "4", new EvaluationContext(Duration.ZERO, List.of(), observer));
        assertThat(seen).containsExactly("request 1", "response 1 503", "request 2", "response 2 200");
    }

    @Test
    void aMissingApiKeyVariableIsRefusedWhenBuilt() {
        ObjectNode j = judge();
        j.put("api_key_env", "NO_SUCH_JUDGE_KEY_VARIABLE");
        assertThatThrownBy(() -> build(j))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("evaluator_plan[0].api_key_env")
                .hasMessageContaining("NO_SUCH_JUDGE_KEY_VARIABLE is not set");
    }

    @Test
    void anUnknownPlaceholderIsRefusedWhenBuilt() {
        assertThatThrownBy(() -> build(judge("Grade {{foo}}")))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("evaluator_plan[0].rubric")
                .hasMessageContaining("unknown placeholder {{foo}}; known: {{input}}");
    }

    @Test
    void scaleAndGradesAreExclusive() {
        ObjectNode j = judge();
        j.putObject("grades").put("A", 1.0).put("F", 0.0);
        assertThatThrownBy(() -> build(j)).hasMessageContaining("needs exactly one of scale and grades");
    }

    @Test
    void passScoreIsTheJudgesOrOneHalf() {
        assertThat(Evaluators.passScore(judge())).isEqualTo(0.7);
        ObjectNode j = judge();
        j.remove("pass_score");
        assertThat(Evaluators.passScore(j)).isEqualTo(0.5);
    }

    @Test
    void anInterruptedJudgeIsCancelledAndKeepsTheInterrupt() throws Exception {
        server.enqueue(Reply.judgement(9, "slow").withLatency(Duration.ofSeconds(5)));
        EvaluatorSet s = build(judge());
        AtomicReference<EvaluatorResult> result = new AtomicReference<>();
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        Thread t = new Thread(() -> {
            result.set(s.evaluate(1L, caseOf("c1", "q", "4"), "4").get(0));
            stillInterrupted.set(Thread.currentThread().isInterrupted());
        });
        t.start();
        while (server.requestCount() == 0) {
            Thread.sleep(10);
        }
        long t0 = System.nanoTime();
        t.interrupt();
        t.join(3000);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(3));
        assertThat(result.get().cancelled()).isTrue();
        assertThat(stillInterrupted).isTrue();
    }

    @Test
    void theKindIsReportedAndClosingIsIdempotent() {
        EvaluatorSet s = build(judge());
        assertThat(s.kind(0)).isEqualTo("judge");
        s.close();
        s.close();
    }
}
