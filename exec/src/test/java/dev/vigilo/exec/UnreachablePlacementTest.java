package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.placement.ShardMover;
import dev.vigilo.exec.settlement.RunCancellation;
import dev.vigilo.exec.settlement.Settlement;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.view.RunResults;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An execution database whose server stopped: every operation names it and changes nothing it should not; the status
 * still answers, with that database listed as unreachable and its shards' progress unknown.
 */
class UnreachablePlacementTest {
    @TempDir
    Path dir;

    ExecFixture fx;
    TestPostgres.PrivateServer server;
    Placements placements;

    @AfterEach
    void tearDown() {
        if (placements != null) {
            placements.close();
        }
        if (server != null) {
            server.close();
        }
        if (fx != null) {
            fx.close();
        }
    }

    private List<Map<String, Object>> controlState(UUID run) {
        return fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT r.status, r.verdict, r.failure_reason, s.shard, s.placement,"
                                + " s.state, s.route_epoch, (SELECT count(*) FROM run_gate_results g WHERE"
                                + " g.run_id = r.run_id) AS gates FROM runs r JOIN exec_shard_routes s USING (run_id)"
                                + " WHERE r.run_id = :r ORDER BY s.shard")
                        .bind("r", run)
                        .mapToMap()
                        .list());
    }

    @Test
    void resultsSettlementAndMovesFailWithTheAliasStatusSaysItIsUnreachableAndNothingChanges() throws IOException {
        fx = new ExecFixture(dir, 1_000);
        server = TestPostgres.startPrivateServer();
        ExecutionConfig config = new ExecutionConfig(
                "one shared and one private server",
                Map.of(
                        "a",
                        new ExecutionConfig.Placement(
                                "a", Optional.of(TestPostgres.newDatabaseUrl()), Optional.empty(), 2),
                        "b",
                        new ExecutionConfig.Placement("b", Optional.of(server.newDatabaseUrl()), Optional.empty(), 2)));
        placements = Placements.open(fx.control, config);
        UUID run = fx.prepare();
        fx.placeOn(run, config);
        new Admission(placements, fx.storage).admit(run);
        new SimulatedWorker(placements, fx.store, run).run(1_000);
        server.close();
        List<Map<String, Object>> before = controlState(run);

        // Each operation waits out the pool's connection timeout (10 s) before it reports the database: the four
        // run side by side, each on its own thread, so that the test waits for one timeout rather than four.
        ExecutorService pool = Executors.newFixedThreadPool(4);
        CompletableFuture<ExecutionStatus> status =
                CompletableFuture.supplyAsync(() -> new ExecutionStatusReader(placements).status(run), pool);
        List<CompletableFuture<Throwable>> failures = Stream.<ThrowingCallable>of(
                        () -> new Settlement(placements).settleIfComplete(run),
                        () -> new RunResults(placements, fx.storage).write(run, new ByteArrayOutputStream()),
                        () -> new ShardMover(placements).move(run, 1, "a"))
                .map(op -> CompletableFuture.supplyAsync(() -> catchThrowable(op), pool))
                .toList();
        assertThat(failures.get(0).join())
                .isInstanceOf(UnavailableException.class)
                .hasMessageContaining("execution database \"b\"")
                .hasMessageContaining("check that the database is running and reachable")
                .hasMessageNotContaining("\n");
        for (CompletableFuture<Throwable> failure : failures) {
            assertThat(failure.join())
                    .isInstanceOf(UnavailableException.class)
                    .hasMessageContaining("execution database \"b\"");
        }
        ExecutionStatus s = status.join();
        assertThat(s.execution().unreachable()).containsExactly("b");
        assertThat(s.execution().shards())
                .isNotEmpty()
                .allSatisfy(shard ->
                        assertThat(shard.known()).isEqualTo(!shard.placement().equals("b")));
        long doneOnA = s.execution().shards().stream()
                .filter(ExecutionStatus.ShardProgress::known)
                .mapToLong(ExecutionStatus.ShardProgress::chunksDone)
                .sum();
        assertThat(s.execution().chunksDone()).isEqualTo(doneOnA).isPositive();
        assertThat(s.toJson()).contains("\"unreachable\":[\"b\"]", "\"chunks_done\":null");
        pool.shutdown();
        assertThat(controlState(run)).isEqualTo(before);
        assertThat(fx.runStatus(run)).isEqualTo("pending");

        // Cancellation still revokes the run in the control database and says which database it could not close.
        RunCancellation.Result cancelled = new RunCancellation(placements).cancel(run);
        assertThat(cancelled.outcome()).isEqualTo(RunCancellation.Outcome.CANCELLED);
        assertThat(cancelled.closedShards()).isEqualTo(5);
        assertThat(cancelled.unreachable()).singleElement().asString().startsWith("b: ");
        assertThat(fx.runStatus(run)).isEqualTo("cancelled");
    }
}
