package dev.vigilo.exec.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.IndependentTally;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.SettlementTest;
import dev.vigilo.exec.SimulatedWorker;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.exec.settlement.Settlement;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.view.RunResults;
import dev.vigilo.plan.RunStatusReader;
import dev.vigilo.storage.Deadline;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One run over two execution databases on two independent PostgreSQL servers, with shards moved mid-run. */
class MultiPlacementTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    Path dir;

    ExecFixture fx;
    ExecutionConfig config;
    Placements placements;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 30_000);
        config = new ExecutionConfig(
                "two embedded servers",
                Map.of(
                        "a",
                        new ExecutionConfig.Placement(
                                "a", Optional.of(TestPostgres.newDatabaseUrl(0)), Optional.empty(), 4),
                        "b",
                        new ExecutionConfig.Placement(
                                "b", Optional.of(TestPostgres.newDatabaseUrl(1)), Optional.empty(), 4)));
        placements = Placements.open(fx.control, config);
    }

    @AfterEach
    void tearDown() {
        placements.close();
        fx.close();
    }

    private UUID admitted() {
        UUID run = fx.prepare();
        fx.placeOn(run, config);
        new Admission(placements, fx.storage).admit(run);
        return run;
    }

    private <T> T local(String alias, String sql, UUID run, Class<T> type) {
        return placements
                .jdbi(alias)
                .withHandle(h -> h.createQuery(sql).bind("r", run).mapTo(type).one());
    }

    /** Waits (bounded) until {@code alias}'s database, whose clock judges leases, holds the chunk's lease expired. */
    private void awaitLeaseExpired(String alias, UUID run, long chunk) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!placements
                .jdbi(alias)
                .withHandle(h -> h.createQuery("SELECT lease_expires_at < clock_timestamp()"
                                + " FROM exec_chunks WHERE run_id = :r AND chunk_index = :c")
                        .bind("r", run)
                        .bind("c", chunk)
                        .mapTo(Boolean.class)
                        .one())) {
            assertThat(System.nanoTime() - deadline)
                    .as("lease of chunk %d expired", chunk)
                    .isNegative();
            Thread.sleep(5);
        }
    }

    private RunRecords.Route route(UUID run, int shard) {
        return placements.control().withHandle(h -> RunRecords.routes(h, run, "")).stream()
                .filter(r -> r.shard() == shard)
                .findFirst()
                .orElseThrow();
    }

    @Test
    void aShardMovedMidRunKeepsExecutingAndSettlementEqualsTheReceipts() throws Exception {
        UUID run = admitted();
        long systemA =
                local("a", "SELECT system_identifier FROM pg_control_system() WHERE :r IS NOT NULL", run, Long.class);
        long systemB =
                local("b", "SELECT system_identifier FROM pg_control_system() WHERE :r IS NOT NULL", run, Long.class);
        assertThat(systemA).as("two independent servers").isNotEqualTo(systemB);
        // Shard s lives on alias s mod 2: even chunks in a, odd ones in b.
        assertThat(local("a", "SELECT count(*) FROM exec_chunks WHERE run_id = :r AND shard % 2 = 0", run, Long.class))
                .isEqualTo(150);
        assertThat(local("b", "SELECT count(*) FROM exec_chunks WHERE run_id = :r", run, Long.class))
                .isEqualTo(150);

        SimulatedWorker worker = new SimulatedWorker(placements, fx.store, run);
        SimulatedWorker.Held first =
                worker.claim("a", 4, Duration.ofSeconds(60)).orElseThrow();
        assertThat(first.lease().chunkIndex()).isEqualTo(4);
        assertThat(worker.complete(first, worker.execute(first.lease()))).isEqualTo(ChunkTables.Completion.COMPLETED);
        // A worker holds shard 4's second chunk when the shard moves.
        SimulatedWorker stale = new SimulatedWorker(placements, fx.store, run);
        SimulatedWorker.Held held = stale.claim("a", 4, Duration.ofSeconds(60)).orElseThrow();
        assertThat(held.lease().chunkIndex()).isEqualTo(132);
        long staleGeneration = held.lease().generation();
        Receipt staleReceipt = stale.execute(held.lease());
        assertThat(worker.run(40)).isEqualTo(40);

        ShardMover.Result moved = new ShardMover(placements).move(run, 4, "b");
        assertThat(moved.outcome()).isEqualTo(ShardMover.Outcome.MOVED);
        assertThat(moved.from()).isEqualTo("a");
        assertThat(moved.epoch()).isEqualTo(2);
        assertThat(moved.chunks()).isEqualTo(3);
        assertThat(route(run, 4)).satisfies(r -> {
            assertThat(r.placement()).isEqualTo("b");
            assertThat(r.state()).isEqualTo("active");
            assertThat(r.epoch()).isEqualTo(2);
        });
        assertThat(local("a", "SELECT state FROM exec_run_shards WHERE run_id = :r AND shard = 4", run, String.class))
                .isEqualTo("moved");
        assertThat(local(
                        "b",
                        "SELECT receipt_key FROM exec_chunks WHERE run_id = :r AND chunk_index = 4",
                        run,
                        String.class))
                .isEqualTo(local(
                        "a",
                        "SELECT receipt_key FROM exec_chunks WHERE run_id = :r AND chunk_index = 4",
                        run,
                        String.class));

        // The stale worker's completion at the source is refused; its receipt object exists but counts nowhere.
        assertThat(stale.complete(held, staleReceipt)).isEqualTo(ChunkTables.Completion.SHARD_CLOSED);
        assertThat(fx.store.head(Receipt.key(run, 132, staleGeneration), Deadline.after(Duration.ofSeconds(5))))
                .isPresent();
        // The moved shard keeps executing at the target, past the stale worker's generation.
        SimulatedWorker.Held again =
                worker.claim("b", 4, Duration.ofSeconds(60)).orElseThrow();
        assertThat(again.lease().chunkIndex()).isEqualTo(132);
        assertThat(again.lease().generation()).isGreaterThan(staleGeneration);
        assertThat(worker.complete(again, worker.execute(again.lease()))).isEqualTo(ChunkTables.Completion.COMPLETED);

        // A lease taken over after it expired fences its first holder.
        SimulatedWorker slow = new SimulatedWorker(placements, fx.store, run);
        SimulatedWorker.Held slowHeld = slow.claim("b", 5, Duration.ofMillis(1)).orElseThrow();
        Receipt slowReceipt = slow.execute(slowHeld.lease());
        awaitLeaseExpired("b", run, slowHeld.lease().chunkIndex());
        SimulatedWorker.Held takeover =
                worker.claim("b", 5, Duration.ofSeconds(60)).orElseThrow();
        assertThat(takeover.lease().chunkIndex()).isEqualTo(slowHeld.lease().chunkIndex());
        assertThat(slow.complete(slowHeld, slowReceipt)).isEqualTo(ChunkTables.Completion.FENCED);
        assertThat(worker.complete(takeover, worker.execute(takeover.lease())))
                .isEqualTo(ChunkTables.Completion.COMPLETED);

        worker.run(1_000);
        Settlement.Result settled = new Settlement(placements).settleIfComplete(run);
        assertThat(settled.outcome()).isEqualTo(Settlement.Outcome.SETTLED);
        Map<String, IndependentTally.Gate> expected = IndependentTally.compute(fx, placements, run);
        SettlementTest.assertMatches(settled.gates(), expected);
        // Every planned case counted exactly once: the fenced workers' receipts are in no total.
        assertThat(settled.gates()).allSatisfy(g -> assertThat(g.executed()).isEqualTo(g.planned()));
        Set<String> referenced = new HashSet<>();
        IndependentTally.receipts(placements, run)
                .forEach(r -> referenced.add(r.key().value()));
        assertThat(referenced)
                .hasSize(300)
                .doesNotContain(Receipt.key(run, 132, staleGeneration).value())
                .doesNotContain(Receipt.key(
                                run,
                                slowHeld.lease().chunkIndex(),
                                slowHeld.lease().generation())
                        .value());

        // Results: every case once, in chunk order across both databases.
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RunResults.Summary summary = new RunResults(placements, fx.storage).write(run, out);
        assertThat(summary.chunks()).isEqualTo(300);
        assertThat(summary.cases()).isEqualTo(30_000);
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertThat(lines).hasSize(30_000);
        long previousChunk = -1;
        long ordinal = 0;
        for (String line : lines) {
            JsonNode n = MAPPER.readTree(line);
            assertThat(n.path("chunk").asLong()).isGreaterThanOrEqualTo(previousChunk);
            previousChunk = n.path("chunk").asLong();
            assertThat(n.path("ordinal").asLong()).isEqualTo(ordinal++);
            assertThat(n.path("shard").asLong()).isEqualTo(previousChunk % 128);
        }
        JsonNode longOne = MAPPER.readTree(lines.get(42));
        assertThat(longOne.path("case_id").asText()).isEqualTo("case-42");
        assertThat(longOne.path("output").asText()).hasSize(Receipt.INLINE_OUTPUT_BYTES + 10);

        // Status: progress per shard, the moved shard at its new home, the recorded table.
        ExecutionStatus status = new ExecutionStatusReader(placements).status(run);
        assertThat(status.execution().chunksDone()).isEqualTo(300);
        assertThat(status.execution().casesDone()).isEqualTo(30_000);
        assertThat(status.execution().shards()).hasSize(128);
        assertThat(status.execution().shards().get(4).placement()).isEqualTo("b");
        assertThat(status.verdict()).isEqualTo(settled.verdict());
        assertThat(status.gatesFinal()).isTrue();
        assertThat(status.gates()).isEqualTo(settled.gates());
    }

    @Test
    void anInterruptedMoveResumesAndATargetWithDifferentRowsIsRefused() {
        UUID run = admitted();
        SimulatedWorker worker = new SimulatedWorker(placements, fx.store, run);
        worker.run(10);
        // Interrupted after the source froze and one identical page reached the target.
        placements
                .control()
                .useHandle(h ->
                        h.execute("UPDATE exec_shard_routes SET state = 'moving' WHERE run_id = ? AND shard = 6", run));
        ShardCopy.Source src = placements.jdbi("a").inTransaction(h -> ShardCopy.freeze(h, run, 6, 1, "a"));
        placements.jdbi("b").useTransaction(h -> {
            ShardCopy.prepareTarget(h, run, 6, src, 2, "b");
            ShardCopy.writePage(
                    h,
                    run,
                    placements
                            .jdbi("a")
                            .withHandle(a -> ShardCopy.page(a, run, 6, -1))
                            .orElseThrow(),
                    "b");
        });
        assertThat(worker.claim("a", 6, Duration.ofSeconds(60))).isEmpty();
        assertThat(new Settlement(placements).settleIfComplete(run).outcome())
                .isEqualTo(Settlement.Outcome.NOT_COMPLETE);

        ShardMover mover = new ShardMover(placements);
        ShardMover.Result resumed = mover.move(run, 6, "b");
        assertThat(resumed.outcome()).isEqualTo(ShardMover.Outcome.MOVED);
        assertThat(resumed.chunks()).isEqualTo(3);
        assertThat(mover.move(run, 6, "b").outcome()).isEqualTo(ShardMover.Outcome.ALREADY_THERE);
        // Back to its former home, whose rows were frozen as moved.
        ShardMover.Result back = mover.move(run, 6, "a");
        assertThat(back.epoch()).isEqualTo(3);
        assertThat(route(run, 6).placement()).isEqualTo("a");

        // A target holding another identity for a chunk is a conflict; nothing is routed there.
        ShardCopy.Source src8 = placements.jdbi("a").withHandle(h -> ShardCopy.freeze(h, run, 8, 1, "a"));
        placements
                .jdbi("a")
                .useHandle(h ->
                        h.execute("UPDATE exec_run_shards SET state = 'open' WHERE run_id = ? AND shard = 8", run));
        placements.jdbi("b").useTransaction(h -> {
            ShardCopy.prepareTarget(h, run, 8, src8, 2, "b");
            ShardCopy.writePage(
                    h,
                    run,
                    placements
                            .jdbi("a")
                            .withHandle(a -> ShardCopy.page(a, run, 8, -1))
                            .orElseThrow(),
                    "b");
            h.execute(
                    "UPDATE exec_chunks SET chunk_id = gen_random_uuid() WHERE run_id = ? AND chunk_index = 136", run);
        });
        assertThatThrownBy(() -> mover.move(run, 8, "b"))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining("execution database \"b\" already holds a different row for chunk 136");
        assertThat(route(run, 8).placement()).isEqualTo("a");
        // Repaired, the same command finishes the move.
        placements
                .jdbi("b")
                .useHandle(h -> h.execute("DELETE FROM exec_chunks WHERE run_id = ? AND chunk_index = 136", run));
        assertThat(mover.move(run, 8, "b").outcome()).isEqualTo(ShardMover.Outcome.MOVED);

        worker.run(1_000);
        Settlement.Result settled = new Settlement(placements).settleIfComplete(run);
        assertThat(settled.outcome()).isEqualTo(Settlement.Outcome.SETTLED);
        SettlementTest.assertMatches(settled.gates(), IndependentTally.compute(fx, placements, run));
    }

    @Test
    void statusJsonKeepsThePreparationKeysAndAddsExecution() throws Exception {
        UUID run = admitted();
        new SimulatedWorker(placements, fx.store, run).run(30);
        ExecutionStatus status = new ExecutionStatusReader(placements).status(run);
        String today = new RunStatusReader(fx.control.jdbi()).status(run).toJson();
        JsonNode merged = MAPPER.readTree(status.mergeInto(today));
        List<String> keys = iterate(merged);
        assertThat(keys)
                .startsWith("run_id", "status", "dispatchable", "creation_progress", "expected_chunks", "shards")
                .contains("execution", "verdict", "gates", "gates_final")
                .doesNotContain("failure_reason");
        assertThat(merged.path("shards")).isEqualTo(MAPPER.readTree(today).path("shards"));
        assertThat(merged.path("execution").path("chunks_done").asLong()).isEqualTo(30);
        assertThat(merged.path("execution").path("cases_done").asLong()).isEqualTo(3_000);
        assertThat(merged.path("execution").path("chunks").asLong()).isEqualTo(300);
        assertThat(merged.path("verdict").isNull()).isTrue();
        assertThat(merged.path("gates_final").asBoolean()).isFalse();
        JsonNode all = merged.path("gates").get(0);
        assertThat(all.path("name").asText()).isEqualTo("all");
        assertThat(all.path("planned").asLong()).isEqualTo(30_000);
        assertThat(all.path("executed").asLong()).isEqualTo(3_000);
        assertThat(all.path("passed").asLong()
                        + all.path("failed").asLong()
                        + all.path("errored").asLong())
                .isEqualTo(3_000);
        assertThat(all.path("pass_rate").asDouble())
                .isEqualTo(all.path("passed").asDouble() / 30_000);
        assertThat(all.path("passed_gate").isNull()).isTrue();
        JsonNode shard0 = merged.path("execution").path("shards").get(0);
        assertThat(shard0.path("placement").asText()).isEqualTo("a");
        assertThat(shard0.path("chunks").asLong()).isEqualTo(3);
    }

    private static List<String> iterate(JsonNode n) {
        List<String> keys = new java.util.ArrayList<>();
        n.fieldNames().forEachRemaining(keys::add);
        return keys;
    }
}
