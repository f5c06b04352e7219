package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.common.crash.ChildJvm;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.fleet.CostBudget;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code budget: {max_cost}} (docs/datagen.md, "Fleet limits and budget"): a run stops taking model calls when what
 * its experiment charged reaches the budget and fails with a conflict saying how to raise it; a rerun with a larger
 * budget continues without redoing a completed step; two processes together charge at most the budget plus one
 * call's reservation. The endpoint is a local server that reports usage: 50 prompt and 100 completion tokens a call,
 * at 100 per million tokens = 0.015 a call.
 */
class BudgetTest {
    static final BigDecimal CALL_COST = new BigDecimal("0.015");

    @TempDir
    Path dir;

    private Path pipeline(OpenAiTestServer server, String maxCost, int items) throws Exception {
        StringBuilder seeds = new StringBuilder();
        for (int i = 0; i < items; i++) {
            seeds.append("{\"id\": \"s")
                    .append(String.format("%03d", i))
                    .append("\", \"n\": ")
                    .append(i)
                    .append("}\n");
        }
        Files.writeString(dir.resolve("seeds.jsonl"), seeds);
        Path yaml = dir.resolve("budget.yaml");
        Files.writeString(yaml, """
        name: budget
        input: seeds.jsonl
        id_field: id
        prices:
          m: {prompt_per_million: 100, completion_per_million: 100}
        budget: {max_cost: %s}
        steps:
          - name: ask
            kind: chat
            url: %s
            model: m
            max_tokens: 100
            messages: [{role: user, content: "what is {{n}} squared?"}]
          - {name: tag, kind: template, template: "{{n}}: {{ask}}", output_field: line}
        """.formatted(maxCost, server.chatUrl()));
        return yaml;
    }

    private static void answerWithUsage(OpenAiTestServer server, Duration latency) {
        server.answerWith(r -> Reply.content("answer " + r.lastUserMessage())
                .withUsage(50, 100)
                .withLatency(latency));
    }

    @Test
    void aRunStopsAtItsBudgetAndARerunWithALargerOneContinuesWithoutRedoingAnything() throws Exception {
        String control = TestPostgres.newDatabaseUrl();
        Path root = dir.resolve("root");
        try (ControlDatabase db = ControlDatabase.open(new ControlSettings.Jdbc(control));
                OpenAiTestServer server = OpenAiTestServer.start()) {
            answerWithUsage(server, Duration.ZERO);
            PipelineRunner.Options options = new PipelineRunner.Options(
                            LogRoot.local(root), "exp", 1, DatagenProgress.NONE)
                    .withControl(db.jdbi());
            // 0.1 admits calls while charged < 0.1: seven calls of 0.015 (the seventh brings it to 0.105).
            PipelineSpec small = PipelineParser.parse(pipeline(server, "0.1", 20));
            assertThatThrownBy(() -> PipelineRunner.run(small, options))
                    .isInstanceOf(ConflictException.class)
                    .hasMessageContaining("experiment exp of pipeline budget stopped at its budget: 0.105 charged"
                            + " (0.105 spent, 0 reserved) of budget.max_cost 0.1")
                    .hasMessageContaining("raise budget.max_cost in " + dir.resolve("budget.yaml"))
                    .hasMessageContaining("run the same command again to continue");
            assertThat(server.requestCount()).isEqualTo(7);
            ExperimentStatus stopped = Experiments.status(LogRoot.local(root), "budget", "exp");
            assertThat(stopped.completed()).isEqualTo(7);
            assertThat(stopped.failed()).isZero();
            CostBudget.State st = CostBudget.read(
                            db.jdbi(), PipelineRunner.budgetKey(LogRoot.local(root), "budget", "exp"))
                    .orElseThrow();
            assertThat(st.settled()).isEqualByComparingTo(CALL_COST.multiply(BigDecimal.valueOf(7)));
            assertThat(st.reserved()).isEqualByComparingTo(BigDecimal.ZERO);

            // The same budget again: refused before any call.
            assertThatThrownBy(() -> PipelineRunner.run(small, options)).isInstanceOf(ConflictException.class);
            assertThat(server.requestCount()).isEqualTo(7);

            // A larger budget: the rest, and nothing twice.
            PipelineSpec large = PipelineParser.parse(pipeline(server, "10", 20));
            ExperimentStatus done = PipelineRunner.run(large, options);
            assertThat(done.completed()).isEqualTo(20);
            assertThat(server.requestCount()).isEqualTo(20);
            assertThat(done.usage().requests()).isEqualTo(20);
            CostBudget.State after = CostBudget.read(
                            db.jdbi(), PipelineRunner.budgetKey(LogRoot.local(root), "budget", "exp"))
                    .orElseThrow();
            assertThat(after.settled()).isEqualByComparingTo(CALL_COST.multiply(BigDecimal.valueOf(20)));
            assertThat(after.maxCost()).isEqualByComparingTo("10");
        }
    }

