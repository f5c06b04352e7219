package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.common.crash.RandomKills;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.view.ExecutionStatusReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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
 * Resume without waiting (docs/execution.md, "Resume after a kill"): a {@code vigilo worker} process (ExecMain's)
 * holding every chunk of a run under 10-minute leases is killed with SIGKILL while two of its agent calls are held
 * unanswered by the server; a worker restarted on the same machine finds its predecessor dead, takes its leases at once
 * (each exactly once: one generation more than the dead worker's), and finishes and settles the run long before those
 * leases could have expired (the test's timeout is half the lease). Every case has exactly one counted result.
 */
class ResumeKillIT {
    private static final int CASES = 250; // chunks 0 and 1 of 100 cases, chunk 2 of 50
    /** Far longer than the test may run: a restarted worker that waited for the expiry would time the test out. */
    private static final long LEASE_MS = 600_000;

    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");
    /** Cases whose agent call the server holds until the first worker is dead (in flight at the kill). */
    private static final Set<Integer> HELD = Set.of(20, 120);

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aWorkerRestartedOnTheSameMachineTakesTheDeadWorkersLeasesAtOnce() throws Exception {
        CountDownLatch killed = new CountDownLatch(1);
        Set<Integer> arrived = ConcurrentHashMap.newKeySet();
        java.util.Queue<Long> arrivals = new java.util.concurrent.ConcurrentLinkedQueue<>();
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
                arrivals.add(System.nanoTime());
                if (HELD.contains(n) && killed.getCount() > 0) {
                    try {
                        killed.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return Reply.content(Integer.toString(n * 2)).withLatency(Duration.ofMillis(5));
            });
            UUID run = fx.prepare("""
                    name: resume-kill
                    agent: {kind: http, url: "%s", model: m, max_tokens: 50, max_attempts: 1, timeout_seconds: 60}
                    evaluators:
                      - {name: exact, kind: exact_match}
                    gates:
                      - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                    """.formatted(llm.chatUrl()));
            fx.placeOn(run, exec);
            new Admission(placements, fx.storage).admit(run);

            Process first = worker(fx, config);
            List<Map<String, Object>> deadLeases;
            try {
                RandomKills.awaitWhileAlive(
                        first,
                        Duration.ofMinutes(2),
                        "the calls of cases " + HELD + " held at the server",
                        () -> arrived.containsAll(HELD));
                assertThat(llm.inFlight()).as("calls in flight at the kill").isGreaterThanOrEqualTo(2);
                assertThat(RandomKills.killAfter(first, 0)).isTrue();
                assertThat(first.waitFor()).isEqualTo(RandomKills.KILLED);
                deadLeases = leased(placements, run);
            } finally {
                first.destroyForcibly();
                killed.countDown();
            }
            assertThat(deadLeases)
                    .as("the dead worker's live leases (the chunks of the held cases at least)")
                    .extracting(r -> ((Number) r.get("chunk_index")).longValue())
                    .contains(0L, 1L);
            int answeredBefore = llm.requestCount();

            long restart = System.nanoTime();
            Process second = worker(fx, config);
            assertThat(second.waitFor(3, TimeUnit.MINUTES))
                    .as("the restarted worker finished while the dead worker's leases had minutes left")
                    .isTrue();
            assertThat(second.exitValue()).isZero();
            assertThat(fx.runStatus(run)).isEqualTo("settled");

            // Each chunk the dead worker held was taken over once, by the restarted worker's claim, and completed.
            Map<Long, Long> generations = generations(placements, run);
            for (Map<String, Object> lease : deadLeases) {
                long chunk = ((Number) lease.get("chunk_index")).longValue();
                assertThat(generations.get(chunk))
                        .as("lease generation of chunk %d", chunk)
                        .isEqualTo(((Number) lease.get("lease_generation")).longValue() + 1);
            }
            // One result per case.
            ExecutionStatus settled = new ExecutionStatusReader(placements).status(run);
            assertThat(settled.execution().casesDone()).isEqualTo(CASES);
            assertThat(settled.gates().get(0).executed()).isEqualTo(CASES);
            assertThat(settled.gates().get(0).passed()).isEqualTo(CASES);

            long firstCall = arrivedAfter(arrivals, restart);
            System.out.printf(
                    "ResumeKillIT: the restarted worker's first agent call came %d ms after its start (JVM start-up"
                            + " included); %d requests before the restart, %d after (%d cases; partial receipts carried)%n",
                    TimeUnit.NANOSECONDS.toMillis(firstCall - restart),
                    answeredBefore,
                    llm.requestCount() - answeredBefore,
                    CASES);
        } finally {
            killed.countDown();
        }
    }

    /** The first arrival of a call after {@code since} (the restarted worker's first agent call). */
    private static long arrivedAfter(java.util.Queue<Long> arrivals, long since) {
        return arrivals.stream()
                .filter(t -> t - since > 0)
                .min(Long::compare)
                .orElseThrow(() -> new AssertionError("no call arrived after the restart"));
    }

    private static List<Map<String, Object>> leased(Placements placements, UUID run) {
        return placements
                .jdbi("a")
                .withHandle(h -> h.createQuery("SELECT chunk_index, lease_generation FROM exec_chunks"
                                + " WHERE run_id = :r AND state = 'leased' AND lease_expires_at > clock_timestamp()")
                        .bind("r", run)
                        .mapToMap()
                        .list());
    }

    private static Map<Long, Long> generations(Placements placements, UUID run) {
        Map<Long, Long> g = new java.util.HashMap<>();
        placements
                .jdbi("a")
                .useHandle(h -> h.createQuery(
                                "SELECT chunk_index, lease_generation, state FROM exec_chunks" + " WHERE run_id = :r")
                        .bind("r", run)
                        .mapToMap()
                        .forEach(row -> {
                            assertThat(row.get("state"))
                                    .as("chunk %s", row.get("chunk_index"))
                                    .isEqualTo("done");
                            g.put(
                                    ((Number) row.get("chunk_index")).longValue(),
                                    ((Number) row.get("lease_generation")).longValue());
                        }));
        return g;
    }

    private static Process worker(ExecFixture fx, Path config) throws IOException {
        Path logs = Path.of("target", "crash-logs");
        Files.createDirectories(logs);
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
                .redirectOutput(logs.resolve("resume-worker-" + System.nanoTime() + ".log")
                        .toFile())
                .start();
    }
}
