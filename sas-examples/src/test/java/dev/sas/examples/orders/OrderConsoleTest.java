package dev.sas.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --console}: after the run the example serves the operator console until it is interrupted. */
class OrderConsoleTest {

    @TempDir
    Path dir;

    @Test
    void after_the_run_the_console_shows_its_orders_and_the_branches_of_a_blocked_one_until_interrupted() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        AtomicReference<Thread> runner = new AtomicReference<>();
        CompletableFuture<RunSummary> run = CompletableFuture.supplyAsync(() -> {
            runner.set(Thread.currentThread());
            try {
                return OrderRun.run(RunConfig.parse("--orders", "30", "--seed", "7", "--failure-rate", "0",
                        "--hang-rate", "0", "--decline-rate", "0", "--undeliverable-rate", "0", "--blocked-rate", "0.2",
                        "--console=0", "--dir", dir.toString()), out);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Pattern url = Pattern.compile("console:\\s+(http://127\\.0\\.0\\.1:\\d+/)");
        Pattern token = Pattern.compile("token:\\s+(\\S+)");
        await().atMost(Duration.ofSeconds(120)).until(() -> url.matcher(bytes.toString(StandardCharsets.UTF_8)).find()
                || run.isDone());
        String output = bytes.toString(StandardCharsets.UTF_8);
        Matcher u = url.matcher(output);
        Matcher t = token.matcher(output);
        assertThat(u.find()).as(output).isTrue();
        assertThat(t.find()).as(output).isTrue();
        assertThat(output.indexOf("console:")).as("the summary comes first").isGreaterThan(output.indexOf("orders"));
        URI base = URI.create(u.group(1));

        HttpClient http = HttpClient.newHttpClient();
        String overview = http.send(HttpRequest.newBuilder(base.resolve("api/overview")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertThat(overview).contains("\"name\":\"order-processing\"").contains("\"total\":30");
        assertThat(overview).as("blocked orders, compensated").containsPattern("\"COMPENSATED\":[1-9]");
        // a blocked SKU fails the stock branch; the task page shows both branches of the parallel reserve/charge
        String compensated = http.send(HttpRequest.newBuilder(base.resolve(
                "api/tasks?status=COMPENSATED&workflow=order-processing")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Matcher id = Pattern.compile("\"id\":\"([^\"]+)\"").matcher(compensated);
        assertThat(id.find()).as(compensated).isTrue();
        String task = http.send(HttpRequest.newBuilder(base.resolve("api/tasks/" + id.group(1))).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertThat(task).as(task).contains("\"children\"").contains("\"branch\":\"stock\"")
                .contains("\"branch\":\"payment\"").contains("order-processing.reserve-and-charge.stock");
        assertThat(overview).as("no order left in ERROR: " + overview).containsPattern(
                "\"name\":\"order-processing\",\"counts\":\\{[^}]*\"ERROR\":0[,}]");

        runner.get().interrupt();
        RunSummary summary = run.get(60, TimeUnit.SECONDS);
        assertThat(summary.ok()).as(summary.table()).isTrue();
    }
}
