package dev.sas.spring.boot.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasClient;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Closing the application: the web server stops taking requests first, then SAS drains the step
 * that is running (its result is recorded), and only then is the data source closed.
 */
class GracefulShutdownTest {

    @Test
    void the_web_server_stops_first_then_the_running_step_finishes_and_is_recorded() throws Exception {
        String url = "jdbc:h2:mem:shutdown" + ThreadLocalRandom.current().nextInt(1 << 30) + ";DB_CLOSE_DELAY=-1";
        ShopApplication.slowStarted = new CountDownLatch(1);
        ShopApplication.slowRelease = new CountDownLatch(1);
        ConfigurableApplicationContext app = new SpringApplicationBuilder(ShopApplication.class)
                .properties("server.port=0", "spring.datasource.url=" + url, "sas.scheduler.poll-interval=200ms",
                        "sas.shutdown-grace=2m")
                .run();
        String port = app.getEnvironment().getProperty("local.server.port");
        @SuppressWarnings("unchecked")
        Workflow<String> slow = app.getBean("slow", Workflow.class);
        app.getBean(SasClient.class).submit(slow, "s-1", "x");
        await().atMost(Duration.ofSeconds(60)).until(() -> ShopApplication.slowStarted.getCount() == 0);

        CompletableFuture<Void> closing = CompletableFuture.runAsync(app::close);
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest health = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health"))
                .timeout(Duration.ofSeconds(10)).build();
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            try {
                http.send(health, HttpResponse.BodyHandlers.discarding());
                return false;
            } catch (ConnectException refused) {
                return true;
            }
        });
        assertThat(closing).as("SAS still drains the running step").isNotDone();

        ShopApplication.slowRelease.countDown();
        closing.get(2, java.util.concurrent.TimeUnit.MINUTES);
        try (JdbcStateStore store = JdbcStateStore.builder().url(url).username("sa").build()) {
            SasClient client = SasClient.builder().stateStore(store).build();
            var task = client.find("slow", "s-1").orElseThrow();
            assertThat(task.status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(client.handle(task.taskId()).await(Duration.ofSeconds(10)).output("wait", Codec.string()))
                    .contains("done");
        }
    }
}
