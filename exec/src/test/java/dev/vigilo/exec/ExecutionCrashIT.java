package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.storage.ObjectRef;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real processes, killed with SIGKILL at random points: admission processes, then workers over two execution
 * databases on two PostgreSQL servers, with a shard moved mid-run. Afterwards every planned case has exactly one
 * counted result, every counted receipt was written under the lease generation that completed its chunk, and the
 * settled gate table equals an independent count over the receipts and the plan.
 */
class ExecutionCrashIT {
    private static final int CASES = 30_000;
    private static final long LEASE_MS = 2_000;
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");

    @TempDir
    Path dir;

    @Test
    void everyCaseCountsOnceAfterKillsMovesAndRestarts() throws Exception {
        long seed = Long.getLong("vigilo.crash.seed", System.nanoTime());
        System.out.println("ExecutionCrashIT seed " + seed + " (rerun with -Dvigilo.crash.seed=" + seed + ")");
        Random random = new Random(seed);
        try (ExecFixture fx = new ExecFixture(dir, CASES);
                OpenAiTestServer llm = OpenAiTestServer.start()) {
            llm.answerWith(req -> {
                Matcher m = QUESTION.matcher(req.lastUserMessage());
                long i = m.find() ? Long.parseLong(m.group(1)) : -1;
                if (i % 97 == 3) {
                    return OpenAiTestServer.Reply.error(503, "overloaded");
                }
                return OpenAiTestServer.Reply.content(i % 4 == 0 ? "nope" : Long.toString(i * 2));
            });
            Path config = dir.resolve("execution.toml");
            Files.writeString(
                    config,
                    "[placements.a]\njdbc_url = \"" + TestPostgres.newDatabaseUrl(0) + "\"\n"
                            + "[placements.b]\njdbc_url = \"" + TestPostgres.newDatabaseUrl(1) + "\"\n");
            ExecutionConfig exec = ExecutionConfig.parse(config);
            UUID run = fx.prepare("""
                    name: crash
                    agent: {kind: http, url: "%s", model: m, max_attempts: 2, timeout_seconds: 10}
                    evaluators:
                      - {name: exact, kind: exact_match}
                      - {name: digits, kind: regex, pattern: "^[0-9]+$", applies_to: {groups: [math]}}
                    gates:
                      - {name: all, required_evaluators: [exact], min_pass_rate: 0.7}
                      - {name: math, required_evaluators: [exact, digits], min_pass_rate: 0.9}
                    """.formatted(llm.chatUrl()));
            fx.placeOn(run, exec);

            // Admission processes killed at random points; the workers' coordinators finish the admission.
            for (int i = 0; i < 3; i++) {
                Process admit = start("admit", fx, config, run.toString(), Long.toString(LEASE_MS));
                Thread.sleep(200 + random.nextInt(1500));
                admit.destroyForcibly().waitFor();
            }

            try (Placements placements = Placements.open(fx.control, exec)) {
                List<Process> workers = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    workers.add(start("worker", fx, config, "4", Long.toString(LEASE_MS)));
                }
                // The workers' coordinators finish the killed admission; wait until chunks are being executed.
                long until = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                while (!"running".equals(fx.runStatus(run)) && System.nanoTime() < until) {
                    Thread.sleep(100);
                }
                assertThat(fx.runStatus(run)).isEqualTo("running");
                boolean moved = false;
                for (int kill = 0; kill < 8; kill++) {
                    Thread.sleep(500 + random.nextInt(2500));
                    int victim = random.nextInt(workers.size());
                    workers.get(victim).destroyForcibly().waitFor();
                    workers.set(victim, start("worker", fx, config, "4", Long.toString(LEASE_MS)));
                    if (!moved && kill >= 1 && "running".equals(fx.runStatus(run))) {
                        int shard = 5;
                        String from = placements
                                .control()
                                .withHandle(h -> h.createQuery("SELECT placement FROM exec_shard_routes"
                                                + " WHERE run_id = :r AND shard = 5")
                                        .bind("r", run)
                                        .mapTo(String.class)
                                        .one());
                        new ShardMover(placements).move(run, shard, from.equals("a") ? "b" : "a");
                        moved = true;
                    }
                }
                for (Process w : workers) {
                    assertThat(w.waitFor(5, TimeUnit.MINUTES))
                            .as("a worker exits once the run is settled")
                            .isTrue();
                }
                assertThat(moved)
                        .as("a shard was moved while the run was executing")
                        .isTrue();
                assertThat(fx.runStatus(run)).isEqualTo("settled");
                verify(fx, placements, run);
            }
        }
    }

    private void verify(ExecFixture fx, Placements placements, UUID run) {
        // Every counted receipt carries the generation of the lease that completed its chunk.
        List<Map<String, Object>> rows = new ArrayList<>();
        RunRecords.byPlacement(placements.control().withHandle(h -> RunRecords.routes(h, run, "")))
                .forEach((alias, shards) -> rows.addAll(placements
                        .jdbi(alias)
                        .withHandle(h -> h.createQuery("SELECT chunk_index, state, lease_generation, attempts,"
                                        + " receipt_key FROM exec_chunks WHERE run_id = :r AND shard = ANY(:s)")
                                .bind("r", run)
                                .bindArray("s", Integer.class, shards)
                                .mapToMap()
                                .list())));
        assertThat(rows).hasSize(CASES / 100);
        for (Map<String, Object> r : rows) {
            assertThat(r.get("state")).isEqualTo("done");
            assertThat((String) r.get("receipt_key")).endsWith("-g" + r.get("lease_generation") + ".json");
            assertThat(((Number) r.get("attempts")).intValue()).isLessThanOrEqualTo(ChunkTables.MAX_ATTEMPTS);
        }
        // Every planned case exactly once, with the deterministic answer's outcome.
        BitSet seen = new BitSet(CASES);
        for (ObjectRef ref : IndependentTally.receipts(placements, run)) {
            JsonNode receipt = IndependentTally.read(fx.store, ref);
            assertThat(ref.key().value())
                    .endsWith("-g" + receipt.path("lease_generation").asLong() + ".json");
            for (JsonNode c : receipt.path("cases")) {
                int ordinal = c.path("ordinal").asInt();
                assertThat(seen.get(ordinal))
                        .as("case %d counted twice", ordinal)
                        .isFalse();
                seen.set(ordinal);
                String expected = ordinal % 97 == 3 ? "errored" : (ordinal % 4 == 0 ? "failed" : "passed");
                assertThat(c.path("gates").path("all").asText()).isEqualTo(expected);
            }
        }
        assertThat(seen.cardinality()).isEqualTo(CASES);
        // The settled table equals the independent count.
        Map<String, IndependentTally.Gate> independent = IndependentTally.compute(fx, placements, run);
        List<Map<String, Object>> settled = fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT name, planned, passed, failed, errored, passed_gate"
                                + " FROM run_gate_results WHERE run_id = :r ORDER BY gate_index")
                        .bind("r", run)
                        .mapToMap()
                        .list());
        assertThat(settled).hasSize(independent.size());
        for (Map<String, Object> g : settled) {
            IndependentTally.Gate want = independent.get((String) g.get("name"));
            assertThat(g.get("planned")).isEqualTo(want.planned());
            assertThat(g.get("passed")).isEqualTo(want.passed());
            assertThat(g.get("failed")).isEqualTo(want.failed());
            assertThat(g.get("errored")).isEqualTo(want.errored());
            assertThat(g.get("passed_gate")).isEqualTo(want.meets());
        }
    }

    private Process start(String mode, ExecFixture fx, Path config, String arg, String lease) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path"),
                ExecMain.class.getName(),
                mode,
                fx.controlUrl,
                fx.storeRoot.toString(),
                config.toString(),
                arg,
                lease));
        Path logs = Path.of("target", "crash-logs");
        Files.createDirectories(logs);
        File log = logs.resolve(mode + "-" + System.nanoTime() + ".log").toFile();
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(log)
                .start();
    }
}
