package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.common.crash.RandomKills;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.view.ExecutionStatusReader;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code vigilo worker} process (ExecMain's) killed with SIGKILL while model calls of a run with a budget are in
 * flight, two of them held unanswered by the server until the kill. Its budget grant outlives it in
 * {@code run_budget_grants}; once it expired, a second worker folds it into the run's spent budget whole (the dead
 * worker's calls in flight may have been answered, as the held ones are after the kill) and exactly once. So: what
 * the endpoint answered the dead worker fits in its grant; the run's spent budget at the end is exactly the dead grant
 * plus what the endpoint answered the second worker; no grant is left; the run settles with one result per case.
 */
class BudgetKillIT {
    private static final int CASES = 250; // chunks 0 and 1 of 100 cases, chunk 2 of 50
    private static final long LEASE_MS = 2_000;
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");
    /** Cases whose agent call the server holds until the first worker is dead (both in flight at the kill). */
    private static final Set<Integer> HELD = Set.of(120, 220);

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aKilledWorkersGrantIsCountedWholeOnceItExpiredAndNeverTwice() throws Exception {
        CountDownLatch killed = new CountDownLatch(1);
        Set<Integer> arrived = java.util.concurrent.ConcurrentHashMap.newKeySet();
        Path config = dir.resolve("execution.toml");
        Files.writeString(config, "[placements.a]\njdbc_url = \"" + TestPostgres.newDatabaseUrl() + "\"\n");
        ExecutionConfig exec = ExecutionConfig.parse(config);
        try (ExecFixture fx = new ExecFixture(dir, CASES);
                Placements placements = Placements.open(fx.control, exec);
                OpenAiTestServer llm = OpenAiTestServer.start()) {
            llm.answerWith(r -> {
                Matcher m = QUESTION.matcher(r.lastUserMessage());
                int n = m.find() ? Integer.parseInt(m.group(1)) : -1;
                arrived.add(n);
                if (HELD.contains(n) && killed.getCount() > 0) {
                    try {
                        killed.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                // Answered as model m (priced): an answer naming an unpriced model is settled at the highest price.
                return BudgetTest.answeredAs(
                                "m", Reply.content(Integer.toString(n * 2)).withUsage(100, 20))
                        .withLatency(Duration.ofMillis(10));
            });
            UUID run = fx.prepare("""
                    name: budget-kill
                    agent: {kind: http, url: "%s", model: m, max_tokens: 50, max_attempts: 1, timeout_seconds: 60}
                    evaluators:
                      - {name: exact, kind: exact_match}
                    gates:
                      - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                    pricing:
                      m: {input: 1, output: 2}
                    budget: {max_cost_usd: 1.00}
                    """.formatted(llm.chatUrl()));
            fx.placeOn(run, exec);
            new Admission(placements, fx.storage).admit(run);

            Process first = worker(fx, config, logFile());
            try {
                RandomKills.awaitWhileAlive(
                        first,
                        Duration.ofMinutes(2),
                        "the calls of cases " + HELD + " held at the server, the worker's grant published",
                        () -> arrived.containsAll(HELD) && grants(fx, run).size() == 1);
                assertThat(llm.inFlight()).as("calls in flight at the kill").isGreaterThanOrEqualTo(2);
                assertThat(RandomKills.killAfter(first, 0)).isTrue();
                assertThat(first.waitFor()).isEqualTo(RandomKills.KILLED);
            } finally {
                first.destroyForcibly();
                killed.countDown();
            }
            // The held calls are answered now, to a dead worker: the endpoint charged them.
            waitFor(() -> llm.inFlight() == 0, "the held calls answered");
            BigDecimal answeredToTheDead = cost(llm);
            List<Map<String, Object>> dead = grants(fx, run);
            assertThat(dead).hasSize(1);
            BigDecimal deadGrant = ((BigDecimal) dead.get(0).get("granted_cost_usd"))
                    .max((BigDecimal) dead.get(0).get("used_cost_usd"));
            assertThat(answeredToTheDead)
                    .as("what the endpoint answered the dead worker fits in its grant")
                    .isLessThanOrEqualTo(deadGrant);

            Process second = worker(fx, config, logFile());
            assertThat(second.waitFor(3, TimeUnit.MINUTES)).isTrue();
            assertThat(second.exitValue()).isZero();
            assertThat(fx.runStatus(run)).isEqualTo("settled");
            assertThat(grants(fx, run))
                    .as("the dead grant folded, the live one released")
                    .isEmpty();
            ExecutionStatus.Budget b =
                    new ExecutionStatusReader(placements).status(run).budget().orElseThrow();
            BigDecimal answeredToTheSecond = cost(llm).subtract(answeredToTheDead);
            assertThat(b.spentCostUsd())
                    .as("the dead grant counted whole, once, beside what the second worker spent")
                    .isEqualByComparingTo(deadGrant.add(answeredToTheSecond));
            assertThat(b.reservedCostUsd()).isZero();
            assertThat(cost(llm)).isLessThanOrEqualTo(new BigDecimal("1.00"));

            // One result per case: every chunk done once, every case executed once by the gate's count.
            ExecutionStatus settled = new ExecutionStatusReader(placements).status(run);
            assertThat(settled.execution().casesDone()).isEqualTo(CASES);
            assertThat(settled.gates().get(0).executed()).isEqualTo(CASES);
        } finally {
            killed.countDown();
        }
    }

    /** What the server answered, at $1 in and $2 out per million tokens. */
    private static BigDecimal cost(OpenAiTestServer llm) {
        return BigDecimal.valueOf(llm.answeredPromptTokens() + 2 * llm.answeredCompletionTokens())
                .movePointLeft(6);
    }

    private static List<Map<String, Object>> grants(ExecFixture fx, UUID run) {
        return fx.control
                .jdbi()
                .withHandle(h -> h.createQuery(
                                "SELECT granted_cost_usd, used_cost_usd FROM run_budget_grants WHERE run_id = :r")
                        .bind("r", run)
                        .mapToMap()
                        .list());
    }

    private static void waitFor(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 60 s: " + what);
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }

    private static Path logFile() throws IOException {
        Path logs = Path.of("target", "crash-logs");
        Files.createDirectories(logs);
        return logs.resolve("budget-worker-" + System.nanoTime() + ".log");
    }

    private static Process worker(ExecFixture fx, Path config, Path log) throws IOException {
        List<String> cmd = RandomKills.java(List.of("-Xmx256m"));
        cmd.addAll(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                ExecMain.class.getName(),
                "worker",
                fx.controlUrl,
                fx.storeRoot.toString(),
                config.toString(),
                "4",
                Long.toString(LEASE_MS)));
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
    }
}
