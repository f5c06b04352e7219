package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.control.TestPostgres;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A datagen budget (docs/datagen.md, "Fleet limits and budget") under kill -9: real {@code vigilo datagen run}
 * processes (the packaged jar) with a chat step against the agent module's OpenAI-compatible test server, each killed
 * with SIGKILL once the server has received a given number of requests, then run again until the budget stops a run
 * (exit 4), then once more with a larger budget. After every kill and at the end:
 *
 * <ul>
 *   <li>what the budget charged ({@code datagen status}'s {@code budget.charged}: settled costs plus the reservations
 *       the dead processes left) never exceeds {@code max_cost} plus one call's reservation, and never falls below
 *       what the server answered (at its usage and the pipeline's prices): a kill never lets a call go uncounted;
 *   <li>no item is generated twice after its checkpoint: the server's requests minus the completed chat steps stay
 *       within the calls that can be in flight at the kills ({@code --workers} per kill: a call sent but not yet
 *       durable when its process died is the only one redone);
 *   <li>the rerun with a larger budget completes every item, and nothing more is redone.
 * </ul>
 *
 * The server answers each call after {@value #LATENCY_MS} ms with 50 prompt and 100 completion tokens: 0.015 a call
 * at 100 per million tokens.
 */
class DatagenBudgetKillIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int ITEMS = 60;
    private static final int WORKERS = 4;
    private static final long LATENCY_MS = 150;
    private static final BigDecimal CALL_COST = new BigDecimal("0.015");
    private static final BigDecimal PRICE = new BigDecimal("0.0001"); // 100 per million tokens
    private static final String MAX_COST = "0.6";
    /** Requests the server must have received (in all) before each kill. */
    private static final int[] KILL_AT = {4, 13, 21};

    @TempDir
    Path home;

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES) // one JVM with Lance per run, on a loaded machine
    void killedRunsNeitherOverspendNorRedoCheckpointedCallsAndALargerBudgetFinishes() throws Exception {
        String db = TestPostgres.newDatabaseUrl();
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", db));
        try (OpenAiTestServer server = OpenAiTestServer.start()) {
            server.answerWith(r -> Reply.content("answer to " + r.lastUserMessage())
                    .withUsage(50, 100)
                    .withLatency(Duration.ofMillis(LATENCY_MS)));
            Path dir = Files.createDirectories(home.resolve("kill"));
            StringBuilder seeds = new StringBuilder();
            for (int i = 0; i < ITEMS; i++) {
                seeds.append("{\"id\": \"s%02d\", \"q\": \"question %d\"}\n".formatted(i, i));
            }
            Files.writeString(dir.resolve("seeds.jsonl"), seeds);
            String yaml = """
                    name: spend
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
                        messages: [{role: user, content: "{{q}}"}]
                    """;
            Path pipeline = Files.writeString(dir.resolve("spend.yaml"), yaml.formatted(MAX_COST, server.chatUrl()));
            String root = dir.resolve("durable").toString();
            String[] run = {
                "--control-db",
                db,
                "datagen",
                "run",
                pipeline.toString(),
                "--experiment",
                "e",
                "--durable-root",
                root,
                "--workers",
                Integer.toString(WORKERS)
            };
            String[] status = {
                "datagen", "status", "--pipeline", "spend", "--experiment", "e", "--durable-root", root, "--json"
            };

            int kills = 0;
            for (int at : KILL_AT) {
                Path err = dir.resolve("kill-" + at + ".err");
                Process p = VigiloProcess.builder(home, Map.of(), List.of("-Xmx256m"), run)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .redirectError(err.toFile())
                        .start();
                await("the server received " + at + " requests (stderr: " + err + ")", () -> {
                    if (!p.isAlive()) {
                        throw new AssertionError(
                                "the run ended (exit " + p.exitValue() + ") before " + at + " requests: " + read(err));
                    }
                    return server.requestCount() >= at;
                });
                p.toHandle().destroyForcibly(); // SIGKILL
                assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
                kills++;
                await("the killed run's calls are answered or dropped", () -> server.inFlight() == 0);
                check(cli, status, server, kills, false, false);
            }

            // Run again until the budget stops a run (exit 4); nothing is killed any more.
            int exit = -1;
            for (int round = 0; round < 5 && exit != ExitCode.CONFLICT; round++) {
                VigiloProcess.Result r = VigiloProcess.run(home, Map.of(), List.of("-Xmx256m"), 300, run);
                exit = r.exitCode();
                assertThat(exit).as(r.err()).isIn(ExitCode.OK, ExitCode.CONFLICT);
                if (exit == ExitCode.CONFLICT) {
                    assertThat(r.err()).contains("stopped at its budget").contains("raise budget.max_cost");
                }
            }
            assertThat(exit).as("a run stopped at the budget").isEqualTo(ExitCode.CONFLICT);
            JsonNode stopped = check(cli, status, server, kills, true, true);
            assertThat(stopped.get("completed").asLong()).isLessThan(ITEMS);

            // A larger budget: every item, and no call redone beyond those the kills interrupted.
            Files.writeString(pipeline, yaml.formatted("10", server.chatUrl()));
            VigiloProcess.Result done = VigiloProcess.run(home, Map.of(), List.of("-Xmx256m"), 300, run);
            assertThat(done.exitCode()).as(done.err()).isZero();
            JsonNode end = check(cli, status, server, kills, false, true);
            assertThat(end.get("completed").asLong()).isEqualTo(ITEMS);
            assertThat(end.get("failed").asLong()).isZero();
        }
    }

    /**
     * The invariants after a kill or a run: returns {@code datagen status --json}. {@code reached}: the budget stopped
     * the last run, so it has charged at least max_cost. {@code replayed}: a run ended since the last kill, so every
     * step a killed process made durable is visible (a dead writer's last puts are folded in when the next run
     * replays its writer; right after a kill, status may not show them yet).
     */
    private static JsonNode check(
            CliRunner cli, String[] status, OpenAiTestServer server, int kills, boolean reached, boolean replayed)
            throws Exception {
        CliRunner.Result r = cli.run(status);
        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonNode s = JSON.readTree(r.out());
        JsonNode budget = s.get("budget");
        assertThat(budget).as("status shows the budget: %s", r.out()).isNotNull();
        BigDecimal maxCost = new BigDecimal(budget.get("max_cost").asText());
        BigDecimal charged = new BigDecimal(budget.get("charged").asText());
        // One call's reservation: its body's bytes plus max_tokens, at the higher per-token price.
        int longestBody = server.requests().stream()
                .mapToInt(q -> q.bodyText().getBytes(StandardCharsets.UTF_8).length)
                .max()
                .orElse(0);
        BigDecimal reservation = PRICE.multiply(BigDecimal.valueOf(longestBody + 100L));
        assertThat(charged)
                .as("charged after %d kills: %s", kills, budget)
                .isLessThanOrEqualTo(maxCost.add(reservation));
        BigDecimal answered =
                PRICE.multiply(BigDecimal.valueOf(server.answeredPromptTokens() + server.answeredCompletionTokens()));
        assertThat(charged).as("charged covers every answer the server gave").isGreaterThanOrEqualTo(answered);
        if (reached) {
            assertThat(charged).isGreaterThanOrEqualTo(maxCost);
        }
        long completedCalls =
                s.path("usage_by_step").path("ask").path("requests").asLong();
        if (replayed) {
            long redone = server.requestCount() - completedCalls;
            assertThat(redone)
                    .as(
                            "requests not in a completed step after %d kills (at most %d in flight at each)",
                            kills, WORKERS)
                    .isBetween(0L, (long) kills * WORKERS);
            // The same bound per item: an item asked again is one whose call a kill interrupted.
            Map<String, Long> asked = server.requests().stream()
                    .collect(java.util.stream.Collectors.groupingBy(
                            OpenAiTestServer.Request::lastUserMessage, java.util.stream.Collectors.counting()));
            long again = asked.values().stream().mapToLong(n -> n - 1).sum();
            assertThat(again).as("items asked more than once").isLessThanOrEqualTo((long) kills * WORKERS);
            assertThat(asked.values()).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(kills + 1L));
        }
        assertThat(CALL_COST.multiply(BigDecimal.valueOf(completedCalls)))
                .as("the completed calls' cost is settled")
                .isLessThanOrEqualTo(new BigDecimal(budget.get("spent").asText()));
        return s;
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (java.io.IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(20);
        }
    }
}
