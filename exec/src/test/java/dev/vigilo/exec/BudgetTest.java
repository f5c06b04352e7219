package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.settlement.RunPause;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.worker.TranscriptTest;
import dev.vigilo.exec.worker.Worker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run's hard budget with two real workers at once (4 cases each, so several model calls are in flight) over a local
 * OpenAI-compatible server that counts the tokens it answered: the run is paused for its budget before what the
 * server answered (agent and judge calls, priced as the profile prices them) exceeds the budget; resuming without a
 * raise is refused; with {@code --budget-usd} it continues and settles with one result per case.
 */
class BudgetTest {
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");
    /** Every answer's usage: 100 prompt and 20 completion tokens. */
    private static final long PROMPT = 100;

    private static final long COMPLETION = 20;

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;

    @BeforeEach
    void setUp() throws Exception {
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> {
            String model = req.body().path("model").asText();
            OpenAiTestServer.Reply reply;
            if (model.equals("judge")) {
                reply = OpenAiTestServer.Reply.judgement(1, "fine");
            } else {
                Matcher m = QUESTION.matcher(req.lastUserMessage());
                reply = OpenAiTestServer.Reply.content(m.find() ? Long.toString(Long.parseLong(m.group(1)) * 2) : "?");
            }
            return answeredAs(model, reply.withUsage(PROMPT, COMPLETION)).withLatency(Duration.ofMillis(20));
        });
        fx = new ExecFixture(dir, 150); // chunk 0 of 100 cases, chunk 1 of 50
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        llm.close();
        placements.close();
        fx.close();
    }

    /** {@code reply} naming {@code model} as the model that answered (pricing is by that name). */
    static OpenAiTestServer.Reply answeredAs(String model, OpenAiTestServer.Reply reply) {
        try {
            var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
            var body = (com.fasterxml.jackson.databind.node.ObjectNode) mapper.readTree(reply.body());
            body.put("model", model);
            return new OpenAiTestServer.Reply(
                    reply.status(), mapper.writeValueAsBytes(body), reply.headers(), reply.latency(), reply.missing());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Worker worker() {
        return new Worker(placements, fx.storage, TranscriptTest.fast(4), Worker.Listener.NONE);
    }

    /** What the server answered, priced as the profile prices it: agent and judge alike, $1 in and $2 out per 1M. */
    private BigDecimal answeredCost() {
        return BigDecimal.valueOf(llm.answeredPromptTokens() + 2 * llm.answeredCompletionTokens())
                .movePointLeft(6);
    }

    @Test
    void theRunIsPausedForItsBudgetBeforeTheEndpointAnsweredMoreAndSettlesOnceRaised() throws Exception {
        String url = llm.chatUrl().toString();
        UUID run = fx.prepare("""
                name: budget
                agent: {kind: http, url: "%s", model: m, max_tokens: 50}
                evaluators:
                  - {name: exact, kind: exact_match}
                  - {name: judged, kind: judge, url: "%s", model: judge, max_tokens: 40, rubric: "Grade {{output}}", scale: {min: 0, max: 1}}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                pricing:
                  m: {input: 1, output: 2}
                  judge: {input: 1, output: 2}
                budget: {max_cost_usd: 0.02}
                """.formatted(url, url));
        new Admission(placements, fx.storage).admit(run);
        ExecutionStatus before = new ExecutionStatusReader(placements).status(run);
        assertThat(before.budget().orElseThrow().maxCostUsd()).contains(new BigDecimal("0.02"));
        assertThat(before.toJson()).contains("\"budget\":{\"max_cost_usd\":\"0.02\",\"max_tokens\":null,");

        // Each case costs two calls of $0.00014 (agent and judge): the run's 150 cases need $0.042. Two workers draw
        // on the budget at once (each with its own grant, four calls at a time).
        CompletableFuture<Worker.Report> other = CompletableFuture.supplyAsync(() -> worker().run());
        Worker.Report mine = worker().run();
        Worker.Report theirs = other.get(120, TimeUnit.SECONDS);
        ExecutionStatus paused = new ExecutionStatusReader(placements).status(run);
        assertThat(paused.status()).isEqualTo("paused");
        assertThat(paused.paused().orElseThrow().reason()).isEqualTo(RunPause.BUDGET);
        assertThat(llm.peakInFlight()).as("several calls in flight").isGreaterThan(1);
        assertThat(answeredCost()).as("what the endpoint answered").isLessThanOrEqualTo(new BigDecimal("0.02"));
        assertThat(answeredCost()).isGreaterThan(new BigDecimal("0.01"));
        ExecutionStatus.Budget b = paused.budget().orElseThrow();
        assertThat(b.spentCostUsd().add(b.reservedCostUsd())).isLessThanOrEqualTo(new BigDecimal("0.02"));
        assertThat(b.spentCostUsd()).as("every answer counted").isGreaterThanOrEqualTo(answeredCost());
        assertThat(b.reservedCostUsd())
                .as("the worker released its grant when it stopped")
                .isZero();
        assertThat(mine.chunksRequeued() + theirs.chunksRequeued()).isPositive();

        RunPause pauses = new RunPause(placements);
        assertThatThrownBy(() -> pauses.resume(run))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining("is paused because its budget cannot cover its next model call")
                .hasMessageContaining("--budget-usd N");
        assertThatThrownBy(() ->
                        pauses.resume(run, new RunPause.Raise(Optional.of(new BigDecimal("0.01")), Optional.empty())))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("--budget-usd 0.01: run " + run + "'s budget is already $0.02");
        assertThat(fx.runStatus(run)).isEqualTo("paused");

        RunPause.Result resumed =
                pauses.resume(run, new RunPause.Raise(Optional.of(new BigDecimal("1.00")), Optional.empty()));
        assertThat(resumed.outcome()).isEqualTo(RunPause.Outcome.RESUMED);
        worker().run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        Set<Long> ordinals = new HashSet<>();
        for (Receipt receipt : TranscriptTest.receipts(fx, placements, run)) {
            for (Receipt.CaseResult c : receipt.cases()) {
                assertThat(ordinals.add(c.ordinal()))
                        .as("case %d once", c.ordinal())
                        .isTrue();
            }
        }
        assertThat(ordinals).hasSize(150);
        ExecutionStatus settled = new ExecutionStatusReader(placements).status(run);
        assertThat(settled.budget().orElseThrow().maxCostUsd()).contains(new BigDecimal("1.00"));
        assertThat(settled.budget().orElseThrow().spentCostUsd()).isGreaterThanOrEqualTo(answeredCost());
        assertThat(settled.budget().orElseThrow().line()).startsWith("budget $1: $");
    }

    @Test
    void aTokenBudgetHoldsTooAndAResumeRaisesIt() {
        String url = llm.chatUrl().toString();
        UUID run = fx.prepare("""
                name: tokens
                agent: {kind: http, url: "%s", model: m, max_tokens: 50}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                budget: {max_tokens: 6000}
                """.formatted(url));
        new Admission(placements, fx.storage).admit(run);
        worker().run();
        assertThat(fx.runStatus(run)).isEqualTo("paused");
        assertThat(llm.answeredPromptTokens() + llm.answeredCompletionTokens()).isBetween(3000L, 6000L);
        RunPause pauses = new RunPause(placements);
        assertThatThrownBy(() -> pauses.resume(run, new RunPause.Raise(Optional.of(BigDecimal.ONE), Optional.empty())))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("limits tokens only");
        pauses.resume(run, new RunPause.Raise(Optional.empty(), Optional.of(1_000_000L)));
        worker().run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
    }
}
