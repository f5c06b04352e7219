package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.view.CaseResults;
import dev.vigilo.exec.view.RunResults;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CaseResultsTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    CaseResults cases;
    UUID run;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 2_000);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        run = fx.prepare();
        new Admission(placements, fx.storage).admit(run);
        new SimulatedWorker(placements, fx.store, run).run(8);
        cases = new CaseResults(placements, fx.storage);
    }

    @AfterEach
    void tearDown() {
        cases.close();
        placements.close();
        fx.close();
    }

    /** Every executed case as {@code run results} writes it. */
    private List<JsonNode> results() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new RunResults(placements, fx.storage).write(run, out);
        return out.toString(StandardCharsets.UTF_8)
                .lines()
                .map(l -> {
                    try {
                        return MAPPER.readTree(l);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                })
                .toList();
    }

    /** The outcome by the documented rule, computed from a results line. */
    private static String outcome(JsonNode line, String gate) {
        if (gate != null) {
            return line.path("gates").path(gate).asText(null);
        }
        if (line.path("status").asText().equals("errored")) {
            return "errored";
        }
        List<String> g = new ArrayList<>();
        line.path("gates").forEach(x -> g.add(x.asText()));
        return g.contains("errored") ? "errored" : g.contains("failed") ? "failed" : "passed";
    }

    /** Walks every page of a filter and returns the ordinals listed. */
    private List<Long> walk(CaseResults.Filter filter, int limit) {
        List<Long> out = new ArrayList<>();
        long after = -1;
        while (true) {
            CaseResults.Page p = cases.page(run, filter, after, limit);
            assertThat(p.cases()).hasSizeLessThanOrEqualTo(limit);
            p.cases().forEach(c -> out.add(c.ordinal()));
            if (p.nextAfter().isEmpty()) {
                return out;
            }
            assertThat(p.nextAfter().getAsLong()).isGreaterThan(after);
            after = p.nextAfter().getAsLong();
        }
    }

    @Test
    void pagesListEveryExecutedCaseOnceInOrdinalOrder() {
        List<JsonNode> all = results();
        assertThat(all).hasSize(800);
        List<Long> listed = walk(CaseResults.Filter.ALL, 37);
        assertThat(listed)
                .isEqualTo(all.stream().map(l -> l.path("ordinal").asLong()).toList());
        CaseResults.Page first = cases.page(run, CaseResults.Filter.ALL, -1, 10);
        assertThat(first.cases()).hasSize(10);
        assertThat(first.receiptsRead()).isEqualTo(1);
        assertThat(first.nextAfter()).isEqualTo(OptionalLong.of(9));
        CaseResults.ExecutedCase c0 = first.cases().get(0);
        JsonNode l0 = all.get(0);
        assertThat(c0.caseId()).isEqualTo(l0.path("case_id").asText());
        assertThat(c0.attempts()).isEqualTo(l0.path("attempts").asInt());
        assertThat(c0.gates().keySet())
                .containsExactlyElementsOf(() -> l0.path("gates").fieldNames());
    }

    @Test
    void outcomeFiltersMatchTheDocumentedRuleOverTheResults() {
        List<JsonNode> all = results();
        for (String gate : new String[] {null, "all", "math"}) {
            for (CaseResults.Outcome o : CaseResults.Outcome.values()) {
                List<Long> expected = all.stream()
                        .filter(l -> o.spelling().equals(outcome(l, gate)))
                        .map(l -> l.path("ordinal").asLong())
                        .toList();
                CaseResults.Filter f = new CaseResults.Filter(Optional.of(o), Optional.ofNullable(gate));
                assertThat(walk(f, 25)).as(gate + "/" + o).isEqualTo(expected);
            }
        }
        // The simulated results include every outcome, so the filters above were not vacuous.
        assertThat(all.stream().map(l -> outcome(l, null)).distinct())
                .containsExactlyInAnyOrder("passed", "failed", "errored");
    }

    @Test
    void chunksWithoutTheWantedOutcomeAreNotRead() {
        // Errored cases are sparse: the first page of them reads only chunks whose tallies show one.
        CaseResults.Page p = cases.page(
                run, new CaseResults.Filter(Optional.of(CaseResults.Outcome.ERRORED), Optional.empty()), -1, 500);
        long chunksWithErrors = placements
                .jdbi(ExecutionConfig.CONTROL)
                .withHandle(h -> h.createQuery(
                                "SELECT count(*) FROM exec_chunks WHERE run_id = :r AND state = 'done'"
                                        + " AND (cases_errored > 0 OR EXISTS (SELECT 1 FROM unnest(gate_errored) x WHERE x > 0))")
                        .bind("r", run)
                        .mapTo(Long.class)
                        .one());
        assertThat((long) p.receiptsRead()).isEqualTo(chunksWithErrors);
        assertThat(p.cases()).allMatch(c -> c.outcome() == CaseResults.Outcome.ERRORED);
    }

    @Test
    void findReturnsOneCaseWithItsOutputAndProvenance() {
        CaseResults.CaseDetail d = cases.find(run, 42).orElseThrow();
        assertThat(d.result().caseId()).isEqualTo("case-42");
        assertThat(d.result().outputStoredApart()).isTrue();
        assertThat(d.output().orElseThrow()).hasSize(Receipt.INLINE_OUTPUT_BYTES + 10);
        assertThat(d.receiptKey()).startsWith("runs/" + run + "/receipts/0000000000-g");
        CaseResults.CaseDetail d7 = cases.find(run, 107).orElseThrow();
        assertThat(d7.result().chunk()).isEqualTo(1);
        assertThat(d7.caseSha256()).hasSize(64);
        // the simulated worker records no transcripts
        assertThat(d7.transcripts()).isEmpty();
        // Not executed yet (chunk 8 onwards), and beyond the plan.
        assertThat(cases.find(run, 900)).isEmpty();
        assertThat(cases.find(run, 5_000)).isEmpty();
        assertThat(cases.find(run, -1)).isEmpty();
    }

    @Test
    void badInputIsRefusedClearly() {
        assertThatThrownBy(() -> cases.page(run, new CaseResults.Filter(Optional.empty(), Optional.of("nope")), -1, 10))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("no gate named \"nope\"")
                .hasMessageContaining("all, math");
        assertThatThrownBy(() -> cases.page(run, CaseResults.Filter.ALL, -1, 0))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> cases.page(run, CaseResults.Filter.ALL, -1, 501))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> cases.page(UUID.randomUUID(), CaseResults.Filter.ALL, -1, 10))
                .isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> CaseResults.Outcome.parse("PASSED")).isInstanceOf(InvalidInputException.class);
        assertThat(CaseResults.Outcome.parse("failed")).isEqualTo(CaseResults.Outcome.FAILED);
    }
}
