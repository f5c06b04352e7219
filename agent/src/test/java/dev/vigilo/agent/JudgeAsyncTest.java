package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.MAPPER;
import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link EvaluatorSet#evaluateAsync} with judges and panels (docs/execution.md, "Calls in flight"): the same verdicts
 * as the blocking path for the same answers (scores, retries of 5xx, 429 and unscored answers, errors), no thread
 * held while the judge's model answers, and a cancelled evaluation's call not sent again.
 */
@Timeout(60)
class JudgeAsyncTest {
    @TempDir
    Path dir;

    OpenAiTestServer server;
    EvaluatorSet set;
    final ExecutorService work = Executors.newFixedThreadPool(2);

    @BeforeEach
    void start() {
        server = OpenAiTestServer.start();
    }

    @AfterEach
    void stop() {
        if (set != null) {
            set.close();
        }
        server.close();
        work.shutdownNow();
    }

    ObjectNode judge(String name, String model) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("name", name);
        n.put("kind", "judge");
        n.put("url", server.chatUrl().toString());
        n.put("model", model);
        n.putNull("api_key_env");
        n.put("rubric", "Grade the answer to {{input}} against {{expected}}.");
        n.putObject("scale").put("min", 0).put("max", 10);
        n.put("pass_score", 0.7);
        n.put("max_attempts", 3);
        n.put("timeout_seconds", 5);
        return n;
    }

    EvaluatorSet build(ObjectNode entry) {
        entry.put("index", 0);
        ArrayNode plan = MAPPER.createArrayNode().add(entry);
        set = Evaluators.fromPlan(plan, env(dir));
        return set;
    }

    EvaluatorResult blocking(EvaluatorSet s) {
        return s.evaluate(1L, caseOf("c1", "What is 2+2?", "4"), "4").get(0);
    }

    EvaluatorResult async(EvaluatorSet s) throws Exception {
        return s.evaluateAsync(1L, caseOf("c1", "What is 2+2?", "4"), "4", EvaluationContext.NONE, work)
                .get(30, TimeUnit.SECONDS)
                .get(0);
    }

    /** The two paths' results for the same replies agree in everything but the elapsed time. */
    private void sameAsBlocking(Reply... replies) throws Exception {
        EvaluatorSet s = build(judge("quality", "judge-model"));
        int before = server.requestCount();
        server.enqueue(replies);
        EvaluatorResult b = blocking(s);
        int sent = server.requestCount() - before;
        server.enqueue(replies);
        EvaluatorResult a = async(s);
        assertThat(server.requestCount() - before - sent)
                .as("requests of the asynchronous path")
                .isEqualTo(sent);
        assertThat(a.status()).isEqualTo(b.status());
        assertThat(a.score()).isEqualTo(b.score());
        assertThat(a.reason()).isEqualTo(b.reason());
        assertThat(a.error()).isEqualTo(b.error());
        assertThat(a.usage()).isEqualTo(b.usage());
        set.close();
        set = null;
    }

    @Test
    void verdictsRetriesAndErrorsAreThoseOfTheBlockingPath() throws Exception {
        sameAsBlocking(Reply.judgement(8, "correct").withUsage(120, 15));
        sameAsBlocking(Reply.judgement(3, "wrong"));
        sameAsBlocking(
                Reply.error(503, "overloaded"), Reply.judgement(9, "good").withUsage(5, 5));
        sameAsBlocking(Reply.raw(200, "not json at all"), Reply.judgement(7, "fine"));
        sameAsBlocking(Reply.error(500, "boom"), Reply.error(502, "boom"), Reply.error(503, "boom"));
        sameAsBlocking(Reply.error(400, "bad model"));
        sameAsBlocking(
                Reply.content("I would rather not say."),
                Reply.content("No."),
                Reply.content("Still no.").withUsage(3, 3));
    }

    @Test
    void a429sRetryAfterIsATimerNotAThread() throws Exception {
        EvaluatorSet s = build(judge("quality", "judge-model"));
        server.enqueue(Reply.rateLimited(Duration.ofSeconds(1)), Reply.judgement(9, "good"));
        long t0 = System.nanoTime();
        EvaluatorResult r = async(s);
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(server.requestCount()).isEqualTo(2);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(900));
    }

    @Test
    void aPanelsJudgesAnswerInTurnWithTheBlockingPathsVerdict() throws Exception {
        server.answerWith(r -> switch (r.body().path("model").asText()) {
            case "good" -> Reply.judgement(8, "good answer").withUsage(10, 1);
            case "fair" -> Reply.judgement(6, "fair answer").withUsage(10, 2);
            default -> Reply.error(400, "no such model");
        });
        ObjectNode panel = MAPPER.createObjectNode();
        panel.put("name", "panel");
        panel.put("kind", "panel");
        ArrayNode judges = panel.putArray("judges");
        judges.add(judge("j1", "good")).add(judge("j2", "fair")).add(judge("j3", "gone"));
        panel.put("aggregate", "mean");
        panel.put("pass_score", 0.6);
        EvaluatorSet s = build(panel);
        EvaluatorResult b = blocking(s);
        EvaluatorResult a = async(s);
        assertThat(a.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(a.score()).isEqualTo(b.score());
        assertThat(a.reason()).isEqualTo(b.reason());
        assertThat(a.votes()).isEqualTo(b.votes());
        assertThat(a.usage()).isEqualTo(b.usage());
    }

    @Test
    void noThreadWaitsForTheModelAndACancelledEvaluationIsNotSentAgain() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger asked = new AtomicInteger();
        server.answerWith(r -> {
            asked.incrementAndGet();
            try {
                release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Reply.error(503, "overloaded");
        });
        EvaluatorSet s = build(judge("quality", "judge-model"));
        // Eight evaluations on a work pool of two threads: all eight requests are at the endpoint at once.
        List<CompletableFuture<List<EvaluatorResult>>> calls = new java.util.ArrayList<>();
        for (int i = 0; i < 8; i++) {
            calls.add(s.evaluateAsync(1L, caseOf("c" + i, "What is 2+2?", "4"), "4", EvaluationContext.NONE, work));
        }
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (server.inFlight() < 8 && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertThat(server.inFlight()).isEqualTo(8);
        calls.forEach(f -> assertThat(f).isNotDone());
        calls.forEach(f -> f.cancel(true));
        release.countDown();
        // The 503s would be retried; the cancelled evaluations send nothing more.
        until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (server.inFlight() > 0 && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        Thread.sleep(300);
        assertThat(asked.get()).isEqualTo(8);
        calls.forEach(f -> assertThat(f).isCancelled());
    }
}
