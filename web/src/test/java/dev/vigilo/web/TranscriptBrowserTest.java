package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.exec.worker.LongTranscript;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The transcript's reading view in a real headless Chromium ({@link Chromium}) over {@link ToolRun}: a tool-calling
 * case's conversation in order with each call once and its result under it, the folded repeated steps opened, the
 * scoring; on the 100,000-event transcript the pager, the jump to an event and the search, each followed by clicking
 * as a reader would. No console error; screenshots in {@code target/screenshots/}. Skipped without a browser, saying
 * why.
 */
class TranscriptBrowserTest {
    @TempDir
    static Path dir;

    @TempDir
    static Path profile;

    static ToolRun tr;
    static ChromeDriver driver;

    @BeforeAll
    static void start() throws IOException {
        Path browser = Chromium.require("TranscriptBrowserTest");
        tr = new ToolRun(dir);
        driver = Chromium.start(browser, profile);
    }

    @AfterAll
    static void stop() {
        if (driver != null) {
            driver.quit();
        }
        if (tr != null) {
            tr.close();
        }
    }

    private static WebDriverWait waiting() {
        return new WebDriverWait(driver, Duration.ofSeconds(60));
    }

    private static void open(String path, By ready) {
        driver.get(tr.base + path);
        waiting().until(ExpectedConditions.presenceOfElementLocated(ready));
    }

    /** Text as the DOM holds it, shown or folded away. */
    private static String content(WebElement e) {
        return e.getAttribute("textContent").strip();
    }

    private static String longLog() {
        return "/sessions/view?path=" + URLEncoder.encode(tr.longLog.toString(), StandardCharsets.UTF_8);
    }

    @Test
    void aToolCallingCaseReadsInOrder() throws IOException {
        open("/runs/" + tr.run + "/cases/2/transcript", By.id("events"));
        List<String> roles = driver.findElements(By.cssSelector("#events .turn > .who > .role")).stream()
                .map(TranscriptBrowserTest::content)
                .toList();
        assertThat(roles.get(0)).isEqualTo("System");
        assertThat(roles).containsSubsequence("System", "User", "Assistant", "Assistant", "Final answer");
        // Each call once, with its one result under it.
        List<WebElement> calls = driver.findElements(By.cssSelector("#events .tool-call"));
        assertThat(calls).hasSize(ToolRun.CALLS);
        Set<String> heads = new HashSet<>();
        for (WebElement call : calls) {
            heads.add(content(call.findElement(By.className("call-head"))));
            assertThat(call.findElements(By.className("tool-result"))).hasSize(1);
            assertThat(content(call.findElement(By.className("tool-result"))))
                    .startsWith("Result")
                    .contains("4");
        }
        assertThat(heads).hasSize(ToolRun.CALLS);
        // The repeated steps are folded; opened, they show.
        WebElement fold = driver.findElement(By.cssSelector("details.tool-run"));
        WebElement folded = fold.findElement(By.className("turn"));
        assertThat(folded.isDisplayed()).isFalse();
        fold.findElement(By.tagName("summary")).click();
        waiting().until(ExpectedConditions.visibilityOf(folded));
        // The final answer (2 * 2), then the scoring with the judge's calls folded under its evaluator.
        assertThat(content(driver.findElement(By.cssSelector("[data-answer=true] .what"))))
                .isEqualTo("4");
        WebElement judge = driver.findElement(By.id("judge-calls-quality"));
        judge.findElement(By.tagName("summary")).click();
        assertThat(judge.getText()).contains("close to the reference");
        // The tool's markup is shown as text, never run.
        assertThat(driver.findElements(By.cssSelector("#events img"))).isEmpty();
        assertThat(content(driver.findElement(By.cssSelector("#events .tool-result"))))
                .contains(ToolRun.MARKUP);
        Chromium.noConsoleErrors(driver, "a tool-calling transcript");
        Chromium.screenshot(driver, "21-transcript-conversation");
        driver.executeScript("document.getElementById('scoring').scrollIntoView()");
        Chromium.screenshot(driver, "22-transcript-scoring");
        // The dark theme follows the browser's preference, with the same layout.
        driver.executeCdpCommand(
                "Emulation.setEmulatedMedia",
                Map.of("features", List.of(Map.of("name", "prefers-color-scheme", "value", "dark"))));
        driver.navigate().refresh();
        waiting().until(ExpectedConditions.presenceOfElementLocated(By.id("events")));
        assertThat(driver.findElement(By.tagName("body")).getCssValue("background-color"))
                .isEqualTo("rgba(20, 24, 31, 1)");
        assertThat(driver.findElement(By.cssSelector("#events .turn")).getCssValue("background-color"))
                .isEqualTo("rgba(28, 34, 43, 1)");
        // Badges keep their contrast: a dark green badge under light green text, not the light theme's badge.
        WebElement passed = driver.findElement(By.cssSelector("#evaluators .verdict-passed"));
        assertThat(passed.getCssValue("background-color")).isEqualTo("rgba(22, 51, 34, 1)");
        assertThat(passed.getCssValue("color")).isEqualTo("rgba(111, 208, 140, 1)");
        Chromium.screenshot(driver, "26-transcript-dark");
        driver.executeCdpCommand("Emulation.setEmulatedMedia", Map.of("features", List.of()));
    }

