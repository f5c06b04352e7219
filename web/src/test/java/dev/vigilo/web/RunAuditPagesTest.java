package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.view.CaseResults;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.view.RunTranscripts;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.LongPredicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A case's transcripts and run comparison in the dashboard, over HTTP, on runs executed by a real worker with a command
 * agent that narrates its work: A and B over one dataset (A wrong when i % 5 == 0, B when i % 7 == 0; A's case 7 fails
 * its first attempt), C over a second dataset sharing half the ids. What the pages show is checked against the
 * modules' own readers and an independent count; cursors are followed to the end.
 */
class RunAuditPagesTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final int CASES = 30;

    /** Answers i * 2 except as MODE says; narrates a tool call; in MODE a, case 7's first attempt fails. */
    private static final String AGENT = """
            #!/bin/sh
            n=$(sed -n 's/.*what is \\([0-9]*\\) \\* 2.*/\\1/p')
            if [ "$MODE" = a ] && [ "$n" -eq 7 ] && [ ! -f "$MARKS/seven" ]; then
              touch "$MARKS/seven"; echo "first attempt fails" >&2; exit 1
            fi
            answer=$((n * 2))
            if [ "$MODE" = a ] && [ $((n % 5)) -eq 0 ]; then answer=wrong; fi
            if [ "$MODE" = b ] && [ $((n % 7)) -eq 0 ]; then answer=wrong; fi
            {
              printf '%s\\n' '{"type":"reasoning","text":"Doubling '"$n"'."}'
              printf '%s\\n' '{"type":"tool_call","id":"c1","name":"double","arguments":{"n":'"$n"'}}'
              printf '%s\\n' '{"type":"tool_result","id":"c1","content":"'"$((n * 2))"'"}'
              printf '%s\\n' '{"type":"message","text":"'"$answer"'"}'
            } >> "$VIGILO_EVENTS"
            printf '%s\\n' "$answer"
            """;

    @TempDir
    static Path home;

    static ControlDatabase control;
    static Placements placements;
    static StorageConfig storage;
    static ObjectStore store;
    static UUID runA;
    static UUID runB;
    static UUID runC;
    /** Mode a again, its gate decided on the bound against 0.7: 24 of 30 (80%, 95% CI [62.7%, 90.5%]) is inconclusive. */
    static UUID runD;

    static Dashboard dashboard;
    static String base;

    @BeforeAll
    static void start() throws IOException {
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
        placements = Placements.open(control, ExecutionConfig.defaults());
        storage = StorageConfig.localDefault(home.resolve("objects"));
        store = ObjectStores.open(storage.defaultStore());
        DatasetEntry first = upload("first", 0, CASES);
        DatasetEntry second = upload("second", CASES / 2, CASES + CASES / 2);
        Path agent = home.resolve("agent.sh");
        Files.writeString(agent, AGENT);
        Files.setPosixFilePermissions(agent, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path marks = Files.createDirectories(home.resolve("marks"));
        runA = prepare(first, profile("a", agent, marks));
        runB = prepare(first, profile("b", agent, marks));
        runC = prepare(second, profile("b", agent, marks));
        // its own marks: case 7's first attempt fails in D as in A, whichever the worker runs first
        runD = prepare(
                first,
                profile("a", agent, Files.createDirectories(home.resolve("marks-d")))
                        .replace("min_pass_rate: 0.5}", "min_pass_rate: 0.7, decide: bound}"));
        Worker.Options fast = new Worker.Options(
                2,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofSeconds(5));
        new Worker(placements, storage, fast, Worker.Listener.NONE).run();
        for (UUID run : List.of(runA, runB, runC, runD)) {
            assertThat(new ExecutionStatusReader(placements).status(run).status())
                    .isEqualTo("settled");
        }
        dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                DashboardSources.all(control.jdbi(), placements, storage, Optional.empty(), List.of(), List.of(home)));
        base = "http://127.0.0.1:" + dashboard.port();
    }

    @AfterAll
    static void stop() {
        if (dashboard != null) {
            dashboard.close();
        }
        if (store != null) {
            store.close();
        }
        if (placements != null) {
            placements.close();
        }
        if (control != null) {
            control.close();
        }
    }

    private static DatasetEntry upload(String name, int from, int to) throws IOException {
        StringBuilder b = new StringBuilder();
        for (int i = from; i < to; i++) {
            b.append("{\"id\":\"case-")
                    .append(i)
                    .append("\",\"input\":\"what is ")
                    .append(i)
                    .append(" * 2\",\"expected\":\"")
                    .append(i * 2)
                    .append("\"}\n");
        }
        Path file = home.resolve(name + ".jsonl");
        Files.writeString(file, b.toString());
        return new DatasetCatalog(control.jdbi())
                .upload(
                        new UploadRequest(file, Optional.of(name), Optional.of(UUID.randomUUID())),
                        store,
                        UploadProgress.NONE);
    }

    private static String profile(String mode, Path agent, Path marks) {
        return """
                name: audit-%s
                agent: {kind: command, command: ["%s"], max_attempts: 2, env: {MODE: %s, MARKS: "%s"}}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                """.formatted(mode, agent, mode, marks);
    }

    private static UUID prepare(DatasetEntry dataset, String profile) {
        UUID run = UUID.randomUUID();
        new RunPreparation(control.jdbi(), storage)
                .create(new CreateRequest(ProfileInput.inline(profile), dataset.uploadId(), Optional.of(run), false));
        new Admission(placements, storage).admit(run);
        return run;
    }

    private static JsonNode json(String path) throws IOException {
        HttpResponse<String> r = Http.get(base + path);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return MAPPER.readTree(r.body());
    }

    private static String page(String path) {
        HttpResponse<String> r = Http.get(base + path);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Security-Policy")).contains(Dashboard.CSP);
        return r.body();
    }

    /** A's case i passes iff it is not a multiple of 5; B's iff not a multiple of 7. */
    private static boolean passes(String mode, long i) {
        return mode.equals("a") ? i % 5 != 0 : i % 7 != 0;
    }

    /** The flips from A (mode a) to a mode-b run, "case-i:change", for the cases that match {@code shared}. */
    private static List<String> expectedFlips(List<Long> order) {
        List<String> out = new ArrayList<>();
        for (long i : order) {
            boolean a = passes("a", i);
            boolean b = passes("b", i);
            if (a != b) {
                out.add("case-" + i + ":" + (a ? "pass_to_fail" : "fail_to_pass"));
            }
        }
        return out;
    }

    private static List<Long> ordinals(LongPredicate keep) {
        List<Long> out = new ArrayList<>();
        for (long i = 0; i < CASES + CASES / 2; i++) {
            if (keep.test(i)) {
                out.add(i);
            }
        }
        return out;
    }

    /** The committed events of a transcript as RunTranscripts streams them (the module's own reader). */
    private static List<JsonNode> events(UUID run, RunTranscripts.Attempt attempt) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new RunTranscripts(placements, storage).write(run, attempt, out);
        List<JsonNode> events = new ArrayList<>();
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            events.add(MAPPER.readTree(line));
        }
        return events;
    }

    @Test
    void aCasePageEmbedsItsTranscriptAndLinksEveryAttempt() throws IOException {
        String html = page("/runs/" + runA + "/cases/3");
        assertThat(html)
                .contains("id=\"transcript-attempt-1\"")
                .doesNotContain("id=\"transcript-attempt-2\"")
                .contains("Tool call double [c1]")
                .contains("what is 3 * 2")
                .contains("Doubling 3.");
        // Each tool call is drawn once: in the assistant message that made it, not again as its own event.
        assertThat(html.split("Tool call double \\[c1\\]", -1)).hasSize(2);
        String seven = page("/runs/" + runA + "/cases/7");
        assertThat(seven).contains("id=\"transcript-attempt-1\"").contains("id=\"transcript-attempt-2\"");

        JsonNode api = json("/api/runs/" + runA + "/cases/7");
        List<RunTranscripts.Attempt> attempts;
        try (CaseResults cases = new CaseResults(placements, storage)) {
            attempts = cases.find(runA, 7).orElseThrow().transcripts();
        }
        assertThat(attempts).hasSize(2);
        assertThat(api.path("transcripts")).hasSize(2);
        for (int i = 0; i < 2; i++) {
            JsonNode t = api.path("transcripts").get(i);
            assertThat(t.path("attempt").asInt()).isEqualTo(i + 1);
            assertThat(t.path("key").asText())
                    .isEqualTo(attempts.get(i).transcript().key().value());
            assertThat(t.path("sha256").asText())
                    .isEqualTo(attempts.get(i).transcript().sha256().toHex());
        }
    }

    @Test
    void aTranscriptPageShowsOneAttemptPagedLikeTheViewer() throws IOException {
        List<RunTranscripts.Attempt> attempts;
        try (CaseResults cases = new CaseResults(placements, storage)) {
            attempts = cases.find(runA, 7).orElseThrow().transcripts();
        }
        // The failed first attempt ends its turn with the error; the default attempt is the last.
        String first = page("/runs/" + runA + "/cases/7/transcript?attempt=1");
        assertThat(first).contains("End of turn 1 (error)").contains("ACCEPT");
        String last = page("/runs/" + runA + "/cases/7/transcript");
        assertThat(last)
                .contains(attempts.get(1).transcript().key().value())
                .contains("attempt 2 of 2")
                .contains("Tool call double [c1]")
                .contains("vigilo/gates");

        // The API pages through the same events the module's reader streams, by sequence number.
        List<JsonNode> expected = events(runA, attempts.get(1));
        List<Long> seen = new ArrayList<>();
        String next = "/api/runs/" + runA + "/cases/7/transcript?attempt=2&limit=4";
        int pages = 0;
        while (next != null) {
            JsonNode p = json(next);
            pages++;
            assertThat(p.path("case_id").asText()).isEqualTo("case-7");
            assertThat(p.at("/verify/verdict").asText()).isEqualTo("ACCEPT");
            assertThat(p.path("events").size()).isBetween(1, 4);
            p.path("events").forEach(e -> seen.add(e.path("seq").asLong()));
            next = p.path("next_from").isNull()
                    ? null
                    : "/api/runs/" + runA + "/cases/7/transcript?attempt=2&limit=4&from="
                            + p.path("next_from").asLong();
        }
        assertThat(seen)
                .containsExactlyElementsOf(
                        expected.stream().map(e -> e.path("seq").asLong()).toList());
        assertThat(pages).isEqualTo((expected.size() + 3) / 4);

        assertThat(Http.get(base + "/runs/" + runA + "/cases/7/transcript?attempt=3")
                        .statusCode())
                .isEqualTo(400);
        assertThat(Http.get(base + "/runs/" + runA + "/cases/7/transcript?attempt=x")
                        .statusCode())
                .isEqualTo(400);
        assertThat(Http.get(base + "/api/runs/" + runA + "/cases/999/transcript")
                        .statusCode())
                .isEqualTo(404);
        assertThat(Http.get(base + "/runs/" + UUID.randomUUID() + "/cases/1/transcript")
                        .statusCode())
                .isEqualTo(404);
    }

    @Test
    void aDamagedTranscriptIsNamedAndTheCasePageStillAnswers() throws IOException {
        RunTranscripts.Attempt t;
        try (CaseResults cases = new CaseResults(placements, storage)) {
            t = cases.find(runB, 11).orElseThrow().transcripts().get(0);
        }
        Path file = home.resolve("objects").resolve(t.transcript().key().value());
        byte[] original = Files.readAllBytes(file);
        byte[] damaged = original.clone();
        // Inside this attempt's slice: a transcript container holds other cases' transcripts too.
        damaged[(int) (t.offset().orElse(0) + t.transcript().length() / 2)] ^= 0x01;
        file.toFile().setWritable(true);
        Files.write(file, damaged);
        try {
            String html = page("/runs/" + runB + "/cases/11");
            assertThat(html)
                    .contains("id=\"transcript-damaged\"")
                    .contains(t.transcript().key().value());
            HttpResponse<String> r = Http.get(base + "/api/runs/" + runB + "/cases/11/transcript");
            assertThat(r.statusCode()).isEqualTo(500);
            assertThat(r.body()).contains(t.transcript().key().value()).contains("altered");
        } finally {
            Files.write(file, original);
        }
        assertThat(page("/runs/" + runB + "/cases/11")).doesNotContain("transcript-damaged");
    }

    @Test
    void aGateDecidedOnItsBoundShowsItsIntervalAndStaysInconclusive() throws IOException {
        // Wilson at 0.95 for 24 of 30, from its formula; N (p - m)^2 >= z^2 m (1 - m): 0.8067 / 0.01 -> 81 cases.
        double z = 1.959963984540054;
        double p = 0.8;
        int n = CASES;
        double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
        double half = z * Math.sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / (1 + z * z / n);
        String ci =
                String.format(java.util.Locale.ROOT, "[%.1f%%, %.1f%%]", (centre - half) * 100, (centre + half) * 100);
        assertThat(ci).isEqualTo("[62.7%, 90.5%]");

        JsonNode run = json("/api/runs/" + runD);
        assertThat(run.path("verdict").asText()).isEqualTo("inconclusive");
        JsonNode all = run.at("/gates/0");
        assertThat(all.path("decide").asText()).isEqualTo("bound");
        assertThat(all.path("decision").asText()).isEqualTo("inconclusive");
        assertThat(all.path("ci_low").asDouble()).isCloseTo(centre - half, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(all.path("ci_high").asDouble()).isCloseTo(centre + half, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(all.path("cases_to_decide").asLong()).isEqualTo(81);

        String html = page("/runs/" + runD);
        assertThat(html)
                .contains("<span class=\"badge verdict-inconclusive\" id=\"run-verdict\">verdict: inconclusive</span>")
                .contains(">95% CI " + ci + "</td><td class=\"num\">70.0%</td><td>interval (bound)</td>"
                        + "<td><span class=\"badge verdict-inconclusive\">inconclusive</span></td>")
                .contains("Gate all is inconclusive: its 95% interval " + ci + " holds its minimum 70.0%; 81 cases at"
                        + " the observed 80.0% (51 more than the 30 planned) would pass it.");
        // A point gate shows its interval too, and its decision as before.
        assertThat(page("/runs/" + runA))
                .contains("<td>point rate</td><td><span class=\"badge verdict-passed\">passed</span></td>")
                .doesNotContain("verdict-inconclusive");

        // Compared with A (same cases, same outcomes but case 7's retry): nothing differs, p = 1.
        JsonNode cmp = json("/api/runs/" + runD + "/compare/" + runA);
        assertThat(cmp.at("/gates/0/a/decision").asText()).isEqualTo("inconclusive");
        assertThat(cmp.at("/gates/0/b/decision").asText()).isEqualTo("passed");
        assertThat(cmp.at("/gates/0/a_only").asLong()).isZero();
        assertThat(cmp.at("/gates/0/b_only").asLong()).isZero();
        assertThat(cmp.at("/gates/0/p_value").asDouble()).isEqualTo(1.0);
        assertThat(page("/runs/" + runD + "/compare/" + runA))
                .contains("<span class=\"badge verdict-inconclusive\">inconclusive</span>");
    }

    @Test
    void runsOfOneDatasetAreComparedPagedByOrdinal() throws IOException {
        List<String> expected = expectedFlips(ordinals(i -> i < CASES));
        JsonNode all = json("/api/runs/" + runA + "/compare/" + runB);
        assertThat(all.path("same_dataset").asBoolean()).isTrue();
        JsonNode gate = all.path("gates").get(0);
        long passA = ordinals(i -> i < CASES && passes("a", i)).size();
        long passB = ordinals(i -> i < CASES && passes("b", i)).size();
        assertThat(gate.path("name").asText()).isEqualTo("all");
        assertThat(gate.at("/a/passed").asLong()).isEqualTo(passA);
        assertThat(gate.at("/b/passed").asLong()).isEqualTo(passB);
        assertThat(gate.path("difference").asDouble())
                .isCloseTo((passB - passA) / (double) CASES, org.assertj.core.data.Offset.offset(1e-12));
        // Significance over the 30 paired cases, counted apart: a_only = 7, 14, 21, 28; b_only = 5, 10, 15, 20, 25;
        // McNemar's exact p = 2 (C(9,0) + ... + C(9,4)) / 2^9 = 2 * 256 / 512 = 1.
        long aOnly =
                ordinals(i -> i < CASES && passes("a", i) && !passes("b", i)).size();
        long bOnly =
                ordinals(i -> i < CASES && passes("b", i) && !passes("a", i)).size();
        assertThat(gate.path("a_only").asLong()).isEqualTo(aOnly).isEqualTo(4);
        assertThat(gate.path("b_only").asLong()).isEqualTo(bOnly).isEqualTo(5);
        assertThat(gate.path("p_value").asDouble()).isEqualTo(1.0);
        assertThat(gate.path("paired").asLong()).isEqualTo(CASES);
        assertThat(gate.path("paired_difference").asDouble())
                .isCloseTo((bOnly - aOnly) / (double) CASES, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(gate.path("difference_ci_low").asDouble()).isLessThan(0).isGreaterThanOrEqualTo(-1);
        assertThat(gate.path("difference_ci_high").asDouble())
                .isGreaterThan(1.0 / CASES)
                .isLessThanOrEqualTo(1);
        assertThat(gate.path("confidence").asDouble()).isEqualTo(0.95);
        assertThat(gate.path("significant").asBoolean()).isFalse();
        assertThat(gate.at("/a/decision").asText()).isEqualTo("passed");
        assertThat(flips(all)).containsExactlyElementsOf(expected);
        assertThat(all.path("next_after").isNull()).isTrue();
        assertThat(all.at("/summary/complete").asBoolean()).isTrue();
        assertThat(all.at("/summary/compared").asLong()).isEqualTo(CASES);
        assertThat(all.at("/summary/flipped").asLong()).isEqualTo(expected.size());

        // Two flips a page: the cursors lead through the same flips in the same order.
        List<String> paged = new ArrayList<>();
        String next = "/api/runs/" + runA + "/compare/" + runB + "?limit=2";
        JsonNode p;
        do {
            p = json(next);
            paged.addAll(flips(p));
            assertThat(p.path("flips").size()).isBetween(0, 2);
            if (!p.path("next_after").isNull()) {
                assertThat(p.at("/summary/complete").asBoolean()).isFalse();
                assertThat(p.path("next_after").asLong())
                        .isEqualTo(p.at("/flips/1/ordinal_a").asLong());
            }
            next = p.path("next_after").isNull()
                    ? null
                    : "/api/runs/" + runA + "/compare/" + runB + "?limit=2&after="
                            + p.path("next_after").asText();
        } while (next != null);
        assertThat(paged).containsExactlyElementsOf(expected);
        assertThat(p.at("/summary/complete").asBoolean()).isTrue();
        assertThat(p.at("/summary/compared").asLong()).isEqualTo(CASES);

        String html = page("/runs/" + runA + "/compare/" + runB);
        assertThat(html)
                .contains("same dataset: cases matched by ordinal")
                .contains("<td>all</td>")
                .contains("case-5")
                .contains("all: failed → passed (fail_to_pass)")
                .contains("all: passed → failed (pass_to_fail)")
                .contains("<th>Why in A</th><th>Why in B</th>")
                .contains(
                        "<td class=\"reason\">every evaluator passed</td><td class=\"reason\">exact failed (score 0.0)")
                .contains("href=\"/runs/" + runA + "/cases/7\"")
                .contains(CASES + " cases compared, " + expected.size() + " flipped")
                .contains("Over every executed case of both runs.")
                .contains("id=\"significance\"")
                .contains("<tr data-gate=\"all\"><td>all</td><td class=\"num\">30</td><td class=\"num\">4</td>"
                        + "<td class=\"num\">5</td><td class=\"num\">1.00</td><td class=\"num\">+3.3 pts</td>"
                        + "<td class=\"num\">95% [")
                .contains("<span class=\"badge not-significant\">not significant</span>");
        String firstPage = page("/runs/" + runA + "/compare/" + runB + "?limit=1");
        assertThat(firstPage).contains("id=\"next-page\"").contains("Over the cases read for this page");
    }

    @Test
    void runsOfDifferentDatasetsAreComparedPagedByCaseId() throws IOException {
        List<Long> shared = ordinals(i -> i >= CASES / 2 && i < CASES);
        shared.sort((x, y) -> ("case-" + x).compareTo("case-" + y));
        List<String> expected = expectedFlips(shared);
        JsonNode all = json("/api/runs/" + runA + "/compare/" + runC);
        assertThat(all.path("same_dataset").asBoolean()).isFalse();
        assertThat(flips(all)).containsExactlyElementsOf(expected);
        assertThat(all.at("/summary/compared").asLong()).isEqualTo(CASES / 2);
        assertThat(all.at("/summary/only_in_a").asLong()).isEqualTo(CASES / 2);
        assertThat(all.at("/summary/only_in_b").asLong()).isEqualTo(CASES / 2);

        List<String> paged = new ArrayList<>();
        String after = null;
        do {
            JsonNode p = json("/api/runs/" + runA + "/compare/" + runC + "?limit=1"
                    + (after == null ? "" : "&after=" + URLEncoder.encode(after, StandardCharsets.UTF_8)));
            paged.addAll(flips(p));
            after = p.path("next_after").isNull() ? null : p.path("next_after").asText();
            if (after != null) {
                assertThat(after).isEqualTo(p.at("/flips/0/case_id").asText());
            }
        } while (after != null);
        assertThat(paged).containsExactlyElementsOf(expected);
        assertThat(page("/runs/" + runA + "/compare/" + runC)).contains("different datasets: cases matched by id");
    }

    @Test
    void theRunPageFormLeadsToTheComparisonAndBadRequestsAreRefused() {
        assertThat(page("/runs/" + runA)).contains("id=\"compare-form\"");
        HttpResponse<String> form = Http.get(base + "/runs/" + runA + "/compare?with=" + runB);
        assertThat(form.statusCode()).isEqualTo(303);
        assertThat(form.headers().firstValue("Location")).contains("/runs/" + runA + "/compare/" + runB);
        assertThat(Http.get(base + "/runs/" + runA + "/compare?with=nope").statusCode())
                .isEqualTo(400);
        assertThat(Http.get(base + "/runs/" + runA + "/compare").statusCode()).isEqualTo(400);
        assertThat(Http.get(base + "/runs/" + runA + "/compare/not-a-uuid").statusCode())
                .isEqualTo(400);
        HttpResponse<String> unknown = Http.get(base + "/api/runs/" + runA + "/compare/" + UUID.randomUUID());
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(unknown.body()).contains("\"status\":404");
        assertThat(Http.get(base + "/runs/" + runA + "/compare/" + runB + "?after=abc")
                        .statusCode())
                .isEqualTo(400);
        assertThat(Http.get(base + "/runs/" + runA + "/compare/" + runB + "?limit=0")
                        .statusCode())
                .isEqualTo(400);
        assertThat(Http.get(base + "/api/runs").statusCode()).isEqualTo(200);
    }

    private static List<String> flips(JsonNode comparison) {
        List<String> out = new ArrayList<>();
        for (JsonNode f : comparison.path("flips")) {
            assertThat(f.path("changes")).hasSize(1);
            String change = f.at("/changes/0/change").asText();
            // Why each side ended as it did, from its receipt: the failing side's evaluator reason.
            String passed = change.equals("pass_to_fail") ? "why_a" : "why_b";
            String failed = change.equals("pass_to_fail") ? "why_b" : "why_a";
            assertThat(f.path(passed).asText()).isEqualTo("every evaluator passed");
            assertThat(f.path(failed).asText()).as(f.toString()).startsWith("exact failed (score 0.0): expected `");
            out.add(f.path("case_id").asText() + ":" + change);
        }
        return out;
    }
}
