package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.settlement.Settlement;
import dev.vigilo.exec.view.ExecutionStatusReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gates deciding on their interval ({@code decide: bound}): settlement records each gate's decision and interval,
 * the run's verdict follows the rule (failed if a gate failed, else inconclusive if one is, else passed), status
 * reports them, and {@code vigilo verify} recomputes them and catches an altered one. Intervals are checked against
 * the Wilson formula written out here, on counts taken from the receipts one by one ({@link IndependentTally}).
 */
class GateDecisionsTest {
    private static final double Z95 = 1.959963984540054;

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

    private Settlement.Result settled(String profile) {
        UUID run = fx.prepare(profile);
        new Admission(placements, fx.storage).admit(run);
        new SimulatedWorker(placements, fx.store, run).run(1_000);
        return new Settlement(placements).settleIfComplete(run);
    }

    private static double[] wilson(long x, long n, double z) {
        return wilsonAt((double) x / n, n, z);
    }

    private static double[] wilsonAt(double p, long n, double z) {
        double denominator = 1 + z * z / n;
        double centre = (p + z * z / (2.0 * n)) / denominator;
        double half = z * Math.sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / denominator;
        return new double[] {Math.max(0, centre - half), Math.min(1, centre + half)};
    }

    @Test
    void boundDecisionsFollowTheIntervalAndTheVerdictRule() {
        // First learn the fixture's observed rates with a lenient point profile, then place each gate's threshold:
        // "all" right at its observed rate (the interval straddles it: inconclusive), "math" far below (passed).
        Settlement.Result learn = settled(SettlementTest.LENIENT);
        Map<String, IndependentTally.Gate> observed = IndependentTally.compute(fx, placements, learn.runId());
        IndependentTally.Gate all = observed.get("all");
        double allRate = Math.round(1000.0 * all.passed() / all.planned()) / 1000.0;
        String bound = ExecFixture.PROFILE
                .replace("min_pass_rate: 0.9}", "min_pass_rate: " + allRate + ", decide: bound}")
                .replace("min_pass_rate: 0.5}", "min_pass_rate: 0.05, decide: bound}");
        Settlement.Result r = settled(bound);
        assertThat(r.outcome()).isEqualTo(Settlement.Outcome.SETTLED);
        Map<String, IndependentTally.Gate> expected = IndependentTally.compute(fx, placements, r.runId());
        for (GateResult g : r.gates()) {
            IndependentTally.Gate e = expected.get(g.name());
            assertThat(g.passed()).isEqualTo(e.passed());
            double[] ci = wilson(e.passed(), e.planned(), Z95);
            assertThat(g.interval().low()).isCloseTo(ci[0], org.assertj.core.data.Offset.offset(1e-12));
            assertThat(g.interval().high()).isCloseTo(ci[1], org.assertj.core.data.Offset.offset(1e-12));
            GateDecision decision = ci[0] >= e.minPassRate()
                    ? GateDecision.PASSED
                    : ci[1] < e.minPassRate() ? GateDecision.FAILED : GateDecision.INCONCLUSIVE;
            assertThat(g.decision()).as(g.name()).contains(decision);
        }
        assertThat(r.gates().get(0).decision()).contains(GateDecision.INCONCLUSIVE);
        assertThat(r.gates().get(1).decision()).contains(GateDecision.PASSED);
        // How many cases at the observed rate would decide it: the first n' whose interval clears the threshold.
        GateResult open = r.gates().get(0);
        double rate = (double) open.passed() / open.planned();
        if (rate == open.minPassRate()) {
            assertThat(open.casesToDecide()).isEmpty();
        } else {
            long needed = open.casesToDecide().orElseThrow();
            assertThat(needed).isGreaterThan(open.planned());
            java.util.function.LongPredicate decides = n -> {
                double[] ci = wilsonAt(rate, n, Z95);
                return rate > open.minPassRate() ? ci[0] >= open.minPassRate() : ci[1] < open.minPassRate();
            };
            assertThat(decides.test(needed)).isTrue();
            assertThat(decides.test(needed - 1)).isFalse();
        }
        assertThat(r.verdict()).contains("inconclusive");

        ExecutionStatus status = new ExecutionStatusReader(placements).status(r.runId());
        String json = status.toJson();
        assertThat(json)
                .contains("\"verdict\":\"inconclusive\"")
                .contains("\"decide\":\"bound\",\"decision\":\"inconclusive\"")
                .contains("\"confidence\":0.95");
        assertThat(status.gates()).isEqualTo(r.gates());

        RunVerifier verifier = new RunVerifier(placements, fx.storage);
        assertThat(verifier.verify(r.runId()).intact()).isTrue();
        fx.control
                .jdbi()
                .useHandle(h -> h.execute(
                        "UPDATE run_gate_results SET ci_low = ci_low + 0.001 WHERE run_id = ? AND gate_index = 0",
                        r.runId()));
        RunVerifier.Report altered = verifier.verify(r.runId());
        assertThat(altered.intact()).isFalse();
        assertThat(altered.problem().orElseThrow()).contains("gate all").contains("interval");
        fx.control
                .jdbi()
                .useHandle(h -> h.execute(
                        "UPDATE run_gate_results SET ci_low = ci_low - 0.001, decision = 'failed' WHERE run_id = ?"
                                + " AND gate_index = 0",
                        r.runId()));
        RunVerifier.Report decided = verifier.verify(r.runId());
        assertThat(decided.intact()).isFalse();
        assertThat(decided.problem().orElseThrow()).contains("gate all").contains("inconclusive");
    }

    @Test
    void aGateFailingOnItsBoundFailsTheRunEvenBesideAnInconclusiveOne() {
        Settlement.Result r = settled(ExecFixture.PROFILE
                .replace("min_pass_rate: 0.9}", "min_pass_rate: 1, decide: bound}")
                .replace("min_pass_rate: 0.5}", "min_pass_rate: 0.5}"));
        IndependentTally.Gate all =
                IndependentTally.compute(fx, placements, r.runId()).get("all");
        assertThat(wilson(all.passed(), all.planned(), Z95)[1]).isLessThan(1.0);
        assertThat(r.gates().get(0).decision()).contains(GateDecision.FAILED);
        assertThat(r.verdict()).contains("failed");
    }

    @Test
    void theVerdictRuleOverDecisions() {
        GateResult passed = gate(GateDecision.PASSED);
        GateResult failed = gate(GateDecision.FAILED);
        GateResult inconclusive = gate(GateDecision.INCONCLUSIVE);
        assertThat(GateResult.verdict(List.of(passed, passed))).hasToString("passed");
        assertThat(GateResult.verdict(List.of(passed, inconclusive))).hasToString("inconclusive");
        assertThat(GateResult.verdict(List.of(inconclusive, failed, passed))).hasToString("failed");
    }

    private static GateResult gate(GateDecision d) {
        return GateResult.partial(
                        "g",
                        10,
                        5,
                        5,
                        0,
                        0.5,
                        dev.vigilo.plan.Profile.Decide.BOUND,
                        dev.vigilo.stats.Confidence.DEFAULT)
                .withDecision(d);
    }
}
