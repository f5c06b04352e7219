package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The results explorer in a real headless Chromium on the quickstart's settled run: the filter form (outcome tab,
 * search, evaluator, sort), a case opened from the filtered list, and the keyboard's next and previous case within
 * that list, a gate's filter with its counts and both downloads of the filtered list (real downloads, parsed); each
 * step checked against the explorer's API and kept as a screenshot in {@code target/screenshots/}.
 * Skipped, saying why, without a browser unless {@value Chromium#REQUIRE} is {@code 1}.
 */
class ExplorerBrowserTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

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
        Path browser = Chromium.require("ExplorerBrowserTest");
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

    private static void waitFor(By by) {
        new WebDriverWait(driver, Duration.ofSeconds(30)).until(ExpectedConditions.presenceOfElementLocated(by));
    }

    private static List<String> listedIds() {
        List<String> out = new ArrayList<>();
        driver.findElements(By.cssSelector("#cases a.case-link")).forEach(a -> out.add(a.getText()));
        return out;
    }

    private static List<String> apiIds(String query) throws IOException {
        JsonNode page = MAPPER.readTree(Http.get(base + "/api/runs/" + state.settledRun + "/cases?limit=500&" + query)
                .body());
        List<String> out = new ArrayList<>();
        page.path("cases").forEach(c -> out.add(c.path("case_id").asText()));
        return out;
    }

    /** Submits the filter form and waits for the page it loads. */
    private static void apply() {
        WebElement old = driver.findElement(By.id("explore"));
        driver.findElement(By.id("apply")).click();
        new WebDriverWait(driver, Duration.ofSeconds(30)).until(ExpectedConditions.stalenessOf(old));
        waitFor(By.id("explore"));
    }

    @Test
    void filtersSearchSortAndKeyboardNavigationWithinTheList() throws IOException {
        driver.get(base + "/runs/" + state.settledRun + "/cases");
        waitFor(By.id("cases"));
        assertThat(listedIds()).isEqualTo(apiIds(""));
        Chromium.noConsoleErrors(driver, "the explorer");
        Chromium.screenshot(driver, "explorer-01-all");

        // Search, then sort by agent time, longest first.
        driver.findElement(By.id("q")).sendKeys("capital");
        new Select(driver.findElement(By.id("sort"))).selectByValue("time");
        new Select(driver.findElement(By.id("order"))).selectByValue("desc");
        apply();
        List<String> searched = apiIds("q=capital&sort=time&order=desc");
        assertThat(searched).isNotEmpty();
        assertThat(listedIds()).isEqualTo(searched);
        assertThat(driver.getCurrentUrl()).contains("q=capital").contains("sort=time");
        Chromium.screenshot(driver, "explorer-02-search-sorted");

        // One evaluator's failures, through its menu and the outcome tab.
        driver.findElement(By.id("q")).clear();
        new Select(driver.findElement(By.id("evaluator"))).selectByValue("exact");
        apply();
        driver.findElement(By.cssSelector("p.tabs a[data-outcome='failed']")).click();
        waitFor(By.id("explore"));
        List<String> failed = apiIds("evaluator=exact&outcome=failed&sort=time&order=desc");
        assertThat(failed)
                .as("the quickstart's exact evaluator fails some cases")
                .hasSizeGreaterThanOrEqualTo(2);
        assertThat(listedIds()).isEqualTo(failed);
        Chromium.noConsoleErrors(driver, "the filtered explorer");
        Chromium.screenshot(driver, "explorer-03-evaluator-failed");

        // Open the first case; j and k walk the filtered list, not the dataset.
        driver.findElements(By.cssSelector("#cases a.case-link")).get(0).click();
        waitFor(By.id("list-place"));
        assertThat(driver.findElement(By.id("list-place")).getText()).isEqualTo("1 of " + failed.size());
        assertThat(driver.getPageSource()).contains(failed.get(0));
        Chromium.screenshot(driver, "explorer-04-case-in-list");
        WebElement place = driver.findElement(By.id("list-place"));
        driver.findElement(By.tagName("body")).sendKeys("j");
        new WebDriverWait(driver, Duration.ofSeconds(30)).until(ExpectedConditions.stalenessOf(place));
        waitFor(By.id("list-place"));
        assertThat(driver.findElement(By.id("list-place")).getText()).isEqualTo("2 of " + failed.size());
        assertThat(driver.getPageSource()).contains(failed.get(1));
        place = driver.findElement(By.id("list-place"));
        driver.findElement(By.tagName("body")).sendKeys(Keys.ARROW_LEFT);
        new WebDriverWait(driver, Duration.ofSeconds(30)).until(ExpectedConditions.stalenessOf(place));
        waitFor(By.id("list-place"));
        assertThat(driver.findElement(By.id("list-place")).getText()).isEqualTo("1 of " + failed.size());
        Chromium.noConsoleErrors(driver, "a case of the list");
        Chromium.screenshot(driver, "explorer-05-keyboard-back");
    }

    @Test
    void aGateFilterWithItsCountsAndTheFilteredListDownloadedAsJsonLinesAndCsv() throws Exception {
        driver.get(base + "/runs/" + state.settledRun + "/cases");
        waitFor(By.id("cases"));
        // The gate menu shows each gate's counts, as the API has them.
        JsonNode counts = MAPPER.readTree(Http.get(base + "/api/runs/" + state.settledRun + "/cases?limit=1")
                        .body())
                .path("gate_counts")
                .path("geography");
        String label = "geography (" + counts.path("passed").asInt() + " passed, "
                + counts.path("failed").asInt() + " failed, "
                + counts.path("errored").asInt() + " errored)";
        Select gate = new Select(driver.findElement(By.id("gate")));
        assertThat(gate.getOptions().stream().map(WebElement::getText).toList()).contains(label);
        gate.selectByValue("geography");
        apply();
        assertThat(listedIds()).isEqualTo(apiIds("gate=geography"));
        driver.findElement(By.cssSelector("p.tabs a[data-outcome='passed']")).click();
        waitFor(By.id("explore"));
        List<String> passed = apiIds("gate=geography&outcome=passed");
        assertThat(passed).hasSize(counts.path("passed").asInt()).isNotEmpty();
        assertThat(listedIds()).isEqualTo(passed);
        Chromium.noConsoleErrors(driver, "the explorer filtered by a gate");
        Chromium.screenshot(driver, "explorer-08-gate");

        // Both download links fetch this filtered list (every page, ordinal order): real downloads, parsed.
        Path downloads = java.nio.file.Files.createDirectories(home.resolve("downloads"));
        driver.executeCdpCommand(
                "Browser.setDownloadBehavior",
                java.util.Map.of(
                        "behavior",
                        "allow",
                        "downloadPath",
                        downloads.toAbsolutePath().toString()));
        List<String> inOrdinalOrder = apiIds("gate=geography&outcome=passed&sort=ordinal&order=asc");
        driver.findElement(By.cssSelector("#downloads a[href*='results.jsonl']"))
                .click();
        Path jsonl = downloaded(downloads, ".jsonl");
        List<String> fromJsonl = new ArrayList<>();
        for (String line : java.nio.file.Files.readAllLines(jsonl)) {
            fromJsonl.add(MAPPER.readTree(line).path("case_id").asText());
        }
        assertThat(fromJsonl).isEqualTo(inOrdinalOrder);
        driver.findElement(By.cssSelector("#downloads a[href*='results.csv']")).click();
        Path csv = downloaded(downloads, ".csv");
        List<String> lines = java.nio.file.Files.readAllLines(csv);
        List<String> header = List.of(lines.get(0).split(","));
        int column = header.indexOf("case_id");
        assertThat(column).as("the CSV's case_id column in %s", header).isNotNegative();
        // Case ids of the quickstart hold no comma or quote: the column is the field as written.
        assertThat(lines.subList(1, lines.size()).stream()
                        .map(l -> l.split(",", -1)[column])
                        .toList())
                .isEqualTo(inOrdinalOrder);

        // The table itself walks with the keyboard: j and the down arrow mark the next row, k the previous one, and
        // Enter opens the marked case within the list.
        driver.get(base + "/runs/" + state.settledRun + "/cases?sort=time&order=desc");
        waitFor(By.id("cases"));
        List<String> all = apiIds("sort=time&order=desc");
        org.openqa.selenium.interactions.Actions keys = new org.openqa.selenium.interactions.Actions(driver);
        keys.sendKeys("j").perform();
        keys.sendKeys(Keys.ARROW_DOWN).perform();
        keys.sendKeys("j").perform();
        keys.sendKeys("k").perform();
        List<WebElement> marked = driver.findElements(By.cssSelector("#cases tr.selected a.case-link"));
        assertThat(marked).hasSize(1);
        assertThat(marked.get(0).getText()).isEqualTo(all.get(1));
        Chromium.screenshot(driver, "explorer-09-keyboard-table");
        keys.sendKeys(Keys.ENTER).perform();
        waitFor(By.id("list-place"));
        assertThat(driver.findElement(By.id("list-place")).getText()).isEqualTo("2 of " + all.size());
        assertThat(driver.getPageSource()).contains(all.get(1));
        Chromium.noConsoleErrors(driver, "the keyboard in the table");
    }

    /** The one finished download whose name ends with {@code suffix}, once Chromium has written it whole. */
    private static Path downloaded(Path dir, String suffix) {
        return new WebDriverWait(driver, Duration.ofSeconds(30)).until(d -> {
            try (var files = java.nio.file.Files.list(dir)) {
                return files.filter(f -> f.getFileName().toString().endsWith(suffix))
                        .findFirst()
                        .orElse(null);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    @Test
    void theRunListOpensTheChosenRunsAsAMatrix() throws IOException {
        driver.get(base + "/runs");
        waitFor(By.id("matrix-form"));
        driver.findElement(By.cssSelector("#runs tr[data-run='" + state.settledRun + "'] input[name=run]"))
                .click();
        driver.findElement(By.cssSelector("#runs tr[data-run='" + state.pendingRun + "'] input[name=run]"))
                .click();
        driver.findElement(By.id("matrix-button")).click();
        waitFor(By.id("matrix"));
        // Every executed case of the settled run, the pending run's cells "not run"; its gate rates per run.
        // The columns follow the run list's order (newest first): find the settled run's.
        List<String> columns = new ArrayList<>();
        driver.findElements(By.cssSelector("#matrix thead th.mono")).forEach(th -> columns.add(th.getText()));
        int settled = columns.indexOf(state.settledRun.toString().substring(0, 8));
        assertThat(settled).isBetween(0, 1);
        List<WebElement> rows = driver.findElements(By.cssSelector("#matrix tbody tr"));
        assertThat(rows).hasSize(apiIds("").size());
        for (WebElement row : rows) {
            List<WebElement> cells = row.findElements(By.cssSelector("td.cell-outcome"));
            assertThat(cells).hasSize(2);
            assertThat(cells.get(settled).getText()).matches("(passed|failed|errored).*");
            assertThat(cells.get(1 - settled).getText()).isEqualTo("not run");
        }
        assertThat(driver.findElement(By.id("matrix-runs")).getText()).contains("overall");
        assertThat(driver.getTitle()).startsWith("quickstart vs quickstart · matrix of 2 runs");
        Chromium.noConsoleErrors(driver, "the matrix");
        Chromium.screenshot(driver, "explorer-06-matrix");
        // Different only: a case the second run has not executed is no difference.
        driver.findElement(By.cssSelector("#matrix-show a[data-show='different']"))
                .click();
        waitFor(By.id("no-rows"));
        Chromium.screenshot(driver, "explorer-07-matrix-different");
    }
}
