package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.common.crash.RandomKills;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.placement.ShardMover;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.plan.CreationLeases;
import dev.vigilo.storage.ObjectRef;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real processes, killed with SIGKILL at random moments of their work: admission processes (each after its claim of
 * the run's admission lease, within the duration of an uninterrupted admission of an identical run), then workers over
 * two execution databases on two PostgreSQL servers (each while it holds a claimed chunk), with a shard moved
 * mid-run. Afterwards every planned case of every run has exactly one counted result, every counted receipt was
 * written under the lease generation that completed its chunk, and each settled gate table equals an independent
 * count over the receipts and the plan.
 *
 * <p>{@value RandomKills#POINTS}{@code =N} makes N kills (about 3 in 20 of them admissions); the seed is printed.
 */
class ExecutionCrashIT {
    private static final int DEFAULT_KILLS = 20;
    private static final int CASES = 5_000;
    private static final int WORKERS = 3;
    private static final long LEASE_MS = 2_000;
    private static final Duration CHILD_TIMEOUT = Duration.ofMinutes(2);
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");

    @TempDir
    Path dir;

    private ExecFixture fx;
    private Path config;
    private ExecutionConfig exec;
    private String profile;
    private final List<UUID> runs = new ArrayList<>();
    private final List<String> log = new ArrayList<>();
    private final List<Path> workerLogs = new ArrayList<>();

    /** A worker process and its progress log. */
    private record Child(Process process, Path log) {}

    @Test
    @Timeout(value = 20, unit = TimeUnit.MINUTES) // -Dvigilo.kill.points=N runs longer
    void everyCaseCountsOnceAfterKillsMovesAndRestarts() throws Exception {
        RandomKills kills = RandomKills.configure("exec ExecutionCrashIT", DEFAULT_KILLS);
        Random random = kills.random(0);
        int admissionKills = Math.max(1, kills.points() * 3 / 20);
        int workerKills = kills.points() - admissionKills;
        try (ExecFixture fixture = new ExecFixture(dir, CASES);
                OpenAiTestServer llm = OpenAiTestServer.start()) {
            fx = fixture;
            llm.answerWith(req -> {
                Matcher m = QUESTION.matcher(req.lastUserMessage());
                long i = m.find() ? Long.parseLong(m.group(1)) : -1;
                if (i % 97 == 3) {
                    return OpenAiTestServer.Reply.error(503, "overloaded");
                }
                return OpenAiTestServer.Reply.content(i % 4 == 0 ? "nope" : Long.toString(i * 2));
            });
            config = dir.resolve("execution.toml");
            Files.writeString(
                    config,
                    "[placements.a]\njdbc_url = \"" + TestPostgres.newDatabaseUrl(0) + "\"\n"
                            + "[placements.b]\njdbc_url = \"" + TestPostgres.newDatabaseUrl(1) + "\"\n");
            exec = ExecutionConfig.parse(config);
            profile = """
                    name: crash
                    agent: {kind: http, url: "%s", model: m, max_attempts: 2, timeout_seconds: 10}
                    evaluators:
                      - {name: exact, kind: exact_match}
                      - {name: digits, kind: regex, pattern: "^[0-9]+$", applies_to: {groups: [math]}}
                    gates:
                      - {name: all, required_evaluators: [exact], min_pass_rate: 0.7}
                      - {name: math, required_evaluators: [exact, digits], min_pass_rate: 0.9}
                    """.formatted(llm.chatUrl());

            // One admission uninterrupted, timed from its claim to its end; its run is the one whose shard moves.
            UUID first = newRun();
            Timing admission = admitUninterrupted(first);
            log.add("uninterrupted admission: claimed " + admission.startupMillis() + " ms after its start, ended "
                    + admission.workMillis() + " ms after its claim");

            // Admission processes killed at random moments after their claim; the workers' coordinators finish the
            // last killed admission. An admission that ends before its kill admitted its run: the next kill is on a
            // new run's admission.
            UUID admitting = newRun();
            int admissionsKilled = 0;
            for (int attempt = 0; admissionsKilled < admissionKills; attempt++) {
                assertThat(attempt).as("admission attempts; %s", log).isLessThan(admissionKills * 4);
                UUID run = admitting;
                CreationLeases.awaitEnd(
                        fx.control.jdbi(), run, admission.startupMillis(), CHILD_TIMEOUT, "the dead admission");
                String before = CreationLeases.owner(fx.control.jdbi(), run);
                Child admit = start("admit", run.toString());
                boolean claimed =
                        RandomKills.awaitWhileAlive(admit.process(), CHILD_TIMEOUT, "an admission claim", () -> {
                            String now = CreationLeases.owner(fx.control.jdbi(), run);
                            return now != null && !now.equals(before);
                        });
                long delay = RandomKills.delayWithin(random, admission.workMillis());
                if (!claimed) {
                    // Refused (the dead admission's lease was still live when this one tried to claim), or, when it
                    // exited 0, it admitted the rest of the run between two polls of the owner (or found it
                    // admitted): then every later admission of this run would end the same way, so the next kill is
                    // on a new run's admission.
                    int exit = admit.process().waitFor();
                    log.add("admission of " + run + " ended " + exit + " before its claim");
                    if (exit == 0) {
                        admitting = newRun();
                    }
                } else if (RandomKills.killAfter(admit.process(), delay)) {
                    admissionsKilled++;
                    log.add("admission of " + run + " killed " + delay + " ms after its claim, admitted "
                            + admissionCursor(run) + " chunks");
                } else {
                    assertThat(admit.process().waitFor())
                            .as("admission of %s: %s", run, Files.readString(admit.log()))
                            .isZero();
                    log.add("admission of " + run + " ended before its kill at " + delay + " ms");
                    admitting = newRun();
                }
            }

            try (Placements placements = Placements.open(fx.control, exec)) {
                List<Child> workers = new ArrayList<>();
                for (int i = 0; i < WORKERS; i++) {
                    workers.add(startWorker());
                }
                RandomKills.await(
                        CHILD_TIMEOUT, "run " + first + " to execute", () -> "running".equals(fx.runStatus(first)));
                boolean moved = false;
                int workersKilled = 0;
                int completedAtLastKill = 0;
                Map<String, Integer> killsPerChunk = new HashMap<>();
                while (workersKilled < workerKills) {
                    if (runs.stream().allMatch(r -> "settled".equals(fx.runStatus(r)))) {
                        // Everything settled before the last kill: give the workers more work.
                        UUID more = newRun();
                        log.add("all runs settled after " + workersKilled + " worker kills; run " + more + " added");
                        admitUninterrupted(more);
                        for (int i = 0; i < workers.size(); i++) {
                            if (!workers.get(i).process().isAlive()) {
                                workers.set(i, startWorker());
                            }
                        }
                    }
                    // Kill only after the runs made progress since the last kill, and a worker none of whose chunks
                    // was killed 3 times: kills must not use up a chunk's attempts (it would fail, correctly).
                    Progress progress = progress();
                    if (progress.completed() <= completedAtLastKill) {
                        Thread.sleep(10);
                        continue;
                    }
                    int victim = random.nextInt(workers.size());
                    Child w = workers.get(victim);
                    Set<String> holding = held(w);
                    if (holding.isEmpty() || holding.stream().anyMatch(c -> killsPerChunk.getOrDefault(c, 0) >= 3)) {
                        Thread.sleep(10);
                        continue;
                    }
                    // A random moment of its chunks' execution (the median time from a claim to its completion).
                    long delay = RandomKills.delayWithin(random, progress.medianChunkMillis());
                    Thread.sleep(delay);
                    Set<String> held = held(w);
                    if (held.isEmpty()) {
                        continue; // its chunks ended meanwhile: not a kill mid-work
                    }
                    if (!RandomKills.killAfter(w.process(), 0)) {
                        continue; // it ended on its own first
                    }
                    workersKilled++;
                    completedAtLastKill = progress().completed();
                    held.forEach(c -> killsPerChunk.merge(c, 1, Integer::sum));
                    log.add("worker killed holding " + held.size() + " claimed chunks, " + delay + " ms after it was"
                            + " seen holding chunks (median chunk " + progress.medianChunkMillis() + " ms), "
                            + completedAtLastKill + " chunks completed");
                    workers.set(victim, startWorker());
                    if (!moved && workersKilled >= 2 && "running".equals(fx.runStatus(first))) {
                        int shard = 5;
                        String from = placements
                                .control()
                                .withHandle(h -> h.createQuery("SELECT placement FROM exec_shard_routes"
                                                + " WHERE run_id = :r AND shard = 5")
                                        .bind("r", first)
                                        .mapTo(String.class)
                                        .one());
                        new ShardMover(placements).move(first, shard, from.equals("a") ? "b" : "a");
                        moved = true;
                        log.add("shard 5 of " + first + " moved from " + from);
                    }
                }
                for (Child w : workers) {
                    assertThat(w.process().waitFor(5, TimeUnit.MINUTES))
                            .as("a worker exits once the runs are settled")
                            .isTrue();
                }
                System.out.println(kills + ":\n  " + String.join("\n  ", log));
                assertThat(moved)
                        .as("a shard was moved while the run was executing")
                        .isTrue();
                for (UUID run : runs) {
                    assertThat(fx.runStatus(run))
                            .as("run %s (failure: %s); %s", run, fx.failureReason(run), log)
                            .isEqualTo("settled");
                    verify(fx, placements, run);
                }
            }
        }
    }

    /** Prepares a run (execution requested) and places it on both execution databases. */
    private UUID newRun() {
        UUID run = fx.prepare(profile);
        fx.placeOn(run, exec);
        runs.add(run);
        return run;
    }

    /** How an uninterrupted admission child spends its time. */
    private record Timing(long startupMillis, long workMillis) {}

    /** Admits {@code run} in a child that is not killed, timed from its start to its claim and to its end. */
    private Timing admitUninterrupted(UUID run) throws Exception {
        long start = System.nanoTime();
        Child admit = start("admit", run.toString());
        assertThat(RandomKills.awaitWhileAlive(
                        admit.process(),
                        CHILD_TIMEOUT,
                        "an admission claim",
                        () -> CreationLeases.owner(fx.control.jdbi(), run) != null))
                .isTrue();
        long claimed = System.nanoTime();
        assertThat(admit.process().waitFor(CHILD_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(admit.process().exitValue())
                .as(Files.readString(admit.log()))
                .isZero();
        return new Timing((claimed - start) / 1_000_000, RandomKills.millisSince(claimed));
    }

    /** The chunks a worker has claimed and not yet completed or given back, by its progress log. */
    private static Set<String> held(Child w) {
        if (!w.process().isAlive()) {
            return Set.of();
        }
        Set<String> held = new HashSet<>();
        for (String[] f : events(w.log())) {
            String chunk = f[1] + " " + f[2];
            switch (f[0]) {
                case "claimed" -> held.add(chunk);
                case "completed", "given-back" -> held.remove(chunk);
                default -> {}
            }
        }
        return held;
    }

    /** Chunks completed so far by all workers, and the median time from a claim to its completion. */
    private record Progress(int completed, long medianChunkMillis) {}

    private Progress progress() {
        List<Long> durations = new ArrayList<>();
        for (Path log : workerLogs) {
            Map<String, Long> claimed = new HashMap<>();
            for (String[] f : events(log)) {
                String chunk = f[1] + " " + f[2];
                long at = Long.parseLong(f[3]);
                if (f[0].equals("claimed")) {
                    claimed.put(chunk, at);
                }
                if (f[0].equals("completed") && claimed.containsKey(chunk)) {
                    durations.add(at - claimed.get(chunk));
                }
            }
        }
        Collections.sort(durations);
        return new Progress(durations.size(), durations.isEmpty() ? 0 : durations.get(durations.size() / 2));
    }

    /** The complete progress lines of a worker's log, split into fields. */
    private static List<String[]> events(Path log) {
        List<String[]> events = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(log)) {
                String[] f = line.split(" ");
                if (f.length >= 4
                        && (f[0].equals("claimed") || f[0].equals("completed") || f[0].equals("given-back"))
                        && f[3].length() >= 13) {
                    events.add(f);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return events;
    }

    private long admissionCursor(UUID run) {
        return fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT admission_cursor FROM run_plans WHERE run_id = :r")
                        .bind("r", run)
                        .mapTo(Long.class)
                        .one());
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

    private Child startWorker() throws IOException {
        Child w = start("worker", Integer.toString(4));
        workerLogs.add(w.log());
        return w;
    }

    private Child start(String mode, String arg) throws IOException {
        List<String> cmd = RandomKills.java(List.of("-Xmx256m"));
        cmd.addAll(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                ExecMain.class.getName(),
                mode,
                fx.controlUrl,
                fx.storeRoot.toString(),
                config.toString(),
                arg,
                Long.toString(LEASE_MS)));
        Path logs = Path.of("target", "crash-logs");
        Files.createDirectories(logs);
        Path log = logs.resolve(mode + "-" + System.nanoTime() + ".log");
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        return new Child(p, log);
    }
}
