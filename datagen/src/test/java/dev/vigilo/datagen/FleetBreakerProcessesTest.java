package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.common.crash.ChildJvm;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The circuit breaker of a chat step across processes (docs/datagen.md, "Fleet limits and budget"): three {@code
 * datagen run} processes on one experiment, each with its own key value under one {@code api_key_env} (the server
 * tells them apart, the fleet's limiter, keyed by the variable's name, does not). Once all three are sending, the
 * endpoint answers 500: the fleet's circuit opens with the failing requests of all processes together near {@code
 * failures} (three per-process breakers would each want {@code failures}), then one probe per cool-down goes out
 * fleet-wide (not one per process); when the endpoint is back, a probe closes the circuit and every item completes,
 * none failed.
 */
class FleetBreakerProcessesTest {
    static final int ITEMS = 90;
    static final int PROCESSES = 3;
    static final int WORKERS = 2;
    static final int FAILURES = 10;
    static final int COOL_DOWN_SECONDS = 3;

    @TempDir
    Path dir;

    /**
     * One request: when it arrived, from which process (its key), whether it was failed, and the fleet's circuit as it
     * arrived ({@code half_open}: a probe; {@code open}: a call admitted before its process heard of the open circuit).
     */
    private record Arrival(long nanos, String process, boolean failed, String circuit) {
        boolean probe() {
            return "half_open".equals(circuit);
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void threeProcessesOpenOneCircuitAndProbeOncePerCoolDownFleetWide() throws Exception {
        StringBuilder seeds = new StringBuilder();
        for (int i = 0; i < ITEMS; i++) {
            seeds.append("{\"id\": \"s%03d\", \"n\": %d}\n".formatted(i, i));
        }
        Files.writeString(dir.resolve("seeds.jsonl"), seeds);
        String control = TestPostgres.newDatabaseUrl();
        List<Arrival> arrivals = new CopyOnWriteArrayList<>();
        Map<String, AtomicInteger> answeredByProcess = new ConcurrentHashMap<>();
        // 0: answering; 1: down (500); 2: back.
        AtomicInteger mode = new AtomicInteger();
        try (ControlDatabase db = ControlDatabase.open(new ControlSettings.Jdbc(control));
                OpenAiTestServer server = OpenAiTestServer.start()) {
            server.answerWith(r -> {
                String process = r.authorization();
                if (mode.get() == 0
                        && answeredByProcess.size() == PROCESSES
                        && answeredByProcess.values().stream().allMatch(n -> n.get() >= 2)) {
                    mode.compareAndSet(0, 1); // every process is sending: the endpoint goes down
                }
                boolean down = mode.get() == 1;
                long now = System.nanoTime();
                // A probe is sent in the circuit's half-open state, which lasts until its answer is settled; a call
                // admitted before the circuit opened can arrive late on a loaded machine, while it is open.
                arrivals.add(new Arrival(now, process, down, down ? circuit(db) : ""));
                if (down) {
                    return Reply.error(500, "down").withLatency(Duration.ofMillis(300));
                }
                answeredByProcess
                        .computeIfAbsent(process, k -> new AtomicInteger())
                        .incrementAndGet();
                return Reply.content("answer " + r.lastUserMessage())
                        .withUsage(10, 3)
                        .withLatency(Duration.ofMillis(50));
            });
            Path yaml = dir.resolve("breaker.yaml");
            Files.writeString(yaml, """
            name: breaker
            input: seeds.jsonl
            id_field: id
            steps:
              - name: ask
                kind: chat
                url: %s
                model: m
                api_key_env: FLEET_KEY
                retries: 0
                messages: [{role: user, content: "what is {{n}} squared?"}]
                rate_limit: {requests_per_minute: 1200}
                circuit_breaker: {failures: %d, cool_down_seconds: %d}
            """.formatted(server.chatUrl(), FAILURES, COOL_DOWN_SECONDS));
            Path root = dir.resolve("root");
            List<Process> procs = new ArrayList<>();
            List<CompletableFuture<List<String>>> outputs = new ArrayList<>();
            for (int p = 0; p < PROCESSES; p++) {
                ProcessBuilder pb = new ProcessBuilder(ChildJvm.command(
                                dir,
                                RunMain.class.getName(),
                                yaml.toString(),
                                root.toString(),
                                "exp",
                                Integer.toString(WORKERS)))
                        .redirectError(dir.resolve("stderr-" + p + ".txt").toFile());
                pb.environment().put("VIGILO_CONTROL_DB", control);
                pb.environment().put("FLEET_KEY", "key-of-process-" + p);
                Process proc = pb.start();
                procs.add(proc);
                outputs.add(CompletableFuture.supplyAsync(() -> ChildJvm.outputLines(proc)));
            }
            try {
                await("the endpoint goes down with all processes sending", () -> mode.get() == 1);
                await("the fleet's circuit opens", () -> "open".equals(circuit(db)));
                long opened = System.nanoTime();
                // Calls admitted before a process heard of the open circuit may still arrive for a moment; then only
                // probes: wait for two of them (the first fails and re-opens the circuit for a cool-down).
                long settled = opened + TimeUnit.SECONDS.toNanos(1);
                await("two half-open probes", () -> probes(arrivals).size() >= 2);
                List<Arrival> probes = probes(arrivals);
                mode.set(2); // the endpoint is back: the next probe closes the circuit
                long failingUntilOpen = arrivals.stream()
                        .filter(a -> a.failed() && a.nanos() < settled)
                        .count();
                System.out.println("FleetBreakerProcessesTest: " + failingUntilOpen + " failing requests until the"
                        + " circuit was open fleet-wide (failures: " + FAILURES + ", " + PROCESSES + " processes x "
                        + WORKERS + " workers); probes " + probes);
                // Together, the processes sent about `failures` failing requests, plus the calls in flight when the
                // circuit opened and those sent before each process's next lease: fewer than PROCESSES x FAILURES,
                // what a breaker per process would allow.
                assertThat(failingUntilOpen)
                        .as("failing requests until the circuit opened fleet-wide")
                        .isBetween((long) FAILURES, (long) FAILURES + 2L * PROCESSES * WORKERS);
                assertThat(failingUntilOpen).isLessThan((long) PROCESSES * FAILURES);
                // One probe per cool-down fleet-wide: the two probes are a cool-down apart (plus the failing
                // answer's 300 ms), and nothing else went out between them.
                List<Arrival> firstTwo = probes.subList(0, 2);
                assertThat(firstTwo.get(1).nanos() - firstTwo.get(0).nanos())
                        .as("the gap between two probes")
                        .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(COOL_DOWN_SECONDS * 1000L - 200));
                assertThat(firstTwo).allMatch(Arrival::failed);
                await("the circuit closes", () -> "closed".equals(circuit(db)));
                for (int p = 0; p < procs.size(); p++) {
                    assertThat(procs.get(p).waitFor(180, TimeUnit.SECONDS)).isTrue();
                    assertThat(procs.get(p).exitValue())
                            .as(
                                    "exit of process %d; stderr: %s",
                                    p, Files.readString(dir.resolve("stderr-" + p + ".txt")))
                            .isZero();
                    assertThat(outputs.get(p).get(10, TimeUnit.SECONDS)).anyMatch(l -> l.startsWith("DONE "));
                }
            } finally {
                for (Process p : procs) {
                    p.destroyForcibly();
                }
            }
            ExperimentStatus s = Experiments.status(LogRoot.local(root), "breaker", "exp");
            assertThat(s.completed()).isEqualTo(ITEMS);
            assertThat(s.failed()).isZero();
            assertThat(s.failuresByType())
                    .as("no attempt failed: the open circuit held the calls")
                    .isEmpty();
            Set<String> senders = arrivals.stream().map(Arrival::process).collect(Collectors.toSet());
            assertThat(senders).hasSize(PROCESSES);
        }
    }

    private static List<Arrival> probes(List<Arrival> arrivals) {
        return arrivals.stream().filter(Arrival::probe).toList();
    }

    private static String circuit(ControlDatabase db) {
        return db.jdbi()
                .withHandle(h -> h.createQuery("SELECT circuit FROM endpoint_limiters")
                        .mapTo(String.class)
                        .findOne()
                        .orElse(""));
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(10);
        }
    }
}
