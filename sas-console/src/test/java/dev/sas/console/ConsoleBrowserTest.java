package dev.sas.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.Schedule;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.Alert;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The must-show of the console, end to end in headless Chromium: an operator opens the console,
 * finds the task in ERROR, is refused when resubmitting it without the token, enters the token,
 * resubmits, and watches the task reach PROCESSED; and the schedules page (pause, run now, resume),
 * the time a task's timer fires, and "Move version…" taking a task blocked in v1 to v2. Uses the system's {@code chromium} and
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
    /** Version 2 of the shop's orders: reserves elsewhere, so a task blocked in v1 moved here goes on. */
    private final Workflow<String> ordersV2 = Workflow.builder("orders", Codec.string()).version(2)
            .step("reserve-v2", s -> s.execute(ctx -> "v2 reservation " + ctx.input()))
            .step("ship", s -> s.execute(ctx -> "v2 shipment"))
            .movesFrom(1, m -> m.step("reserve", "reserve-v2"))
            .build();
    /** Waits two days on a timer before it reminds. */
    private final Workflow<String> reminders = Workflow.builder("reminders", Codec.string())
            .timer("wait-two-days", t -> t.waitFor(Duration.ofDays(2)))
            .step("remind", s -> s.execute(ctx -> "reminded " + ctx.input()))
            .build();
    private BrowserStack stack;
    private SasRuntime runtime;
    private ConsoleServer server;
    private WebDriver browser;
    private final List<Path> screenshots = new ArrayList<>();

    @BeforeEach
    void start() {
        stack = BrowserStack.start(TOKEN, r -> r.workflow(shop.orders).workflow(shop.refunds).workflow(ordersV2)
                .workflow(reminders), c -> c);
        runtime = stack.runtime;
        server = stack.server;
        browser = stack.browser;
    }

    @AfterEach
    void stop() {
        if (stack != null) {
            stack.close();
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

    @Test
    void an_operator_pauses_runs_and_resumes_a_schedule_sees_when_a_timer_fires_and_moves_a_task_to_v2()
            throws Exception {
        runtime.client().schedules().register(Schedule.named("nightly-refunds")
                .cron("0 2 * * *", ZoneId.of("Europe/Berlin")).submits(shop.refunds, "all").build());
        runtime.client().schedules().register(Schedule.named("heartbeat").every(Duration.ofMinutes(5))
                .missedAfter(Duration.ofSeconds(30)).submits(shop.refunds, "ping").build());
        TaskHandle reminder = runtime.client().submit(reminders, "reminder-3001", "customer-7");
        TaskHandle blocked = runtime.client().submit(shop.orders, "order-3001", Shop.BLOCKED_SKU);
        await().atMost(WAIT).until(() -> blocked.info().status() == TaskStatus.ERROR
                && reminder.info().status() == TaskStatus.WAITING);
        // the schedules page re-renders its table after each action: elements are looked up again when stale
        WebDriverWait wait = new WebDriverWait(browser, WAIT);
        wait.ignoring(StaleElementReferenceException.class);

        // the token first: the schedules page offers its buttons only with it
        browser.get(server.url().toString());
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token"))).sendKeys(TOKEN);
        browser.findElement(By.id("token-save")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("operator")));

        // the schedules page: each schedule with its fire times, state and missed-fire setting
        browser.findElement(By.id("nav-schedules")).click();
        wait.until(ExpectedConditions.numberOfElementsToBe(By.cssSelector("#schedules tr.schedule"), 2));
        By nightly = By.cssSelector("#schedules tr.schedule[data-schedule=nightly-refunds]");
        assertThat(attribute(wait, nightly, "data-paused")).isEqualTo("false");
        assertThat(text(wait, nightly)).contains("cron 0 2 * * * · Europe/Berlin")
                .contains("refunds v1").contains("ACTIVE").contains("RUN_ONCE · late > 1m");
        assertThat(text(wait, By.cssSelector("#schedules tr.schedule[data-schedule=heartbeat]"))).contains("every PT5M").contains("RUN_ONCE · late > 30s");
        screenshot("console-schedules.png");

        click(wait, nightly, "button.schedule-pause");
        // textContent: the flash of a success hides itself after 8 s
        wait.until(ExpectedConditions.attributeToBe(By.id("flash"), "textContent", "schedule nightly-refunds paused"));
        wait.until(ExpectedConditions.attributeToBe(nightly, "data-paused", "true"));
        assertThat(text(wait, nightly)).contains("PAUSED");
        assertThat(runtime.client().schedules().find("nightly-refunds").orElseThrow().paused()).isTrue();

        click(wait, nightly, "button.schedule-trigger");
        wait.until(ExpectedConditions.attributeContains(By.id("flash"), "textContent",
                "schedule nightly-refunds triggered: task "));
        // (filtered: a run at 01:00 UTC also sees the nightly fire time's own task)
        assertThat(runtime.client().list(TaskQuery.all().withWorkflow("refunds")))
                .filteredOn(t -> t.businessKey().startsWith("nightly-refunds@triggered-")).hasSize(1);

        click(wait, nightly, "button.schedule-resume");
        wait.until(ExpectedConditions.attributeToBe(nightly, "data-paused", "false"));
        assertThat(runtime.client().schedules().find("nightly-refunds").orElseThrow().paused()).isFalse();

        // a task waiting on its timer says when the timer fires
        browser.get(server.url() + "#/task/" + reminder.id().value());
        By fires = By.cssSelector("#timer-fires span"); // a WAITING task's page renders itself again every 1.5 s
        String firesAt = reminder.info().nextAttemptAt().toString();
        assertThat(attribute(wait, fires, "title")).isEqualTo(firesAt);
        assertThat(text(wait, fires)).startsWith(firesAt.substring(0, 16).replace('T', ' '));

        // the task blocked in v1 moves to v2, which the operator names in the prompt, and goes on there
        browser.get(server.url() + "#/task/" + blocked.id().value());
        wait.until(ExpectedConditions.textToBe(By.cssSelector("#status .pill"), "ERROR"));
        browser.findElement(By.id("reason")).sendKeys("v2 reserves elsewhere");
        assertThat(browser.findElement(By.id("move")).getText()).isEqualTo("Move version…");
        browser.findElement(By.id("move")).click(); // an ERROR task's page does not render itself again
        Alert prompt = wait.until(ExpectedConditions.alertIsPresent());
        assertThat(prompt.getText()).isEqualTo("Move task order-3001 from v1 to which version?");
        prompt.sendKeys("2");
        prompt.accept();
        wait.until(ExpectedConditions.attributeToBe(By.id("flash"), "textContent", "order-3001 (orders): moved to v2"));
        wait.until(ExpectedConditions.textToBe(By.cssSelector("#status .pill"), "PROCESSED"));
        assertThat(blocked.info().workflowVersion()).isEqualTo(2);
        assertThat(runtime.client().events(blocked.id())).filteredOn(e -> e.type() == TaskEvent.Type.VERSION_MOVED)
                .singleElement().extracting(TaskEvent::message).asString()
                .isEqualTo("moved from v1 step 'reserve' to v2 step 'reserve-v2' by console: v2 reserves elsewhere");
        wait.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("#events tr[data-type=VERSION_MOVED]")));
        assertThat(screenshots).allSatisfy(p -> assertThat(Files.size(p)).isGreaterThan(1000));
    }

    /** The text of {@code element}, looked up again if the page re-rendered it meanwhile. */
    private static String text(WebDriverWait wait, By element) {
        return wait.until((WebDriver d) -> d.findElement(element).getText());
    }

    /** An attribute of {@code element}, looked up again if the page re-rendered it meanwhile. */
    private static String attribute(WebDriverWait wait, By element, String name) {
        return wait.until((WebDriver d) -> d.findElement(element).getAttribute(name));
    }

    /** Clicks the {@code button} of the row {@code row}, looking both up again if the table was re-rendered. */
    private static void click(WebDriverWait wait, By row, String button) {
        wait.until((WebDriver d) -> {
            d.findElement(row).findElement(By.cssSelector(button)).click();
            return true;
        });
    }

    private void screenshot(String name) throws IOException {
        // the whole page, up to a height a reader can take in
        Number height = (Number) ((JavascriptExecutor) browser).executeScript(
                "return document.documentElement.scrollHeight");
        browser.manage().window().setSize(new Dimension(1280, Math.min(1400, Math.max(600, height.intValue()) + 140)));
        screenshots.add(stack.screenshot(name));
    }

}