    @Test
    void aLongTranscriptIsPagedJumpedAndSearched() throws IOException {
        long pages = (tr.longEvents + TranscriptScan.PAGE_EVENTS - 1) / TranscriptScan.PAGE_EVENTS;
        open(longLog(), By.id("events"));
        assertThat(driver.findElement(By.cssSelector("#pager-top .page-of")).getText())
                .isEqualTo("Page 1 of " + Views.count(pages));
        driver.findElement(By.cssSelector("#pager-top a.pager-next")).click();
        waiting()
                .until(ExpectedConditions.textToBe(
                        By.cssSelector("#pager-top .page-of"), "Page 2 of " + Views.count(pages)));
        driver.findElement(By.cssSelector("#pager-bottom a.pager-last")).click();
        waiting()
                .until(ExpectedConditions.textToBe(
                        By.cssSelector("#pager-top .page-of"),
                        "Page " + Views.count(pages) + " of " + Views.count(pages)));
        driver.findElement(By.cssSelector("#pager-top a.pager-prev")).click();
        waiting()
                .until(ExpectedConditions.textToBe(
                        By.cssSelector("#pager-top .page-of"),
                        "Page " + Views.count(pages - 1) + " of " + Views.count(pages)));
        // The final answer's link leads to it.
        driver.findElement(By.id("final-answer-link")).click();
        waiting().until(ExpectedConditions.urlContains("#seq-"));
        WebElement answer = driver.findElement(By.cssSelector("[data-answer=true]"));
        assertThat(content(answer.findElement(By.className("what")))).isEqualTo(LongTranscript.ANSWER);
        Chromium.noConsoleErrors(driver, "the long transcript's pages");

        // Jump to an event: its page opens with the event marked and scrolled into view by the page's script.
        driver.findElement(By.id("jump-event")).sendKeys("54321");
        driver.findElement(By.id("jump-button")).click();
        waiting().until(ExpectedConditions.urlContains("event=54321"));
        WebElement target =
                waiting().until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".conversation .target")));
        long seq = Long.parseLong(target.getAttribute("id").substring("seq-".length()));
        assertThat(seq).isBetween(54_321L, 54_321L + 10);
        Object inView = driver.executeScript(
                "var r = arguments[0].getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight;",
                target);
        assertThat(inView).isEqualTo(true);
        Chromium.noConsoleErrors(driver, "a jump to an event");
        Chromium.screenshot(driver, "23-transcript-jump");

        // Search the whole transcript; a hit leads to its event on its page.
        driver.findElement(By.id("search-q")).sendKeys(LongTranscript.NEEDLE);
        driver.findElement(By.id("search-button")).click();
        WebElement results = waiting().until(ExpectedConditions.presenceOfElementLocated(By.id("search-results")));
        List<WebElement> hits = results.findElements(By.cssSelector("li a"));
        assertThat(hits).isNotEmpty();
        assertThat(results.getText()).contains("found in " + LongTranscript.NEEDLE);
        Chromium.screenshot(driver, "24-transcript-search");
        String hit = hits.get(1).getText().substring(1);
        hits.get(1).click();
        waiting().until(ExpectedConditions.urlContains("#seq-" + hit));
        WebElement found = driver.findElement(By.id("seq-" + hit));
        assertThat(content(found)).contains(LongTranscript.NEEDLE);
        assertThat(found.isDisplayed()).isTrue();
        Chromium.noConsoleErrors(driver, "a search");
        Chromium.screenshot(driver, "25-transcript-search-hit");
    }
}