    @Test
    void aBudgetNeedsTheControlDatabasePricesAndMaxTokens() throws Exception {
        try (OpenAiTestServer server = OpenAiTestServer.start()) {
            PipelineSpec spec = PipelineParser.parse(pipeline(server, "1", 2));
            assertThatThrownBy(() -> PipelineRunner.run(
                            spec,
                            new PipelineRunner.Options(LogRoot.local(dir.resolve("r")), "e", 1, DatagenProgress.NONE)))
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("has a budget, which is kept in the control database");
            assertThat(server.requestCount()).isZero();
        }
        assertThatThrownBy(() -> PipelineParser.parse("p.yaml", """
                input: s.jsonl
                budget: {max_cost: 1}
                steps:
                  - {name: a, kind: chat, url: "http://127.0.0.1:1/v1/chat/completions", model: m, max_tokens: 5,
                     messages: [{role: user, content: hi}]}
                """, dir))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessageContaining("budget: needs prices");
        assertThatThrownBy(() -> PipelineParser.parse("p.yaml", """
                input: s.jsonl
                prices: {m: {prompt_per_million: 1, completion_per_million: 2}}
                budget: {max_cost: 1}
                steps:
                  - {name: a, kind: chat, url: "http://127.0.0.1:1/v1/chat/completions", model: m,
                     messages: [{role: user, content: hi}]}
                """, dir))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessageContaining("steps[0].max_tokens: is required with budget");
        assertThatThrownBy(() -> PipelineParser.parse("p.yaml", """
                input: s.jsonl
                prices: {m: {prompt_per_million: 1, completion_per_million: 2}}
                budget: {max_cost: -1}
                steps: [{name: t, kind: template, template: x, output_field: y}]
                """, dir))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessageContaining("budget.max_cost");
    }

    @Test
    void twoProcessesTogetherChargeAtMostTheBudgetPlusOneReservation() throws Exception {
        String control = TestPostgres.newDatabaseUrl();
        ControlDatabase.open(new ControlSettings.Jdbc(control)).close();
        Path root = dir.resolve("root");
        try (OpenAiTestServer server = OpenAiTestServer.start()) {
            answerWithUsage(server, Duration.ofMillis(30));
            Path yaml = pipeline(server, "0.5", 200);
            List<Process> procs = new ArrayList<>();
            List<CompletableFuture<List<String>>> outputs = new ArrayList<>();
            for (int p = 0; p < 2; p++) {
                ProcessBuilder pb = new ProcessBuilder(ChildJvm.command(
                                dir, RunMain.class.getName(), yaml.toString(), root.toString(), "exp", "4"))
                        .redirectError(dir.resolve("stderr-" + p + ".txt").toFile());
                pb.environment().put("VIGILO_CONTROL_DB", control);
                Process proc = pb.start();
                procs.add(proc);
                outputs.add(CompletableFuture.supplyAsync(() -> ChildJvm.outputLines(proc)));
            }
            for (int p = 0; p < procs.size(); p++) {
                assertThat(procs.get(p).waitFor(300, TimeUnit.SECONDS)).isTrue();
                assertThat(procs.get(p).exitValue())
                        .as("exit of process %d; stderr: %s", p, Files.readString(dir.resolve("stderr-" + p + ".txt")))
                        .isEqualTo(4);
                assertThat(outputs.get(p).get(10, TimeUnit.SECONDS))
                        .anyMatch(l -> l.startsWith("BUDGET ") && l.contains("raise budget.max_cost"));
            }
            // What the endpoint answered, at its usage: at most the budget plus one call's reservation (the last call
            // admitted below the budget), whatever the number of processes.
            PipelineSpec spec = PipelineParser.parse(yaml);
            ChatSpec chat = spec.steps().get(0).chat();
            BigDecimal reservation = ChatClient.reservation(
                    chat,
                    Json.canonical(ChatStep.request(
                                    chat, "ask", Json.MAPPER.createObjectNode().put("n", 199)))
                            .getBytes(StandardCharsets.UTF_8)
                            .length);
            BigDecimal spent = CALL_COST.multiply(BigDecimal.valueOf(server.requestCount()));
            assertThat(spent).isLessThanOrEqualTo(new BigDecimal("0.5").add(reservation));
            // The run that stopped first was refused while charged reached 0.5, which counted the calls then in
            // flight (at most 2 processes x 4 workers) at their reservations; they settled at their (lower) cost
            // afterwards, and the processes had stopped: spent may end below 0.5 by that much, never more.
            BigDecimal settleGap = reservation.subtract(CALL_COST).multiply(BigDecimal.valueOf(2 * 4));
            assertThat(spent).isGreaterThanOrEqualTo(new BigDecimal("0.5").subtract(settleGap));
            try (ControlDatabase db = ControlDatabase.open(new ControlSettings.Jdbc(control))) {
                CostBudget.State st = CostBudget.read(
                                db.jdbi(), PipelineRunner.budgetKey(LogRoot.local(root), "budget", "exp"))
                        .orElseThrow();
                assertThat(st.settled()).isEqualByComparingTo(spent);
                assertThat(st.reserved()).isEqualByComparingTo(BigDecimal.ZERO);
            }
            ExperimentStatus s = Experiments.status(LogRoot.local(root), "budget", "exp");
            assertThat(s.completed()).isEqualTo(server.requestCount());
        }
    }
}
