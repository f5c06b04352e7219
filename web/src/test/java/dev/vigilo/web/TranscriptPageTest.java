package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.exec.worker.LongTranscript;
import dev.vigilo.sessionlog.SessionCat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The transcript's reading view over HTTP ({@link ToolRun}: a tool-calling run executed by a real worker, a 100,000-event
 * transcript written as a worker writes one): the conversation first and in order, each tool call once with its result,
 * repeated steps folded, the scoring, the storage section collapsed; paging, jumping to an event, searching and the
 * final answer's link on the long transcript; everything the transcript holds escaped.
 */
class TranscriptPageTest {
    @TempDir
    static Path dir;

    static ToolRun tr;

    @BeforeAll
    static void start() throws IOException {
        tr = new ToolRun(dir);
    }

    @AfterAll
    static void stop() {
        if (tr != null) {
            tr.close();
        }
    }

    private static String page(String path) {
        HttpResponse<String> r = Http.get(tr.base + path);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return r.body();
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** A page of the long transcript, its attribute values unescaped (Mustache escapes {@code =} as {@code &#61;}). */
    private static String longPage(String query) {
        return page("/sessions/view?path=" + enc(tr.longLog.toString()) + query)
                .replace("&#61;", "=")
                .replace("&amp;", "&");
    }

    private static int count(String html, String text) {
        return html.split(Pattern.quote(text), -1).length - 1;
    }

    /** The roles of the conversation's rows, in page order. */
    private static List<String> roles(String html) {
        Matcher m = Pattern.compile("<span class=\"role\">([^<]*)</span>").matcher(html);
        List<String> out = new ArrayList<>();
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    @Test
    void theConversationComesFirstInOrderWithEachToolCallOnce() throws IOException {
        String html = page("/runs/" + tr.run + "/cases/1/transcript");
        List<JsonNode> events = tr.events(1);
        long calls = events.stream()
                .filter(e -> e.path("type").asText().equals("tool/call"))
                .count();
        long results = events.stream()
                .filter(e -> e.path("type").asText().equals("tool/result"))
                .count();
        assertThat(calls).isEqualTo(ToolRun.CALLS);
        assertThat(results).isEqualTo(ToolRun.CALLS);
        // Each call drawn once (not again for its tool/call event), each result once, under its call.
        assertThat(count(html, "Tool call multiply [")).isEqualTo((int) calls);
        assertThat(count(html, "<div class=\"tool-result")).isEqualTo((int) results);
        for (int k = 1; k <= ToolRun.CALLS; k++) {
            int call = html.indexOf("Tool call multiply [call-" + k + "]");
            assertThat(call).as("call " + k).isPositive();
            assertThat(html.indexOf("<div class=\"tool-result", call))
                    .isLessThan(
                            html.indexOf("Tool call multiply [call-" + (k + 1) + "]") < 0
                                    ? Integer.MAX_VALUE
                                    : html.indexOf("Tool call multiply [call-" + (k + 1) + "]"));
        }
        // System prompt, the user's message, the assistant's steps, then the final answer.
        List<String> roles = roles(html);
        assertThat(roles.get(0)).isEqualTo("System");
        assertThat(roles).containsSubsequence("System", "User", "Assistant", "Assistant", "Final answer");
        assertThat(roles.stream().filter("Assistant"::equals)).hasSize(ToolRun.CALLS + 1);
        // The long system prompt is folded: its head shown, the rest under "show all".
        int system = html.indexOf("<span class=\"role\">System</span>");
        String systemRow = html.substring(system, html.indexOf("<span class=\"role\">User</span>"));
        assertThat(systemRow)
                .contains("You are a careful calculator.")
                .contains("show all (")
                .contains("End of the system prompt.");
        // The final answer (case 1: 1 * 2) is marked and linked.
        assertThat(html).contains("data-answer=\"true\"").contains("id=\"final-answer-link\"");
        int answer = html.indexOf("data-answer=\"true\"");
        assertThat(html.indexOf("<pre class=\"text\">2</pre>", answer)).isPositive();
        // Three repeated steps after the first are folded.
        assertThat(html)
                .contains(
                        "<details class=\"tool-run\"><summary>" + (ToolRun.CALLS - 1) + " more steps calling multiply");
        // Then the scoring, then the collapsed storage section.
        int scoring = html.indexOf("<h2 id=\"scoring\">");
        int storage = html.indexOf("<details class=\"storage\" id=\"storage\">");
        assertThat(answer).isLessThan(scoring);
        assertThat(scoring).isLessThan(storage);
        assertThat(html.substring(storage)).contains("Commit high watermark").contains("transcript-key");
        // The slice's length in bytes, not the key's character count (the template's section is over the key).
        assertThat(html.substring(storage)).containsPattern("<tr><th>Length</th><td>[0-9.,]+ (bytes|KiB)");
        String scored = html.substring(scoring, storage);
        assertThat(scored)
                // result, score and the pass score the worker judged with (read from the run's plan)
                .contains("<tr><td>right</td><td><span class=\"badge verdict-passed\">passed</span></td>"
                        + "<td class=\"num\">1</td><td class=\"num\">1</td>")
                .contains("<tr><td>quality</td><td><span class=\"badge verdict-passed\">passed</span></td>"
                        + "<td class=\"num\">0.8</td><td class=\"num\">0.5</td>")
                .contains("id=\"judge-calls-quality\"")
                .contains("user: Is 2 the answer to what is 1 * 2?")
                .contains("close to the reference")
                .contains("all: passed");
        // The tool's markup is text.
        assertThat(html).contains("&lt;img src&#61;x onerror&#61;alert(1)&gt;").doesNotContain(ToolRun.MARKUP);
    }

    @Test
    void theViewerOfFilesSharesThePage() {
        String html = page("/sessions/view?path=" + enc(tr.caseLog.toString()));
        assertThat(roles(html)).containsSubsequence("System", "User", "Assistant", "Final answer");
        assertThat(count(html, "Tool call multiply [")).isEqualTo(ToolRun.CALLS);
        assertThat(html).contains("<tr><td>quality</td>").contains("Page 1 of 1");
        // The case page embeds the same conversation.
        String casePage = page("/runs/" + tr.run + "/cases/1");
        assertThat(casePage).contains("<span class=\"role\">System</span>").contains("Tool call multiply [call-1]");
        assertThat(count(casePage, "Tool call multiply [")).isEqualTo(ToolRun.CALLS);
        assertThat(casePage)
                .contains("<tr><td>quality</td><td><span class=\"badge verdict-passed\">passed</span></td>"
                        + "<td class=\"num\">0.8</td><td class=\"num\">0.5</td>");
    }

    @Test
    void aLongTranscriptIsPagedAndItsEndIsLinked() {
        long pages = (tr.longEvents + TranscriptScan.PAGE_EVENTS - 1) / TranscriptScan.PAGE_EVENTS;
        String first = longPage("");
        assertThat(first)
                .contains("Page 1 of " + Views.count(pages))
                .contains(Views.count(tr.longEvents) + " events")
                .contains("class=\"pager-next\" href=\"/sessions/view?path=" + enc(tr.longLog.toString()) + "&page=2\"")
                .doesNotContain("class=\"pager-prev\"");
        // The final answer is on the last page; its link goes there.
        Matcher answer = Pattern.compile("href=\"[^\"]*event=(\\d+)#seq-(\\d+)\" id=\"final-answer-link\"")
                .matcher(first);
        assertThat(answer.find()).isTrue();
        assertThat(answer.group(1)).isEqualTo(answer.group(2));
        List<String> lines = catLines();
        int output = 0;
        while (!lines.get(output).contains("\"type\":\"vigilo/output\"")) {
            output++;
        }
        long answerPage = output / TranscriptScan.PAGE_EVENTS + 1;
        assertThat(longPage("&event=" + answer.group(1)))
                .contains("Page " + Views.count(answerPage) + " of ")
                .contains("id=\"seq-" + answer.group(2) + "\" data-answer=\"true\"")
                .contains(LongTranscript.ANSWER);
        String last = longPage("&page=" + pages);
        assertThat(last)
                .contains("Page " + Views.count(pages) + " of " + Views.count(pages))
                .doesNotContain("class=\"pager-next\"");
        // A page in the middle: its 200 events, by sequence number, after the previous page's.
        List<Long> seqs = seqs(longPage("&page=137"));
        List<Long> before = seqs(longPage("&page=136"));
        assertThat(seqs).isNotEmpty();
        assertThat(before.get(before.size() - 1)).isLessThan(seqs.get(0));
        // A page past the end is the last; the scoring is shown on every page.
        assertThat(longPage("&page=" + (pages + 10))).contains("Page " + Views.count(pages) + " of");
        assertThat(first).contains("<tr><td>right</td>").contains("all: passed");
    }

    /** The long transcript's events as the session-log reader streams them, one JSON line each. */
    private static List<String> catLines() {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        SessionCat.cat(tr.longLog, 0, all);
        return List.of(all.toString(StandardCharsets.UTF_8).split("\n"));
    }

    /** The seqs of the page's events, from its storage section's event table. */
    private static List<Long> seqs(String html) {
        String table = html.substring(html.indexOf("id=\"page-events\""));
        Matcher m = Pattern.compile("<tr><td class=\"num\">(\\d+)</td>").matcher(table);
        List<Long> out = new ArrayList<>();
        while (m.find()) {
            out.add(Long.parseLong(m.group(1)));
        }
        assertThat(out).hasSize(TranscriptScan.PAGE_EVENTS);
        return out;
    }

    @Test
    void jumpingToAnEventOpensItsPageMarked() {
        String html = longPage("&event=54321");
        Matcher page = Pattern.compile("Page ([\\d,]+) of").matcher(html);
        assertThat(page.find()).isTrue();
        List<Long> seqs = seqs(html);
        assertThat(seqs.get(0)).isLessThanOrEqualTo(54_321L);
        assertThat(seqs.get(seqs.size() - 1)).isGreaterThanOrEqualTo(54_321L);
        // The first event at or after it that is drawn is marked (one mark only).
        assertThat(count(html, " target\"")).isEqualTo(1);
    }

    @Test
    void searchFindsTheEventsHoldingATextBounded() {
        String html = longPage("&q=" + LongTranscript.NEEDLE.toLowerCase());
        // An independent count: the session-log reader's events whose line holds the word.
        long expected = catLines().stream()
                .filter(l -> l.contains(LongTranscript.NEEDLE))
                .count();
        assertThat(expected).isPositive().isLessThan(TranscriptScan.MAX_HITS);
        String results = html.substring(html.indexOf("id=\"search-results\""), html.indexOf("<h2>Conversation</h2>"));
        assertThat(count(results, "<li>")).isEqualTo((int) expected);
        assertThat(results).contains(expected + " events hold it").contains("found in Zanzibar");
        // Each hit links to its event on its page.
        Matcher hit = Pattern.compile("<li><a href=\"([^\"]*)\">#(\\d+)</a>").matcher(results);
        assertThat(hit.find()).isTrue();
        String target = hit.group(1);
        String seq = hit.group(2);
        assertThat(target).endsWith("#seq-" + seq);
        String shown = page(target.substring(0, target.indexOf('#')));
        // It is marked, and a fold of repeated steps holding it is open.
        assertThat(shown).contains(" target\" id=\"seq-" + seq + "\"");
        int at = shown.indexOf("id=\"seq-" + seq + "\"");
        int fold = shown.lastIndexOf("<details class=\"tool-run\"", at);
        if (fold >= 0 && shown.indexOf("</details>", fold) > at) {
            assertThat(shown.substring(fold)).startsWith("<details class=\"tool-run\" open>");
        }
        // A text every step holds: the first hits only, saying so.
        String many = longPage("&q=value");
        String manyResults =
                many.substring(many.indexOf("id=\"search-results\""), many.indexOf("<h2>Conversation</h2>"));
        assertThat(count(manyResults, "<li>")).isEqualTo(TranscriptScan.MAX_HITS);
        assertThat(manyResults).contains("the first " + TranscriptScan.MAX_HITS + " events holding it");
        // Nothing found; a key's name is not text.
        assertThat(longPage("&q=nowhere-to-be-found")).contains("0 events hold it");
        assertThat(longPage("&q=callId")).contains("0 events hold it");
        // Untrusted queries are shown escaped.
        assertThat(longPage("&q=" + enc("<b>x</b>")))
                .contains("&lt;b&gt;x&lt;/b&gt;")
                .doesNotContain("<b>x</b>");
        // A hit in a scoring event leads to the scoring section.
        assertThat(longPage("&q=contains+42")).contains("#scoring\">#");
    }

    @Test
    void badParametersAreRefused() {
        String path = "/sessions/view?path=" + enc(tr.longLog.toString());
        assertThat(Http.get(tr.base + path + "&page=0").statusCode()).isEqualTo(400);
        assertThat(Http.get(tr.base + path + "&page=x").statusCode()).isEqualTo(400);
        assertThat(Http.get(tr.base + path + "&event=-1").statusCode()).isEqualTo(400);
        assertThat(Http.get(tr.base + path + "&q=" + "x".repeat(TranscriptScan.MAX_QUERY + 1))
                        .statusCode())
                .isEqualTo(400);
        assertThat(Http.get(tr.base + "/runs/" + tr.run + "/cases/1/transcript?page=0")
                        .statusCode())
                .isEqualTo(400);
    }

    /**
     * The figure in docs/benchmarks.md: a warm page of the 100,000-event transcript (its reader's pass over the whole
     * log, the page's rendering), printed, never asserted.
     */
    @Test
    void aWarmPageOfTheLongTranscriptIsMeasured() {
        long[] ms = new long[7];
        String[] queries = {"&page=250", "&page=1", "&event=99000", "&q=" + LongTranscript.NEEDLE};
        for (String q : queries) {
            System.out.println("TranscriptPageTest: " + q + ": "
                    + Views.count(longPage(q).getBytes(StandardCharsets.UTF_8).length) + " bytes of HTML"); // warm
            for (int i = 0; i < ms.length; i++) {
                long t0 = System.nanoTime();
                String html = longPage(q);
                ms[i] = (System.nanoTime() - t0) / 1_000_000;
                assertThat(html).contains("Page ");
            }
            report(q, ms);
        }
        // The floor: the session-log reader's own pass over the whole log, every event written and dropped.
        for (int i = 0; i < ms.length; i++) {
            long t0 = System.nanoTime();
            assertThat(SessionCat.cat(tr.longLog, 0, OutputStream.nullOutputStream())
                            .written())
                    .isEqualTo(tr.longEvents);
            ms[i] = (System.nanoTime() - t0) / 1_000_000;
        }
        report("the reader's pass alone (SessionCat)", ms);
    }

    private static void report(String what, long[] ms) {
        Arrays.sort(ms);
        System.out.println("TranscriptPageTest: " + Views.count(tr.longEvents) + " events, " + what + ": median "
                + ms[ms.length / 2] + " ms, min " + ms[0] + " ms, max " + ms[ms.length - 1] + " ms");
    }
}
