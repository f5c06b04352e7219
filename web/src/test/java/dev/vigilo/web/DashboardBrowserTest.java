package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.view.ExecutionStatusReader;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * A real headless Chromium (Debian's {@code chromium} and {@code chromium-driver}) against the dashboard on a
 * quickstart state: each page loads, shows the figures the modules compute, logs no console error, and leaves a
 * screenshot in {@code target/screenshots/} for review. Without a browser the tests are skipped, saying why, unless
 * the environment variable {@value Chromium#REQUIRE} is {@code 1} ({@code .ci/run} sets it): then a missing browser
 * fails ({@link Chromium}).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DashboardBrowserTest {
    @TempDir
    static Path home;

    @TempDir
    static Path profile;

    static QuickstartState state;
    static Dashboard dashboard;
    static ChromeDriver driver;
    static String base;

    @BeforeAll
    static void start() throws IOException {
        Path browser = Chromium.require("DashboardBrowserTest");
        state = new QuickstartState(home);
        dashboard =
                Dashboard.start(new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()), state.sources());
        base = "http://127.0.0.1:" + dashboard.port();
        driver = Chromium.start(browser, profile);
    }

    @AfterAll
    static void stop() {
        if (driver != null) {
            driver.quit();
        }
        if (dashboard != null) {
            dashboard.close();
        }
        if (state != null) {
            state.close();
        }
    }

    /** Opens a page, waits for {@code ready}, and returns it once no console error was logged. */
    private static void open(String path, By ready) {
        driver.get(base + path);
        new WebDriverWait(driver, Duration.ofSeconds(30)).until(ExpectedConditions.presenceOfElementLocated(ready));
    }

    private static void noConsoleErrors(String what) {
        Chromium.noConsoleErrors(driver, what);
    }

    private static void screenshot(String name) throws IOException {
        Chromium.screenshot(driver, name);
    }

    private static String text(By by) {
        return driver.findElement(by).getText();
    }

    private static int rows(String tableId) {
        return driver.findElements(By.cssSelector("#" + tableId + " tbody tr")).size();
    }

    @Test
    @Order(1)
    void runsList() throws IOException {
        open("/runs", By.id("runs"));
        assertThat(rows("runs")).isEqualTo(2);
        // Runs by name, the id's first characters beside it (the whole id in the link).
        assertThat(text(By.id("runs")))
                .contains("quickstart " + state.settledRun.toString().substring(0, 8))
                .contains("command · java")
                .contains("12 / 12 cases (100.0%)");
        assertThat(driver.findElement(By.cssSelector("#runs tr[data-run='" + state.settledRun + "'] a"))
                        .getAttribute("href"))
                .endsWith("/runs/" + state.settledRun);
        assertThat(text(By.id("runs"))).contains("settled").contains("pending");
        noConsoleErrors("/runs");
        screenshot("01-runs");
        // The filter form: by status, then by a part of the name; the list keeps the choice.
        new org.openqa.selenium.support.ui.Select(driver.findElement(By.id("filter-status"))).selectByValue("pending");
        driver.findElement(By.id("filter-button")).click();
        new WebDriverWait(driver, Duration.ofSeconds(30)).until(ExpectedConditions.urlContains("status=pending"));
        assertThat(rows("runs")).isEqualTo(1);
        assertThat(driver.findElement(By.cssSelector("#runs tbody tr")).getAttribute("data-run"))
                .isEqualTo(state.pendingRun.toString());
        driver.findElement(By.id("filter-clear")).click();
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(ExpectedConditions.presenceOfElementLocated(By.id("runs")));
        driver.findElement(By.id("filter-name")).sendKeys("no-such-name");
        driver.findElement(By.id("filter-button")).click();
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(ExpectedConditions.presenceOfElementLocated(By.id("no-runs")));
        assertThat(driver.findElement(By.id("filter-name")).getAttribute("value"))
                .isEqualTo("no-such-name");
        noConsoleErrors("the filtered runs");
    }

    @Test
    @Order(2)
    void settledRunShowsItsGatesShardMapThroughputAndIdentity() throws IOException {
        ExecutionStatus s = new ExecutionStatusReader(state.placements).status(state.settledRun);
        open("/runs/" + state.settledRun, By.id("gates"));
        assertThat(rows("gates")).isEqualTo(s.gates().size());
        List<WebElement> gateRows = driver.findElements(By.cssSelector("#gates tbody tr"));
        for (int i = 0; i < s.gates().size(); i++) {
            GateResult g = s.gates().get(i);
            List<WebElement> cells = gateRows.get(i).findElements(By.tagName("td"));
            assertThat(cells.get(0).getText()).isEqualTo(g.name());
            assertThat(cells.get(1).getText()).isEqualTo(Long.toString(g.planned()));
            assertThat(cells.get(3).getText()).isEqualTo(Long.toString(g.passed()));
            // Pass rate over executed beside the one over planned (docs/web.md, "Live runs").
            assertThat(cells.get(7).getText())
                    .isEqualTo(String.format(java.util.Locale.ROOT, "%.1f%%", 100.0 * g.passed() / g.executed()));
            assertThat(cells.get(8).getText())
                    .isEqualTo(String.format(
                            java.util.Locale.ROOT,
                            "95%% CI [%.1f%%, %.1f%%]",
                            g.interval().low() * 100,
                            g.interval().high() * 100));
            assertThat(cells.get(11).getText()).isEqualTo(g.passedGate().orElseThrow() ? "passed" : "failed");
        }
        assertThat(text(By.id("run-verdict"))).contains(s.verdict().orElseThrow());
        // The quickstart's agent is a command: no model calls, cost $0 (known, not unknown).
        assertThat(text(By.id("run-usage")))
                .isEqualTo("Model usage: " + s.runUsage().orElseThrow().line());
        assertThat(text(By.id("run-usage"))).contains("in 0 calls, $0");
        assertThat(driver.findElements(By.cssSelector("#shard-map span"))).hasSize(128);
        assertThat(text(By.id("cases-done"))).isEqualTo("12");
        assertThat(text(By.id("profile-sha"))).hasSize(64);
        // The title leads with the run's name; the profile is shown in readable form.
        assertThat(driver.getTitle()).startsWith("quickstart · run " + state.settledRun);
        assertThat(text(By.id("profile-agent"))).contains("command");
        assertThat(text(By.id("profile-gates")))
                .contains("overall")
                .contains("math")
                .contains("geography");
        assertThat(rows("profile-evaluators")).isPositive();
        // The throughput chart is drawn by uPlot from the API.
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("#throughput .uplot canvas")));
        noConsoleErrors("the settled run");
        screenshot("02-run-settled");
    }

    @Test
    @Order(3)
    void casesFilteredByOutcomeAndOneCase() throws IOException {
        Map<String, Long> counts = new java.util.HashMap<>();
        long after = -1;
        dev.vigilo.exec.view.CaseResults results =
                new dev.vigilo.exec.view.CaseResults(state.placements, state.storage);
        try (results) {
            for (var c : results.page(state.settledRun, dev.vigilo.exec.view.CaseResults.Filter.ALL, after, 500)
                    .cases()) {
                counts.merge(c.outcome().spelling(), 1L, Long::sum);
            }
        }
        for (String o : new String[] {"failed", "passed"}) {
            open("/runs/" + state.settledRun + "/cases?outcome=" + o, By.cssSelector("p.tabs"));
            assertThat(driver.getTitle()).startsWith("quickstart · cases · run ");
            long expected = counts.getOrDefault(o, 0L);
            if (expected == 0) {
                assertThat(driver.findElements(By.id("no-cases"))).hasSize(1);
            } else {
                assertThat(rows("cases")).isEqualTo((int) expected);
            }
            noConsoleErrors("the " + o + " cases");
            screenshot("03-cases-" + o);
        }
        open("/runs/" + state.settledRun + "/cases/0", By.id("case-input"));
        assertThat(driver.getTitle()).startsWith("quickstart · case 0 · run ");
        assertThat(text(By.id("case-input"))).contains("What is 17 + 25?");
        assertThat(text(By.id("case-expected"))).isEqualTo("42");
        assertThat(rows("evaluators")).isGreaterThan(0);
        // Every built-in evaluator says why: case 0 answers 42, expected 42.
        assertThat(driver.findElements(By.cssSelector("#evaluators td.reason")))
                .allSatisfy(td -> assertThat(td.getText()).isNotBlank());
        assertThat(text(By.id("receipt"))).contains("receipts/");
        // The case's transcript: the last attempt's events embedded, every attempt linked.
        assertThat(driver.findElements(By.cssSelector("#events .turn.role-user")))
                .hasSize(1);
        assertThat(text(By.id("events"))).contains("What is 17 + 25?");
        noConsoleErrors("a case");
        screenshot("04-case");
        driver.findElement(By.id("transcript-attempt-1")).click();
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(ExpectedConditions.presenceOfElementLocated(By.id("transcript-key")));
        assertThat(driver.getTitle()).startsWith("quickstart · transcript of case 0 · run ");
        assertThat(text(By.id("verdict-badge"))).isEqualTo("ACCEPT");
        assertThat(driver.findElements(By.cssSelector("#events .turn"))).isNotEmpty();
        // Storage and verification are folded away below the conversation; opened, they show the object.
        assertThat(driver.findElement(By.id("transcript-key")).isDisplayed()).isFalse();
        driver.findElement(By.cssSelector("#storage > summary")).click();
        assertThat(text(By.id("transcript-key"))).contains("runs/" + state.settledRun + "/transcripts/");
        assertThat(text(By.id("verdict"))).isEqualTo("ACCEPT");
        noConsoleErrors("a case's transcript");
        screenshot("04-case-transcript");
    }

    @Test
    @Order(3)
    void aRunComparedWithItself() throws IOException {
        open("/runs/" + state.settledRun, By.id("compare-form"));
        // The picker offers the other runs of the dataset by name, status and agent.
        List<WebElement> peers = driver.findElements(By.cssSelector("#compare-runs option"));
        assertThat(peers.stream().map(o -> o.getAttribute("value")).toList())
                .containsExactly(state.pendingRun.toString());
        assertThat(peers.get(0).getAttribute("textContent"))
                .contains("quickstart")
                .contains("pending");
        driver.findElement(By.id("compare-with")).sendKeys(state.settledRun.toString());
        driver.findElement(By.id("compare-button")).click();
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(ExpectedConditions.presenceOfElementLocated(By.id("gate-deltas")));
        assertThat(rows("gate-deltas")).isEqualTo(3);
        assertThat(driver.getTitle()).startsWith("quickstart vs quickstart · run ");
        assertThat(driver.findElements(By.cssSelector("#gate-deltas .delta-same")))
                .hasSize(3);
        assertThat(driver.findElements(By.id("no-flips"))).hasSize(1);
        assertThat(text(By.id("counts"))).startsWith("12 cases compared, 0 flipped");
        // Significance per gate: a run against itself has no discordant case, p = 1, nothing significant.
        assertThat(rows("significance")).isEqualTo(3);
        List<WebElement> overall = driver.findElements(By.cssSelector("#significance tbody tr"))
                .get(0)
                .findElements(By.tagName("td"));
        assertThat(overall.get(0).getText()).isEqualTo("overall");
        assertThat(overall.get(1).getText()).isEqualTo("12");
        assertThat(overall.get(2).getText()).isEqualTo("0");
        assertThat(overall.get(3).getText()).isEqualTo("0");
        assertThat(overall.get(4).getText()).isEqualTo("1.00");
        assertThat(overall.get(5).getText()).isEqualTo("+0.0 pts");
        assertThat(overall.get(7).getText()).isEqualTo("not significant");
        noConsoleErrors("a comparison");
        screenshot("04-compare");
    }

    @Test
    @Order(4)
    void aLiveRunCanBeCancelledFromItsPage() throws IOException {
        open("/runs/" + state.pendingRun, By.id("progress"));
        assertThat(text(By.id("run-status"))).isEqualTo("pending");
        assertThat(text(By.id("cases-done"))).isEqualTo("0");
        assertThat(driver.findElements(By.id("live-note"))).hasSize(1);
        // The page's polling rewrites the partial gate table, intervals included: cells made stale come back.
        GateResult first = new ExecutionStatusReader(state.placements)
                .status(state.pendingRun)
                .gates()
                .get(0);
        String ci = String.format(
                java.util.Locale.ROOT,
                "95%% CI [%.1f%%, %.1f%%]",
                first.interval().low() * 100,
                first.interval().high() * 100);
        By firstCi = By.cssSelector("#gates tbody tr:first-child td.ci");
        By firstExecuted = By.cssSelector("#gates tbody tr:first-child td.executed");
        assertThat(text(firstCi)).isEqualTo(ci);
        driver.executeScript("document.querySelector('#gates tbody tr td.ci').textContent = 'stale';"
                + "document.querySelector('#gates tbody tr td.executed').textContent = 'stale';");
        assertThat(text(firstCi)).isEqualTo("stale");
        new WebDriverWait(driver, Duration.ofSeconds(15)).until(ExpectedConditions.textToBe(firstCi, ci));
        assertThat(text(firstExecuted)).isEqualTo(Long.toString(first.executed()));
        screenshot("05-run-pending");
        // Pause and resume ask first too: dismissed, nothing is posted; accepted, the run pauses, then resumes.
        driver.findElement(By.id("pause-button")).click();
        org.openqa.selenium.Alert pause =
                new WebDriverWait(driver, Duration.ofSeconds(10)).until(ExpectedConditions.alertIsPresent());
        assertThat(pause.getText()).startsWith("Pause this run?");
        pause.dismiss();
        assertThat(Http.get(base + "/api/runs/" + state.pendingRun).body()).contains("\"status\":\"pending\"");
        assertThat(text(By.id("run-status"))).isEqualTo("pending");
        driver.findElement(By.id("pause-button")).click();
        new WebDriverWait(driver, Duration.ofSeconds(10))
                .until(ExpectedConditions.alertIsPresent())
                .accept();
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(ExpectedConditions.textToBe(By.id("run-status"), "paused"));
        assertThat(driver.findElements(By.id("pause-button"))).isEmpty();
        noConsoleErrors("the paused run");
        screenshot("05-run-paused");
        driver.findElement(By.id("resume-button")).click();
        org.openqa.selenium.Alert resume =
                new WebDriverWait(driver, Duration.ofSeconds(10)).until(ExpectedConditions.alertIsPresent());
        assertThat(resume.getText()).startsWith("Resume this run?");
        resume.accept();
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(ExpectedConditions.textToBe(By.id("run-status"), "pending"));
        assertThat(driver.findElements(By.id("resume-button"))).isEmpty();
        // A dismissed cancel leaves the run as it is.
        driver.findElement(By.id("cancel-button")).click();
        new WebDriverWait(driver, Duration.ofSeconds(10))
                .until(ExpectedConditions.alertIsPresent())
                .dismiss();
        assertThat(Http.get(base + "/api/runs/" + state.pendingRun).body()).contains("\"status\":\"pending\"");
        driver.findElement(By.id("cancel-button")).click();
        // The page asks first.
        org.openqa.selenium.Alert ask =
                new WebDriverWait(driver, Duration.ofSeconds(10)).until(ExpectedConditions.alertIsPresent());
        assertThat(ask.getText()).startsWith("Cancel this run?");
        ask.accept();
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(ExpectedConditions.textToBe(By.id("run-status"), "cancelled"));
        assertThat(driver.findElements(By.id("cancel-button"))).isEmpty();
        // Its gates are not decided: nothing ran and nothing more will.
        assertThat(driver.findElements(By.cssSelector("#gates .verdict-none"))).hasSize(3);
        noConsoleErrors("the cancelled run");
        screenshot("06-run-cancelled");
    }

    @Test
    @Order(5)
    void datasets() throws IOException {
        open("/datasets", By.id("datasets"));
        assertThat(rows("datasets")).isEqualTo(1);
        assertThat(text(By.id("datasets"))).contains("quickstart-example").contains("12");
        noConsoleErrors("/datasets");
        screenshot("07-datasets");
        open("/datasets/" + state.dataset.uploadId(), By.id("dataset-cases"));
        assertThat(rows("dataset-cases")).isEqualTo(12);
        assertThat(text(By.id("case-count"))).isEqualTo("12");
        noConsoleErrors("a dataset");
        screenshot("08-dataset");
    }

    @Test
    @Order(6)
    void datagen() throws IOException {
        open("/datagen", By.id("experiments"));
        assertThat(text(By.id("experiments"))).contains("quiz").contains("demo");
        noConsoleErrors("/datagen");
        screenshot("09-datagen");
        open("/datagen/quiz/demo", By.id("items"));
        assertThat(rows("items")).isEqualTo(3);
        assertThat(text(By.id("experiment-counts")))
                .contains("1 completed")
                .contains("1 filtered")
                .contains("1 failed");
        assertThat(text(By.id("failure-types"))).contains("CommandExitError");
        // No chat step, no model usage: no usage table.
        assertThat(driver.findElements(By.id("experiment-usage"))).isEmpty();
        noConsoleErrors("an experiment");
        screenshot("10-experiment");
        open("/datagen/quiz/demo/item?id=gamma", By.id("trajectory"));
        assertThat(text(By.id("item-status"))).isEqualTo("failed");
        assertThat(driver.findElement(By.cssSelector(".failure")).getAttribute("textContent"))
                .contains("CommandExitError")
                .contains("cannot answer gamma");
        assertThat(rows("trajectory")).isGreaterThan(3);
        noConsoleErrors("an item");
        screenshot("11-item");
    }

    @Test
    @Order(7)
    void transcript() throws IOException {
        open("/sessions", By.id("session-files"));
        assertThat(text(By.id("session-files"))).contains(state.sessionLog.toString());
        // The logs under Vigilo home are listed, newest first, to be picked rather than typed; the path box is folded.
        List<WebElement> listed = driver.findElements(By.cssSelector("#session-list tbody td a"));
        // Shown below Vigilo home (the heading names it).
        String real = "sessions/demo/session.jsonl.zstd";
        assertThat(listed.stream().map(WebElement::getText).toList()).contains(real);
        assertThat(driver.findElement(By.cssSelector("#open-by-path input[name=path]"))
                        .isDisplayed())
                .isFalse();
        noConsoleErrors("/sessions");
        screenshot("12-sessions");
        listed.stream()
                .filter(a -> a.getText().equals(real))
                .findFirst()
                .orElseThrow()
                .click();
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(ExpectedConditions.presenceOfElementLocated(By.id("events")));
        assertThat(text(By.id("verdict-badge"))).isEqualTo("ACCEPT");
        // The torn tail is said above the conversation; the details are in the folded storage section.
        assertThat(text(By.className("transcript-warning"))).contains("torn final frame");
        driver.findElement(By.cssSelector("#storage > summary")).click();
        assertThat(text(By.id("verdict"))).isEqualTo("ACCEPT");
        assertThat(text(By.id("torn"))).contains("torn final frame");
        assertThat(text(By.id("hw"))).contains("seq ");
        String events = text(By.id("events"));
        assertThat(events)
                .contains("User")
                .contains("What is 17 + 25? Check with a tool.")
                .contains("Tool call calculator")
                .contains("17 + 25 = 42.");
        // Reasoning is collapsed: present, not shown until opened.
        WebElement reasoning = driver.findElement(By.cssSelector("details.reasoning"));
        assertThat(reasoning.getAttribute("open")).isNull();
        assertThat(reasoning.getAttribute("textContent")).contains("I should add the numbers");
        noConsoleErrors("a transcript");
        screenshot("13-transcript");
    }

    @Test
    @Order(8)
    void metrics() throws IOException {
        open("/metrics", By.tagName("pre"));
        assertThat(text(By.tagName("pre"))).contains("vigilo_runs{status=\"settled\"} 1.0");
        noConsoleErrors("/metrics");
        screenshot("14-metrics");
    }

    @Test
    @Order(9)
    void anAddressNoPageAnswersGetsTheDashboardsOwnNotFoundPage() throws IOException {
        // Styled like every page (its header and navigation, the stylesheet), never the framework's plain text.
        open("/no/such/page", By.id("error-message"));
        assertThat(driver.getTitle()).isEqualTo("404 Not Found · Vigilo");
        assertThat(text(By.cssSelector("h1.error-title"))).isEqualTo("404 Not Found");
        assertThat(text(By.id("error-message"))).isEqualTo("no such page: /no/such/page; the runs are listed at /runs");
        assertThat(driver.findElements(By.cssSelector("header.top nav a"))).isNotEmpty();
        Object rules = driver.executeScript(
                "return document.styleSheets.length > 0 ? document.styleSheets[0].cssRules.length : 0;");
        assertThat(((Number) rules).longValue())
                .as("the dashboard's stylesheet applies")
                .isPositive();
        screenshot("15-not-found");
        driver.findElement(By.linkText("Back to the dashboard")).click();
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(ExpectedConditions.presenceOfElementLocated(By.id("runs")));
        // The 404 left its console error; the check below reads the log afresh.
        driver.manage().logs().get(LogType.BROWSER);
    }

    @Test
    @Order(10)
    void theConsoleCheckSeesErrors() {
        // The check above can fail: a page that answers 404 leaves a console error, and it is seen.
        driver.manage().logs().get(LogType.BROWSER);
        open("/runs/" + java.util.UUID.randomUUID(), By.id("error-message"));
        List<LogEntry> severe = driver.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
                .toList();
        assertThat(severe).isNotEmpty();
        assertThat(severe.get(0).getMessage()).contains("404");
    }
}
