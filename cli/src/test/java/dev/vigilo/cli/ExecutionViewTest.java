package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.Service;
import dev.vigilo.plan.Profile;
import dev.vigilo.stats.Confidence;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The text view of a run whose execution database cannot be read and whose workers wait for services. */
class ExecutionViewTest {
    @Test
    void printsTheUnreachableDatabasesAndOneLinePerWait() {
        ExecutionStatus.Progress progress = new ExecutionStatus.Progress(
                10,
                3,
                0,
                1000,
                300,
                List.of(
                        new ExecutionStatus.ShardProgress(0, "a", "active", 5, 3, 0, 500, 300),
                        new ExecutionStatus.ShardProgress(1, "b", "active", 5, -1, -1, 500, -1)),
                List.of("b"));
        ExecutionStatus s = new ExecutionStatus(
                UUID.randomUUID(),
                "running",
                Optional.empty(),
                Optional.empty(),
                progress,
                List.of(),
                false,
                List.of(
                        new ExecutionStatus.Wait(
                                Service.DATABASE,
                                "b",
                                Instant.parse("2026-01-02T03:04:05.9Z"),
                                2,
                                "completion failed: connection refused"),
                        new ExecutionStatus.Wait(
                                Service.STORE,
                                "local:/srv/objects",
                                Instant.parse("2026-01-02T03:05:00Z"),
                                1,
                                "cannot write x:\nNo space left on device")));
        StringWriter text = new StringWriter();
        ExecutionView.print(new PrintWriter(text, true), s, true);
        assertThat(text.toString())
                .contains("progress: 3 of 10 chunks done, 300 of 1000 cases done\n"
                        + "unreachable now: execution database b (progress of 1 shard unknown, not counted above)\n"
                        + "waiting for the database since 2026-01-02T03:04:05Z (b, 2 workers): completion failed:"
                        + " connection refused\n"
                        + "waiting for the store since 2026-01-02T03:05:00Z (local:/srv/objects, 1 worker): cannot"
                        + " write x: No space left on device\n"
                        + "verdict: not yet");
    }

    /** A run paused for its budget: the budget line and the pause line saying how to raise it. */
    @Test
    void printsTheBudgetAndABudgetPauseWithTheCommandThatRaisesIt() {
        UUID run = UUID.randomUUID();
        ExecutionStatus s = new ExecutionStatus(
                run,
                "paused",
                Optional.empty(),
                Optional.empty(),
                new ExecutionStatus.Progress(3, 1, 0, 250, 100, List.of(), List.of()),
                List.of(),
                false,
                List.of(),
                java.util.Map.of(),
                java.util.Map.of(),
                Optional.of(new ExecutionStatus.Paused("budget", Instant.parse("2026-01-02T03:04:05Z"))),
                Optional.of(new ExecutionStatus.Budget(
                        Optional.of(new java.math.BigDecimal("25.00")),
                        Optional.of(50_000_000L),
                        new java.math.BigDecimal("24.99120"),
                        1_234_567,
                        java.math.BigDecimal.ZERO,
                        0)),
                List.of());
        StringWriter text = new StringWriter();
        ExecutionView.print(new PrintWriter(text, true), s, true);
        assertThat(text.toString())
                .contains("budget $25: $24.9912 spent, $0 reserved; 50,000,000 tokens: 1,234,567 spent, 0 reserved\n")
                .contains("paused since 2026-01-02T03:04:05Z: budget (it cannot cover the next model call); `vigilo run"
                        + " resume " + run + " --budget-usd N` raises it to N and continues it");
        assertThat(s.toJson())
                .contains("\"budget\":{\"max_cost_usd\":\"25\",\"max_tokens\":50000000,\"spent_cost_usd\":\"24.9912\","
                        + "\"spent_tokens\":1234567,\"reserved_cost_usd\":\"0\",\"reserved_tokens\":0}");
    }

    private static GateResult bound(String name, long passed, double min) {
        return GateResult.decided(name, 10, passed, 10 - passed, 0, min, Profile.Decide.BOUND, Confidence.DEFAULT);
    }

