package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.exec.view.RunResults;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The results explorer over HTTP on the quickstart's settled run: every filter, the search, the sorts, keyset pages,
 * case URLs by id and the previous and next case of a list agree with what {@code vigilo run results} and the dataset
 * say, computed here independently.
 */
class ResultsExplorerTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    static Path home;

    static QuickstartState state;
    static Dashboard dashboard;
    static String base;
    /** Every executed case as {@code vigilo run results} writes it, in ordinal order. */
    static List<JsonNode> results;
    /** The dataset's cases by id. */
    static Map<String, JsonNode> dataset = new HashMap<>();

    @BeforeAll
    static void start() throws IOException {
        state = new QuickstartState(home);
        dashboard =
                Dashboard.start(new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()), state.sources());
        base = "http://127.0.0.1:" + dashboard.port();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new RunResults(state.placements, state.storage).write(state.settledRun, out);
        results = new ArrayList<>();
        for (String l : out.toString(StandardCharsets.UTF_8).split("\n")) {
            if (!l.isBlank()) {
                results.add(MAPPER.readTree(l));
            }
        }
        for (String l :
                new String(QuickstartState.resource("examples/quickstart.jsonl"), StandardCharsets.UTF_8).split("\n")) {
            if (!l.isBlank()) {
                JsonNode c = MAPPER.readTree(l);
                dataset.put(c.path("id").asText(), c);
            }
        }
        assertThat(results).hasSize(12);
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
        return MAPPER.readTree(r.body());
    }

    private static String api(String query) {
        return "/api/runs/" + state.settledRun + "/cases?" + query;
    }

    private static List<String> ids(JsonNode page) {
        List<String> out = new ArrayList<>();
        page.path("cases").forEach(c -> out.add(c.path("case_id").asText()));
        return out;
    }

    private static List<String> expected(Predicate<JsonNode> keep) {
        return results.stream()
                .filter(keep)
                .map(l -> l.path("case_id").asText())
                .toList();
    }

    private static String outcome(JsonNode line) {
        List<String> g = new ArrayList<>();
        line.path("gates").forEach(x -> g.add(x.asText()));
        if (line.path("status").asText().equals("errored") || g.contains("errored")) {
            return "errored";
        }
        return g.contains("failed") ? "failed" : "passed";
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Test
    void filtersByOutcomeGateEvaluatorGroupAndTagWithCounts() throws IOException {
        JsonNode all = json(api("limit=500"));
        assertThat(ids(all)).isEqualTo(expected(l -> true));
        assertThat(all.path("total").asInt()).isEqualTo(12);
        for (String o : new String[] {"passed", "failed", "errored"}) {
            List<String> want = expected(l -> outcome(l).equals(o));
            assertThat(ids(json(api("outcome=" + o)))).as(o).isEqualTo(want);
            assertThat(all.at("/outcome_counts/" + o).asInt()).as(o).isEqualTo(want.size());
        }
        // One gate: its own outcomes, only the cases it selects; the counts per gate beside it.
        List<String> geographyFailed =
                expected(l -> l.path("gates").path("geography").asText().equals("failed"));
        assertThat(ids(json(api("gate=geography&outcome=failed")))).isEqualTo(geographyFailed);
        long selected =
                results.stream().filter(l -> l.path("gates").has("geography")).count();
        JsonNode gc = all.at("/gate_counts/geography");
        assertThat(gc.path("passed").asInt()
                        + gc.path("failed").asInt()
                        + gc.path("errored").asInt())
                .isEqualTo((int) selected);
        // One evaluator: the cases it scored, by its own result.
        List<String> numericFailed = expected(l -> l.at("/evaluators/numeric").isObject()
                && !l.at("/evaluators/numeric/passed").asBoolean()
                && l.at("/evaluators/numeric/error").isNull());
        assertThat(ids(json(api("evaluator=numeric&outcome=failed")))).isEqualTo(numericFailed);
        assertThat(ids(json(api("evaluator=numeric"))))
                .isEqualTo(expected(l -> l.at("/evaluators/numeric").isObject()));
        // Group and tag come from the dataset's case files.
        assertThat(ids(json(api("group=geography"))))
                .isEqualTo(expected(l -> dataset.get(l.path("case_id").asText())
                        .path("group")
                        .asText()
                        .equals("geography")))
                .isNotEmpty();
        assertThat(ids(json(api("tag=medium"))))
                .isEqualTo(expected(l -> {
                    List<String> tags = new ArrayList<>();
                    dataset.get(l.path("case_id").asText()).path("tags").forEach(t -> tags.add(t.asText()));
                    return tags.contains("medium");
                }))
                .isNotEmpty();
        assertThat(ids(json(api("group=no-such-group")))).isEmpty();
        // Names the run does not have are one clear 400.
        HttpResponse<String> bad = Http.get(base + api("evaluator=nope"));
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("no evaluator").contains("exact");
        assertThat(Http.get(base + api("sort=random")).statusCode()).isEqualTo(400);
        assertThat(Http.get(base + api("order=sideways")).statusCode()).isEqualTo(400);
        assertThat(Http.get(base + api("q=" + "x".repeat(201))).statusCode()).isEqualTo(400);
    }

    @Test
    void searchFindsTextInIdInputOutputAndReasonWithoutCase() throws IOException {
        // An id: exact part of one case's id, searched in another case.
        assertThat(ids(json(api("q=ARITH-00"))))
                .isEqualTo(expected(l -> l.path("case_id").asText().contains("arith-00")));
        // An input word, as the dataset holds it.
        String word = "capital";
        List<String> want = expected(l -> {
            String text = (l.path("case_id").asText() + "\n"
                            + dataset.get(l.path("case_id").asText()).path("input")
                            + "\n" + l.path("output").asText(""))
                    .toLowerCase(Locale.ROOT);
            return text.contains(word);
        });
        assertThat(ids(json(api("q=" + word.toUpperCase(Locale.ROOT))))).isEqualTo(want);
        // An output: the first case's whole output finds at least that case.
        String output = results.get(0).path("output").asText();
        assertThat(ids(json(api("q=" + enc(output)))))
                .contains(results.get(0).path("case_id").asText());
        assertThat(ids(json(api("q=" + enc("no case says this 9f3b"))))).isEmpty();
        // The page shows the search and the matching cases.
        String html = Http.get(base + "/runs/" + state.settledRun + "/cases?q=" + word)
                .body();
        assertThat(html).contains("value=\"capital\"");
        want.forEach(id -> assertThat(html).contains(id));
    }

    @Test
    void sortsAndKeysetPagesLeadThroughTheSameList() throws IOException {
        // Sorted by time, longest first: the order the results' own agent times give (ties by ordinal, descending).
        JsonNode whole = json(api("sort=time&order=desc&limit=500"));
        List<long[]> byTime = new ArrayList<>();
        whole.path("cases")
                .forEach(c -> byTime.add(new long[] {
                    c.path("agent_ms").asLong(), c.path("ordinal").asLong()
                }));
        assertThat(byTime).hasSize(12);
        List<long[]> sorted = new ArrayList<>(byTime);
        sorted.sort(Comparator.<long[]>comparingLong(x -> x[0])
                .thenComparingLong(x -> x[1])
                .reversed());
        assertThat(byTime).containsExactlyElementsOf(sorted);
        // Score: the mean of the evaluators' scores as the results record them.
        JsonNode byScore = json(api("sort=score&limit=500"));
        List<String> want = new ArrayList<>(expected(l -> true));
        Map<String, Double> mean = new HashMap<>();
        for (JsonNode l : results) {
            double s = 0;
            int n = 0;
            for (JsonNode e : l.path("evaluators")) {
                s += (float) e.path("score").asDouble();
                n++;
            }
            mean.put(l.path("case_id").asText(), n == 0 ? Double.NaN : s / n);
        }
        List<String> order = new ArrayList<>(want);
        order.sort(Comparator.comparingDouble(mean::get)); // stable: ties keep ordinal order
        assertThat(ids(byScore)).isEqualTo(order);
        // Two a page through the same sort: the cursors lead through the same cases in the same order.
        for (String q : new String[] {"sort=time&order=desc", "sort=score", "outcome=failed", "q=arith&sort=tokens"}) {
            List<String> paged = new ArrayList<>();
            String next = api(q + "&limit=2");
            int pages = 0;
            while (next != null) {
                JsonNode p = json(next);
                paged.addAll(ids(p));
                assertThat(p.path("cases").size()).isLessThanOrEqualTo(2);
                next = p.path("next_after").isNull() ? null : api(q + "&limit=2&after=" + p.path("next_after"));
                pages++;
            }
            assertThat(paged).as(q).isEqualTo(ids(json(api(q + "&limit=500"))));
            assertThat(pages).isGreaterThanOrEqualTo(paged.size() / 2);
        }
    }

    @Test
    void caseUrlsByIdAndPreviousAndNextWithinTheList() throws IOException {
        JsonNode failed = json(api("outcome=failed&sort=time&order=desc&limit=500"));
        assertThat(failed.path("cases").size())
                .as("the quickstart run has failed cases")
                .isGreaterThanOrEqualTo(2);
        JsonNode first = failed.path("cases").get(0);
        JsonNode second = failed.path("cases").get(1);
        // The list links each case by its id, keeping the list; the id URL leads to the case's page.
        String href = first.path("href").asText();
        assertThat(href)
                .startsWith("/runs/" + state.settledRun + "/case?id="
                        + enc(first.path("case_id").asText()));
        HttpResponse<String> r = Http.get(base + href);
        assertThat(r.statusCode()).isEqualTo(303);
        String location = r.headers().firstValue("Location").orElseThrow();
        assertThat(location)
                .isEqualTo("/runs/" + state.settledRun + "/cases/"
                        + first.path("ordinal").asLong() + "?outcome=failed&sort=time&order=desc");
        String page = Http.get(base + location).body();
        assertThat(page)
                .contains(first.path("case_id").asText())
                .contains("id=\"list-place\">1 of " + failed.path("cases").size())
                .doesNotContain("id=\"prev-case\"")
                .contains("id=\"next-case\" rel=\"next\"")
                .contains("/runs/" + state.settledRun + "/cases/"
                        + second.path("ordinal").asLong() + "?outcome&#61;failed&amp;sort&#61;time&amp;order&#61;desc");
        // The old ordinal URL without a list keeps its neighbours by ordinal.
        String plain = Http.get(base + "/runs/" + state.settledRun + "/cases/3").body();
        assertThat(plain).contains("/runs/" + state.settledRun + "/cases/2\"").contains("/cases/4\"");
        // An id the run has not executed: 404 in one line; no id: 400.
        assertThat(Http.get(base + "/runs/" + state.settledRun + "/case?id=nope")
                        .statusCode())
                .isEqualTo(404);
        assertThat(Http.get(base + "/runs/" + state.settledRun + "/case").statusCode())
                .isEqualTo(400);
    }

    @Test
    void downloadsKeepTheExplorersFilters() throws IOException {
        String body = Http.get(base + "/runs/" + state.settledRun + "/results.jsonl?group=geography")
                .body();
        List<String> got = new ArrayList<>();
        for (String l : body.split("\n")) {
            if (!l.isBlank()) {
                got.add(MAPPER.readTree(l).path("case_id").asText());
            }
        }
        assertThat(got)
                .isEqualTo(expected(l -> dataset.get(l.path("case_id").asText())
                        .path("group")
                        .asText()
                        .equals("geography")))
                .isNotEmpty();
        String html = Http.get(base + "/runs/" + state.settledRun + "/cases?group=geography")
                .body();
        assertThat(html).contains("vigilo run results " + state.settledRun + " --group geography");
    }
}
