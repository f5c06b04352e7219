package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunPreparation;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
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
 * that list, a gate's filter with its counts and both downloads of the filtered list (real downloads, parsed); beside
 * it, a labelled run whose agent errors on some cases: its errors grouped by type, the error type, group and tag
 * filters, the matrix's regressions, and the runs list's dataset and name filters. Each step is checked against what
 * the test knows of the cases or against the API, and kept as a screenshot in {@code target/screenshots/}.
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
    /** A run of the example labelled {@value #LABEL} whose agent errors on some cases and answers "42" to the rest. */
    static UUID flaky;
    /** A run of another dataset, prepared only: the runs list's dataset filter leaves it out. */
    static UUID otherDatasetRun;

    static final String LABEL = "flaky";
    /** The flaky agent's failures by case id: its exit status 3, and a byte that is not UTF-8 for one case. */
    static final Map<String, String> FLAKY_ERRORS = Map.of(
            "capital-002", "nonzero_exit",
            "capital-004", "nonzero_exit",
            "unit-002", "invalid_output");

    @BeforeAll
    static void start() throws IOException {
        Path browser = Chromium.require("ExplorerBrowserTest");
        Path agent = Files.writeString(
                home.resolve("flaky.sh"),
                String.join(
                        "\n",
                        "input=$(cat)",
                        "case \"$input\" in",
                        "  *'capital of Japan'*|*'capital of Canada'*) echo 'no answer' >&2; exit 3 ;;",
                        "  *'seconds are in one hour'*) printf '\\377\\n' ;;",
                        "  *) echo 42 ;;",
                        "esac",
                        ""));
        String flakyProfile = new String(
                        QuickstartState.resource("examples/quickstart-profile.yaml"), StandardCharsets.UTF_8)
                .replace(
                        "command: [java, -XX:TieredStopAtLevel=1, -XX:+UseSerialGC, examples/agent/QuickAgent.java]",
                        "command: [sh, \"" + agent + "\"]\n  max_attempts: 1");
        assertThat(flakyProfile).contains("flaky.sh").contains("max_attempts: 1");
        state = new QuickstartState(
                home, Worker.Listener.NONE, List.of(new QuickstartState.ExtraRun(flakyProfile, Optional.of(LABEL))));
        flaky = state.extraRuns.get(0);
        Path few = home.resolve("few.jsonl");
        Files.write(
                few,
                new String(QuickstartState.resource("examples/quickstart.jsonl"), StandardCharsets.UTF_8)
                        .lines()
                        .limit(5)
                        .toList());
        DatasetEntry other = new DatasetCatalog(state.control.jdbi())
                .upload(
                        new UploadRequest(few, Optional.of("five-cases"), Optional.of(UUID.randomUUID())),
                        state.store,
                        UploadProgress.NONE);
        otherDatasetRun = UUID.randomUUID();
        new RunPreparation(state.control.jdbi(), state.storage)
                .create(new CreateRequest(
                        ProfileInput.inline(new String(
                                QuickstartState.resource("examples/quickstart-profile.yaml"), StandardCharsets.UTF_8)),
                        other.uploadId(),
                        Optional.of(otherDatasetRun),
                        true));
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
        return apiIds(state.settledRun, query);
    }

    private static List<String> apiIds(UUID run, String query) throws IOException {
        JsonNode page = MAPPER.readTree(Http.get(base + "/api/runs/" + run + "/cases?limit=500&" + query)
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

    /** The example's case ids in file order whose case line satisfies {@code keep}. */
    private static List<String> datasetIds(java.util.function.Predicate<JsonNode> keep) throws IOException {
        List<String> out = new ArrayList<>();
        for (String l : new String(QuickstartState.resource("examples/quickstart.jsonl"), StandardCharsets.UTF_8)
                .lines()
                .toList()) {
            JsonNode c = MAPPER.readTree(l);
            if (keep.test(c)) {
                out.add(c.path("id").asText());
            }
        }
        return out;
    }

    private static boolean tagged(JsonNode c, String tag) {
        for (JsonNode t : c.path("tags")) {
            if (t.asText().equals(tag)) {
                return true;
            }
        }
        return false;
    }

    private static void fill(String id, String text) {
        WebElement field = driver.findElement(By.id(id));
        field.clear();
        field.sendKeys(text);
    }

    @Test
    void erroredCasesGroupedByTypeAndTheErrorGroupAndTagFilters() throws IOException {
        driver.get(base + "/runs/" + flaky + "/cases");
        waitFor(By.id("error-types"));
        // Errors by type: one link per type with its count, as the agent made them.
        Map<String, Long> byType = new java.util.TreeMap<>();
        FLAKY_ERRORS.values().forEach(t -> byType.merge(t, 1L, Long::sum));
        List<String> links = new ArrayList<>();
        driver.findElements(By.cssSelector("#error-types a.error-type")).forEach(a -> links.add(a.getText()));
        assertThat(links)
                .containsExactlyInAnyOrderElementsOf(byType.entrySet().stream()
                        .map(e -> e.getKey() + " (" + e.getValue() + ")")
                        .toList());
        assertThat(driver.getTitle()).startsWith("quickstart · " + LABEL + " · cases");
        Chromium.noConsoleErrors(driver, "the explorer of a run with errors");
        Chromium.screenshot(driver, "explorer-10-errors-by-type");

        // The errored tab lists exactly the cases the agent failed; a type's link narrows it to that type.
        driver.findElement(By.cssSelector("p.tabs a[data-outcome='errored']")).click();
        waitFor(By.id("explore"));
        List<String> errored =
                datasetIds(c -> FLAKY_ERRORS.containsKey(c.path("id").asText()));
        assertThat(listedIds()).containsExactlyInAnyOrderElementsOf(errored);
        assertThat(listedIds()).isEqualTo(apiIds(flaky, "outcome=errored"));
        driver.findElement(By.xpath("//p[@id='error-types']/a[starts-with(., 'nonzero_exit')]"))
                .click();
        waitFor(By.id("explore"));
        assertThat(listedIds())
                .containsExactlyInAnyOrderElementsOf(datasetIds(
                        c -> "nonzero_exit".equals(FLAKY_ERRORS.get(c.path("id").asText()))));
        assertThat(driver.findElement(By.id("error")).getAttribute("value")).isEqualTo("nonzero_exit");
        assertThat(driver.findElement(By.cssSelector("#error-types a.current")).getText())
                .startsWith("nonzero_exit");
        Chromium.screenshot(driver, "explorer-11-error-type");

        // The error type typed into its field, over every outcome.
        driver.get(base + "/runs/" + flaky + "/cases");
        waitFor(By.id("explore"));
        fill("error", "invalid_output");
        apply();
        assertThat(listedIds()).isEqualTo(List.of("unit-002"));
        assertThat(driver.getCurrentUrl()).contains("error=invalid_output");

        // A group, then a group and a tag: the cases the dataset puts there, whatever their outcome.
        fill("error", "");
        fill("group", "geography");
        apply();
        assertThat(listedIds())
                .isEqualTo(datasetIds(c -> c.path("group").asText().equals("geography")))
                .hasSize(4);
        fill("tag", "medium");
        apply();
        assertThat(listedIds())
                .isEqualTo(datasetIds(c -> c.path("group").asText().equals("geography") && tagged(c, "medium")))
                .isNotEmpty();
        assertThat(driver.findElement(By.cssSelector("#downloads code")).getText())
                .contains("--group geography")
                .contains("--tag medium");
        Chromium.noConsoleErrors(driver, "the explorer filtered by group and tag");
        Chromium.screenshot(driver, "explorer-12-group-tag");
        // A tag no case has: the empty list says so.
        fill("tag", "no-such-tag");
        apply();
        assertThat(listedIds()).isEmpty();
    }

    @Test
    void theMatrixShowsRegressionsOnly() throws IOException {
        driver.get(base + "/matrix?run=" + state.settledRun + "&run=" + flaky);
        waitFor(By.id("matrix"));
        driver.findElement(By.cssSelector("#matrix-show a[data-show='regressions']"))
                .click();
        waitFor(By.id("matrix"));
        assertThat(driver.getCurrentUrl()).contains("show=regressions");
        List<String> rows = new ArrayList<>();
        for (WebElement row : driver.findElements(By.cssSelector("#matrix tbody tr"))) {
            List<WebElement> cells = row.findElements(By.cssSelector("td.cell-outcome"));
            assertThat(cells).hasSize(2);
            // A regression: passed in the first run, not in the second.
            assertThat(cells.get(0).getText()).startsWith("passed");
            assertThat(cells.get(1).getText()).matches("(failed|errored).*");
            rows.add(row.findElement(By.cssSelector("td.mono")).getText());
        }
        JsonNode api = MAPPER.readTree(
                Http.get(base + "/api/matrix?run=" + state.settledRun + "&run=" + flaky + "&show=regressions")
                        .body());
        List<String> want = new ArrayList<>();
        api.path("rows").forEach(r -> want.add(r.path("case_id").asText()));
        assertThat(want)
                .as("the flaky agent breaks cases the example agent passes")
                .isNotEmpty();
        assertThat(rows).isEqualTo(want);
        // Every errored case the settled run passed is a regression.
        List<String> settledPassed = apiIds("outcome=passed");
        assertThat(want)
                .containsAll(FLAKY_ERRORS.keySet().stream()
                        .filter(settledPassed::contains)
                        .toList());
        Chromium.noConsoleErrors(driver, "the matrix's regressions");
        Chromium.screenshot(driver, "explorer-13-matrix-regressions");
    }

    @Test
    void theRunsListFiltersByDatasetAndNamesALabelledRun() throws IOException {
        driver.get(base + "/runs");
        waitFor(By.id("runs"));
        List<String> all = runRows();
        assertThat(all).contains(state.settledRun.toString(), flaky.toString(), otherDatasetRun.toString());
        // The labelled run is named "profile · label" in the list, and its page's title leads with that name.
        WebElement name = driver.findElement(By.cssSelector("#runs tr[data-run='" + flaky + "'] td:nth-child(2) a"));
        assertThat(name.getText()).isEqualTo("quickstart · " + LABEL);

        // The "runs" link beside a run's dataset lists that dataset's runs only.
        driver.findElement(By.cssSelector("#runs tr[data-run='" + flaky + "'] a[href^='/runs?dataset=']"))
                .click();
        waitFor(By.id("filter-clear"));
        assertThat(driver.getCurrentUrl()).contains("dataset=" + state.dataset.uploadId());
        assertThat(runRows())
                .containsExactlyInAnyOrder(state.settledRun.toString(), flaky.toString(), state.pendingRun.toString());
        Chromium.noConsoleErrors(driver, "the runs of one dataset");
        Chromium.screenshot(driver, "runs-02-one-dataset");
        // The name filter keeps the dataset: the labelled run alone.
        fill("filter-name", LABEL);
        driver.findElement(By.id("filter-button")).click();
        waitFor(By.id("filter-clear"));
        assertThat(driver.getCurrentUrl()).contains("dataset=").contains("name=" + LABEL);
        assertThat(runRows()).containsExactly(flaky.toString());
        JsonNode api =
                MAPPER.readTree(Http.get(base + "/api/runs?dataset=" + state.dataset.uploadId() + "&name=" + LABEL)
                        .body());
        assertThat(api.toString()).contains(flaky.toString()).contains("\"label\":\"" + LABEL + "\"");
        Chromium.screenshot(driver, "runs-03-labelled");
        driver.findElement(By.cssSelector("#runs tr[data-run='" + flaky + "'] td:nth-child(2) a"))
                .click();
        new WebDriverWait(driver, Duration.ofSeconds(30))
                .until(d -> d.getCurrentUrl().endsWith("/runs/" + flaky));
        assertThat(driver.getTitle()).startsWith("quickstart · " + LABEL);
        // Back to every run: the other dataset's run is there again.
        driver.get(base + "/runs?dataset=" + state.dataset.uploadId());
        waitFor(By.id("filter-clear"));
        driver.findElement(By.id("filter-clear")).click();
        waitFor(By.id("runs"));
        assertThat(runRows()).contains(otherDatasetRun.toString());
    }

    private static List<String> runRows() {
        List<String> out = new ArrayList<>();
        driver.findElements(By.cssSelector("#runs tbody tr")).forEach(r -> out.add(r.getAttribute("data-run")));
        return out;
    }
}
