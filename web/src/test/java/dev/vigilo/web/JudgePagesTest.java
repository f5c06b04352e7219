package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.worker.TranscriptTest;
import dev.vigilo.exec.worker.Worker;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A judged run on the dashboard, executed by a real worker against a local OpenAI-compatible server: the case page
 * shows each judge's model calls beneath its evaluator's result (what it was asked, what it answered, each attempt's
 * status, time and tokens; a panel's judges under the panel), and the run page gives each gate's model usage and its
 * panels' agreement.
 */
class JudgePagesTest {
    @TempDir
    static Path dir;

    static ExecFixture fx;
    static Placements placements;
    static OpenAiTestServer llm;
    static Dashboard dashboard;
    static String base;
    static UUID run;
    static final AtomicInteger qualityCalls = new AtomicInteger();

    @BeforeAll
    static void start() throws IOException {
        fx = new ExecFixture(dir, 3);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> {
            String model = req.body().path("model").asText();
            if (model.equals("judge-model")) {
                // The first call is refused once: that case's judge has two attempts.
                if (qualityCalls.incrementAndGet() == 1) {
                    return OpenAiTestServer.Reply.error(503, "busy");
                }
                return OpenAiTestServer.Reply.judgement(8, "close to the reference")
                        .withUsage(40, 5);
            }
            if (model.equals("grader")) {
                return OpenAiTestServer.Reply.judgement("A", "fine");
            }
            return OpenAiTestServer.Reply.content("42").withUsage(5, 1);
        });
        run = fx.prepare("""
                name: judged-pages
                agent: {kind: http, url: "%s", model: test-model}
                evaluators:
                  - name: quality
                    kind: judge
                    url: "%s"
                    model: judge-model
                    rubric: "Is {{output}} the answer to {{input}}?"
                    scale: {min: 0, max: 10}
                    max_attempts: 2
                  - name: agreement
                    kind: panel
                    aggregate: majority
                    judges:
                      - {name: a, url: "%s", model: grader, rubric: "Grade {{output}}", grades: {A: 1, F: 0}}
                      - {name: b, url: "%s", model: grader, rubric: "Grade {{output}} again", grades: {A: 1, F: 0}}
                pricing:
                  judge-model: {input: 1.0, output: 2.0}
                gates:
                  - {name: all, required_evaluators: [quality, agreement], min_pass_rate: 0.5}
                """.formatted(llm.chatUrl(), llm.chatUrl(), llm.chatUrl(), llm.chatUrl()));
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, TranscriptTest.fast(1), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                DashboardSources.all(
                        fx.control.jdbi(), placements, fx.storage, Optional.empty(), List.of(), List.of(dir)));
        base = "http://127.0.0.1:" + dashboard.port();
    }

    @AfterAll
    static void stop() {
        if (dashboard != null) {
            dashboard.close();
        }
        if (llm != null) {
            llm.close();
        }
        if (placements != null) {
            placements.close();
        }
        if (fx != null) {
            fx.close();
        }
    }

    private static String page(String path) {
        HttpResponse<String> r = Http.get(base + path);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return r.body();
    }

    @Test
    void theCasePageShowsEachJudgesCallsBeneathItsResult() {
        int retried = -1;
        for (int ordinal = 0; ordinal < 3; ordinal++) {
            String html = page("/runs/" + run + "/cases/" + ordinal);
            String quality = section(html, "judge-calls-quality");
            assertThat(quality)
                    .contains("quality: ")
                    .contains("user: Is 42 the answer to what is " + ordinal + " * 2?")
                    .contains("HTTP 200")
                    .contains("40 in · 5 out tokens")
                    .contains("close to the reference");
            if (quality.contains("HTTP 503")) {
                retried = ordinal;
                assertThat(quality).contains("quality: 2 judge model calls").contains("attempt 2");
            } else {
                assertThat(quality).contains("quality: 1 judge model call");
            }
            // The panel's judges, each under the panel's result.
            String panel = section(html, "judge-calls-agreement");
            assertThat(panel)
                    .contains("agreement: 2 judge model calls")
                    .contains("agreement/a")
                    .contains("agreement/b")
                    .contains("user: Grade 42 again");
            // The evaluator row comes first, its calls right beneath it.
            assertThat(html.indexOf("<tr><td>quality</td>")).isLessThan(html.indexOf("id=\"judge-calls-quality\""));
        }
        // Exactly one case met the refused first call.
        assertThat(retried).isGreaterThanOrEqualTo(0);
    }

    @Test
    void theRunPageGivesEachGatesUsageAndAgreement() {
        String html = page("/runs/" + run);
        assertThat(html).contains("<p class=\"gate-usage muted\" data-gate=\"all\">Gate all: model usage ");
        String gate = html.substring(html.indexOf("data-gate=\"all\">Gate all"));
        gate = gate.substring(0, gate.indexOf("</p>"));
        assertThat(gate).contains("judge agreement: agreement ").contains("over 6 scores");
    }

    /** The {@code <details>} element with the given id. */
    private static String section(String html, String id) {
        int at = html.indexOf("id=\"" + id + "\"");
        assertThat(at).as(id + " in the page").isPositive();
        return html.substring(at, html.indexOf("</details>", at));
    }
}
