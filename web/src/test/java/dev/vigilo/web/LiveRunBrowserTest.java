package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
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
 * The live run page in a real headless Chromium (docs/web.md, "Live runs") while a real worker executes
 * {@link LiveRun}: a pending run with no worker shows how to start one (the installation's command); once the worker
 * runs, the page (polling its API every 2 s, never reloaded) hides that line, and its gate table, both pass rates,
 * the smoothed throughput and the ETA change as the first chunk completes; released, the run settles and the page
 * reloads with the final table. Screenshots {@code 41-} to {@code 43-}. Skipped, saying why, without a browser.
 */
class LiveRunBrowserTest {
    private static final String COMMAND = "./vigilo worker --exit-when-idle";

    @TempDir
    Path home;

    @TempDir
    Path profile;

    Dashboard dashboard;
    ChromeDriver driver;
    LiveRun live;

    @AfterEach
    void stop() throws Exception {
        if (driver != null) {
            driver.quit();
        }
        if (live != null) {
            live.close();
        }
        if (dashboard != null) {
            dashboard.close();
        }
    }

    @Test
    void theRunPageFollowsAWorkerAndSaysHowToStartOne() throws Exception {
        Path browser = Chromium.require("LiveRunBrowserTest");
        live = new LiveRun(home);
        dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                live.sources().withWorkerCommand(COMMAND));
        String base = "http://127.0.0.1:" + dashboard.port();
        driver = Chromium.start(browser, profile);
        WebDriverWait wait = new WebDriverWait(driver, Duration.ofSeconds(90));

        driver.get(base + "/runs/" + live.run);
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("gates")));
        WebElement hint = driver.findElement(By.id("no-worker"));
        assertThat(hint.isDisplayed()).isTrue();
        assertThat(hint.getText()).contains("No worker is working on this run");
        assertThat(driver.findElement(By.id("worker-command")).getText()).isEqualTo(COMMAND);
        assertThat(cell("executed")).isEqualTo("0");
        assertThat(cell("executed-rate")).isEqualTo("–");
        assertThat(driver.findElement(By.id("eta")).getText()).isEqualTo("unknown");
        Chromium.noConsoleErrors(driver, "a pending run without a worker");
        Chromium.screenshot(driver, "41-live-no-worker");

        live.startWorker();
        // The page updates itself (no reload: the status badge's recorded status stays the one it was rendered with).
        wait.until(d -> cell("executed").equals("100"));
        wait.until(d -> !driver.findElement(By.id("no-worker")).isDisplayed());
        wait.until(d -> !driver.findElement(By.id("eta")).getText().equals("unknown"));
        assertThat(driver.findElement(By.id("run-status")).getAttribute("data-status"))
                .isEqualTo("pending");
        assertThat(driver.findElement(By.id("run-status")).getText()).isEqualTo("running");
        assertThat(cell("passed")).isEqualTo("75");
        assertThat(cell("failed")).isEqualTo("25");
        assertThat(cell("pass-rate")).isEqualTo("37.5%");
        assertThat(cell("executed-rate")).isEqualTo("75.0%");
        assertThat(driver.findElement(By.id("eta")).getText()).matches("\\d.* \\(about .* UTC\\)");
        assertThat(driver.findElement(By.id("rate-now")).getText())
                .endsWith(" cases/s")
                .isNotEqualTo("0.00 cases/s");
        wait.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("#throughput .uplot")));
        Chromium.noConsoleErrors(driver, "a running run");
        Chromium.screenshot(driver, "42-live-running");

        live.release();
        wait.until(d -> driver.findElement(By.id("run-status"))
                .getAttribute("data-status")
                .equals("settled"));
        assertThat(cell("executed")).isEqualTo("200");
        assertThat(cell("executed-rate")).isEqualTo("75.0%");
        assertThat(driver.findElements(By.id("no-worker"))).isEmpty();
        assertThat(driver.findElements(By.id("eta"))).isEmpty();
        Chromium.noConsoleErrors(driver, "the settled run");
        Chromium.screenshot(driver, "43-live-settled");
        live.awaitWorker();
    }

    private String cell(String cls) {
        return driver.findElement(By.cssSelector("#gates tr[data-gate='all'] td." + cls))
                .getText();
    }
}
