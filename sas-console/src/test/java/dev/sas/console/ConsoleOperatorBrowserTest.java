package dev.sas.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Agent;
import dev.sas.core.CircuitBreaker;
import dev.sas.core.Codec;
import dev.sas.core.FlowControl;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * What an operator runs production with, end to end in headless Chromium: the agents page with an
 * open circuit breaker and the tasks it holds back; a search by state, workflow and error text and
 * a bulk cancel of what it matches, previewed and confirmed; who cancelled and why on the task's
 * timeline; the overview refreshing by itself; past errors of PROCESSED tasks shown as history; and
 * the layout on a 390 px wide phone with the token field in reach. Uses the system's
 * {@code chromium} and {@code chromedriver} like {@link ConsoleBrowserTest}, and is skipped without
 * them. Screenshots go to {@code target/screenshots}, and with {@code -Dsas.screenshots.docs=true}
 * to {@code docs/images}.
 */
class ConsoleOperatorBrowserTest {

    private static final String TOKEN = "operator-" + UUID.randomUUID();
    private static final Duration WAIT = Duration.ofSeconds(60);
    private final Shop shop = new Shop();
    private final AtomicInteger invoiceAttempts = new AtomicInteger();
    /** Fails its first attempt, then succeeds: a PROCESSED task whose last error is history. */
    private final Workflow<String> invoices = Workflow.builder("invoices", Codec.string())
            .step("issue", s -> s.retry(RetryPolicy.builder().maxAttempts(3).fixedBackoff(Duration.ofMillis(200))
                    .jitter(0).build()).execute(ctx -> {
                        if (invoiceAttempts.incrementAndGet() == 1) {
                            throw new IllegalStateException("tax service timed out (will retry)");
                        }
                        return "invoice-" + ctx.input();
                    }))
            .build();
    private final Agent<String, String> payments = Agent.builder("payments")
            .retryPolicy(RetryPolicy.builder().maxAttempts(5).fixedBackoff(Duration.ofMillis(100)).jitter(0).build())
            .flowControl(FlowControl.builder().maxConcurrentCalls(4).circuitBreaker(CircuitBreaker.builder()
                    .consecutiveFailures(2).noFailureRate().openFor(Duration.ofMinutes(30)).build()).build())
            .call(req -> CompletableFuture.failedFuture(new IllegalStateException("503 Service Unavailable from "
                    + "payments")));
    private final Workflow<String> payouts = Workflow.builder("payouts", Codec.string())
            .step("pay", s -> s.call(payments, ctx -> ctx.input()).completeWithin(Duration.ofMinutes(5)))
            .build();

    private BrowserStack stack;
    private SasRuntime runtime;
    private ConsoleServer server;
    private WebDriver browser;
    private WebDriverWait wait;
    private final List<Path> screenshots = new ArrayList<>();

    @BeforeEach
    void start() {
        // the host names the operator: here a stand-in for its security context's principal
        stack = BrowserStack.start(TOKEN, r -> r.workflow(shop.orders).workflow(shop.refunds).workflow(invoices)
                .workflow(payouts), c -> c.operator(request -> "alice"));
        runtime = stack.runtime;
        server = stack.server;
        browser = stack.browser;
        wait = new WebDriverWait(browser, WAIT);
    }

    @AfterEach
    void stop() {
        if (stack != null) {
            stack.close();
        }
    }

