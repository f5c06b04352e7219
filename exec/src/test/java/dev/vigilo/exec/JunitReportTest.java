package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.settlement.RunCancellation;
import dev.vigilo.exec.settlement.Settlement;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.view.JunitReport;
import dev.vigilo.exec.view.RunResults;
import dev.vigilo.exec.worker.TranscriptTest;
import dev.vigilo.exec.worker.Worker;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.apache.maven.plugin.surefire.log.api.NullConsoleLogger;
import org.apache.maven.plugins.surefire.report.ReportTestCase;
import org.apache.maven.plugins.surefire.report.ReportTestSuite;
import org.apache.maven.plugins.surefire.report.TestSuiteXmlParser;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * {@code run results --format junit} over real executed runs, read back with a real JUnit XML consumer (Maven
 * Surefire's report parser, which counts the test cases' elements) and a strict XML 1.0 parser (the JDK's, for the
 * count attributes): per gate the counts are the gate table's, and every failure's and error's message is what the
 * case's receipt (as {@code run results} reads it) says.
 */
class JunitReportTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");
    /** An answer no XML document may hold as it is: markup, a CDATA end, control characters, a lone surrogate. */
    private static final String NASTY =
            "<b a=\"1\">&amp; ]]> \u0000\u0001\u001b[31m \uD800 \uFFFE emoji \uD83D\uDE00 tab\tcr\rnl\n";
    /** The fixtures' gates and the evaluators each requires. */
    private static final Map<String, List<String>> REQUIRED =
            Map.of("all", List.of("exact"), "math", List.of("exact", "re"));

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 1_000);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        placements.close();
        fx.close();
    }

    @Test
    void aSettledRunsReportHasTheGateTablesCountsAndTheReceiptsReasons() throws Exception {
        try (OpenAiTestServer llm = OpenAiTestServer.start()) {
            // Wrong when i % 5 == 0, an HTTP error when i % 11 == 0, markup and forbidden characters when i % 13 == 0.
            llm.answerWith(req -> {
                Matcher m = QUESTION.matcher(req.lastUserMessage());
                long i = m.find() ? Long.parseLong(m.group(1)) : -1;
                if (i % 11 == 0) {
                    return OpenAiTestServer.Reply.error(500, "down <&> ]]> \u0001");
                }
                if (i % 13 == 0) {
                    return OpenAiTestServer.Reply.content(NASTY + i);
                }
                return OpenAiTestServer.Reply.content(i % 5 == 0 ? "wrong" : Long.toString(i * 2));
            });
            UUID run = fx.prepare("""
                    name: junit
                    agent: {kind: http, url: "%s", model: m, max_attempts: 1}
                    evaluators:
                      - {name: exact, kind: exact_match}
                      - {name: re, kind: regex, pattern: "^[0-9]+$", applies_to: {groups: [math]}}
                    gates:
                      - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                      - {name: math, required_evaluators: [exact, re], min_pass_rate: 0.5}
                    """.formatted(llm.chatUrl()));
            new Admission(placements, fx.storage).admit(run);
            new Worker(placements, fx.storage, TranscriptTest.fast(4), Worker.Listener.NONE).run();
            assertThat(fx.runStatus(run)).isEqualTo("settled");

            Path xml = dir.resolve("results.xml");
            JunitReport.Summary summary = write(run, xml);
            List<ReportTestSuite> suites = check(run, xml, summary);
            for (ReportTestSuite s : suites) {
                assertThat(s.getNumberOfSkipped()).isZero();
                assertThat(s.getNumberOfFailures()).isPositive();
                assertThat(s.getNumberOfErrors()).isPositive();
            }
            // Case 13: its output, cleaned of what XML forbids, is quoted in the failure's text.
            ReportTestCase nasty = find(suites, "all", "case-13");
            assertThat(nasty.hasFailure()).isTrue();
            assertThat(nasty.getFailureMessage()).isEqualTo("exact failed (score 0.0)");
            assertThat(nasty.getFailureDetail())
                    .contains("<b a=\"1\">&amp; ]]> [31m   emoji \uD83D\uDE00 tab\tcr")
                    .doesNotContain("\u0000", "\u0001", "\u001b", "\uD800", "\uFFFE")
                    .contains("13");
            ReportTestCase down = find(suites, "math", "case-33");
            assertThat(down.hasError()).isTrue();
            assertThat(down.getFailureMessage())
                    .startsWith("agent errored (http_status): ")
                    .doesNotContain("\u0001");
        }
    }

    @Test
    void casesOfAFailedChunkOrACancelledRunAreSkippedAsNeverRan() throws Exception {
        UUID failed = fx.prepare();
        new Admission(placements, fx.storage).admit(failed);
        SimulatedWorker worker = new SimulatedWorker(placements, fx.store, failed);
        SimulatedWorker.Held held = worker.claimAny().orElseThrow();
        assertThat(worker.fail(held, "chunk file altered\nafter publication")).isTrue();
        worker.run(1_000);
        assertThat(new Settlement(placements).settleIfComplete(failed).outcome())
                .isEqualTo(Settlement.Outcome.FAILED);
        Path xml = dir.resolve("failed.xml");
        List<ReportTestSuite> suites = check(failed, xml, write(failed, xml));
        long skipped = 0;
        for (ReportTestSuite s : suites) {
            skipped += s.getNumberOfSkipped();
            for (ReportTestCase c : s.getTestCases()) {
                if (c.hasSkipped()) {
                    assertThat(c.getFailureMessage()).isEqualTo("never ran");
                }
            }
        }
        assertThat(skipped).isPositive();
        assertThat(Files.readString(xml))
                .contains("chunk " + held.lease().chunkIndex() + " failed: chunk file altered")
                .contains("the run is failed");

        UUID cancelled = fx.prepare();
        new Admission(placements, fx.storage).admit(cancelled);
        new SimulatedWorker(placements, fx.store, cancelled).run(3);
        // While it runs, the cases not run yet say so.
        Path running = dir.resolve("running.xml");
        for (ReportTestSuite s : check(cancelled, running, write(cancelled, running))) {
            assertThat(s.getTestCases())
                    .filteredOn(ReportTestCase::hasSkipped)
                    .isNotEmpty()
                    .allMatch(c -> c.getFailureMessage().equals("not run yet"));
        }
        assertThat(Files.readString(running)).contains("chunk 3 is queued; the run is " + fx.runStatus(cancelled));
        new RunCancellation(placements).cancel(cancelled);
        Path xml2 = dir.resolve("cancelled.xml");
        JunitReport.Summary summary = write(cancelled, xml2);
        check(cancelled, xml2, summary);
        assertThat(summary.chunks()).isEqualTo(3);
        assertThat(summary.skipped()).isPositive();
        assertThat(Files.readString(xml2)).contains("the run is cancelled");
    }

    private JunitReport.Summary write(UUID run, Path file) throws IOException {
        try (OutputStream out = Files.newOutputStream(file)) {
            return new JunitReport(placements, fx.storage).write(run, out);
        }
    }

    /**
     * Parses the report with Surefire's parser and the JDK's, and checks it against the gate table (counts) and the
     * receipts (outcomes and messages).
     */
    private List<ReportTestSuite> check(UUID run, Path xml, JunitReport.Summary summary) throws Exception {
        List<GateResult> table =
                new ExecutionStatusReader(placements).status(run).gates();
        assertThat(table).isNotEmpty();
        Map<String, JsonNode> receipts = results(run);

        // A strict XML 1.0 parse: the count attributes of every suite and the totals.
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(xml.toFile());
        Element root = doc.getDocumentElement();
        assertThat(root.getTagName()).isEqualTo("testsuites");
        assertThat(root.getAttribute("name")).isEqualTo("vigilo run " + run);
        NodeList suiteElements = root.getElementsByTagName("testsuite");
        assertThat(suiteElements.getLength()).isEqualTo(table.size());
        long tests = 0;
        long failures = 0;
        long errors = 0;
        long skipped = 0;
        for (int i = 0; i < table.size(); i++) {
            GateResult g = table.get(i);
            Element e = (Element) suiteElements.item(i);
            assertThat(e.getAttribute("name")).isEqualTo(g.name());
            assertThat(Long.parseLong(e.getAttribute("tests"))).isEqualTo(g.planned());
            assertThat(Long.parseLong(e.getAttribute("failures"))).isEqualTo(g.failed());
            assertThat(Long.parseLong(e.getAttribute("errors"))).isEqualTo(g.errored());
            assertThat(Long.parseLong(e.getAttribute("skipped"))).isEqualTo(g.planned() - g.executed());
            assertThat(e.getElementsByTagName("testcase").getLength()).isEqualTo((int) g.planned());
            tests += g.planned();
            failures += g.failed();
            errors += g.errored();
            skipped += g.planned() - g.executed();
        }
        assertThat(root.getAttribute("tests")).isEqualTo(Long.toString(tests));
        assertThat(root.getAttribute("failures")).isEqualTo(Long.toString(failures));
        assertThat(root.getAttribute("errors")).isEqualTo(Long.toString(errors));
        assertThat(root.getAttribute("skipped")).isEqualTo(Long.toString(skipped));
        assertThat(summary.tests()).isEqualTo(tests);
        assertThat(summary.failures()).isEqualTo(failures);
        assertThat(summary.errors()).isEqualTo(errors);
        assertThat(summary.skipped()).isEqualTo(skipped);
        assertThat(summary.cases()).isEqualTo(receipts.size());

        // Surefire's parser: it makes one suite per test case class name (the gate) and counts their elements.
        List<ReportTestSuite> suites = new TestSuiteXmlParser(new NullConsoleLogger()).parse(xml.toString());
        assertThat(suites)
                .extracting(ReportTestSuite::getFullClassName)
                .containsExactlyElementsOf(table.stream().map(GateResult::name).toList());
        for (int i = 0; i < table.size(); i++) {
            GateResult g = table.get(i);
            ReportTestSuite s = suites.get(i);
            assertThat(s.getNumberOfTests()).as(g.name()).isEqualTo((int) g.planned());
            assertThat(s.getTestCases()).hasSize((int) g.planned());
            assertThat(s.getNumberOfFailures()).as(g.name()).isEqualTo((int) g.failed());
            assertThat(s.getNumberOfErrors()).as(g.name()).isEqualTo((int) g.errored());
            assertThat(s.getNumberOfSkipped()).as(g.name()).isEqualTo((int) (g.planned() - g.executed()));
            for (ReportTestCase c : s.getTestCases()) {
                assertThat(c.getClassName()).isEqualTo(g.name());
                JsonNode line = receipts.get(c.getName());
                if (line == null) {
                    assertThat(c.hasSkipped()).as(c.getName()).isTrue();
                    continue;
                }
                String outcome = line.path("gates").path(g.name()).asText();
                switch (outcome) {
                    case "passed" ->
                        assertThat(c.isSuccessful()).as(c.getName()).isTrue();
                    case "failed" -> {
                        assertThat(c.hasFailure()).as(c.getName()).isTrue();
                        assertThat(c.getFailureType()).isEqualTo("failed");
                        assertThat(c.getFailureMessage()).isEqualTo(expectedFailure(line, g.name()));
                    }
                    case "errored" -> {
                        assertThat(c.hasError()).as(c.getName()).isTrue();
                        assertThat(c.getFailureMessage()).isEqualTo(expectedError(line, g.name()));
                        assertThat(c.getFailureType()).isEqualTo(expectedErrorType(line, g.name()));
                    }
                    default -> throw new AssertionError(c.getName() + " has no outcome for gate " + g.name());
                }
            }
        }
        return suites;
    }

    /** The failing required evaluators with their scores, from the receipt. */
    private static String expectedFailure(JsonNode line, String gate) {
        List<String> reasons = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : line.path("evaluators").properties()) {
            if (REQUIRED.get(gate).contains(e.getKey())
                    && !e.getValue().path("passed").asBoolean()) {
                reasons.add(e.getKey() + " failed (score "
                        + e.getValue().path("score").asDouble() + ")");
            }
        }
        return attribute(String.join("; ", reasons));
    }

    /** The agent's error, or the required evaluators' errors, from the receipt. */
    private static String expectedError(JsonNode line, String gate) {
        if (line.path("error").isObject()) {
            return attribute("agent errored (" + line.path("error").path("type").asText() + "): "
                    + line.path("error").path("message").asText());
        }
        List<String> reasons = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : line.path("evaluators").properties()) {
            JsonNode error = e.getValue().path("error");
            if (REQUIRED.get(gate).contains(e.getKey()) && error.isObject()) {
                reasons.add(e.getKey() + " errored (" + error.path("type").asText() + "): "
                        + error.path("message").asText());
            }
        }
        return attribute(String.join("; ", reasons));
    }

    private static String expectedErrorType(JsonNode line, String gate) {
        if (line.path("error").isObject()) {
            return line.path("error").path("type").asText();
        }
        for (Map.Entry<String, JsonNode> e : line.path("evaluators").properties()) {
            if (REQUIRED.get(gate).contains(e.getKey())
                    && e.getValue().path("error").isObject()) {
                return e.getValue().path("error").path("type").asText();
            }
        }
        throw new AssertionError("an errored case without an error");
    }

    /** Text as an XML 1.0 attribute holds it: forbidden characters removed, tabs and line breaks as spaces. */
    private static String attribute(String s) {
        return s.replaceAll("[^\\x09\\x0A\\x0D\\x20-\\x{D7FF}\\x{E000}-\\x{FFFD}\\x{10000}-\\x{10FFFF}]", "")
                .replaceAll("[\\t\\n\\r]", " ");
    }

    /** The run's results lines (its receipts as {@code run results} reads them), by case id. */
    private Map<String, JsonNode> results(UUID run) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new RunResults(placements, fx.storage).write(run, out);
        Map<String, JsonNode> byId = new HashMap<>();
        for (String line : out.toString(StandardCharsets.UTF_8).lines().toList()) {
            JsonNode n = MAPPER.readTree(line);
            byId.put(n.path("case_id").asText(), n);
        }
        return byId;
    }

    private static ReportTestCase find(List<ReportTestSuite> suites, String gate, String caseId) {
        return suites.stream()
                .filter(s -> s.getFullClassName().equals(gate))
                .flatMap(s -> s.getTestCases().stream())
                .filter(c -> c.getName().equals(caseId))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no test case " + caseId + " in suite " + gate));
    }
}
