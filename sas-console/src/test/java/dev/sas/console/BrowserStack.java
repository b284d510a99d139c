package dev.sas.console;

import dev.sas.core.RuntimeBuilder;
import dev.sas.core.SasRuntime;
import dev.sas.jdbc.JdbcStateStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.UUID;
import java.util.function.UnaryOperator;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;

/**
 * What the console's browser tests run, shared instead of copied: a headless Chromium (or the test
 * skipped, before anything starts), an in-memory H2 store, a started runtime {@code shop-node-1}
 * polling every 100 ms, and the console titled "Shop" with an operator token on a free port. Closed
 * in reverse order. Not thread-safe.
 */
final class BrowserStack implements AutoCloseable {
    final JdbcStateStore store;
    final SasRuntime runtime;
    final ConsoleServer server;
    final WebDriver browser;

    private BrowserStack(JdbcStateStore store, SasRuntime runtime, ConsoleServer server, WebDriver browser) {
        this.store = store;
        this.runtime = runtime;
        this.server = server;
        this.browser = browser;
    }

    /**
     * Starts it all.
     *
     * @param workflows adds the runtime's workflows (and any other setting) to its builder
     * @param console adds settings to the console's builder
     */
    static BrowserStack start(String token, UnaryOperator<RuntimeBuilder> workflows,
            UnaryOperator<SasConsole.Builder> console) {
        HeadlessChromium chromium = HeadlessChromium.require();
        JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:console-" + UUID.randomUUID()
                + ";DB_CLOSE_DELAY=-1").build();
        SasRuntime runtime = null;
        ConsoleServer server = null;
        try {
            runtime = workflows.apply(SasRuntime.builder().stateStore(store).instanceId("shop-node-1")
                    .pollInterval(Duration.ofMillis(100))).build().start();
            server = console.apply(SasConsole.builder().client(runtime.client()).title("Shop").actionToken(token))
                    .build().serve(0);
            return new BrowserStack(store, runtime, server, chromium.start());
        } catch (RuntimeException e) {
            new BrowserStack(store, runtime, server, null).close();
            throw e;
        }
    }

    /**
     * Writes what the browser shows to {@code target/screenshots/<name>}, and with
     * {@code -Dsas.screenshots.docs=true} to {@code docs/images}, where the docs show it.
     */
    Path screenshot(String name) throws IOException {
        Path dir = Path.of("target", "screenshots");
        Files.createDirectories(dir);
        Path file = dir.resolve(name);
        Files.write(file, ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
        if (Boolean.getBoolean("sas.screenshots.docs")) {
            Path docs = Path.of("..", "docs", "images");
            Files.createDirectories(docs);
            Files.copy(file, docs.resolve(name), StandardCopyOption.REPLACE_EXISTING);
        }
        return file;
    }

    @Override
    public void close() {
        if (browser != null) {
            browser.quit();
        }
        if (server != null) {
            server.close();
        }
        if (runtime != null) {
            runtime.close();
        }
        store.close();
    }
}
