package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.view.RunResults;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dashboard over HTTP on a quickstart state: every page and API answers with the figures the modules compute
 * independently; tokens, cross-site requests, hosts and malformed requests are refused with 4xx and the server goes
 * on answering.
 */
class DashboardHttpTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    static Path home;

    static QuickstartState state;
    static Dashboard dashboard;
    static String base;

    @BeforeAll
    static void start() throws IOException {
        state = new QuickstartState(home);
        dashboard =
                Dashboard.start(new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()), state.sources());
        base = "http://127.0.0.1:" + dashboard.port();
    }

    @AfterAll
    static void stop() {
        if (dashboard != null) {
            dashboard.close();
        }
        if (state != null) {
            state.close();
        }
    }

    private static JsonNode json(String path) throws IOException {
        HttpResponse<String> r = Http.get(base + path);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/json");
        return MAPPER.readTree(r.body());
    }

    private static String page(String path) {
        HttpResponse<String> r = Http.get(base + path);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Security-Policy")).contains(Dashboard.CSP);
        return r.body();
    }

    /** Every executed case of the settled run, as {@code vigilo run results} writes it (an independent path). */
    private static List<JsonNode> results() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new RunResults(state.placements, state.storage).write(state.settledRun, out);
        List<JsonNode> lines = new ArrayList<>();
        for (String l : out.toString(StandardCharsets.UTF_8).split("\n")) {
            if (!l.isBlank()) {
                lines.add(MAPPER.readTree(l));
            }
        }
        return lines;
    }

    private static String outcome(JsonNode line) {
        if (line.path("status").asText().equals("errored")) {
            return "errored";
        }
        List<String> g = new ArrayList<>();
        line.path("gates").forEach(x -> g.add(x.asText()));
        return g.contains("errored") ? "errored" : g.contains("failed") ? "failed" : "passed";
    }

    @Test
    void aRunWhoseWorkersWaitForItsStoreSaysSoOnItsPageAndInItsApi() throws IOException {
        // What a worker publishes while its writes meet a full disk (exec's WaitBoard): one row per service it waits
        // for. The error text is what the store said, so it is escaped on the page.
        UUID worker = UUID.randomUUID();
        String binding = state.storage.defaultStore().binding().value();
        state.control
                .jdbi()
                .useHandle(h -> h.createUpdate(
                                "INSERT INTO exec_worker_waits"
                                        + " (worker_id, service, target, since, last_error) VALUES"
                                        + " (:w, 'store', :t, '2026-01-02T03:04:05.678Z', 'cannot write x: No space left on device <b>')")
                        .bind("w", worker)
                        .bind("t", binding)
                        .execute());
        try {
            String html = page("/runs/" + state.pendingRun);
            assertThat(html)
                    .contains("waiting for the store since 2026-01-02T03:04:05Z (" + binding
                            + ", 1 worker): cannot write x: No space left on device &lt;b&gt;. Its chunks keep their"
                            + " attempts and carry on once it answers.");
            JsonNode api = json("/api/runs/" + state.pendingRun);
            assertThat(api.path("waiting")).hasSize(1);
            JsonNode w = api.path("waiting").get(0);
            assertThat(w.path("for").asText()).isEqualTo("store");
            assertThat(w.path("target").asText()).isEqualTo(binding);
            assertThat(w.path("since").asText()).isEqualTo("2026-01-02T03:04:05Z");
            assertThat(w.path("workers").asInt()).isEqualTo(1);
            assertThat(w.path("error").asText()).isEqualTo("cannot write x: No space left on device <b>");
            // A settled run waits for nothing, though it has the same store.
            assertThat(json("/api/runs/" + state.settledRun).path("waiting")).isEmpty();
            assertThat(page("/runs/" + state.settledRun)).doesNotContain("waiting for the store");
        } finally {
            state.control
                    .jdbi()
                    .useHandle(h -> h.createUpdate("DELETE FROM exec_worker_waits WHERE worker_id = :w")
                            .bind("w", worker)
                            .execute());
        }
        assertThat(page("/runs/" + state.pendingRun)).doesNotContain("waiting for the store");
        assertThat(json("/api/runs/" + state.pendingRun).path("waiting")).isEmpty();
    }

    @Test
    void runsListAndRunApiShowWhatTheModulesRecord() throws IOException {
        JsonNode runs = json("/api/runs");
        assertThat(runs.path("runs")).hasSize(2);
        JsonNode settled = null;
        for (JsonNode r : runs.path("runs")) {
            if (r.path("run_id").asText().equals(state.settledRun.toString())) {
                settled = r;
            }
        }
        assertThat(settled).isNotNull();
        assertThat(settled.path("status").asText()).isEqualTo("settled");
        assertThat(settled.path("cases_done").asLong()).isEqualTo(12);
        assertThat(settled.path("cases").asLong()).isEqualTo(12);
        // Its identity and settled figures: the profile's name, the agent, the first gate's recorded pass rate.
        assertThat(settled.path("name").asText()).isEqualTo("quickstart");
        assertThat(settled.path("agent_kind").asText()).isEqualTo("command");
        assertThat(settled.path("agent_model").asText()).isEqualTo("java");
        GateResult firstGate = new ExecutionStatusReader(state.placements)
                .status(state.settledRun)
                .gates()
                .get(0);
        assertThat(settled.at("/first_gate/name").asText()).isEqualTo(firstGate.name());
        assertThat(settled.at("/first_gate/pass_rate").asDouble())
                .isEqualTo((double) firstGate.passed() / firstGate.planned());
        assertThat(settled.path("tokens").isNull())
                .as("a command agent reports no usage")
                .isTrue();
        // Filters: by status, by a part of the name (case-insensitive, LIKE's characters literal), by dataset.
        assertThat(json("/api/runs?status=settled").path("runs"))
                .extracting(r -> r.path("run_id").asText())
                .containsExactly(state.settledRun.toString());
        assertThat(json("/api/runs?status=pending").path("runs"))
                .extracting(r -> r.path("run_id").asText())
                .containsExactly(state.pendingRun.toString());
        assertThat(json("/api/runs?name=QUICK").path("runs")).hasSize(2);
        assertThat(json("/api/runs?name=quick%25").path("runs")).isEmpty();
        assertThat(json("/api/runs?name=nothing-like-it").path("runs")).isEmpty();
        assertThat(json("/api/runs?dataset=" + state.dataset.uploadId() + "&status=settled")
                        .path("runs"))
                .hasSize(1);
        assertThat(json("/api/runs?dataset=" + UUID.randomUUID()).path("runs")).isEmpty();
        HttpResponse<String> bad = Http.get(base + "/api/runs?status=sleeping");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(MAPPER.readTree(bad.body()).path("error").asText())
                .startsWith("status \"sleeping\" is not a run state; use one of creating, pending");
        assertThat(page("/runs?status=settled&name=quick"))
                .contains("<option value=\"settled\" selected>settled</option>")
                .contains("value=\"quick\"")
                .contains("id=\"filter-clear\"")
                .doesNotContain(state.pendingRun.toString());
        assertThat(page("/runs?name=nothing-like-it")).contains("No run matches this filter.");
        String list = page("/runs");
        assertThat(list)
                .contains(">quickstart</a> <span class=\"mono muted\">"
                        + state.settledRun.toString().substring(0, 8))
                .contains("<td class=\"mono\">command · java</td>")
                .contains("<td class=\"num pass-rate\">"
                        + String.format(
                                java.util.Locale.ROOT, "%.1f%%", 100.0 * firstGate.passed() / firstGate.planned())
                        + " " + firstGate.name() + "</td>");

        JsonNode run = json("/api/runs/" + state.settledRun);
        ExecutionStatus s = new ExecutionStatusReader(state.placements).status(state.settledRun);
        assertThat(run.path("status").asText()).isEqualTo("settled");
        assertThat(run.path("verdict").asText()).isEqualTo(s.verdict().orElseThrow());
        assertThat(run.path("gates")).hasSize(s.gates().size());
        for (int i = 0; i < s.gates().size(); i++) {
            GateResult g = s.gates().get(i);
            JsonNode j = run.path("gates").get(i);
            assertThat(j.path("name").asText()).isEqualTo(g.name());
            assertThat(j.path("passed").asLong()).isEqualTo(g.passed());
            assertThat(j.path("planned").asLong()).isEqualTo(g.planned());
            // the keys of run status --json: interval, rule and decision
            assertThat(j.path("ci_low").asDouble()).isEqualTo(g.interval().low());
            assertThat(j.path("ci_high").asDouble()).isEqualTo(g.interval().high());
            assertThat(j.path("stderr").asDouble()).isEqualTo(g.interval().stderr());
            assertThat(j.path("confidence").asDouble()).isEqualTo(0.95);
            assertThat(j.path("decide").asText()).isEqualTo("point");
            assertThat(j.path("decision").asText())
                    .isEqualTo(g.decision().orElseThrow().spelling());
        }
        assertThat(run.path("identity").path("dataset_upload_id").asText())
                .isEqualTo(state.dataset.uploadId().toString());
        assertThat(run.path("identity").path("root").path("key").asText()).contains(state.settledRun.toString());

        String html = page("/runs/" + state.settledRun);
        assertThat(html)
                .contains("<title>quickstart · run " + state.settledRun)
                .contains("<h1>quickstart <span class=\"muted\">run</span>")
                .contains("id=\"run-agent\">Agent <span class=\"mono\">command · java</span>");
        assertThat(run.at("/identity/name").asText()).isEqualTo("quickstart");
        // The profile in readable form, from the plan's configuration.
        assertThat(html)
                .contains("<tr><th>kind</th><td class=\"mono\">command</td></tr>")
                .contains("<tr><th>command</th><td class=\"mono\">[&quot;java&quot;,")
                .contains("<tr><td>numeric</td><td>regex</td><td>tags_any math</td><td class=\"mono\">pattern: ")
                .contains("<tr><td>exact</td><td>exact_match</td><td>every case</td>")
                .contains("<tr><td>geography</td><td>mentions_answer</td><td>groups geography</td>"
                        + "<td class=\"num\">75.0%</td><td>point</td></tr>")
                .contains(
                        "<span class=\"mono\">limits</span>: <span class=\"mono\">{&quot;max_cases&quot;:1000}</span>");
        // The compare picker offers the other run of the same dataset, not this one.
        assertThat(html)
                .contains("<option value=\"" + state.pendingRun + "\">quickstart · pending · command · java · ")
                .doesNotContain("<option value=\"" + state.settledRun + "\"");
        for (GateResult g : s.gates()) {
            assertThat(html).contains("<td>" + g.name() + "</td>");
        }
        assertThat(html).contains("id=\"shard-127\"").contains(">12</span> / <span id=\"cases-total\">12<");
        assertThat(page("/runs")).contains(state.settledRun.toString()).contains(state.pendingRun.toString());

        JsonNode t = json("/api/runs/" + state.settledRun + "/throughput");
        long sum = 0;
        for (JsonNode p : t.path("points")) {
            sum += p.path("cases").asLong();
        }
        assertThat(sum).isEqualTo(12);
    }

    @Test
    void casePagesFilterByOutcomeLikeTheResults() throws IOException {
        List<JsonNode> all = results();
        assertThat(all).hasSize(12);
        for (String o : new String[] {"passed", "failed", "errored"}) {
            List<String> expected = all.stream()
                    .filter(l -> outcome(l).equals(o))
                    .map(l -> l.path("case_id").asText())
                    .toList();
            JsonNode page = json("/api/runs/" + state.settledRun + "/cases?outcome=" + o + "&limit=500");
            List<String> listed = new ArrayList<>();
            page.path("cases").forEach(c -> listed.add(c.path("case_id").asText()));
            assertThat(listed).as(o).isEqualTo(expected);
            String html = page("/runs/" + state.settledRun + "/cases?outcome=" + o);
            expected.forEach(id -> assertThat(html).contains(id));
        }
        JsonNode c0 = json("/api/runs/" + state.settledRun + "/cases/0");
        assertThat(c0.path("executed").asBoolean()).isTrue();
        assertThat(c0.path("case").path("id").asText())
                .isEqualTo(all.get(0).path("case_id").asText());
        assertThat(c0.path("result").path("output").asText())
                .isEqualTo(all.get(0).path("output").asText());
        String html = page("/runs/" + state.settledRun + "/cases/0");
        assertThat(html).contains(all.get(0).path("case_id").asText()).contains("id=\"evaluators\"");
        // The pending run's cases have not run: the case page says so.
        assertThat(page("/runs/" + state.pendingRun + "/cases/3")).contains("id=\"not-executed\"");
    }

    @Test
    void datasetsDatagenTranscriptsAndMetrics() throws IOException {
        JsonNode ds = json("/api/datasets");
        JsonNode quick = null;
        for (JsonNode d : ds.path("datasets")) {
            if (d.path("upload_id").asText().equals(state.dataset.uploadId().toString())) {
                quick = d;
            }
        }
        assertThat(quick).isNotNull();
        assertThat(quick.path("case_count").asLong()).isEqualTo(12);
        JsonNode cases = json("/api/datasets/" + state.dataset.uploadId() + "/cases?from=10&limit=5");
        assertThat(cases.path("cases")).hasSize(2);
        assertThat(cases.path("cases").path(0).path("ordinal").asLong()).isEqualTo(10);
        assertThat(cases.path("next_from").isNull()).isTrue();
        assertThat(page("/datasets/" + state.dataset.uploadId())).contains("arith-001");

        JsonNode exps = json("/api/datagen");
        assertThat(exps.path("experiments").path(0).path("experiment").asText()).isEqualTo("demo");
        JsonNode st = json("/api/datagen/quiz/demo");
        assertThat(st.path("completed").asLong()).isEqualTo(1);
        assertThat(st.path("filtered").asLong()).isEqualTo(1);
        assertThat(st.path("failed").asLong()).isEqualTo(1);
        JsonNode failed = json("/api/datagen/quiz/demo/items?status=failed");
        assertThat(failed.path("items").path(0).path("item_id").asText()).isEqualTo("gamma");
        assertThat(failed.path("items").path(0).path("last_error_type").asText())
                .isEqualTo("CommandExitError");
        assertThat(page("/datagen/quiz/demo/item?id=gamma")).contains("cannot answer gamma");

        String path = URLEncoder.encode(state.sessionLog.toString(), StandardCharsets.UTF_8);
        JsonNode t = json("/api/sessions/view?path=" + path);
        assertThat(t.path("verify").path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(t.path("verify").path("torn_offset").isNumber()).isTrue();
        List<String> types = new ArrayList<>();
        t.path("events").forEach(e -> types.add(e.path("type").asText()));
        assertThat(types).contains("turn/start", "user/message", "assistant/message", "tool/call", "tool/result");
        String html = page("/sessions/view?path=" + path);
        assertThat(html).contains("torn final frame").contains("calculator").contains("<summary>Reasoning</summary>");
        // Paging by seq: a page starts at its from (commit records take seqs but are not events) and ends where the
        // next begins.
        List<Long> seqs = new ArrayList<>();
        t.path("events").forEach(e -> seqs.add(e.path("seq").asLong()));
        JsonNode second = json("/api/sessions/view?path=" + path + "&from=" + seqs.get(2) + "&limit=2");
        assertThat(second.path("events")).hasSize(2);
        assertThat(second.path("events").path(0).path("seq").asLong()).isEqualTo(seqs.get(2));
        assertThat(second.path("events").path(1).path("seq").asLong()).isEqualTo(seqs.get(3));
        assertThat(second.path("next_from").asLong()).isEqualTo(seqs.get(3) + 1);
        assertThat(t.path("next_from").isNull()).isTrue();

        HttpResponse<String> m = Http.get(base + "/metrics");
        assertThat(m.statusCode()).isEqualTo(200);
        assertThat(m.body())
                .contains("vigilo_runs{status=\"settled\"} 1.0")
                .contains("vigilo_runs{status=\"pending\"} 1.0")
                .contains("vigilo_active_run_chunks{state=\"queued\"}")
                // The pending run was admitted and nothing executed it: all its chunks are queued.
                .containsPattern("vigilo_run_pending_chunks\\{run=\"" + state.pendingRun + "\"} [1-9][0-9]*\\.0")
                .doesNotContain("vigilo_run_pending_chunks{run=\"" + state.settledRun + "\"}")
                .contains("vigilo_datagen_items{experiment=\"demo\",pipeline=\"quiz\",status=\"failed\"} 1.0")
                .contains(
                        "vigilo_datagen_failures{error_type=\"CommandExitError\",experiment=\"demo\",pipeline=\"quiz\"}")
                .contains("vigilo_http_server_requests_seconds_count");
    }

    @Test
    void malformedRequestsGetFourHundredsAndTheServerGoesOn() throws IOException {
        String run = state.settledRun.toString();
        assertThat(Http.get(base + "/runs/not-a-uuid").statusCode()).isEqualTo(400);
        assertThat(Http.get(base + "/api/runs/not-a-uuid").body()).contains("\"status\":400");
        assertThat(Http.get(base + "/api/runs/" + UUID.randomUUID()).statusCode())
                .isEqualTo(404);
        assertThat(Http.get(base + "/runs/" + run + "/cases/abc").statusCode()).isEqualTo(400);
        assertThat(Http.get(base + "/runs/" + run + "/cases/-1").statusCode()).isEqualTo(400);
        assertThat(Http.get(base + "/runs/" + run + "/cases/99999").statusCode())
                .isEqualTo(404);
        assertThat(Http.get(base + "/runs/" + run + "/cases?outcome=weird").statusCode())
                .isEqualTo(400);
        assertThat(Http.get(base + "/runs/" + run + "/cases?gate=nope").statusCode())
                .isEqualTo(400);
        assertThat(Http.get(base + "/runs/" + run + "/cases?after=x").statusCode())
                .isEqualTo(400);
        assertThat(Http.get(base + "/runs?after=garbage").statusCode()).isEqualTo(400);
        assertThat(Http.get(base + "/runs?limit=100000").statusCode()).isEqualTo(400);
        assertThat(Http.get(base + "/datasets/" + UUID.randomUUID()).statusCode())
                .isEqualTo(404);
        assertThat(Http.get(base + "/datasets/" + state.dataset.uploadId() + "?from=12")
                        .statusCode())
                .isEqualTo(400);
        assertThat(Http.get(base + "/datagen/..%2F..%2Fetc/demo").statusCode()).isBetween(400, 404);
        assertThat(Http.get(base + "/datagen/quiz/nope").statusCode()).isEqualTo(404);
        assertThat(Http.get(base + "/datagen/quiz/demo/item?id=nope").statusCode())
                .isEqualTo(404);
        HttpResponse<String> noPage = Http.get(base + "/no/such/page");
        assertThat(noPage.statusCode()).isEqualTo(404);
        // The dashboard's own page, not the framework's plain text.
        assertThat(noPage.headers().firstValue("Content-Type").orElse("")).startsWith("text/html");
        assertThat(noPage.body())
                .contains("no such page: /no/such/page; the runs are listed at /runs")
                .doesNotContain("Endpoint GET");
        HttpResponse<String> noApi = Http.get(base + "/api/no/such");
        assertThat(noApi.statusCode()).isEqualTo(404);
        assertThat(MAPPER.readTree(noApi.body()).path("error").asText()).isEqualTo("no such page: /api/no/such");
        // Huge query strings and headers are refused by the HTTP layer before any handler.
        assertThat(Http.status(Http.raw(
                        dashboard.port(),
                        "GET /runs?after=" + "x".repeat(200_000) + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection:"
                                + " close\r\n\r\n")))
                .isBetween(400, 499);
        assertThat(Http.status(Http.raw(dashboard.port(), "GARBAGE\r\n\r\n"))).isBetween(400, 499);
        assertThat(Http.status(Http.raw(
                        dashboard.port(),
                        "GET /static/../../../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")))
                .isBetween(400, 404);
        assertThat(Http.get(base + "/api/runs").statusCode()).isEqualTo(200);
    }

    @Test
    void theSessionViewerReadsOnlyWhatItWasGiven() throws IOException {
        String v = base + "/sessions/view?path=";
        assertThat(Http.get(v + enc("/etc/passwd")).statusCode()).isEqualTo(403);
        assertThat(Http.get(v + enc("../../etc/passwd")).statusCode()).isEqualTo(400);
        assertThat(Http.get(v + enc(home + "/../../../etc/passwd")).statusCode())
                .isEqualTo(403);
        assertThat(Http.get(v + enc(home + "/sessions/../../../etc/passwd")).statusCode())
                .isEqualTo(403);
        assertThat(Http.get(v + enc(home + "/no-such.jsonl.zstd")).statusCode()).isEqualTo(404);
        assertThat(Http.get(v + "%00").statusCode()).isEqualTo(400);
        // Below the root only session logs by name: a directory or another file is refused unread.
        assertThat(Http.get(v + enc(home + "/sessions")).statusCode()).isEqualTo(403);
        assertThat(Http.get(v + enc(home + "/quickstart.jsonl")).statusCode()).isEqualTo(403);
        Files.createDirectories(home.resolve("dir.jsonl.zstd"));
        assertThat(Http.get(v + enc(home + "/dir.jsonl.zstd")).statusCode()).isEqualTo(404);
        assertThat(Http.get(base + "/api/sessions/view").statusCode()).isEqualTo(400);
        Path outside = Files.createTempFile("outside-", ".txt");
        try {
            Path link = home.resolve("sessions/link.jsonl.zstd");
            Files.createSymbolicLink(link, outside);
            assertThat(Http.get(v + enc(link.toString())).statusCode()).isEqualTo(403);
            // Not a session log but inside the root: read and rejected by the log reader, not an error.
            Path junk = home.resolve("sessions/junk.jsonl.zstd");
            Files.writeString(junk, "not a session log");
            JsonNode j = MAPPER.readTree(Http.get(base + "/api/sessions/view?path=" + enc(junk.toString()))
                    .body());
            assertThat(j.path("verify").path("verdict").asText()).isEqualTo("REJECT");
        } finally {
            Files.deleteIfExists(outside);
        }
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Test
    void loopbackAnswersOnlyLoopbackHostsAndWritesNeedTheFormTokenOrTheHeader() throws IOException {
        int port = dashboard.port();
        assertThat(Http.status(Http.raw(
                        port,
                        "GET /runs HTTP/1.1\r\nHost: attacker.example:" + port + "\r\nConnection: close\r\n\r\n")))
                .isEqualTo(403);
        assertThat(Http.status(Http.raw(port, "GET /runs HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")))
                .isEqualTo(200);
        UUID victim = state.pendingRun;
        String cancel = base + "/runs/" + victim + "/cancel";
        // A cross-site form post: no CSRF token, foreign origin.
        assertThat(Http.post(cancel, "", "Origin", "http://attacker.example").statusCode())
                .isEqualTo(403);
        // The right CSRF token from a foreign origin.
        String html = page("/runs/" + victim);
        String csrf = html.replaceAll("(?s).*name=\"csrf\" value=\"([^\"]+)\".*", "$1");
        assertThat(csrf).hasSizeGreaterThan(30);
        assertThat(Http.post(cancel, "csrf=" + csrf, "Origin", "http://attacker.example")
                        .statusCode())
                .isEqualTo(403);
        // Same origin but a forged token.
        assertThat(Http.post(cancel, "csrf=forged", "Origin", base).statusCode())
                .isEqualTo(403);
        // The API without the header token.
        assertThat(Http.post(base + "/api/runs/" + victim + "/cancel", "").statusCode())
                .isEqualTo(403);
        assertThat(json("/api/runs/" + victim).path("status").asText()).isNotEqualTo("cancelled");
        // The API with the token in a header is not a cross-site request.
        UUID another = UUID.randomUUID();
        assertThat(Http.post(base + "/api/runs/" + another + "/cancel", "", AccessGuard.HEADER, dashboard.token())
                        .statusCode())
                .isEqualTo(404);
    }

    @Test
    void aRunIsPausedAndResumedFromItsPageOrTheApiWithTheToken() throws IOException {
        UUID run = state.pendingRun;
        assertThat(page("/runs/" + run))
                .contains("id=\"pause-form\" data-confirm=\"Pause this run?")
                .doesNotContain("id=\"resume-form\"");
        // Without a token: refused, nothing changes.
        assertThat(Http.post(base + "/api/runs/" + run + "/pause", "").statusCode())
                .isEqualTo(403);
        assertThat(json("/api/runs/" + run).path("status").asText()).isEqualTo("pending");
        HttpResponse<String> paused =
                Http.post(base + "/api/runs/" + run + "/pause", "", AccessGuard.HEADER, dashboard.token());
        assertThat(paused.statusCode()).as(paused.body()).isEqualTo(200);
        JsonNode p = MAPPER.readTree(paused.body());
        assertThat(p.path("outcome").asText()).isEqualTo("paused");
        assertThat(p.path("status").asText()).isEqualTo("paused");
        JsonNode status = json("/api/runs/" + run);
        assertThat(status.path("status").asText()).isEqualTo("paused");
        assertThat(status.at("/paused/reason").asText()).isEqualTo("from the dashboard");
        assertThat(page("/runs/" + run))
                .contains("id=\"paused-line\">Run paused since ")
                .contains("id=\"resume-form\"")
                .doesNotContain("id=\"pause-form\"");
        assertThat(pauseInterrupts(run))
                .as("a plain pause lets held chunks finish")
                .isFalse();
        HttpResponse<String> resumed =
                Http.post(base + "/api/runs/" + run + "/resume", "", AccessGuard.HEADER, dashboard.token());
        assertThat(MAPPER.readTree(resumed.body()).path("status").asText()).isEqualTo("pending");
        assertThat(json("/api/runs/" + run).path("status").asText()).isEqualTo("pending");
        // Pause now: the page offers it beside the plain pause, and the API records an interrupting pause.
        assertThat(page("/runs/" + run)).contains("id=\"pause-now-form\" data-confirm=\"Pause this run now?");
        HttpResponse<String> now =
                Http.post(base + "/api/runs/" + run + "/pause?now=true", "", AccessGuard.HEADER, dashboard.token());
        assertThat(now.statusCode()).as(now.body()).isEqualTo(200);
        assertThat(pauseInterrupts(run)).as("pause now interrupts held chunks").isTrue();
        Http.post(base + "/api/runs/" + run + "/resume", "", AccessGuard.HEADER, dashboard.token());
        assertThat(json("/api/runs/" + run).path("status").asText()).isEqualTo("pending");
        assertThat(pauseInterrupts(run)).isFalse();
        // A settled run has nothing to pause: a conflict, said as such.
        HttpResponse<String> late =
                Http.post(base + "/api/runs/" + state.settledRun + "/pause", "", AccessGuard.HEADER, dashboard.token());
        assertThat(late.statusCode()).isEqualTo(409);
        assertThat(late.body()).contains("there is nothing to pause");
    }

    /** Whether the run's pause interrupts the chunks workers hold (plan's {@code runs.pause_interrupts}). */
    private static boolean pauseInterrupts(UUID run) {
        return state.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT pause_interrupts FROM runs WHERE run_id = :r")
                        .bind("r", run)
                        .mapTo(Boolean.class)
                        .one());
    }

    @Test
    void anotherBindNeedsTheTokenOnEveryRequest() throws IOException {
        try (Dashboard open = Dashboard.start(new DashboardOptions("0.0.0.0", 0, Optional.empty()), state.sources())) {
            assertThat(open.tokenRequired()).isTrue();
            String b = "http://127.0.0.1:" + open.port();
            for (String p : new String[] {"/runs", "/api/runs", "/metrics", "/static/dashboard.css", "/datasets"}) {
                assertThat(Http.get(b + p).statusCode()).as(p).isEqualTo(401);
                assertThat(Http.get(b + p, "Authorization", "Bearer wrong-token-wrong-token")
                                .statusCode())
                        .as(p)
                        .isEqualTo(401);
                assertThat(Http.get(b + p, "Authorization", "Bearer " + open.token())
                                .statusCode())
                        .as(p)
                        .isEqualTo(200);
            }
            assertThat(Http.get(b + "/api/runs").body()).contains("\"status\":401");
            // The landing: the token in the URL becomes an HttpOnly cookie and leaves the address.
            HttpResponse<String> landing = Http.get(open.url("/runs").toString());
            assertThat(landing.statusCode()).isEqualTo(303);
            assertThat(landing.headers().firstValue("Location")).contains("/runs");
            String cookie = landing.headers().firstValue("Set-Cookie").orElseThrow();
            assertThat(cookie).contains("HttpOnly").contains("SameSite=Strict");
            assertThat(Http.get(b + "/runs", "Cookie", cookie.split(";")[0]).statusCode())
                    .isEqualTo(200);
            assertThat(Http.get(b + "/runs?token=wrong-token-wrong-token").statusCode())
                    .isEqualTo(401);
            // Writes with the cookie still need the form's CSRF token and this origin.
            assertThat(Http.post(b + "/runs/" + state.pendingRun + "/cancel", "", "Cookie", cookie.split(";")[0])
                            .statusCode())
                    .isEqualTo(403);
        }
        // A token given is required on loopback too.
        try (Dashboard given = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.of("a-given-token-1234567890")),
                state.sources())) {
            String b = "http://127.0.0.1:" + given.port();
            assertThat(Http.get(b + "/runs").statusCode()).isEqualTo(401);
            assertThat(Http.get(b + "/runs", AccessGuard.HEADER, "a-given-token-1234567890")
                            .statusCode())
                    .isEqualTo(200);
        }
    }

    @Test
    void aCaseThatRepeatsAKeyIsShownAsItsTextNotAsOneReadingOfIt() throws IOException {
        // The upload checks a case's own fields, not the keys inside its input: this case is stored as given.
        Path cases = home.resolve("repeated-key.jsonl");
        Files.writeString(cases, "{\"id\":\"dup-1\",\"input\":{\"q\":\"first-value\",\"q\":\"second-value\"}}\n");
        var entry = new dev.vigilo.dataset.DatasetCatalog(state.control.jdbi())
                .upload(
                        new dev.vigilo.dataset.UploadRequest(
                                cases, Optional.of("repeated key"), Optional.of(UUID.randomUUID())),
                        state.store,
                        dev.vigilo.dataset.UploadProgress.NONE);
        JsonNode shown = json("/api/datasets/" + entry.uploadId() + "/cases?from=0&limit=1")
                .path("cases")
                .path(0)
                .path("case");
        assertThat(shown.isTextual()).as(shown.toString()).isTrue();
        assertThat(shown.asText()).contains("first-value", "second-value");
        assertThat(page("/datasets/" + entry.uploadId())).contains("first-value", "second-value");
    }

    @Test
    void theFilteredCaseListDownloadsAsJsonLinesAndCsv() throws IOException {
        List<JsonNode> all = results();
        for (String o : List.of("passed", "failed", "errored")) {
            HttpResponse<String> r = Http.get(base + "/runs/" + state.settledRun + "/results.jsonl?outcome=" + o);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("Content-Disposition").orElse(""))
                    .startsWith("attachment; filename=\"results-" + state.settledRun + "-" + o + ".jsonl");
            List<String> ids = new ArrayList<>();
            for (String l : r.body().split("\n")) {
                if (!l.isBlank()) {
                    JsonNode line = MAPPER.readTree(l);
                    assertThat(outcome(line)).isEqualTo(o);
                    ids.add(line.path("case_id").asText());
                }
            }
            assertThat(ids)
                    .as(o)
                    .containsExactlyElementsOf(all.stream()
                            .filter(l -> outcome(l).equals(o))
                            .map(l -> l.path("case_id").asText())
                            .toList());
        }
        // One gate's cases only, as CSV: the header, then one row per case the gate selects.
        HttpResponse<String> csv =
                Http.get(base + "/runs/" + state.settledRun + "/results.csv?outcome=all&gate=geography");
        assertThat(csv.headers().firstValue("Content-Type").orElse("")).startsWith("text/csv");
        List<Map<String, String>> rows = new ArrayList<>();
        try (var it = new com.fasterxml.jackson.dataformat.csv.CsvMapper()
                .readerFor(Map.class)
                .with(com.fasterxml.jackson.dataformat.csv.CsvSchema.emptySchema()
                        .withHeader())
                .<Map<String, String>>readValues(csv.body())) {
            it.forEachRemaining(rows::add);
        }
        List<JsonNode> geography =
                all.stream().filter(l -> l.path("gates").has("geography")).toList();
        assertThat(rows).hasSize(geography.size()).isNotEmpty();
        assertThat(rows.get(0).keySet()).containsExactlyElementsOf(RunResults.CSV_COLUMNS);
        for (int i = 0; i < rows.size(); i++) {
            assertThat(rows.get(i).get("case_id"))
                    .isEqualTo(geography.get(i).path("case_id").asText());
            assertThat(MAPPER.readTree(rows.get(i).get("gates")))
                    .isEqualTo(geography.get(i).path("gates"));
            assertThat(rows.get(i).get("output"))
                    .isEqualTo(geography.get(i).path("output").asText());
        }
        // The list page offers both, with the command that prints the same.
        assertThat(page("/runs/" + state.settledRun + "/cases?outcome=failed"))
                .contains("/runs/" + state.settledRun + "/results.csv?outcome&#61;failed")
                .contains("vigilo run results " + state.settledRun + " --outcome failed");
        assertThat(Http.get(base + "/runs/" + UUID.randomUUID() + "/results.jsonl")
                        .statusCode())
                .isEqualTo(404);
        assertThat(Http.get(base + "/runs/" + state.settledRun + "/results.jsonl?outcome=great")
                        .statusCode())
                .isEqualTo(400);
    }

    @Test
    void aDatasetMadeFromAnExperimentLinksBothWays() throws IOException {
        var entry = dev.vigilo.datagen.DatasetExport.toDataset(
                state.datagenRoot,
                "quiz",
                "demo",
                "quiz-export",
                dev.vigilo.dataset.CaseMap.parse("id=item_id,input=item_id", "--map"),
                Optional.empty(),
                new dev.vigilo.dataset.DatasetCatalog(state.control.jdbi()),
                state.store,
                dev.vigilo.dataset.UploadProgress.NONE);
        String dataset = page("/datasets/" + entry.uploadId());
        assertThat(dataset)
                .contains("id=\"dataset-origin\"")
                .contains("<a href=\"/datagen/quiz/demo\">quiz / demo</a>")
                .contains("mapped <span class=\"mono\">id&#61;item_id,input&#61;item_id</span>");
        JsonNode api = json("/api/datasets/" + entry.uploadId());
        assertThat(api.path("origin").path("experiment").asText()).isEqualTo("demo");
        assertThat(api.path("origin").path("items").asLong()).isEqualTo(1);
        assertThat(page("/datagen/quiz/demo"))
                .contains("Datasets made from it")
                .contains("<a href=\"/datasets/" + entry.uploadId() + "\">quiz-export</a>");
        // A dataset uploaded from a file has no origin.
        assertThat(page("/datasets/" + state.dataset.uploadId())).doesNotContain("dataset-origin");
    }

    @Test
    void everythingShownIsEscaped() throws IOException {
        String evil = "<img src=x onerror=alert(1)>";
        Path cases = home.resolve("evil.jsonl");
        Files.writeString(
                cases,
                "{\"id\":\"</td><script>alert(2)</script>\",\"input\":\"</pre><script>alert(3)</script>\","
                        + "\"expected\":\"\\\"><svg onload=alert(4)>\"}\n");
        var entry = new dev.vigilo.dataset.DatasetCatalog(state.control.jdbi())
                .upload(
                        new dev.vigilo.dataset.UploadRequest(cases, Optional.of(evil), Optional.of(UUID.randomUUID())),
                        state.store,
                        dev.vigilo.dataset.UploadProgress.NONE);
        for (String path : new String[] {"/datasets", "/datasets/" + entry.uploadId()}) {
            String html = page(path);
            assertThat(html)
                    .as(path)
                    .doesNotContain(evil)
                    .doesNotContain("<script>alert")
                    .doesNotContain("<svg onload")
                    .contains("&lt;img src&#61;x onerror&#61;alert(1)&gt;".substring(0, 8));
        }
        // Query values echoed in messages are escaped too.
        HttpResponse<String> r = Http.get(base + "/runs/" + enc("<script>alert(5)</script>"));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).doesNotContain("<script>alert(5)");
    }
}
