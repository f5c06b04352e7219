package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.logging.Level;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;

/**
 * The browser of the browser tests: Debian's headless {@code chromium} and {@code chromium-driver} through Selenium,
 * logging the console. Without them a test is skipped, saying why, unless the environment variable {@value #REQUIRE}
 * is {@code 1} ({@code .ci/run} sets it): then a missing browser fails. Screenshots go to {@code target/screenshots/}.
 */
final class Chromium {
    private static final List<Path> BROWSERS = List.of(
            Path.of("/usr/bin/chromium"), Path.of("/usr/bin/chromium-browser"), Path.of("/usr/bin/google-chrome"));
    private static final Path DRIVER = Path.of("/usr/bin/chromedriver");
    private static final Path SHOTS = Path.of("target", "screenshots");
    /** Set to {@code 1} where a skipped browser test would hide a failure (CI). */
    static final String REQUIRE = "VIGILO_REQUIRE_BROWSER";

    private Chromium() {}

    /**
     * Skips the calling test class (a JUnit assumption) when no browser is installed, saying why; fails instead under
     * {@value #REQUIRE}{@code =1}.
     *
     * @param who the test class, named in the message
     * @return the browser's executable
     */
    static Path require(String who) {
        Optional<Path> browser = BROWSERS.stream().filter(Files::isExecutable).findFirst();
        String missing = browser.isEmpty() || !Files.isExecutable(DRIVER)
                ? "no headless Chromium here (looked for " + BROWSERS + " and " + DRIVER + "): browser tests skipped;"
                        + " install Debian's packages with `apt-get install -y chromium chromium-driver`"
                : null;
        if (missing != null && "1".equals(System.getenv(REQUIRE))) {
            throw new AssertionError(missing + " (" + REQUIRE + "=1: the browser tests must run here)");
        }
        if (missing != null) {
            System.err.println(who + ": " + missing);
        }
        Assumptions.assumeTrue(missing == null, missing);
        return browser.get();
    }

    /** A headless browser with its own profile directory, its console logged. */
    static ChromeDriver start(Path browser, Path profile) throws IOException {
        ChromeOptions options = new ChromeOptions();
        options.setBinary(browser.toFile());
        options.addArguments(
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
                "--window-size=1400,1600",
                "--user-data-dir=" + profile.toAbsolutePath());
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(DRIVER.toFile())
                .usingAnyFreePort()
                .build();
        ChromeDriver driver = new ChromeDriver(service, options);
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(60));
        Files.createDirectories(SHOTS);
        return driver;
    }

    /** Fails when the browser logged an error (SEVERE) since the last look. */
    static void noConsoleErrors(ChromeDriver driver, String what) {
        List<String> severe = new ArrayList<>();
        for (LogEntry e : driver.manage().logs().get(LogType.BROWSER)) {
            if (e.getLevel().intValue() >= Level.SEVERE.intValue()) {
                severe.add(e.getMessage());
            }
        }
        assertThat(severe).as("console errors on " + what).isEmpty();
    }

    /** Leaves the page as {@code target/screenshots/NAME.png}, a test artifact for review. */
    static void screenshot(ChromeDriver driver, String name) throws IOException {
        Files.write(SHOTS.resolve(name + ".png"), driver.getScreenshotAs(OutputType.BYTES));
    }
}
