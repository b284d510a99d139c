package dev.sas.console.docs;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.sas.console.ConsoleServer;
import dev.sas.console.SasConsole;
import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskHandle;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The code shown in docs/operations.md, compiled and run. */
class ConsoleDocsTest {

    private final InMemoryStateStore store = new InMemoryStateStore();
    private final Workflow<String> greet = Workflow.builder("greet", Codec.string())
            .step("hello", s -> s.execute(ctx -> "hello " + ctx.input()))
            .build();
    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void serve_on_a_port() throws Exception {
        try (SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(greet).build()) {
            runtime.client().submit(greet, "greeting-1", "world");
            // docs:serve
            SasConsole console = SasConsole.builder()
                    .client(runtime.client())                         // or SasClient.builder().stateStore(store).build()
                    .title("Shop")
                    .actionToken(System.getenv("SAS_CONSOLE_TOKEN"))  // unset: a read-only console
                    .build();
            try (ConsoleServer server = console.serve(0)) {           // 127.0.0.1, a free port; or serve(8089)
                System.out.println("SAS console at " + server.url());
                // docs:end
                String info = http.send(HttpRequest.newBuilder(server.url().resolve("api/info")).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
                assertThat(info).contains("\"title\":\"Shop\"");
                assertThat(http.send(HttpRequest.newBuilder(server.url().resolve("api/search?q=greeting-1")).build(),
                        HttpResponse.BodyHandlers.ofString()).body()).contains("\"workflow\":\"greet\"");
            }
        }
    }

    @Test
    void mount_in_your_own_jdk_http_server() throws Exception {
        SasClient client = SasClient.builder().stateStore(store).build();
        // docs:mount
        SasConsole console = SasConsole.builder().client(client).build();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/ops/sas", console.httpHandler());          // the console at /ops/sas/
        server.start();
        // docs:end
        try {
            URI page = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/ops/sas/api/overview");
            assertThat(http.send(HttpRequest.newBuilder(page).build(), HttpResponse.BodyHandlers.ofString()).statusCode())
                    .isEqualTo(200);
        } finally {
            server.stop(0);
        }
    }

    /** Where the alerts of the example below go: a pager in production. */
    interface Pager {
        void page(String text);
    }

    @Test
    void alerts_link_to_the_task_in_the_console() {
        List<String> pages = new ArrayList<>();
        Pager pager = pages::add;
        String consoleUrl = "https://ops.example.com/sas/";
        Workflow<String> orders = Workflow.builder("orders", Codec.string()).compensateOnFailure(false)
                .step("reserve", s -> s.execute(ctx -> {
                    throw new NonRetryableException("SKU is blocked");
                }))
                .build();
        // docs:alerts
        SasRuntime runtime = SasRuntime.builder()
                .stateStore(store)
                .workflow(orders)
                .alertSink(alert -> pager.page("SAS: " + alert.workflow() + " task " + alert.businessKey() + " is "
                        + alert.status() + " at step " + alert.stepName() + ": " + alert.message()
                        + " - " + consoleUrl + "#/task/" + alert.taskId()))
                .build();
        // docs:end
        TaskHandle order = runtime.client().submit(orders, "order-42", "x");
        Drain.untilIdle(runtime);
        runtime.close(); // alerts are delivered on the event thread; close() lets it catch up

        assertThat(pages).containsExactly("SAS: orders task order-42 is ERROR at step reserve: "
                + "NonRetryableException: SKU is blocked - https://ops.example.com/sas/#/task/" + order.id());
    }
}
