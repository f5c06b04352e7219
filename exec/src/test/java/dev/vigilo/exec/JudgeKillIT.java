package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.assertj.core.api.Assertions.within;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.common.crash.RandomKills;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.exec.view.ExecutionStatusReader;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker process killed with SIGKILL while judge calls are in flight. The run's cases are graded by a {@code judge}
 * evaluator over a local OpenAI-compatible judge server ({@link OpenAiTestServer}) that answers after a latency, with
 * a score, a reason and token usage that are functions of the case; the agent is an http agent on a server of its
 * own, also reporting usage. While the first worker lives, the judge server holds the judge calls of two cases of
 * chunk 1 unanswered; the test waits for both to arrive and for chunks 0 and 2 to complete, and kills the worker:
 * chunk 1 dies mid-judge, after the judge has already answered (and reported tokens for) half of its cases. A second
 * worker takes chunk 1 over once its lease expires and judges it again.
 *
 * <p>Afterwards every case has exactly one judged result in the counted receipt, passed or failed as the server's
 * score says, with the server's reason; the judge usage the run reports ({@code ExecutionStatus.usage()}, read from
 * {@code run_usage} once settled) is exactly one call per case with the tokens and cost computed here from the
 * server's usage function, although the server answered more judge calls than there are cases (the killed worker's
 * calls count nowhere); the agent's usage likewise; and {@code vigilo verify} ({@link RunVerifier}) finds the run
 * intact.
 */
class JudgeKillIT {
    private static final int CASES = 250; // chunks 0 and 1 of 100 cases, chunk 2 of 50
    private static final int CONCURRENCY = 4;
    private static final long LEASE_MS = 2_000;
    /** The cases whose judge calls the first worker never gets answered: both in chunk 1, in flight at the kill. */
    private static final Set<Integer> HELD = Set.of(150, 175);
    /** Every judge answer waits this long, so calls overlap as they do with a real model. */
    private static final Duration JUDGE_LATENCY = Duration.ofMillis(50);

    private static final Pattern CASE = Pattern.compile("case-(\\d+)");
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");

    @TempDir
    Path dir;

    /** The judge's score of case {@code n} on [0, 10]: 1, 3, 5, 7 or 9; 7 and 9 pass at pass_score 0.6. */
    static int score(int n) {
        return n % 5 * 2 + 1;
    }

    static long judgeInputTokens(int n) {
        return 100 + n;
    }

    static long judgeOutputTokens(int n) {
        return 10 + n % 4;
    }