    @Test
    void an_operator_watches_the_agents_cancels_by_query_after_a_preview_and_sees_who_and_why() throws Exception {
        List<TaskHandle> fine = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            fine.add(runtime.client().submit(shop.orders, "order-100" + i, "sku-" + i));
        }
        List<TaskHandle> blocked = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            blocked.add(runtime.client().submit(shop.orders, "order-200" + i, Shop.BLOCKED_SKU));
        }
        TaskHandle invoice = runtime.client().submit(invoices, "invoice-3001", "order-1001");
        List<TaskHandle> held = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            held.add(runtime.client().submit(payouts, "payout-400" + i, "p-" + i));
        }
        await().atMost(WAIT).until(() -> fine.stream().allMatch(t -> t.info().status() == TaskStatus.PROCESSED)
                && blocked.stream().allMatch(t -> t.info().status() == TaskStatus.ERROR)
                && invoice.info().status() == TaskStatus.PROCESSED
                && held.stream().allMatch(t -> t.info().status() == TaskStatus.WAITING)
                && runtime.client().operations().agents().stream().anyMatch(a -> a.breaker() == CircuitBreaker.State.OPEN));
        assertThat(invoice.info().lastError()).contains("tax service timed out");

        // the overview: a PROCESSED task's old retry error is history, not a failure
        browser.get(server.url().toString());
        WebElement invoiceRow = wait.until(ExpectedConditions.presenceOfElementLocated(
                By.cssSelector("#task-rows tr[data-id='" + invoice.id().value() + "']")));
        WebElement pastError = invoiceRow.findElement(By.cssSelector("td.err"));
        assertThat(pastError.getAttribute("class")).contains("past");
        assertThat(pastError.getCssValue("color")).isNotEqualTo(redOf(blocked.get(0)));

        // it refreshes by itself: a task submitted now shows up without a reload
        String total = browser.findElement(By.cssSelector("#counts a[data-status=ALL] .n")).getText();
        TaskHandle late = runtime.client().submit(shop.refunds, "refund-5001", "order-1001");
        wait.until(ExpectedConditions.not(ExpectedConditions.textToBe(By.cssSelector("#counts a[data-status=ALL] .n"), total)));
        assertThat(browser.findElement(By.cssSelector("#counts a[data-status=ALL] .n")).getText())
                .isEqualTo(String.valueOf(Integer.parseInt(total) + 1));
        assertThat(browser.findElement(By.id("refresh-state")).getText()).contains("Refreshes every 5 s");
        await().atMost(WAIT).until(() -> late.info().status() == TaskStatus.PROCESSED);

        // the agents page: the open breaker, since when and until when, and the tasks it holds back
        browser.findElement(By.id("nav-agents")).click();
        WebElement endpoint = wait.until(ExpectedConditions.presenceOfElementLocated(
                By.cssSelector("section[data-agent=payments] tr.endpoint[data-breaker=OPEN]")));
        assertThat(endpoint.getText()).contains("default").contains("OPEN").contains("503 Service Unavailable");
        WebElement payments = browser.findElement(By.cssSelector("section[data-agent=payments]"));
        assertThat(payments.findElement(By.cssSelector(".badge.held")).getText()).isEqualTo("3 held back");
        assertThat(payments.findElements(By.cssSelector(".held-tasks li a"))).extracting(WebElement::getText)
                .containsExactlyInAnyOrder("payout-4001", "payout-4002", "payout-4003");
        screenshot("console-agents.png", 1280, 900);

        // search by state, workflow and error text; the operator's token; a preview of the bulk cancel
        browser.findElement(By.cssSelector("nav.nav a[data-view=tasks]")).click();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("filters")));
        new Select(browser.findElement(By.id("f-status"))).selectByValue("ERROR");
        browser.findElement(By.id("f-workflow")).sendKeys("orders");
        browser.findElement(By.id("f-error")).sendKeys("SKU IS BLOCKED");
        browser.findElement(By.id("f-apply")).click();
        wait.until(ExpectedConditions.urlContains("error="));
        wait.until(ExpectedConditions.numberOfElementsToBe(By.cssSelector("#task-rows tr.task-row"), 3));
        browser.findElement(By.id("token")).sendKeys(TOKEN);
        browser.findElement(By.id("token-save")).click();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("operator"), "alice"));
        browser.findElement(By.id("bulk-reason")).sendKeys("customer withdrew the orders");
        browser.findElement(By.id("bulk-preview-cancel")).click();
        wait.until(ExpectedConditions.textToBe(By.id("bulk-count"), "3"));
        assertThat(browser.findElement(By.id("bulk-preview")).getText())
                .contains("tasks match state ERROR, workflow orders, last error containing 'SKU IS BLOCKED'")
                .contains("order-2001").contains("order-2003");
        assertThat(browser.findElement(By.id("bulk-confirm")).getText()).isEqualTo("Cancel these 3 tasks");
        assertThat(blocked).allSatisfy(t -> assertThat(t.info().cancelRequested()).as("a preview changes nothing").isFalse());
        screenshot("console-bulk-cancel-preview.png", 1280, 1000);

        browser.findElement(By.id("bulk-confirm")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("flash")));
        assertThat(browser.findElement(By.id("flash")).getText()).isEqualTo("3 of 3 tasks cancelled");
        await().atMost(WAIT).until(() -> blocked.stream().allMatch(t -> t.info().status() == TaskStatus.CANCELLED));
        assertThat(runtime.client().events(blocked.get(0).id())).filteredOn(e -> e.type() == TaskEvent.Type.CANCEL_REQUESTED)
                .extracting(TaskEvent::message).containsExactly("by alice: customer withdrew the orders");

        // the timeline says who cancelled and why
        browser.get(server.url() + "#/task/" + blocked.get(0).id().value());
        WebElement cancelled = wait.until(ExpectedConditions.presenceOfElementLocated(
                By.cssSelector("#events tr[data-type=CANCEL_REQUESTED]")));
        assertThat(cancelled.findElement(By.cssSelector(".by.operator")).getText()).isEqualTo("alice");
        assertThat(cancelled.findElement(By.cssSelector("td.reason")).getText()).isEqualTo("customer withdrew the orders");
        wait.until(ExpectedConditions.textToBe(By.cssSelector("#status .pill"), "CANCELLED"));
        screenshot("console-timeline-operator.png", 1280, 1000);

        // a phone, 390 px wide: nothing wider than the screen, the token field in reach
        browser.findElement(By.id("token-forget")).click();
        browser.get(server.url() + "#/");
        viewport(390, 844);
        browser.navigate().refresh();
        WebElement token = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token")));
        JavascriptExecutor js = (JavascriptExecutor) browser;
        assertThat(((Number) js.executeScript("return window.innerWidth")).intValue()).isEqualTo(390);
        assertThat(((Number) js.executeScript("return document.documentElement.scrollWidth")).intValue())
                .as("no sideways scrolling of the page; too wide: %s", js.executeScript("return Array.from("
                        + "document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > 391"
                        + " && !e.closest('.panel')).slice(0, 8).map(e => e.tagName + '#' + e.id + '.' + e.className"
                        + " + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ')"))
                .isLessThanOrEqualTo(390);
        Number right = (Number) js.executeScript("return arguments[0].getBoundingClientRect().right", token);
        assertThat(right.doubleValue()).as("the token field's right edge").isLessThanOrEqualTo(390);
        token.sendKeys(TOKEN);
        browser.findElement(By.id("token-save")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("operator")));
        browser.findElement(By.id("token-forget")).click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token")));
        screenshot("console-phone-390.png", 390, 844);

        assertThat(screenshots).allSatisfy(p -> assertThat(Files.size(p)).isGreaterThan(1000));
    }

    /** The color the page gives a failed task's error. */
    private String redOf(TaskHandle failed) {
        return browser.findElement(By.cssSelector("#task-rows tr[data-id='" + failed.id().value() + "'] td.err"))
                .getCssValue("color");
    }

    /** Sizes the window so that the page's viewport is {@code width} x {@code height}. */
    private void viewport(int width, int height) {
        JavascriptExecutor js = (JavascriptExecutor) browser;
        browser.manage().window().setSize(new Dimension(width, height));
        int dw = width - ((Number) js.executeScript("return window.innerWidth")).intValue();
        int dh = height - ((Number) js.executeScript("return window.innerHeight")).intValue();
        if (dw != 0 || dh != 0) {
            browser.manage().window().setSize(new Dimension(width + dw, height + dh));
        }
    }

    private void screenshot(String name, int width, int maxHeight) throws IOException {
        viewport(width, maxHeight);
        screenshots.add(stack.screenshot(name));
    }

}
