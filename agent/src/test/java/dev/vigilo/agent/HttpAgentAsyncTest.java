package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Agent#start} of the http agent without tools (docs/execution.md, "Calls in flight"): its calls wait for the
 * endpoint without a thread, retry as {@link Agent#run} does, and a cancelled call is not sent again.
 */
class HttpAgentAsyncTest {
    @TempDir
    Path dir;

    OpenAiTestServer server;
    AgentEnvironment env;
    final CountDownLatch gate = new CountDownLatch(1);
    /** A blocking pool that refuses everything: an asynchronous call must not need it. */
    final ExecutorService refusing = new Refusing();

    ExecutorService work;

    @BeforeEach
    void start() {
        server = OpenAiTestServer.start();
        env = env(dir);
        work = Executors.newSingleThreadExecutor();
    }

    @AfterEach
    void stop() {
        gate.countDown();
        work.shutdownNow();
        server.close();
    }

    ObjectNode config() {
        ObjectNode n = TestSupport.MAPPER.createObjectNode();
        n.put("kind", "http");
        n.put("url", server.chatUrl().toString());
        n.put("model", "test-model");
        n.put("timeout_seconds", 60);
        n.put("connect_timeout_seconds", 10);
        return n;
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void twoHundredCallsWaitTogetherOnOneWorkThreadWithoutTheBlockingPool() throws Exception {
        server.answerWith(r -> {
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Reply.content("answer to " + r.lastUserMessage());
        });
        List<CompletableFuture<AgentOutcome>> calls = new ArrayList<>();
        try (Agent agent = Agents.create(config(), env)) {
            for (int i = 0; i < 200; i++) {
                calls.add(agent.start(AgentCall.of(caseOf("q-" + i, "question " + i, null)), refusing, work));
            }
            while (server.inFlight() < 200) {
                assertThat(calls).noneMatch(CompletableFuture::isDone);
                Thread.sleep(20);
            }
            gate.countDown();
            for (int i = 0; i < 200; i++) {
                AgentOutcome o = calls.get(i).get(60, TimeUnit.SECONDS);
                assertThat(o.output()).contains("answer to question " + i);
                assertThat(o.attempts()).hasSize(1);
            }
        }
        assertThat(server.peakInFlight()).isEqualTo(200);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void retriesAndObservesAsTheBlockingCallDoes() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        AgentObserver observer = new AgentObserver() {
            @Override
            public void onAttemptStart(int attempt) {
                seen.add("start " + attempt);
            }

            @Override
            public void onRequest(int attempt, JsonNode request) {
                seen.add("request " + attempt);
            }

            @Override
            public void onResponse(int attempt, int status, JsonNode body) {
                seen.add("response " + attempt + " " + status);
            }

            @Override
            public void onAttemptEnd(AgentAttempt attempt) {
                seen.add("end " + attempt.number() + " "
                        + attempt.error().map(e -> e.type().code()).orElse("ok"));
            }
        };
        server.enqueue(Reply.raw(502, "<html>bad gateway</html>"), Reply.content("4"));
        try (Agent agent = Agents.create(config(), env)) {
            AgentOutcome o = agent.start(new AgentCall(caseOf("q", "x", null), observer), refusing, work)
                    .get(60, TimeUnit.SECONDS);
            assertThat(o.output()).contains("4");
            assertThat(o.attempts()).hasSize(2);
        }
        assertThat(seen)
                .containsExactly(
                        "start 1",
                        "request 1",
                        "response 1 502",
                        "end 1 http_status",
                        "start 2",
                        "request 2",
                        "response 2 200",
                        "end 2 ok");
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aCancelledCallEndsCancelledAndIsNotSentAgain() throws Exception {
        server.answerWith(r -> {
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Reply.error(503, "overloaded"); // retryable: only cancellation keeps it from a second attempt
        });
        try (Agent agent = Agents.create(config(), env)) {
            CompletableFuture<AgentOutcome> call = agent.start(AgentCall.of(caseOf("q", "x", null)), refusing, work);
            while (server.inFlight() < 1) {
                Thread.sleep(10);
            }
            assertThat(call.cancel(true)).isTrue();
            gate.countDown();
            // The endpoint's answer ends its request; a retry would be a second request in the server's count.
            while (server.inFlight() > 0) {
                Thread.sleep(10);
            }
            // One more round trip through the work thread: any retry would have been scheduled before it.
            CompletableFuture.runAsync(() -> {}, work).get(10, TimeUnit.SECONDS);
            assertThat(call).isCancelled();
            assertThat(server.requestCount()).isEqualTo(1);
        }
    }

    /** An executor that refuses every task. */
    private static final class Refusing extends AbstractExecutorService {
        @Override
        public void execute(Runnable command) {
            throw new RejectedExecutionException("the blocking pool is not for asynchronous calls");
        }

        @Override
        public void shutdown() {}

        @Override
        public List<Runnable> shutdownNow() {
            return List.of();
        }

        @Override
        public boolean isShutdown() {
            return false;
        }

        @Override
        public boolean isTerminated() {
            return false;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return false;
        }
    }
}