    static long agentInputTokens(int n) {
        return 20 + n % 7;
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aWorkerKilledMidJudgeLeavesOneJudgedResultPerCaseAndCountsItsJudgeCallsNowhere() throws Exception {
        CountDownLatch killed = new CountDownLatch(1);
        Map<Integer, Integer> judgeCallsPerCase = new ConcurrentHashMap<>();
        Path config = dir.resolve("execution.toml");
        Files.writeString(config, "[placements.a]\njdbc_url = \"" + TestPostgres.newDatabaseUrl() + "\"\n");
        ExecutionConfig exec = ExecutionConfig.parse(config);
        try (ExecFixture fx = new ExecFixture(dir, CASES);
                Placements placements = Placements.open(fx.control, exec);
                OpenAiTestServer agent = OpenAiTestServer.start();
                OpenAiTestServer judge = OpenAiTestServer.start()) {
            answerAsAgent(agent);
            judge.answerWith(r -> {
                Matcher m = CASE.matcher(r.lastUserMessage());
                if (!m.find()) {
                    return Reply.error(400, "no case id in the rubric");
                }
                int n = Integer.parseInt(m.group(1));
                judgeCallsPerCase.merge(n, 1, Integer::sum);
                if (HELD.contains(n) && killed.getCount() > 0) {
                    // Held until the worker that sent it is dead: a judge call in flight at the kill, for certain.
                    try {
                        killed.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return judgement(n);
            });
            UUID run = fx.prepare(profile(agent, judge));
            fx.placeOn(run, exec);
            new Admission(placements, fx.storage).admit(run);

            Path firstLog = logFile();
            Process first = worker(fx, config, firstLog);
            int receivedBeforeKill;
            try {
                RandomKills.awaitWhileAlive(
                        first,
                        Duration.ofMinutes(2),
                        "the judge calls of cases " + HELD + " held at the server, chunks 0 and 2 completed",
                        () -> HELD.stream().allMatch(judgeCallsPerCase::containsKey)
                                && completed(firstLog, run, 0)
                                && completed(firstLog, run, 2));
                assertThat(judge.inFlight())
                        .as("judge calls in flight at the kill")
                        .isGreaterThanOrEqualTo(2);
                receivedBeforeKill = judge.requestCount();
                assertThat(RandomKills.killAfter(first, 0)).isTrue();
                assertThat(first.waitFor()).isEqualTo(RandomKills.KILLED);
            } finally {
                first.destroyForcibly();
                killed.countDown();
            }
            assertThat(completed(firstLog, run, 1)).as("chunk 1 died mid-judge").isFalse();
            // Chunks 0 and 2 judged, and chunk 1 up to case 175 (its case pool runs cases in order): most of chunk 1
            // was answered, tokens reported, to a worker whose receipt will never count.
            assertThat(receivedBeforeKill).isGreaterThanOrEqualTo(150 + 76);

            Process second = worker(fx, config, logFile());
            assertThat(second.waitFor(3, TimeUnit.MINUTES)).isTrue();
            assertThat(second.exitValue()).isZero();
            assertThat(fx.runStatus(run)).isEqualTo("settled");

            Map<Long, Long> generations = assertEachCaseJudgedOnce(fx, placements, run);
            assertThat(generations)
                    .as("chunks 0 and 2 counted from the killed worker, chunk 1 from its successor")
                    .containsEntry(0L, 1L)
                    .containsEntry(2L, 1L);
            assertThat(generations.get(1L)).isGreaterThan(1L);

            // The server judged some of chunk 1 twice (the held cases for certain): more judge calls than cases.
            for (int n = 0; n < CASES; n++) {
                boolean chunk1 = n >= 100 && n < 200;
                assertThat(judgeCallsPerCase.getOrDefault(n, 0))
                        .as("judge calls of case %d", n)
                        .isBetween(HELD.contains(n) ? 2 : 1, chunk1 ? 2 : 1);
            }
            // The held cases were in flight at the kill, in no partial receipt: judged again by the successor, which
            // carries the rest of chunk 1's finished cases forward (a request sent just before the kill may arrive
            // after it: at least, not exactly).
            assertThat(judge.requestCount())
                    .isGreaterThanOrEqualTo(Math.max(receivedBeforeKill + HELD.size(), CASES + HELD.size()));

            assertUsageCountedOnceAndIntact(fx, placements, run);
        } finally {
            killed.countDown();
        }
    }

    /**
     * Workers killed at random points of a judged run ({@value RandomKills#POINTS} kills, default 4; each while the
     * judge server receives its calls, after a random delay), then one left to finish: whatever the kills cut (a judge
     * call in flight, a receipt being written, settlement), every case has one judged result and the run reports
     * exactly one judge call per case.
     */
    @Test
    @Timeout(value = 8, unit = TimeUnit.MINUTES)
    void workersKilledAtRandomPointsWhileJudgingCountEveryCaseOnce() throws Exception {
        RandomKills kills = RandomKills.configure("exec JudgeKillIT", 4);
        Random random = kills.random(0);
        Path config = dir.resolve("execution.toml");
        Files.writeString(config, "[placements.a]\njdbc_url = \"" + TestPostgres.newDatabaseUrl() + "\"\n");
        ExecutionConfig exec = ExecutionConfig.parse(config);
        try (ExecFixture fx = new ExecFixture(dir, CASES);
                Placements placements = Placements.open(fx.control, exec);
                OpenAiTestServer agent = OpenAiTestServer.start();
                OpenAiTestServer judge = OpenAiTestServer.start()) {
            answerAsAgent(agent);
            judge.answerWith(r -> {
                Matcher m = CASE.matcher(r.lastUserMessage());
                return m.find() ? judgement(Integer.parseInt(m.group(1))) : Reply.error(400, "no case id");
            });
            UUID run = fx.prepare(profile(agent, judge));
            fx.placeOn(run, exec);
            new Admission(placements, fx.storage).admit(run);

            int killedWorkers = 0;
            for (int k = 0; k < kills.points() && !fx.runStatus(run).equals("settled"); k++) {
                int before = judge.requestCount();
                Process p = worker(fx, config, logFile());
                try {
                    // Judging has begun (this worker's first judge call arrived), then a random stretch of it.
                    boolean judging = RandomKills.awaitWhileAlive(
                            p,
                            Duration.ofMinutes(2),
                            "a judge call of the new worker",
                            () -> judge.requestCount() > before);
                    if (judging && RandomKills.killAfter(p, RandomKills.delayWithin(random, 3_000))) {
                        assertThat(p.waitFor()).isEqualTo(RandomKills.KILLED);
                        killedWorkers++;
                    }
                } finally {
                    p.destroyForcibly();
                    p.waitFor();
                }
            }
            assertThat(killedWorkers).as("workers killed mid-run").isPositive();

            Process last = worker(fx, config, logFile());
            assertThat(last.waitFor(3, TimeUnit.MINUTES)).isTrue();
            assertThat(last.exitValue()).isZero();
            assertThat(fx.runStatus(run)).isEqualTo("settled");
            assertEachCaseJudgedOnce(fx, placements, run);
            assertUsageCountedOnceAndIntact(fx, placements, run);
        }
    }

    /** The run: an http agent, the judge grading every case, pricing for both models. */
    private static String profile(OpenAiTestServer agent, OpenAiTestServer judge) {
        return """
                    name: judge-kill
                    agent: {kind: http, url: "%s", model: agent-model, max_attempts: 1, timeout_seconds: 60}
                    evaluators:
                      - name: quality
                        kind: judge
                        url: "%s"
                        model: judge-model
                        rubric: "Case {{case.id}}: is {{output}} the answer to {{input}}?"
                        scale: {min: 0, max: 10}
                        pass_score: 0.6
                        max_attempts: 1
                        timeout_seconds: 600
                    gates:
                      - {name: all, required_evaluators: [quality], min_pass_rate: 0.1}
                      - {name: math, required_evaluators: [quality], groups: [math], min_pass_rate: 0.1}
                    pricing:
                      agent-model: {input: 1.0, output: 2.0}
                      judge-model: {input: 0.15, output: 0.60}
                    """.formatted(agent.chatUrl(), judge.chatUrl());
    }

    /** The agent answers case n's question right, reporting its usage function's tokens. */
    private static void answerAsAgent(OpenAiTestServer agent) {
        agent.answerWith(r -> {
            Matcher m = QUESTION.matcher(r.lastUserMessage());
            int n = m.find() ? Integer.parseInt(m.group(1)) : -1;
            return Reply.content(Integer.toString(n * 2))
                    .withModel("agent-model")
                    .withUsage(agentInputTokens(n), 1);
        });
    }

    /** The judge's answer on case n after its latency: the case's score and reason, its usage function's tokens. */
    private static Reply judgement(int n) {
        return Reply.judgement(score(n), "case " + n + " scores " + score(n))
                .withModel("judge-model")
                .withUsage(judgeInputTokens(n), judgeOutputTokens(n))
                .withLatency(JUDGE_LATENCY);
    }

    /**
     * Every case of the settled run has exactly one judged result in its counted receipt, as the server scored it,
     * and one agent call and one judge call of usage.
     *
     * @return each chunk's counted lease generation
     */
    private static Map<Long, Long> assertEachCaseJudgedOnce(ExecFixture fx, Placements placements, UUID run) {
        List<RunRecords.Route> routes = fx.control.jdbi().withHandle(h -> RunRecords.routes(h, run, ""));
        Map<Long, Long> generations = new HashMap<>();
        int cases = 0;
        Iterator<ChunkRows.Row> rows = ChunkRows.cursor(placements, run, routes, true);
        while (rows.hasNext()) {
            Receipt r = ChunkRows.receipt(run, fx.store, rows.next());
            generations.put(r.chunkIndex(), r.leaseGeneration());
            for (Receipt.CaseResult c : r.cases()) {
                cases++;
                int n = (int) c.ordinal();
                assertThat(c.errored()).as("case %d", n).isFalse();
                List<Receipt.EvaluatorResult> judged = c.evaluatorResults().stream()
                        .filter(e -> e.name().equals("quality"))
                        .toList();
                assertThat(judged).as("case %d", n).hasSize(1);
                Receipt.EvaluatorResult e = judged.get(0);
                assertThat(e.error()).as("case %d", n).isEmpty();
                assertThat(e.passed()).as("case %d", n).isEqualTo(score(n) >= 6);
                assertThat(e.score()).as("case %d", n).isCloseTo(score(n) / 10.0, within(1e-9));
                assertThat(e.reason()).as("case %d", n).contains("case " + n + " scores " + score(n));
                Receipt.Usage u = c.usage().orElseThrow();
                assertThat(u.models())
                        .as("case %d: one agent call and one judge call", n)
                        .extracting(Receipt.ModelUsage::role, Receipt.ModelUsage::model, Receipt.ModelUsage::calls)
                        .containsExactly(
                                tuple(Receipt.Role.AGENT, "agent-model", 1L),
                                tuple(Receipt.Role.JUDGE, "judge-model", 1L));
            }
        }
        assertThat(cases).isEqualTo(CASES);
        return generations;
    }

    /**
     * The judge and agent usage the settled run reports (status and {@code run_usage}) is one call per case with the
     * tokens and cost computed here from the servers' usage functions, and {@code vigilo verify} finds the run intact.
     */
    private static void assertUsageCountedOnceAndIntact(ExecFixture fx, Placements placements, UUID run) {
        // The expectation, from the server's usage function over the cases (one counted call each).
        long judgeInput = 0;
        long judgeOutput = 0;
        long agentInput = 0;
        long mathCases = 0;
        long mathJudgeInput = 0;
        for (int n = 0; n < CASES; n++) {
            judgeInput += judgeInputTokens(n);
            judgeOutput += judgeOutputTokens(n);
            agentInput += agentInputTokens(n);
            if (n % 3 == 0) {
                mathCases++;
                mathJudgeInput += judgeInputTokens(n);
            }
        }
        BigDecimal judgeCost = perMillion("0.15", judgeInput).add(perMillion("0.60", judgeOutput));
        BigDecimal agentCost = perMillion("1.0", agentInput).add(perMillion("2.0", CASES));

        ExecutionStatus status = new ExecutionStatusReader(placements).status(run);
        UsageSummary all = status.runUsage().orElseThrow();
        assertThat(all.judges().calls()).isEqualTo(CASES);
        assertThat(all.judges().inputTokens()).isEqualTo(judgeInput);
        assertThat(all.judges().outputTokens()).isEqualTo(judgeOutput);
        assertThat(all.judges().costUsd().orElseThrow()).isEqualByComparingTo(judgeCost);
        assertThat(all.agent().calls()).isEqualTo(CASES);
        assertThat(all.agent().inputTokens()).isEqualTo(agentInput);
        assertThat(all.agent().outputTokens()).isEqualTo(CASES);
        assertThat(all.agent().costUsd().orElseThrow()).isEqualByComparingTo(agentCost);
        assertThat(all.all().costUsd().orElseThrow()).isEqualByComparingTo(judgeCost.add(agentCost));
        assertThat(all.unpricedModels()).isEmpty();
        UsageSummary math = status.usage().get("math");
        assertThat(math.judges().calls()).isEqualTo(mathCases);
        assertThat(math.judges().inputTokens()).isEqualTo(mathJudgeInput);

        // What settlement recorded in run_usage, read directly.
        Map<String, Object> judgeRow = fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT calls, input_tokens, output_tokens, cost_usd FROM run_usage"
                                + " WHERE run_id = :r AND scope = '*' AND role = 'judge' AND model = 'judge-model'")
                        .bind("r", run)
                        .mapToMap()
                        .one());
        assertThat(judgeRow.get("calls")).isEqualTo((long) CASES);
        assertThat(judgeRow.get("input_tokens")).isEqualTo(judgeInput);
        assertThat(judgeRow.get("output_tokens")).isEqualTo(judgeOutput);
        assertThat((BigDecimal) judgeRow.get("cost_usd")).isEqualByComparingTo(judgeCost);

        RunVerifier.Report report = new RunVerifier(placements, fx.storage).verify(run);
        assertThat(report.problem()).isEmpty();
        assertThat(report.intact()).isTrue();
        assertThat(report.checked().transcripts()).isEqualTo(CASES);
    }

    /** Price (USD per million tokens) x tokens, in USD, exact. */
    private static BigDecimal perMillion(String price, long tokens) {
        return new BigDecimal(price).multiply(BigDecimal.valueOf(tokens)).movePointLeft(6);
    }

    /** Whether the worker logged the completion of chunk {@code chunk} of {@code run} ({@link ExecMain}'s lines). */
    private static boolean completed(Path log, UUID run, long chunk) {
        try {
            return Files.readString(log).contains("completed " + run + " " + chunk + " ");
        } catch (IOException e) {
            return false;
        }
    }

    private static Path logFile() throws IOException {
        Path logs = Path.of("target", "crash-logs");
        Files.createDirectories(logs);
        return logs.resolve("judge-worker-" + System.nanoTime() + ".log");
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
                Integer.toString(CONCURRENCY),
                Long.toString(LEASE_MS)));
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
    }
}
