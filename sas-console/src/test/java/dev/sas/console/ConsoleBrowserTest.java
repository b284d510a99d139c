package dev.sas.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskStatus;
import dev.sas.jdbc.JdbcStateStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The must-show of the console, end to end in headless Chromium: an operator opens the console,
 * finds the task in ERROR, is refused when resubmitting it without the token, enters the token,
 * resubmits, and watches the task reach PROCESSED. Uses the system's {@code chromium} and
 * {@code chromedriver} (Debian packages {@code chromium}, {@code chromium-driver}; {@code .ci/run}
 * installs them) and downloads nothing; skipped when they are missing.
 *
 * <p>Screenshots go to {@code target/screenshots}; with {@code -Dsas.screenshots.docs=true} they
 * are copied to {@code docs/images}, where docs/operations.md shows them.
 */
class ConsoleBrowserTest {

    private static final String TOKEN = "operator-" + UUID.randomUUID();
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** Selenium's java.util.logging warns that it has no CDP support for this Chromium; the test needs none. */
    private final Shop shop = new Shop();
    private JdbcStateStore store;
    private SasRuntime runtime;
    private ConsoleServer server;
    private WebDriver browser;
    private final List<Path> screenshots = new ArrayList<>();

    @BeforeEach
    void start() {
        HeadlessChromium chromium = HeadlessChromium.require();

        store = JdbcStateStore.builder().url("jdbc:h2:mem:console-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1").build();
        runtime = SasRuntime.builder().stateStore(store).instanceId("shop-node-1").workflow(shop.orders)
                .workflow(shop.refunds).pollInterval(Duration.ofMillis(100)).build().start();
        server = SasConsole.builder().client(runtime.client()).title("Shop").actionToken(TOKEN).build().serve(0);

        browser = chromium.start();
    }

    @AfterEach
    void stop() {
        if (browser != null) {
            browser.quit();
        }
        if (server != null) {
            server.close();
        }
        if (runtime != null) {
            runtime.close();
        }
        if (store != null) {
            store.close();
        }
    }

    @Test
    void an_operator_finds_the_error_task_is_refused_without_the_token_and_resubmits_it_with_it() throws Exception {
        List<TaskHandle> tasks = new ArrayList<>();
        for (int i = 1; i <= 6; i++) {
            tasks.add(runtime.client().submit(shop.orders, "order-100" + i, "sku-" + i));
        }
        TaskHandle blocked = runtime.client().submit(shop.orders, "order-1007", Shop.BLOCKED_SKU);
        tasks.add(runtime.client().submit(shop.refunds, "refund-2001", "order-1002"));
        tasks.add(runtime.client().submit(shop.refunds, "refund-2002", "order-1004"));
        await().atMost(WAIT).until(() -> blocked.info().status() == TaskStatus.ERROR
                && tasks.stream().allMatch(t -> t.info().status() == TaskStatus.PROCESSED));
        WebDriverWait wait = new WebDriverWait(browser, WAIT);

        // the overview: counts per state and per workflow
        browser.get(server.url().toString());
        wait.until(ExpectedConditions.textToBe(By.cssSelector("#counts a[data-status=ERROR] .n"), "1"));
        wait.until(ExpectedConditions.numberOfElementsToBe(By.cssSelector("#task-rows tr.task-row"), 9));
        screenshot("console-overview.png");

        // the ERROR tasks, then the one task
        browser.findElement(By.cssSelector("#counts a[data-status=ERROR]")).click();
        wait.until(ExpectedConditions.numberOfElementsToBe(By.cssSelector("#task-rows tr.task-row"), 1));
        WebElement row = browser.findElement(By.cssSelector("#task-rows tr.task-row"));
        assertThat(row.getAttribute("data-status")).isEqualTo("ERROR");
        assertThat(row.getText()).contains("order-1007").contains("SKU is blocked");
        row.click();
        wait.until(ExpectedConditions.textToBe(By.cssSelector("#status .pill"), "ERROR"));
        assertThat(browser.findElement(By.id("last-error")).getText()).contains("SKU is blocked");
        assertThat(browser.findElements(By.cssSelector("#events tbody tr"))).extracting(e -> e.getAttribute("data-type"))
                .contains("RECEIVED", "STEP_FAILED", "ERROR");

        // without the token: refused by the server, the task stays in ERROR
        browser.findElement(By.id("resubmit")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector("#flash.error")));
        assertThat(browser.findElement(By.id("flash")).getText()).contains("Refused").contains("needs the operator token");
        assertThat(blocked.info().status()).isEqualTo(TaskStatus.ERROR);
        assertThat(runtime.client().events(blocked.id())).extracting(TaskEvent::type)
                .doesNotContain(TaskEvent.Type.RESUBMITTED);
        screenshot("console-task-error.png");

        // the warehouse unblocks the SKU; the operator enters the token and resubmits
        shop.blocked.set(false);
        browser.findElement(By.id("token")).sendKeys(TOKEN);
        browser.findElement(By.id("token-save")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("operator")));
        browser.findElement(By.id("resubmit")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector("#flash.ok")));
        wait.until(ExpectedConditions.textToBe(By.cssSelector("#status .pill"), "PROCESSED"));
        assertThat(browser.findElements(By.cssSelector("#steps tbody tr .pill"))).extracting(WebElement::getText)
                .containsExactly("COMPLETED", "COMPLETED", "COMPLETED");
        wait.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("#events tr[data-type=RESUBMITTED]")));
        screenshot("console-task-processed.png");

        assertThat(blocked.info().status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(runtime.client().events(blocked.id())).extracting(TaskEvent::type)
                .containsSubsequence(TaskEvent.Type.ERROR, TaskEvent.Type.RESUBMITTED, TaskEvent.Type.PROCESSED);
        assertThat(screenshots).allSatisfy(p -> assertThat(Files.size(p)).isGreaterThan(1000));
    }

    private void screenshot(String name) throws IOException {
        Path dir = Path.of("target", "screenshots");
        Files.createDirectories(dir);
        Path file = dir.resolve(name);
        // the whole page, up to a height a reader can take in
        Number height = (Number) ((JavascriptExecutor) browser).executeScript(
                "return document.documentElement.scrollHeight");
        browser.manage().window().setSize(new Dimension(1280, Math.min(1400, Math.max(600, height.intValue()) + 140)));
        Files.write(file, ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
        screenshots.add(file);
        if (Boolean.getBoolean("sas.screenshots.docs")) {
            Path docs = Path.of("..", "docs", "images");
            Files.createDirectories(docs);
            Files.copy(file, docs.resolve(name), StandardCopyOption.REPLACE_EXISTING);
        }
    }

}
