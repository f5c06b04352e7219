package dev.vigilo.exec.view;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.worker.TranscriptTest;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunPreparation;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run compare} over real executed runs: two runs of one dataset whose agents answer differently (merged by
 * ordinal), and runs over two datasets that share only some case ids (sorted on disk by id, with a budget small
 * enough to spill), each checked against an independent computation of the flips.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunComparisonTest {
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");
    private static final int CASES = 300;

    @TempDir
    static Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;
    UUID runA;
    UUID runB;
    UUID runC;

    /** Model a: wrong when i % 5 == 0. Model b: wrong when i % 7 == 0, errors (500) when i % 11 == 0. */
    static String answer(String model, long i) {
        if (model.equals("b") && i % 11 == 0) {
            return null;
        }
        boolean wrong = model.equals("a") ? i % 5 == 0 : i % 7 == 0;
        return wrong ? "wrong" : Long.toString(i * 2);
    }

    static String profile(OpenAiTestServer llm, String model) {
        return """
                name: compare
                agent: {kind: http, url: "%s", model: %s, max_attempts: 1}
                evaluators:
                  - {name: exact, kind: exact_match}
                  - {name: re, kind: regex, pattern: "^[0-9]+$", applies_to: {groups: [math]}}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                  - {name: math, required_evaluators: [exact, re], min_pass_rate: 0.5}
                """.formatted(llm.chatUrl(), model);
    }

    @BeforeAll
    void setUp() throws IOException {
        fx = new ExecFixture(dir, CASES);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> {
            Matcher m = QUESTION.matcher(req.lastUserMessage());
            long i = m.find() ? Long.parseLong(m.group(1)) : -1;
            String a = answer(req.body().path("model").asText(), i);
            return a == null ? OpenAiTestServer.Reply.error(500, "down") : OpenAiTestServer.Reply.content(a);
        });
        runA = fx.prepare(profile(llm, "a"));
        runB = fx.prepare(profile(llm, "b"));
        // A second dataset: case ids case-150 .. case-449, in a different order (so other ordinals).
        Path second = dir.resolve("second.jsonl");
        StringBuilder lines = new StringBuilder();
        for (int i = 449; i >= 150; i--) {
            String group = i % 3 == 0 ? ",\"group\":\"math\"" : "";
            lines.append("{\"id\":\"case-")
                    .append(i)
                    .append("\",\"input\":\"what is ")
                    .append(i)
                    .append(" * 2\",\"expected\":\"")
                    .append(i * 2)
                    .append("\"")
                    .append(group)
                    .append("}\n");
        }
        Files.writeString(second, lines.toString());
        DatasetEntry other = new DatasetCatalog(fx.control.jdbi())
                .upload(
                        new UploadRequest(second, Optional.of("second"), Optional.of(UUID.randomUUID())),
                        fx.store,
                        UploadProgress.NONE);
        runC = new RunPreparation(fx.control.jdbi(), fx.storage)
                .create(new CreateRequest(
                        ProfileInput.inline(profile(llm, "b")), other.uploadId(), Optional.empty(), true))
                .runId();
        fx.control
                .jdbi()
                .useHandle(h -> h.createUpdate("UPDATE run_plans SET execution_requested = true WHERE run_id = :r")
                        .bind("r", runC)
                        .execute());
        for (UUID r : List.of(runA, runB, runC)) {
            new Admission(placements, fx.storage).admit(r);
        }
        new Worker(placements, fx.storage, TranscriptTest.fast(4), Worker.Listener.NONE).run();
        for (UUID r : List.of(runA, runB, runC)) {
            assertThat(fx.runStatus(r)).isEqualTo("settled");
        }
    }

    @AfterAll
    void tearDown() {
        llm.close();
        placements.close();
        fx.close();
    }

    /** Outcome of case i under gate "all" and "math" (null when not selected) for a model, independently. */
    static Map<String, String> expected(String model, long i) {
        String a = answer(model, i);
        String exact = a == null ? "errored" : a.equals(Long.toString(i * 2)) ? "passed" : "failed";
        Map<String, String> m = new HashMap<>();
        m.put("all", exact);
        if (i % 3 == 0) {
            m.put("math", exact); // digits-only holds exactly when the answer is right
        }
        return m;
    }

    static String kind(String a, String b) {
        if (b.equals("errored")) {
            return "newly_errored";
        }
        if (b.equals("passed")) {
            return "fail_to_pass";
        }
        return a.equals("passed") ? "pass_to_fail" : "error_to_fail";
    }

    /** The expected flips, "case-i gate a->b kind", in the given order of case numbers. */
    static List<String> expectedFlips(Iterable<Long> order) {
        List<String> out = new ArrayList<>();
        for (long i : order) {
            Map<String, String> a = expected("a", i);
            Map<String, String> b = expected("b", i);
            for (String g : List.of("all", "math")) {
                if (a.containsKey(g) && !a.get(g).equals(b.get(g))) {
                    out.add("case-" + i + " " + g + " " + a.get(g) + "->" + b.get(g) + " " + kind(a.get(g), b.get(g)));
                }
            }
        }
        return out;
    }

    record Collected(RunComparison.Header header, List<String> flips, RunComparison.Summary summary) {}

    Collected compare(RunComparison comparison, UUID a, UUID b) {
        List<String> flips = new ArrayList<>();
        RunComparison.Header[] header = new RunComparison.Header[1];
        RunComparison.Summary s = comparison.compare(a, b, new RunComparison.Listener() {
            @Override
            public void start(RunComparison.Header h) {
                header[0] = h;
            }

            @Override
            public void flip(RunComparison.Flip f) {
                for (RunComparison.GateChange c : f.changes()) {
                    flips.add(f.caseId() + " " + c.gate() + " " + c.a() + "->" + c.b() + " "
                            + c.change().wire());
                }
            }
        });
        return new Collected(header[0], flips, s);
    }

    @Test
    void runsOfOneDatasetAreMergedByOrdinal() {
        Collected c = compare(new RunComparison(placements, fx.storage), runA, runB);
        assertThat(c.header().sameDataset()).isTrue();
        List<Long> ordinals = new ArrayList<>();
        for (long i = 0; i < CASES; i++) {
            ordinals.add(i);
        }
        assertThat(c.flips()).containsExactlyElementsOf(expectedFlips(ordinals));
        assertThat(c.summary().compared()).isEqualTo(CASES);
        assertThat(c.summary().onlyInA()).isZero();
        assertThat(c.summary().onlyInB()).isZero();
        long flippedCases = ordinals.stream()
                .filter(i -> !expected("a", i).equals(expected("b", i)))
                .count();
        assertThat(c.summary().flipped()).isEqualTo(flippedCases);

        // Pass rates per gate, A against B, from an independent count.
        RunComparison.GateComparison all = c.header().gates().get(0);
        long passA = ordinals.stream()
                .filter(i -> expected("a", i).get("all").equals("passed"))
                .count();
        long passB = ordinals.stream()
                .filter(i -> expected("b", i).get("all").equals("passed"))
                .count();
        assertThat(all.name()).isEqualTo("all");
        assertThat(all.a().orElseThrow().passed()).isEqualTo(passA);
        assertThat(all.b().orElseThrow().passed()).isEqualTo(passB);
        assertThat(all.difference().orElseThrow()).isCloseTo((passB - passA) / (double) CASES, within());
    }

    /** The exact two-sided McNemar p-value, computed here in exact integers: min(1, 2 sum_{i<=min} C(n,i) / 2^n). */
    static double mcNemar(long b, long c) {
        int n = (int) (b + c);
        if (n == 0) {
            return 1.0;
        }
        java.math.BigInteger sum = java.math.BigInteger.ZERO;
        java.math.BigInteger binomial = java.math.BigInteger.ONE;
        for (int i = 0; i <= Math.min(b, c); i++) {
            sum = sum.add(binomial);
            binomial =
                    binomial.multiply(java.math.BigInteger.valueOf(n - i)).divide(java.math.BigInteger.valueOf(i + 1));
        }
        java.math.BigDecimal p = new java.math.BigDecimal(sum.shiftLeft(1))
                .divide(
                        new java.math.BigDecimal(java.math.BigInteger.ONE.shiftLeft(n)),
                        java.math.MathContext.DECIMAL64);
        return Math.min(1.0, p.doubleValue());
    }

    @Test
    void eachGateGetsAPairedSignificanceTestOverTheCasesBothRunsSelect() {
        Collected c = compare(new RunComparison(placements, fx.storage), runA, runB);
        for (String gate : List.of("all", "math")) {
            long both = 0;
            long aOnly = 0;
            long bOnly = 0;
            long neither = 0;
            for (long i = 0; i < CASES; i++) {
                Map<String, String> a = expected("a", i);
                if (!a.containsKey(gate)) {
                    continue;
                }
                boolean pa = a.get(gate).equals("passed");
                boolean pb = expected("b", i).get(gate).equals("passed");
                if (pa && pb) {
                    both++;
                } else if (pa) {
                    aOnly++;
                } else if (pb) {
                    bOnly++;
                } else {
                    neither++;
                }
            }
            RunComparison.GateSignificance s = c.summary().significance(gate).orElseThrow();
            assertThat(s.mcNemar().aOnly()).as(gate).isEqualTo(aOnly);
            assertThat(s.mcNemar().bOnly()).as(gate).isEqualTo(bOnly);
            assertThat(s.paired()).isEqualTo(both + aOnly + bOnly + neither);
            assertThat(s.mcNemar().pValue()).isCloseTo(mcNemar(aOnly, bOnly), within());
            assertThat(s.difference().difference()).isCloseTo((bOnly - aOnly) / (double) s.paired(), within());
            assertThat(s.difference().low()).isLessThan(s.difference().difference());
            assertThat(s.difference().high()).isGreaterThan(s.difference().difference());
            assertThat(s.significant()).isEqualTo(mcNemar(aOnly, bOnly) < 0.05);
        }
        // Model a is wrong on multiples of 5, model b on multiples of 7 and 11: B loses more than it gains.
        RunComparison.GateSignificance all = c.summary().significance("all").orElseThrow();
        assertThat(all.mcNemar().aOnly()).isGreaterThan(all.mcNemar().bOnly());
        // A run compared with itself: no discordant case, p = 1, difference 0, never significant.
        RunComparison.GateSignificance self = compare(new RunComparison(placements, fx.storage), runA, runA)
                .summary()
                .significance("all")
                .orElseThrow();
        assertThat(self.mcNemar().pValue()).isEqualTo(1.0);
        assertThat(self.difference().difference()).isZero();
        assertThat(self.significant()).isFalse();
    }

    @Test
    void aListenerThatHasEnoughEndsTheComparisonEarly() {
        List<String> ids = new ArrayList<>();
        RunComparison.Summary s = new RunComparison(placements, fx.storage)
                .compare(runA, runB, new RunComparison.Listener() {
                    @Override
                    public void start(RunComparison.Header h) {}

                    @Override
                    public void flip(RunComparison.Flip f) {
                        ids.add(f.caseId());
                    }

                    @Override
                    public boolean enough() {
                        return ids.size() == 3;
                    }
                });
        List<Long> flipped = new ArrayList<>();
        for (long i = 0; i < CASES && flipped.size() < 3; i++) {
            if (!expected("a", i).equals(expected("b", i))) {
                flipped.add(i);
            }
        }
        assertThat(ids).containsExactly("case-" + flipped.get(0), "case-" + flipped.get(1), "case-" + flipped.get(2));
        assertThat(s.complete()).isFalse();
        assertThat(s.flipped()).isEqualTo(3);
        // counted up to and including the third flipped case, in ordinal order
        assertThat(s.compared()).isEqualTo(flipped.get(2) + 1);
        assertThat(compare(new RunComparison(placements, fx.storage), runA, runB)
                        .summary()
                        .complete())
                .isTrue();
    }

    private static org.assertj.core.data.Offset<Double> within() {
        return org.assertj.core.data.Offset.offset(1e-12);
    }

    @Test
    void runsOfDifferentDatasetsAreMatchedByIdOnDisk() {
        // 2 KiB of records per sorted run: hundreds of cases spill into many run files and merge back.
        Collected c = compare(new RunComparison(placements, fx.storage, 2048), runA, runC);
        assertThat(c.header().sameDataset()).isFalse();
        // Shared ids: case-150 .. case-299, in id order (string order of "case-<i>").
        List<Long> shared = new ArrayList<>();
        for (long i = 150; i < CASES; i++) {
            shared.add(i);
        }
        shared.sort((x, y) -> ("case-" + x).compareTo("case-" + y));
        assertThat(c.flips()).containsExactlyElementsOf(expectedFlips(shared));
        assertThat(c.summary().compared()).isEqualTo(150);
        assertThat(c.summary().onlyInA()).isEqualTo(150);
        assertThat(c.summary().onlyInB()).isEqualTo(150);
    }

    @Test
    void theSortSpillsAndMergesInIdOrder() throws IOException {
        List<CaseOutcome> in = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            in.add(new CaseOutcome("id-" + ((i * 7919L) % 5_000), i, false, new byte[] {1}));
        }
        Path scratch = Files.createTempDirectory(dir, "sort");
        Iterator<CaseOutcome> it = in.iterator();
        try (ExternalIdSort s = ExternalIdSort.sort(it, scratch, 1_000)) {
            assertThat(s.spilled()).isGreaterThan(ExternalIdSort.FAN_IN); // forces a merge pass
            String last = "";
            int n = 0;
            while (s.hasNext()) {
                String id = s.next().id();
                assertThat(id.compareTo(last)).isGreaterThan(0);
                last = id;
                n++;
            }
            assertThat(n).isEqualTo(5_000);
        }
        try (var left = Files.list(scratch)) {
            assertThat(left).isEmpty();
        }
    }
}
