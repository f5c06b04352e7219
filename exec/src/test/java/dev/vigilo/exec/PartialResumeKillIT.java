package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.common.crash.RandomKills;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.placement.ShardMover;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.plan.PlanShape;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Resume from partial receipts (docs/execution.md, "Resume from partial receipts"): a {@code vigilo worker} process
 * (ExecMain's, concurrency 4) is killed with SIGKILL in the middle of a run of two chunks of 100 cases, under
 * 10-minute leases; a worker restarted on the same machine takes the dead worker's chunks at once, carries the
 * entries of their partial receipt chains forward and asks the agent again at most for the cases that held a case slot
 * at the kill plus 16 per chunk (those that finished after the chunk's last referenced partial receipt). Killed
 * before any partial receipt, between partial receipts, and after a chunk's final receipt was written but before its
 * completion committed; and with a damaged chain, which the restarted worker ignores (executing the chunk whole).
 * Every time: the run settles with exactly one passing result per case, and {@code vigilo verify} passes; a carried
 * entry altered in the final receipt then fails it.
 */
class PartialResumeKillIT {
    private static final int CASES = 200; // chunks 0 and 1 of 100 cases
    private static final int CONCURRENCY = 4;
    /** Entries a chunk may have finished and not yet referenced (PartialWriter.BATCH). */
    private static final int BATCH = 16;

    private static final long LEASE_MS = 600_000;
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");

    @TempDir
    Path dir;

    /** What the test server saw and what a scenario holds or waits for. */
    private static final class Calls {
        final CountDownLatch killed = new CountDownLatch(1);
        final Map<Integer, Integer> asked = new ConcurrentHashMap<>();
        volatile IntPredicate hold = n -> false;

        Reply answer(OpenAiTestServer.Request r) {
            Matcher m = QUESTION.matcher(r.lastUserMessage());
            int n = m.find() ? Integer.parseInt(m.group(1)) : -1;
            asked.merge(n, 1, Integer::sum);
            if (hold.test(n) && killed.getCount() > 0) {
                try {
                    killed.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return Reply.content(Integer.toString(n * 2)).withLatency(Duration.ofMillis(5));
        }
    }

    /**
     * One run on its own execution database "a", admitted and ready for workers; with {@code spare}, a second
     * execution database "b" (on another server) is registered too, holding nothing until a shard moves there.
     */
    private final class Scenario implements AutoCloseable {
        final Calls calls = new Calls();
        final Path config;
        final ExecutionConfig exec;
        final ExecFixture fx;
        final Placements placements;
        final OpenAiTestServer llm;
        final UUID run;
        /** Where the run's chunks are routed (they all are in one placement). */
        volatile String home = "a";

        Scenario(String name) throws IOException {
            this(name, false);
        }

        Scenario(String name, boolean spare) throws IOException {
            Path root = dir.resolve(name);
            Files.createDirectories(root);
            config = root.resolve("execution.toml");
            Files.writeString(
                    config,
                    "[placements.a]\njdbc_url = \"" + TestPostgres.newDatabaseUrl() + "\"\n"
                            + (spare ? "[placements.b]\njdbc_url = \"" + TestPostgres.newDatabaseUrl(1) + "\"\n" : ""));
            exec = ExecutionConfig.parse(config);
            fx = new ExecFixture(root, CASES);
            placements = Placements.open(fx.control, exec);
            llm = OpenAiTestServer.start();
            llm.answerWith(calls::answer);
            run = fx.prepare("""
                    name: partial-resume
                    agent: {kind: http, url: "%s", model: m, max_tokens: 50, max_attempts: 1, timeout_seconds: 60}
                    evaluators:
                      - {name: exact, kind: exact_match}
                    gates:
                      - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                    """.formatted(llm.chatUrl()));
            // Every shard starts in "a" (with a spare "b", round robin would spread them).
            fx.control
                    .jdbi()
                    .useHandle(h -> h.createUpdate("UPDATE run_plans SET initial_placement = :p WHERE run_id = :r")
                            .bind("p", PlanShape.placementRule(List.of("a")))
                            .bind("r", run)
                            .execute());
            new Admission(placements, fx.storage).admit(run);
        }

        <T> T sql(org.jdbi.v3.core.HandleCallback<T, RuntimeException> f) {
            return placements.jdbi(home).withHandle(f);
        }

        /** Per chunk, the number of case entries its row's partial receipt chain holds (0: none referenced). */
        Map<Long, Integer> partialCases() {
            Map<Long, Integer> out = new HashMap<>();
            sql(h -> h.createQuery("SELECT chunk_index, coalesce(partial_cases, 0) AS n FROM exec_chunks"
                                    + " WHERE run_id = :r")
                            .bind("r", run)
                            .mapToMap()
                            .list())
                    .forEach(row ->
                            out.put(((Number) row.get("chunk_index")).longValue(), ((Number) row.get("n")).intValue()));
            return out;
        }

        /** Kills the first worker when {@code ready} holds, and returns the cases asked before the restart. */
        Map<Integer, Integer> killWhen(Process first, String what, java.util.function.BooleanSupplier ready)
                throws Exception {
            try {
                RandomKills.awaitWhileAlive(first, Duration.ofMinutes(3), what, ready);
                assertThat(RandomKills.killAfter(first, 0)).isTrue();
                assertThat(first.waitFor()).isEqualTo(RandomKills.KILLED);
            } finally {
                first.destroyForcibly();
                calls.killed.countDown();
            }
            return Map.copyOf(calls.asked);
        }

        /**
         * Restarts a worker, waits for the run to settle and checks: exactly one passing result per case, every case
         * asked at least once, the cases asked again at most {@code bound}, verify intact.
         *
         * @return the cases asked again after the restart
         */
        Set<Integer> restartAndSettle(Map<Integer, Integer> before, int bound) throws Exception {
            Process second = worker(this);
            assertThat(second.waitFor(4, TimeUnit.MINUTES))
                    .as("the restarted worker finished while the dead worker's leases had minutes left")
                    .isTrue();
            assertThat(second.exitValue()).isZero();
            assertThat(fx.runStatus(run)).isEqualTo("settled");
            ExecutionStatus settled = new ExecutionStatusReader(placements).status(run);
            assertThat(settled.execution().casesDone()).isEqualTo(CASES);
            assertThat(settled.gates().get(0).executed()).isEqualTo(CASES);
            assertThat(settled.gates().get(0).passed()).isEqualTo(CASES);
            Set<Integer> again = new HashSet<>();
            for (int n = 0; n < CASES; n++) {
                int total = calls.asked.getOrDefault(n, 0);
                assertThat(total).as("calls of case %d", n).isGreaterThanOrEqualTo(1);
                if (before.containsKey(n) && total > before.get(n)) {
                    again.add(n);
                }
            }
            System.out.printf(
                    "PartialResumeKillIT: %d requests before the kill, %d after; %d cases asked again (bound %d)%n",
                    before.values().stream().mapToInt(Integer::intValue).sum(),
                    llm.requestCount()
                            - before.values().stream()
                                    .mapToInt(Integer::intValue)
                                    .sum(),
                    again.size(),
                    bound);
            assertThat(again.size()).as("cases asked again: %s", again).isLessThanOrEqualTo(bound);
            RunVerifier.Report report = verify();
            assertThat(report.problem()).isEmpty();
            assertThat(report.intact()).isTrue();
            return again;
        }

        RunVerifier.Report verify() {
            return new RunVerifier(placements, fx.storage).verify(run);
        }

        /** The final receipt of {@code chunk}, as its row references it. */
        Receipt receipt(long chunk) {
            return ChunkRows.receipt(run, fx.store, row(chunk));
        }

        ChunkRows.Row row(long chunk) {
            return ChunkRows.one(placements, run, home, chunk).orElseThrow();
        }

        /** The reference of chunk 0's final receipt, as its row holds it. */
        ObjectRef receipt0Ref() {
            return row(0).receipt().orElseThrow();
        }

        @Override
        public void close() {
            calls.killed.countDown();
            llm.close();
            placements.close();
            fx.close();
        }
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void killedBeforeTheFirstPartialReceiptOnlyTheCasesInFlightAreAskedAgain() throws Exception {
        try (Scenario s = new Scenario("before-first")) {
            s.calls.hold = n -> true; // nothing finishes before the kill
            Process first = worker(s);
            Map<Integer, Integer> before =
                    s.killWhen(first, "every case slot holding a call", () -> s.llm.inFlight() >= CONCURRENCY);
            assertThat(s.partialCases().values())
                    .as("no partial receipt before the kill")
                    .containsOnly(0);
            Set<Integer> again = s.restartAndSettle(before, CONCURRENCY);
            assertThat(again).isEqualTo(before.keySet());
            assertThat(s.receipt(0).resumed()).isEmpty(); // executed from its start: version 4, as before
        }
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void killedBetweenPartialReceiptsTheChainsAreCarriedAndATamperedCarriedEntryFailsVerify() throws Exception {
        try (Scenario s = new Scenario("between")) {
            s.calls.hold = n -> n == 60 || n == 160; // one call per chunk held until the kill
            Process first = worker(s);
            Map<Integer, Integer> before = s.killWhen(first, "two partial receipts in each chunk", () -> {
                Map<Long, Integer> p = s.partialCases();
                return s.calls.asked.containsKey(60)
                        && s.calls.asked.containsKey(160)
                        && p.getOrDefault(0L, 0) >= 2 * BATCH
                        && p.getOrDefault(1L, 0) >= 2 * BATCH;
            });
            Map<Long, Integer> referenced = s.partialCases(); // as the dead worker left them
            assertThat(referenced.get(0L)).isGreaterThanOrEqualTo(2 * BATCH).isLessThan(100);
            assertThat(referenced.get(1L)).isGreaterThanOrEqualTo(2 * BATCH).isLessThan(100);
            Set<Integer> again = s.restartAndSettle(before, CONCURRENCY + 2 * BATCH);
            assertThat(again).contains(60, 160);
            for (long chunk = 0; chunk < 2; chunk++) {
                long c = chunk;
                assertThat(again.stream().filter(n -> n / 100 == c).count())
                        .as("cases of chunk %d asked again", chunk)
                        .isLessThanOrEqualTo(CONCURRENCY + BATCH);
                Receipt r = s.receipt(chunk);
                assertThat(r.resumed()).as("chunk %d resumed", chunk).isPresent();
                assertThat(r.resumed().get().carried()).hasSize(referenced.get(chunk));
                assertThat(r.resumed().get().carried())
                        .allSatisfy(x -> assertThat(x.generation()).isEqualTo(r.leaseGeneration() - 1));
                // A carried case was not asked again.
                r.resumed().get().carried().forEach(x -> assertThat(again).doesNotContain((int) x.ordinal()));
            }
            assertThat(new String(
                            s.fx.store.read(s.receipt0Ref(), Deadline.after(Duration.ofSeconds(10))),
                            StandardCharsets.UTF_8))
                    // version 8: version 7's resumed_from, and transcripts that are slices of containers
                    .startsWith("{\"format\":\"vigilo.exec.receipt\",\"version\":8,");

            // Tampering: chunk 0's final receipt with one carried entry altered (its agent time), written as a new
            // object and referenced by the row, consistent otherwise: verify fails on the carried entry.
            Receipt r = s.receipt(0);
            long carried = r.resumed().get().carried().get(0).ordinal();
            ObjectMapper json = new ObjectMapper();
            ObjectNode n = (ObjectNode)
                    json.readTree(s.fx.store.read(s.receipt0Ref(), Deadline.after(Duration.ofSeconds(10))));
            for (var c : n.withArray("cases")) {
                if (c.get("ordinal").asLong() == carried) {
                    ((ObjectNode) c).put("agent_ms", c.get("agent_ms").asLong() + 1);
                }
            }
            byte[] tampered = (json.writeValueAsString(n) + "\n").getBytes(StandardCharsets.UTF_8);
            ObjectRef ref = s.fx.store.create(
                    ObjectKey.of("runs/" + s.run + "/receipts/0000000000-tampered.json"),
                    tampered,
                    Deadline.after(Duration.ofSeconds(10)));
            s.sql(h -> h.createUpdate("UPDATE exec_chunks SET receipt_key = :k, receipt_length = :l,"
                            + " receipt_sha256 = :s WHERE run_id = :r AND chunk_index = 0")
                    .bind("k", ref.key().value())
                    .bind("l", ref.length())
                    .bind("s", ref.sha256().toHex())
                    .bind("r", s.run)
                    .execute());
            RunVerifier.Report report = s.verify();
            assertThat(report.intact()).isFalse();
            assertThat(report.problem().orElseThrow())
                    .contains("was carried forward from partial receipt chain")
                    .contains("differs from the entry there");
        }
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void killedBetweenPartialReceiptsThenMovedTheChainsAreCarriedAtTheNewPlacement() throws Exception {
        try (Scenario s = new Scenario("moved", true)) {
            s.calls.hold = n -> n == 60 || n == 160;
            Process first = worker(s);
            Map<Integer, Integer> before = s.killWhen(first, "two partial receipts in each chunk", () -> {
                Map<Long, Integer> p = s.partialCases();
                return s.calls.asked.containsKey(60)
                        && s.calls.asked.containsKey(160)
                        && p.getOrDefault(0L, 0) >= 2 * BATCH
                        && p.getOrDefault(1L, 0) >= 2 * BATCH;
            });
            Map<Long, Integer> referenced = s.partialCases();
            List<Integer> shards = s.sql(h -> h.createQuery("SELECT DISTINCT shard FROM exec_chunks WHERE run_id = :r"
                            + " AND chunk_index IN (0, 1) ORDER BY 1")
                    .bind("r", s.run)
                    .mapTo(Integer.class)
                    .list());
            // The dead worker's 10-minute leases do not hold the move up: its leased rows arrive queued.
            for (int shard : shards) {
                assertThat(new ShardMover(s.placements).move(s.run, shard, "b").outcome())
                        .isEqualTo(ShardMover.Outcome.MOVED);
            }
            s.home = "b";
            assertThat(s.partialCases())
                    .as("the chunk rows at the new placement reference the same chains")
                    .containsEntry(0L, referenced.get(0L))
                    .containsEntry(1L, referenced.get(1L));
            Set<Integer> again = s.restartAndSettle(before, CONCURRENCY + 2 * BATCH);
            assertThat(again).contains(60, 160);
            for (long chunk = 0; chunk < 2; chunk++) {
                long c = chunk;
                assertThat(again.stream().filter(n -> n / 100 == c).count())
                        .as("cases of chunk %d asked again", chunk)
                        .isLessThanOrEqualTo(CONCURRENCY + BATCH);
                Receipt r = s.receipt(chunk);
                assertThat(r.resumed())
                        .as("chunk %d resumed at the new placement", chunk)
                        .isPresent();
                assertThat(r.resumed().get().carried()).hasSize(referenced.get(chunk));
                // Claimed at generation 1 in "a"; the move advanced it to 2; the claim in "b" is generation 3.
                assertThat(r.leaseGeneration()).isEqualTo(3);
                assertThat(r.resumed().get().carried())
                        .allSatisfy(x -> assertThat(x.generation()).isEqualTo(1));
                r.resumed().get().carried().forEach(x -> assertThat(again).doesNotContain((int) x.ordinal()));
            }
        }
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void killedAfterTheFinalReceiptBeforeTheCompletionAtMost16CasesAreAskedAgain() throws Exception {
        try (Scenario s = new Scenario("after-receipt")) {
            long shard = s.sql(h -> h.createQuery("SELECT shard FROM exec_chunks WHERE run_id = :r AND chunk_index = 0")
                    .bind("r", s.run)
                    .mapTo(Long.class)
                    .one());
            ObjectKey finalReceipt = Receipt.key(s.run, 0, 1);
            // The test holds chunk 0's shard row FOR UPDATE: the completion's FOR SHARE waits, after the receipt.
            try (Handle lock = s.placements.jdbi("a").open()) {
                lock.begin();
                lock.createQuery("SELECT shard FROM exec_run_shards WHERE run_id = :r AND shard = :s FOR UPDATE")
                        .bind("r", s.run)
                        .bind("s", shard)
                        .mapTo(Long.class)
                        .one();
                Process first = worker(s);
                Map<Integer, Integer> before = s.killWhen(
                        first,
                        "chunk 0's final receipt written, its completion waiting",
                        () -> s.fx.store
                                .head(finalReceipt, Deadline.after(Duration.ofSeconds(10)))
                                .isPresent());
                lock.rollback();
                int referenced = s.partialCases().get(0L);
                assertThat(referenced).isGreaterThanOrEqualTo(100 - BATCH);
                Set<Integer> again = s.restartAndSettle(before, CONCURRENCY + 2 * BATCH);
                assertThat(again.stream().filter(n -> n < 100).count())
                        .as("cases of chunk 0 asked again (none was in flight: its receipt was written)")
                        .isLessThanOrEqualTo(BATCH)
                        .isEqualTo(100 - referenced);
                Receipt r = s.receipt(0);
                assertThat(r.leaseGeneration()).isGreaterThanOrEqualTo(2);
                assertThat(r.resumed().orElseThrow().carried()).hasSize(referenced);
            }
        }
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aDamagedChainIsIgnoredAndTheChunkExecutedWhole() throws Exception {
        try (Scenario s = new Scenario("damaged")) {
            s.calls.hold = n -> n == 60 || n == 160;
            Process first = worker(s);
            Map<Integer, Integer> before = s.killWhen(
                    first,
                    "a partial receipt in chunk 0",
                    () -> s.calls.asked.containsKey(60) && s.partialCases().getOrDefault(0L, 0) >= BATCH);
            String head = s.sql(
                    h -> h.createQuery("SELECT partial_key FROM exec_chunks WHERE run_id = :r" + " AND chunk_index = 0")
                            .bind("r", s.run)
                            .mapTo(String.class)
                            .one());
            Path file = s.fx.storeRoot;
            for (String segment : head.split("/")) {
                file = file.resolve(segment);
            }
            file.toFile().setWritable(true);
            Files.writeString(file, "{\"damaged\":true}\n");
            // Chunk 0 is executed whole again (its 100 cases, those asked before included); chunk 1 resumes.
            Set<Integer> again = s.restartAndSettle(before, 100 + CONCURRENCY + BATCH);
            assertThat(s.receipt(0).resumed()).isEmpty();
            assertThat(again)
                    .containsAll(before.keySet().stream().filter(n -> n < 100).toList());
        }
    }

    private static Process worker(Scenario s) throws IOException {
        Path logs = Path.of("target", "crash-logs");
        Files.createDirectories(logs);
        List<String> cmd = RandomKills.java(List.of("-Xmx256m"));
        cmd.addAll(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                ExecMain.class.getName(),
                "worker",
                s.fx.controlUrl,
                s.fx.storeRoot.toString(),
                s.config.toString(),
                Integer.toString(CONCURRENCY),
                Long.toString(LEASE_MS)));
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(logs.resolve("partial-resume-worker-" + System.nanoTime() + ".log")
                        .toFile())
                .start();
    }
}
