package dev.sas.console;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Debian's Chromium and chromedriver for the console's browser tests: found (or the test skipped
 * with the reason), then started headless at 1280 x 860.
 *
 * @param chromium the browser binary
 * @param driver the chromedriver binary
 */
record HeadlessChromium(Path chromium, Path driver) {

    static {
        java.util.logging.Logger.getLogger("org.openqa.selenium").setLevel(java.util.logging.Level.SEVERE);
    }

    /** The binaries ({@code SAS_TEST_CHROMIUM}, {@code SAS_TEST_CHROMEDRIVER} or Debian's); skips the test without them. */
    static HeadlessChromium require() {
        Path chromium = firstExisting(System.getenv("SAS_TEST_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser");
        Path driver = firstExisting(System.getenv("SAS_TEST_CHROMEDRIVER"), "/usr/bin/chromedriver");
        assumeTrue(chromium != null && driver != null, "no chromium and chromedriver found (install the Debian packages"
                + " chromium and chromium-driver, or set SAS_TEST_CHROMIUM and SAS_TEST_CHROMEDRIVER): browser test"
                + " skipped");
        return new HeadlessChromium(chromium, driver);
    }

    /** A new headless browser; the caller quits it. */
    WebDriver start() {
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,860", "--force-device-scale-factor=1", "--lang=en-US");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(driver.toFile())
                .usingAnyFreePort().build();
        return new ChromeDriver(service, options);
    }

    private static Path firstExisting(String... candidates) {
        return Stream.of(candidates).filter(c -> c != null && !c.isBlank()).map(Path::of)
                .filter(Files::isExecutable).findFirst().orElse(null);
    }
}
