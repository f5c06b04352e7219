package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.Alert;
import org.openqa.selenium.By;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Human review in a real headless Chromium (docs/web.md, "Human review"): on a run executed by a real worker
 * ({@link ReviewRun}: 4 of 6 passed, gate at 0.8 failed), a reviewer fills the case page's review form, confirms, and
 * sees the override in the case's history; the run page's reviewed gate table then shows the recomputed figures
 * (5 of 6, 83.3% beside the machine's 66.7%, passed) beside the unchanged machine verdict. Screenshots {@code 31-}
 * and {@code 32-} stay in {@code target/screenshots/}. Skipped, saying why, without a browser (unless
 * {@code VIGILO_REQUIRE_BROWSER=1}).
 */
class ReviewBrowserTest {
    @TempDir
    Path home;

    @TempDir
    Path profile;

    ControlDatabase control;
    Placements placements;
    ObjectStore store;
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
        if (store != null) {
            store.close();
        }
        if (placements != null) {
            placements.close();
        }
        if (control != null) {
            control.close();
        }
    }

    @Test
    void aReviewerOverridesACaseAndTheRunPageShowsTheRecomputedGates() throws IOException {
        Path browser = Chromium.require("ReviewBrowserTest");
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
        placements = Placements.open(control, ExecutionConfig.defaults());
        StorageConfig storage = StorageConfig.localDefault(home.resolve("objects"));
        store = ObjectStores.open(storage.defaultStore());
        UUID run = ReviewRun.execute(home, control, placements, storage, store);
        dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                DashboardSources.all(control.jdbi(), placements, storage, Optional.empty(), List.of(), List.of(home)));
        String base = "http://127.0.0.1:" + dashboard.port();
        driver = Chromium.start(browser, profile);
        WebDriverWait wait = new WebDriverWait(driver, Duration.ofSeconds(30));

        driver.get(base + "/runs/" + run + "/cases/5");
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("review-form")));
        assertThat(driver.findElement(By.id("case-outcome")).getText()).isEqualTo("failed");
        assertThat(driver.findElements(By.id("review-history"))).isEmpty();
        new Select(driver.findElement(By.id("review-outcome"))).selectByValue("pass");
        driver.findElement(By.id("review-reviewer")).sendKeys("alice");
        driver.findElement(By.id("review-note")).sendKeys("10 is right: the expected answer is 10");
        driver.findElement(By.id("review-button")).click();
        Alert ask = wait.until(ExpectedConditions.alertIsPresent());
        assertThat(ask.getText()).startsWith("Record this override?");
        ask.accept();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("review-current")));
        assertThat(driver.findElement(By.id("review-current")).getText())
                .contains("Overridden to pass")
                .contains("machine: failed")
                .contains("alice");
        assertThat(driver.findElements(By.cssSelector("#review-history tbody tr")))
                .hasSize(1);
        Chromium.noConsoleErrors(driver, "the reviewed case");
        Chromium.screenshot(driver, "31-review-case");

        driver.get(base + "/runs/" + run);
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("reviewed-gates")));
        By row = By.cssSelector("#reviewed-gates tbody tr[data-gate='all']");
        assertThat(driver.findElement(row)
                        .findElement(By.cssSelector("td.passed"))
                        .getText())
                .isEqualTo("5");
        assertThat(driver.findElement(row)
                        .findElement(By.cssSelector("td.pass-rate"))
                        .getText())
                .isEqualTo("83.3% (66.7%)");
        assertThat(driver.findElement(By.id("reviewed-verdict")).getText()).isEqualTo("passed");
        assertThat(driver.findElement(By.id("run-verdict")).getText()).isEqualTo("verdict: failed");
        // The machine table is unchanged.
        assertThat(driver.findElement(By.cssSelector("#gates tbody tr td.passed"))
                        .getText())
                .isEqualTo("4");
        Chromium.noConsoleErrors(driver, "the reviewed run");
        Chromium.screenshot(driver, "32-review-run");
    }
}
