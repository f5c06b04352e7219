package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.datagen.DatagenProgress;
import dev.vigilo.datagen.ExperimentStatus;
import dev.vigilo.datagen.Experiments;
import dev.vigilo.datagen.PipelineParser;
import dev.vigilo.datagen.PipelineRunner;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * A datagen experiment's model usage and cost on its page (docs/web.md, "What it shows"): a pipeline of two priced
 * chat steps run against the local OpenAI-compatible test server, which reports known token counts; the page's usage
 * table (all steps, then each step) holds the requests, tokens and costs that the experiment's log folds to
 * ({@link Experiments#status}) and that the test computes from the server's figures and the prices, over HTTP and in
 * Chromium (screenshot {@code 10-experiment-usage}). (A pipeline without chat steps shows no usage table:
 * {@code DashboardBrowserTest}.)
 */
class DatagenUsagePagesTest {
    @TempDir
    Path dir;

    @TempDir
    Path profile;

    OpenAiTestServer server;
    Dashboard dashboard;
    ChromeDriver driver;

    @AfterEach
    void stop() {
        if (driver != null) {
            driver.quit();
        }
        if (dashboard != null) {
            dashboard.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** Three seeds through two chat steps: every answer reports 100 + i prompt and 10 + i completion tokens. */
    private ExperimentStatus run() throws Exception {
        server = OpenAiTestServer.start();
        server.answerWith(r -> {
            int i = Integer.parseInt(r.lastUserMessage().replaceAll("\\D", ""));
            return Reply.content("a" + i).withUsage(100 + i, 10 + i);
        });
        Files.writeString(dir.resolve("seeds.jsonl"), """
                {"id": "s0", "q": "question 0"}
                {"id": "s1", "q": "question 1"}
                {"id": "s2", "q": "question 2"}
                """);
        Path yaml = Files.writeString(dir.resolve("chatty.yaml"), """
                name: chatty
                input: seeds.jsonl
                id_field: id
                prices:
                  small: {prompt_per_million: 0.15, completion_per_million: 0.6}
                  big: {prompt_per_million: 2.5, completion_per_million: 10}
                steps:
                  - name: first
                    kind: chat
                    url: %1$s
                    model: small
                    messages: [{role: user, content: "{{q}}"}]
                  - name: second
                    kind: chat
                    url: %1$s
                    model: big
                    messages: [{role: user, content: "{{q}}"}]
                """.formatted(server.chatUrl()));
        LogRoot root = LogRoot.local(dir.resolve("root"));
        PipelineRunner.run(
                PipelineParser.parse(yaml), new PipelineRunner.Options(root, "priced", 2, DatagenProgress.NONE));
        dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                new DashboardSources(Optional.empty(), Optional.of(root), List.of(), List.of()));
        return Experiments.status(root, "chatty", "priced");
    }

    /** The expected cost of one step: the three answers' tokens at its model's prices. */
    private static String cost(String promptPerMillion, String completionPerMillion) {
        long prompt = 100 + 101 + 102;
        long completion = 10 + 11 + 12;
        return new BigDecimal(promptPerMillion)
                .multiply(BigDecimal.valueOf(prompt))
                .add(new BigDecimal(completionPerMillion).multiply(BigDecimal.valueOf(completion)))
                .movePointLeft(6)
                .stripTrailingZeros()
                .toPlainString();
    }

    @Test
    void theExperimentPageShowsItsModelUsageAndCost() throws Exception {
        ExperimentStatus s = run();
        assertThat(s.completed()).isEqualTo(3);
        String small = cost("0.15", "0.6");
        String big = cost("2.5", "10");
        String all = new BigDecimal(small)
                .add(new BigDecimal(big))
                .stripTrailingZeros()
                .toPlainString();
        assertThat(s.usage().cost().stripTrailingZeros().toPlainString()).isEqualTo(all);
        String base = "http://127.0.0.1:" + dashboard.port();
        String page = Http.get(base + "/datagen/chatty/priced").body();
        assertThat(page)
                .contains("<h2>Model usage</h2>")
                .contains(
                        "<td>all chat steps</td><td class=\"num\">6</td><td class=\"num\">0</td><td class=\"num\">0</td>"
                                + "<td class=\"num\">606</td><td class=\"num\">66</td><td class=\"num\">672</td>"
                                + "<td class=\"num cost\">" + all + "</td>")
                .contains("<td>first</td><td class=\"num\">3</td>")
                .contains("<td class=\"num cost\">" + small + "</td>")
                .contains("<td class=\"num cost\">" + big + "</td>")
                .contains("vigilo datagen status --pipeline chatty --experiment priced");

        Path browser = Chromium.require("DatagenUsagePagesTest");
        driver = Chromium.start(browser, profile);
        driver.get(base + "/datagen/chatty/priced");
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(ExpectedConditions.presenceOfElementLocated(By.id("experiment-usage")));
        List<WebElement> rows = driver.findElements(By.cssSelector("#experiment-usage tbody tr"));
        assertThat(rows.stream()
                        .map(r -> r.findElement(By.tagName("td")).getText())
                        .toList())
                .containsExactly("all chat steps", "first", "second");
        List<String> total = rows.get(0).findElements(By.tagName("td")).stream()
                .map(WebElement::getText)
                .toList();
        assertThat(total).containsExactly("all chat steps", "6", "0", "0", "606", "66", "672", all);
        // Numbers are right-aligned, as every numeric column.
        assertThat(rows.get(0).findElement(By.cssSelector("td.cost")).getCssValue("text-align"))
                .isEqualTo("right");
        Chromium.noConsoleErrors(driver, "an experiment with usage");
        Chromium.screenshot(driver, "10-experiment-usage");
    }
}
