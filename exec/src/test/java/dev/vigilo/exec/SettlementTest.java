package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.settlement.Settlement;
import dev.vigilo.plan.RunState;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

public class SettlementTest {
    static final String LENIENT = ExecFixture.PROFILE
            .replace("min_pass_rate: 0.9", "min_pass_rate: 0.6")
            .replace("min_pass_rate: 0.5", "min_pass_rate: 0.4");

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 3_000);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        placements.close();
        fx.close();
    }

    private UUID admitted(String profile) {
        UUID run = fx.prepare(profile);
        new Admission(placements, fx.storage).admit(run);
        return run;
    }

    private List<Map<String, Object>> gateRows(UUID run) {
        return fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT * FROM run_gate_results WHERE run_id = :r ORDER BY gate_index")
                        .bind("r", run)
                        .mapToMap()
                        .list());
    }

    private String column(UUID run, String column) {
        return fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT " + column + " FROM runs WHERE run_id = :r")
                        .bind("r", run)
                        .mapTo(String.class)
                        .one());
    }

    public static void assertMatches(List<GateResult> gates, Map<String, IndependentTally.Gate> expected) {
        assertThat(gates).extracting(GateResult::name).containsExactlyElementsOf(expected.keySet());
        for (GateResult g : gates) {
            IndependentTally.Gate e = expected.get(g.name());
            assertThat(g.planned()).as(g.name() + " planned").isEqualTo(e.planned());
            assertThat(g.passed()).as(g.name() + " passed").isEqualTo(e.passed());
            assertThat(g.failed()).as(g.name() + " failed").isEqualTo(e.failed());
            assertThat(g.errored()).as(g.name() + " errored").isEqualTo(e.errored());
            assertThat(g.minPassRate()).isEqualTo(e.minPassRate());
            assertThat(g.passedGate()).contains(e.meets());
        }
    }

    @Test
    void settlesOnceEveryChunkIsDoneAndEqualsTheReceiptsCountedOneByOne() {
        UUID run = admitted(ExecFixture.PROFILE);
        Settlement settlement = new Settlement(placements);
        SimulatedWorker worker = new SimulatedWorker(placements, fx.store, run);
        assertThat(worker.run(10)).isEqualTo(10);
        Settlement.Result early = settlement.settleIfComplete(run);
        assertThat(early.outcome()).isEqualTo(Settlement.Outcome.NOT_COMPLETE);
        assertThat(fx.runStatus(run)).isEqualTo("pending");
        assertThat(gateRows(run)).isEmpty();

        assertThat(worker.run(1_000)).isEqualTo(20);
        Settlement.Result r = settlement.settleIfComplete(run);
        assertThat(r.outcome()).isEqualTo(Settlement.Outcome.SETTLED);
        Map<String, IndependentTally.Gate> expected = IndependentTally.compute(fx, placements, run);
        assertMatches(r.gates(), expected);
        // Every case ran: nothing planned is missing.
        assertThat(r.gates()).allSatisfy(g -> assertThat(g.notExecuted()).isZero());
        assertThat(expected.get("all").errored()).isPositive();
        String verdict = expected.values().stream().allMatch(IndependentTally.Gate::meets) ? "passed" : "failed";
        assertThat(r.verdict()).contains(verdict);
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        assertThat(column(run, "verdict")).isEqualTo(verdict);
        assertThat(column(run, "finished_at")).isNotNull();
        List<Map<String, Object>> rows = gateRows(run);
        assertThat(rows).hasSize(2);
        assertThat(rows.get(0).get("name")).isEqualTo("all");
        assertThat(((Number) rows.get(0).get("passed")).longValue())
                .isEqualTo(expected.get("all").passed());

        Settlement.Result again = settlement.settleIfComplete(run);
        assertThat(again.outcome()).isEqualTo(Settlement.Outcome.ALREADY_ENDED);
        assertThat(again.verdict()).contains(verdict);
        assertThat(gateRows(run)).hasSize(2);
    }

    @Test
    void verdictPassesWhenEveryGateMeetsItsThreshold() {
        UUID run = admitted(LENIENT);
        new SimulatedWorker(placements, fx.store, run).run(1_000);
        Settlement.Result r = new Settlement(placements).settleIfComplete(run);
        Map<String, IndependentTally.Gate> expected = IndependentTally.compute(fx, placements, run);
        assertThat(expected.values()).allMatch(IndependentTally.Gate::meets);
        assertMatches(r.gates(), expected);
        assertThat(r.verdict()).contains("passed");
        assertThat(column(run, "verdict")).isEqualTo("passed");
    }

    @Test
    void aFailedChunkEndsTheRunFailedWithItsCasesCountedAsNeverRun() {
        UUID run = admitted(LENIENT);
        SimulatedWorker worker = new SimulatedWorker(placements, fx.store, run);
        SimulatedWorker.Held held = worker.claimAny().orElseThrow();
        assertThat(worker.fail(held, "chunk file altered\nafter publication")).isTrue();
        worker.run(1_000);
        Settlement.Result r = new Settlement(placements).settleIfComplete(run);
        assertThat(r.outcome()).isEqualTo(Settlement.Outcome.FAILED);
        assertThat(r.verdict()).isEmpty();
        assertThat(r.detail().orElseThrow())
                .contains("1 chunk could not be executed")
                .contains("chunk " + held.lease().chunkIndex() + " (chunk file altered after publication)")
                .doesNotContain("\n");
        assertThat(fx.runStatus(run)).isEqualTo("failed");
        assertThat(column(run, "verdict")).isNull();
        assertThat(column(run, "failure_reason")).isEqualTo(r.detail().orElseThrow());
        // The gate table is still recorded; the failed chunk's cases were planned but never ran.
        Map<String, IndependentTally.Gate> expected = IndependentTally.compute(fx, placements, run);
        assertMatches(r.gates(), expected);
        assertThat(gateRows(run)).hasSize(2);
        GateResult all = r.gates().get(0);
        assertThat(all.notExecuted()).isEqualTo(held.lease().seed().caseCount());
        assertThat(all.passRate()).isEqualTo((double) all.passed() / all.planned());
    }

    @Test
    void alteredChunkIdentitiesFailTheRunAsDamagedWithoutAGateTable() {
        UUID run = admitted(ExecFixture.PROFILE);
        new SimulatedWorker(placements, fx.store, run).run(1_000);
        placements
                .jdbi(ExecutionConfig.CONTROL)
                .useHandle(h -> h.execute(
                        "UPDATE exec_chunks SET chunk_id = gen_random_uuid() WHERE run_id = ? AND chunk_index = 7",
                        run));
        Settlement.Result r = new Settlement(placements).settleIfComplete(run);
        assertThat(r.outcome()).isEqualTo(Settlement.Outcome.FAILED);
        assertThat(r.detail().orElseThrow())
                .contains("execution records are damaged")
                .contains("shard 7")
                .contains("settlement hash");
        assertThat(fx.runStatus(run)).isEqualTo("failed");
        assertThat(gateRows(run)).isEmpty();
    }

    @Test
    void impossibleTalliesAreDamage() {
        UUID run = admitted(ExecFixture.PROFILE);
        new SimulatedWorker(placements, fx.store, run).run(1_000);
        placements
                .jdbi(ExecutionConfig.CONTROL)
                .useHandle(h -> h.execute(
                        "UPDATE exec_chunks SET gate_passed = ARRAY[1000, 0] WHERE run_id = ? AND chunk_index = 3",
                        run));
        Settlement.Result r = new Settlement(placements).settleIfComplete(run);
        assertThat(r.outcome()).isEqualTo(Settlement.Outcome.FAILED);
        assertThat(r.detail().orElseThrow()).contains("shard 3").contains("impossible tallies");
        assertThat(gateRows(run)).isEmpty();
    }

    @Test
    void aCancelledOrCreatingRunIsNotSettled() {
        UUID run = fx.prepare();
        Settlement.Result r = new Settlement(placements).settleIfComplete(run);
        assertThat(r.outcome()).isEqualTo(Settlement.Outcome.NOT_ACTIVE);
        assertThat(r.status()).isEqualTo(RunState.CREATING);
        assertThat(fx.runStatus(run)).isEqualTo("creating");
    }
}
