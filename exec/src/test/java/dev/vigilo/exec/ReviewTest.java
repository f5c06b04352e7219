package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.GateTable;
import dev.vigilo.exec.review.RunReviews;
import dev.vigilo.exec.settlement.RunRerun;
import dev.vigilo.exec.view.RunResults;
import dev.vigilo.exec.worker.TranscriptTest;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.plan.RunVerdict;
import dev.vigilo.stats.ProportionInterval;
import dev.vigilo.stats.Wilson;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Human review end to end (docs/execution.md, "Human review"): a run executed by a real worker against an
 * OpenAI-compatible test server (some cases fail, some error), overrides recorded through {@link RunReviews}; the
 * recomputed gate table against an independent count, the machine table and verdict unchanged, the results lines
 * carrying the override, {@code vigilo verify} passing and then failing on a tampered row and a tampered object,
 * and an override made stale by {@code run rerun-errors}.
 */
class ReviewTest {
    private static final int CASES = 20;
    private static final Pattern CASE = Pattern.compile("what is (\\d+) \\* 2");
    private static final String PROFILE = """
            name: review
            agent: {kind: http, url: "%s", model: m, max_attempts: 1}
            evaluators: [{name: exact, kind: exact_match}]
            gates: [{name: all, required_evaluators: [exact], min_pass_rate: 0.75}]
            """;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;
    final AtomicBoolean broken = new AtomicBoolean(true);

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, CASES);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> {
            Matcher m = CASE.matcher(req.lastUserMessage());
            long n = m.find() ? Long.parseLong(m.group(1)) : -1;
            if (broken.get() && n % 5 == 0) {
                return OpenAiTestServer.Reply.error(503, "overloaded");
            }
            // Every fourth case from 3 is answered wrongly: it fails.
            return OpenAiTestServer.Reply.content(Long.toString(n % 4 == 3 ? n * 3 : n * 2));
        });
    }

    @AfterEach
    void tearDown() {
        llm.close();
        placements.close();
        fx.close();
    }

    private void work() {
        new Worker(placements, fx.storage, TranscriptTest.fast(4), Worker.Listener.NONE).run();
    }

    private List<GateResult> machine(UUID run) {
        return placements.control().withHandle(h -> GateTable.results(h, run));
    }

    private String verdict(UUID run) {
        return placements
                .control()
                .withHandle(h -> h.createQuery("SELECT verdict FROM runs WHERE run_id = :r")
                        .bind("r", run)
                        .mapTo(String.class)
                        .one());
    }

    private Map<Long, JsonNode> results(UUID run) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new RunResults(placements, fx.storage).write(run, out);
        Map<Long, JsonNode> lines = new HashMap<>();
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            JsonNode n = JSON.readTree(line);
            lines.put(n.path("ordinal").asLong(), n);
        }
        return lines;
    }

    private long rows(UUID run) {
        return placements
                .control()
                .withHandle(h -> h.createQuery("SELECT count(*) FROM run_review_overrides WHERE run_id = :r")
                        .bind("r", run)
                        .mapTo(Long.class)
                        .one());
    }

    @Test
    void overridesAreAuditableRecomputedVerifiedAndGoStaleWhenTheCaseRunsAgain() throws IOException {
        UUID run = fx.prepare(PROFILE.formatted(llm.chatUrl()));
        new Admission(placements, fx.storage).admit(run);
        work();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        // Independent count: 0, 5, 10, 15 errored; 3, 7, 11, 19 failed (15 errored first); 12 passed of 20.
        List<GateResult> machine = machine(run);
        GateResult all = machine.get(0);
        assertThat(List.of(all.passed(), all.failed(), all.errored())).containsExactly(12L, 4L, 4L);
        assertThat(all.decision()).contains(GateDecision.FAILED); // 12 < 0.75 x 20
        String machineVerdict = verdict(run);
        assertThat(machineVerdict).isEqualTo("failed");

        try (RunReviews reviews = new RunReviews(placements, fx.storage)) {
            // Bad input changes nothing.
            assertThatThrownBy(() -> reviews.record(run, 3, RunReviews.Verdict.PASS, "alice", "  "))
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("note");
            assertThatThrownBy(() -> reviews.record(run, 3, RunReviews.Verdict.PASS, "al\u001bice", "ok"))
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("reviewer");
            assertThatThrownBy(() -> reviews.record(run, 999, RunReviews.Verdict.PASS, "alice", "ok"))
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("has not been executed");
            assertThat(rows(run)).isZero();
            assertThat(reviews.gates(run, machine)).isEmpty();

            // Case 3 failed on the machine's exact match; the reviewer passes it. Case 0 errored; another fails it.
            RunReviews.CaseOverride first =
                    reviews.record(run, 3, RunReviews.Verdict.PASS, "alice", "the answer is right in substance");
            assertThat(first.seq()).isEqualTo(1);
            assertThat(first.original()).isEqualTo("failed");
            assertThat(first.supersedes()).isEmpty();
            RunReviews.CaseOverride errored = reviews.record(
                    run, 0, RunReviews.Verdict.FAIL, "bob", "the endpoint's outage is the agent's fault");
            assertThat(errored.original()).isEqualTo("errored");
            RunReviews.CaseOverride seven = reviews.record(run, 7, RunReviews.Verdict.PASS, "bob", "equivalent answer");
            assertThat(seven.seq()).isEqualTo(3);

            // Recomputed: 3 and 7 failed -> passed, 0 errored -> failed: 14 passed, 3 failed, 3 errored.
            RunReviews.Reviewed r = reviews.gates(run, machine).orElseThrow();
            GateResult reviewed = r.reviewed().get(0);
            assertThat(List.of(reviewed.planned(), reviewed.passed(), reviewed.failed(), reviewed.errored()))
                    .containsExactly(20L, 14L, 3L, 3L);
            ProportionInterval expected = Wilson.interval(14, 20, all.confidence());
            assertThat(reviewed.interval()).isEqualTo(expected);
            assertThat(reviewed.decision()).contains(GateDecision.FAILED); // 14 < 15
            assertThat(r.reviewedVerdict()).contains(RunVerdict.FAILED);
            assertThat(r.applied()).isEqualTo(3);
            assertThat(r.machine()).isEqualTo(machine);

            // An override of an override supersedes it; the history stays. The same outcome again is refused.
            RunReviews.CaseOverride again =
                    reviews.record(run, 11, RunReviews.Verdict.PASS, "carol", "right, formatted differently");
            assertThat(reviews.gates(run, machine)
                            .orElseThrow()
                            .reviewed()
                            .get(0)
                            .decision())
                    .contains(GateDecision.PASSED); // 15 of 20 meets 0.75
            assertThat(reviews.gates(run, machine).orElseThrow().reviewedVerdict())
                    .contains(RunVerdict.PASSED);
            RunReviews.CaseOverride reversed =
                    reviews.record(run, 11, RunReviews.Verdict.FAIL, "dave", "no: the unit is missing");
            assertThat(reversed.supersedes()).hasValue(again.seq());
            assertThatThrownBy(() -> reviews.record(run, 11, RunReviews.Verdict.FAIL, "erin", "agree"))
                    .isInstanceOf(ConflictException.class)
                    .hasMessageContaining("already overridden to fail");
            List<RunReviews.CaseOverride> history = reviews.forCase(run, 11);
            assertThat(history).extracting(RunReviews.CaseOverride::reviewer).containsExactly("carol", "dave");
            assertThat(history).extracting(RunReviews.CaseOverride::current).containsExactly(false, true);
            assertThat(history.get(1).original()).isEqualTo("failed");
            assertThat(reviews.gates(run, machine)
                            .orElseThrow()
                            .reviewed()
                            .get(0)
                            .passed())
                    .isEqualTo(14);

            // The settled record stays the machine's.
            assertThat(machine(run)).isEqualTo(machine);
            assertThat(verdict(run)).isEqualTo(machineVerdict);

            // Results carry the override in force, and only on overridden cases.
            Map<Long, JsonNode> lines = results(run);
            assertThat(lines.get(3L).path("override").path("outcome").asText()).isEqualTo("pass");
            assertThat(lines.get(3L).path("override").path("original").asText()).isEqualTo("failed");
            assertThat(lines.get(3L).path("override").path("reviewer").asText()).isEqualTo("alice");
            assertThat(lines.get(3L).path("override").path("stale").asBoolean()).isFalse();
            assertThat(lines.get(11L).path("override").path("reviewer").asText())
                    .isEqualTo("dave");
            assertThat(lines.get(4L).has("override")).isFalse();

            // verify checks every record against its object.
            RunVerifier verifier = new RunVerifier(placements, fx.storage);
            RunVerifier.Report ok = verifier.verify(run);
            assertThat(ok.problem()).isEmpty();
            assertThat(ok.reviews().overrides()).isEqualTo(5);
            assertThat(ok.reviews().current()).isEqualTo(4);
            assertThat(ok.reviews().stale()).isEmpty();

            // A row altered in the database disagrees with its object.
            placements
                    .control()
                    .useHandle(h -> h.execute(
                            "UPDATE run_review_overrides SET outcome = 'fail' WHERE run_id = ? AND seq = 1", run));
            RunVerifier.Report row = verifier.verify(run);
            assertThat(row.intact()).isFalse();
            assertThat(row.problem())
                    .hasValueSatisfying(p -> assertThat(p)
                            .contains("review override 1")
                            .contains("outcome is fail in the row and pass in the record"));
            placements
                    .control()
                    .useHandle(h -> h.execute(
                            "UPDATE run_review_overrides SET outcome = 'pass' WHERE run_id = ? AND seq = 1", run));
            assertThat(verifier.verify(run).problem()).isEmpty();

            // An object altered in the store fails its digest, naming it.
            Path file = fx.storeRoot.resolve(first.recordKey());
            String text = Files.readString(file);
            file.toFile().setWritable(true);
            Files.writeString(file, text.replace("alice", "mallory"));
            RunVerifier.Report object = verifier.verify(run);
            assertThat(object.intact()).isFalse();
            assertThat(object.damagedKey()).contains(first.recordKey());
            Files.writeString(file, text);
            assertThat(verifier.verify(run).problem()).isEmpty();

            // The endpoint recovers and the errored cases run again: case 0's override judged another execution.
            broken.set(false);
            assertThat(new RunRerun(placements, fx.storage).rerun(run).outcome())
                    .isEqualTo(RunRerun.Outcome.REOPENED);
            work();
            assertThat(fx.runStatus(run)).isEqualTo("settled");
            List<GateResult> after = machine(run);
            assertThat(after.get(0).errored()).isZero();
            List<RunReviews.CaseOverride> now = reviews.list(run);
            assertThat(now.stream().filter(RunReviews.CaseOverride::stale))
                    .extracting(RunReviews.CaseOverride::ordinal)
                    .containsExactly(0L);
            // Carried-forward cases keep their overrides in force.
            assertThat(now.stream()
                            .filter(o -> o.ordinal() == 3)
                            .findFirst()
                            .orElseThrow()
                            .stale())
                    .isFalse();
            RunReviews.Reviewed afterRerun = reviews.gates(run, after).orElseThrow();
            assertThat(afterRerun.stale()).isEqualTo(1);
            assertThat(afterRerun.applied()).isEqualTo(3); // 3, 7, 11
            // 16 passed after the rerun (0, 5, 10, 15 now pass; 15 was a wrong answer: fails): machine 15/5/0.
            assertThat(List.of(after.get(0).passed(), after.get(0).failed())).containsExactly(15L, 5L);
            assertThat(afterRerun.reviewed().get(0).passed()).isEqualTo(17); // 3 and 7 passed; 11 stays failed
            assertThat(results(run).get(0L).path("override").path("stale").asBoolean())
                    .isTrue();
            RunVerifier.Report stale = verifier.verify(run);
            assertThat(stale.problem()).isEmpty();
            assertThat(stale.reviews().stale())
                    .singleElement()
                    .satisfies(s -> assertThat(s).startsWith("case 0 ").contains("executed again"));

            // A stale case can be reviewed again: the new override supersedes the stale one and applies.
            RunReviews.CaseOverride fresh =
                    reviews.record(run, 0, RunReviews.Verdict.FAIL, "bob", "still wrong after the rerun");
            assertThat(fresh.original()).isEqualTo("passed");
            assertThat(fresh.supersedes()).hasValue(errored.seq());
            assertThat(reviews.gates(run, after).orElseThrow().stale()).isZero();
            assertThat(verifier.verify(run).reviews().stale()).isEmpty();
        }
    }
}