    /** The examples of docs/execution.md, "Decisions on the bound", as the gate table prints them. */
    @Test
    void printsEachGatesIntervalAndResultAndWhatWouldDecideAnInconclusiveOne() {
        List<GateResult> gates = List.of(
                bound("nine", 9, 0.8),
                bound("six", 6, 0.8),
                bound("eight", 8, 0.8),
                bound("none", 0, 0.5),
                GateResult.decided("point", 10, 9, 1, 0, 0.9, Profile.Decide.POINT, Confidence.DEFAULT),
                GateResult.partial("open", 10, 5, 0, 0, 0.5, Profile.Decide.BOUND, Confidence.DEFAULT));
        StringWriter text = new StringWriter();
        ExecutionView.printGates(new PrintWriter(text, true), gates);
        assertThat(text.toString())
                .contains("PASS RATE  95% CI            MIN RATE  RESULT\n")
                .containsPattern(
                        "nine\\s+10\\s+10\\s+9\\s+1\\s+0\\s+90\\.0%\\s+\\[59\\.6%, 98\\.2%\\]\\s+80\\.0%\\s+INCONCLUSIVE\n")
                .containsPattern(
                        "none\\s+10\\s+10\\s+0\\s+10\\s+0\\s+0\\.0%\\s+\\[0\\.0%, 27\\.8%\\]\\s+50\\.0%\\s+FAIL\n")
                .containsPattern(
                        "point\\s+10\\s+10\\s+9\\s+1\\s+0\\s+90\\.0%\\s+\\[59\\.6%, 98\\.2%\\]\\s+90\\.0%\\s+PASS\n")
                .containsPattern(
                        "open\\s+10\\s+5\\s+5\\s+0\\s+0\\s+50\\.0%\\s+\\[23\\.7%, 76\\.3%\\]\\s+50\\.0%\\s+-\n")
                .contains("nine is inconclusive: its 95% CI [59.6%, 98.2%] holds its minimum 80.0%; 62 cases at the"
                        + " observed 90.0% (52 more than the 10 planned) would pass it\n")
                .contains("six is inconclusive: its 95% CI [31.3%, 83.2%] holds its minimum 80.0%; 16 cases at the"
                        + " observed 60.0% (6 more than the 10 planned) would fail it\n")
                .contains("eight is inconclusive: its 95% CI [49.0%, 94.3%] holds its minimum 80.0%; no number of"
                        + " cases at the observed 80.0% would decide it\n")
                .doesNotContain("none is inconclusive", "point is inconclusive", "open is inconclusive");
        assertThat(ExecutionView.rule(gates.get(0))).isEqualTo("95% CI [59.6%, 98.2%] holds 80.0%");
        assertThat(ExecutionView.rule(gates.get(3))).isEqualTo("95% CI [0.0%, 27.8%] < 50.0%");
        assertThat(ExecutionView.rule(gates.get(4))).isEqualTo("90.0% >= 90.0%");
    }

    @Test
    void aRunOfSeveralEpochsShowsPassAtKUnderTheGateTable() {
        // 4 cases of 3 epochs passing 0, 1, 3 and 3 epochs: pass@1 = (0 + 1/3 + 1 + 1) / 4, pass@3 = 3/4.
        GateResult epochs = GateResult.partial("all", 5, 2, 2, 1, 0.5, Profile.Decide.POINT, Confidence.of(0.95))
                .withPassAtK(dev.vigilo.stats.PassAtK.of(new long[] {1, 1, 0, 2}));
        GateResult single = GateResult.partial("one", 5, 2, 2, 1, 0.5, Profile.Decide.POINT, Confidence.of(0.95));
        StringWriter text = new StringWriter();
        ExecutionView.printGates(new PrintWriter(text, true), List.of(epochs, single));
        assertThat(text.toString())
                .contains("\nall pass@k over 4 cases of 3 epochs: pass@1 0.58  pass@2 0.67  pass@3 0.75\n")
                .doesNotContain("one pass@k");
        assertThat(ExecutionView.passAtK(single)).isEmpty();
        assertThat(GateResult.shownK(1)).containsExactly(1);
        assertThat(GateResult.shownK(5)).containsExactly(1, 2, 3, 4, 5);
        assertThat(GateResult.shownK(6)).containsExactly(1, 2, 5, 6);
        assertThat(GateResult.shownK(10)).containsExactly(1, 2, 5, 10);
        assertThat(GateResult.shownK(25)).containsExactly(1, 2, 5, 10, 20, 25);
        assertThat(GateResult.shownK(100)).containsExactly(1, 2, 5, 10, 20, 50, 100);
    }

    @Test
    void anInconclusiveGateOfSeveralEpochsAsksForCasesNotEpochs() {
        // 9 of 10 against 0.8 at 0.95: inconclusive, 62 cases would pass it (docs/execution.md's example).
        GateResult one = GateResult.decided("math", 10, 9, 1, 0, 0.8, Profile.Decide.BOUND, Confidence.of(0.95));
        GateResult epochs = GateResult.decided("math", 10, 9, 1, 0, 0.8, Profile.Decide.BOUND, Confidence.of(0.95))
                .withPassAtK(dev.vigilo.stats.PassAtK.of(new long[] {0, 1, 0, 9}));
        assertThat(ExecutionView.inconclusive(one))
                .endsWith("62 cases at the observed 90.0% (52 more than the 10 planned) would pass it")
                .doesNotContain("epochs");
        assertThat(ExecutionView.inconclusive(epochs))
                .endsWith("62 cases at the observed 90.0% (52 more than the 10 planned) would pass it; more epochs"
                        + " would not decide it: the interval counts cases");
    }
}
