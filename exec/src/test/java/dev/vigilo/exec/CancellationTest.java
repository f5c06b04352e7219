package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.placement.ShardMover;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.settlement.RunCancellation;
import dev.vigilo.exec.settlement.Settlement;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.view.RunResults;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CancellationTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;

    private void open(int cases) throws IOException {
        fx = new ExecFixture(dir, cases);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        if (placements != null) {
            placements.close();
            fx.close();
        }
    }

    private Map<String, Object> runRow(UUID run) {
        return fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT r.status, r.dispatchable, r.creation_owner, r.finished_at,"
                                + " p.plan_generation FROM runs r JOIN run_plans p USING (run_id) WHERE r.run_id = :r")
                        .bind("r", run)
                        .mapToMap()
                        .one());
    }

    private long control(String sql, UUID run) {
        return fx.control
                .jdbi()
                .withHandle(
                        h -> h.createQuery(sql).bind("r", run).mapTo(Long.class).one());
    }

    private long local(String sql, UUID run) {
        return placements
                .jdbi(ExecutionConfig.CONTROL)
                .withHandle(
                        h -> h.createQuery(sql).bind("r", run).mapTo(Long.class).one());
    }

    @Test
    void cancelBeforeAdmissionTombstonesEveryShardAndNobodyCanReopenTheRun() throws IOException {
        open(3_000);
        UUID run = fx.prepare();
        long generation = ((Number) runRow(run).get("plan_generation")).longValue();
        RunCancellation.Result r = new RunCancellation(placements).cancel(run);
        assertThat(r.outcome()).isEqualTo(RunCancellation.Outcome.CANCELLED);
        assertThat(r.tombstoned()).isEqualTo(30);
        assertThat(r.unreachable()).isEmpty();
        Map<String, Object> row = runRow(run);
        assertThat(row.get("status")).isEqualTo("cancelled");
        assertThat(row.get("dispatchable")).isEqualTo(false);
        assertThat(row.get("creation_owner")).isNull();
        assertThat(row.get("finished_at")).isNotNull();
        assertThat(((Number) row.get("plan_generation")).longValue()).isEqualTo(generation + 1);
        assertThat(control("SELECT count(*) FROM exec_shard_routes WHERE run_id = :r AND state = 'tombstoned'", run))
                .isEqualTo(30);

        // A delayed creator repeating the same command cannot reopen it.
        assertThatThrownBy(() -> fx.create(ExecFixture.PROFILE, run))
                .isInstanceOf(FencedException.class)
                .hasMessageContaining("cancelled");
        // Nor can admission: it finds the run past creating and seeds nothing.
        Admission.Result admitted = new Admission(placements, fx.storage).admit(run);
        assertThat(admitted.outcome()).isEqualTo(Admission.Outcome.NOT_CREATING);
        assertThat(admitted.status()).isEqualTo("cancelled");
        assertThat(local("SELECT count(*) FROM exec_chunks WHERE run_id = :r", run))
                .isZero();
        assertThat(fx.runStatus(run)).isEqualTo("cancelled");

        RunCancellation.Result again = new RunCancellation(placements).cancel(run);
        assertThat(again.outcome()).isEqualTo(RunCancellation.Outcome.ALREADY_CANCELLED);
        assertThat(again.tombstoned()).isZero();
    }

    @Test
    void cancelDuringAdmissionStopsItWithoutADispatchCursor() throws IOException {
        open(30_000);
        UUID run = fx.prepare();
        RunCancellation cancellation = new RunCancellation(placements);
        Admission.Hooks cancelAfterFirstPage = new Admission.Hooks() {
            @Override
            public void afterAcknowledgement(long cursor) {
                if (cursor == 256) {
                    // From another thread and connections, as `vigilo run cancel` would.
                    CompletableFuture.supplyAsync(() -> cancellation.cancel(run))
                            .join();
                }
            }
        };
        assertThatThrownBy(() -> new Admission(placements, fx.storage, cancelAfterFirstPage).admit(run))
                .isInstanceOf(CancelledException.class)
                .hasMessageContaining("cancelled");
        assertThat(fx.runStatus(run)).isEqualTo("cancelled");
        assertThat(control(
                        "SELECT count(*) FROM exec_shard_routes WHERE run_id = :r AND dispatch_cursor IS NOT NULL",
                        run))
                .isZero();
        assertThat(control("SELECT count(*) FROM exec_shard_routes WHERE run_id = :r AND state <> 'tombstoned'", run))
                .isZero();
        // The first page's rows stay (nothing is deleted) but their shards are closed; the second page never came.
        assertThat(local("SELECT count(*) FROM exec_chunks WHERE run_id = :r", run))
                .isEqualTo(256);
        assertThat(local("SELECT count(*) FROM exec_run_shards WHERE run_id = :r AND state <> 'cancelled'", run))
                .isZero();
    }

    @Test
    void cancellingAnExecutingRunKeepsItsCommittedResults() throws IOException {
        open(3_000);
        UUID run = fx.prepare();
        new Admission(placements, fx.storage).admit(run);
        SimulatedWorker worker = new SimulatedWorker(placements, fx.store, run);
        assertThat(worker.run(10)).isEqualTo(10);
        SimulatedWorker late = new SimulatedWorker(placements, fx.store, run);
        SimulatedWorker.Held held = late.claimAny().orElseThrow();
        Receipt receipt = late.execute(held.lease());

        RunCancellation.Result r = new RunCancellation(placements).cancel(run);
        assertThat(r.outcome()).isEqualTo(RunCancellation.Outcome.CANCELLED);
        assertThat(r.closedShards()).isEqualTo(30);
        assertThat(r.placements()).containsExactly(ExecutionConfig.CONTROL);
        assertThat(fx.runStatus(run)).isEqualTo("cancelled");
        // No more results are taken, and nothing can be claimed.
        assertThat(late.complete(held, receipt)).isEqualTo(ChunkTables.Completion.SHARD_CLOSED);
        assertThat(worker.claimAny()).isEmpty();
        assertThat(new Settlement(placements).settleIfComplete(run).outcome()).isEqualTo(Settlement.Outcome.NOT_ACTIVE);
        assertThatThrownBy(() -> new ShardMover(placements).move(run, 0, ExecutionConfig.CONTROL))
                .isInstanceOf(CancelledException.class)
                .hasMessageContaining("was cancelled");

        // The ten committed chunks stay listed, exactly as executed; no case is invented for the rest.
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RunResults.Summary summary = new RunResults(placements, fx.storage).write(run, out);
        assertThat(summary.chunks()).isEqualTo(10);
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertThat(lines).hasSize(1_000);
        long errored = 0;
        for (String line : lines) {
            JsonNode n = MAPPER.readTree(line);
            assertThat(n.path("chunk").asLong()).isNotEqualTo(held.lease().chunkIndex());
            if (n.path("status").asText().equals("errored")) {
                errored++;
            }
        }
        assertThat(errored)
                .isEqualTo(
                        local("SELECT sum(cases_errored) FROM exec_chunks WHERE run_id = :r AND state = 'done'", run));

        ExecutionStatus status = new ExecutionStatusReader(placements).status(run);
        assertThat(status.status()).isEqualTo("cancelled");
        assertThat(status.finished()).isTrue();
        assertThat(status.verdict()).isEmpty();
        assertThat(status.execution().chunksDone()).isEqualTo(10);
        assertThat(status.execution().shards())
                .allSatisfy(s -> assertThat(s.state()).isEqualTo("tombstoned"));
        assertThat(status.gatesFinal()).isFalse();
        assertThat(status.gates().get(0).executed())
                .isEqualTo(lines.stream().filter(l -> l.contains("\"all\":")).count());
    }

    @Test
    void aSettledOrUnknownRunCannotBeCancelled() throws IOException {
        open(1_000);
        UUID run = fx.prepare();
        new Admission(placements, fx.storage).admit(run);
        new SimulatedWorker(placements, fx.store, run).run(100);
        assertThat(new Settlement(placements).settleIfComplete(run).outcome()).isEqualTo(Settlement.Outcome.SETTLED);
        assertThatThrownBy(() -> new RunCancellation(placements).cancel(run))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining("already settled")
                .hasMessageContaining("nothing to cancel");
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        assertThatThrownBy(() -> new ShardMover(placements).move(run, 0, ExecutionConfig.CONTROL))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining("already settled");
        assertThatThrownBy(() -> new ShardMover(placements).move(run, 0, "elsewhere"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("\"elsewhere\" is not in this process's execution configuration");
        assertThatThrownBy(() -> new ShardMover(placements).move(run, 128, ExecutionConfig.CONTROL))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("0..127");
        UUID unknown = UUID.randomUUID();
        assertThatThrownBy(() -> new RunCancellation(placements).cancel(unknown))
                .isInstanceOf(NotFoundException.class)
                .hasMessageContaining(unknown.toString())
                .hasMessageContaining("does not exist");
        assertThatThrownBy(() -> new ExecutionStatusReader(placements).status(unknown))
                .isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> new RunResults(placements, fx.storage).write(unknown, new ByteArrayOutputStream()))
                .isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> new ShardMover(placements).move(unknown, 0, ExecutionConfig.CONTROL))
                .isInstanceOf(NotFoundException.class);
    }
}
