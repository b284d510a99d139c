package dev.sas.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskStatus;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The console over real HTTP: on its own server, and mounted under a path of the host's server. */
class ConsoleServerTest {

    private static final String TOKEN = "another-operator-token-42";

    private final Shop shop = new Shop();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private SasRuntime runtime;
    private SasClient client;
    private TaskHandle blocked;

    @BeforeEach
    void tasks() {
        runtime = SasRuntime.builder().stateStore(new InMemoryStateStore()).clock(new ManualClock())
                .workflow(shop.orders).build();
        client = runtime.client();
        blocked = client.submit(shop.orders, "order-9", Shop.BLOCKED_SKU);
        Drain.untilIdle(runtime);
    }

    private HttpResponse<String> send(HttpRequest request) throws Exception {
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void serves_the_page_and_api_on_a_loopback_port_and_acts_with_the_token() throws Exception {
        SasConsole console = SasConsole.builder().client(client).actionToken(TOKEN).build();
        try (ConsoleServer server = console.serve(0)) {
            assertThat(server.url().getHost()).isEqualTo("127.0.0.1");
            assertThat(server.url().getPort()).isEqualTo(server.port()).isPositive();

            HttpResponse<String> page = send(HttpRequest.newBuilder(server.url()).build());
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("console.js");
            assertThat(page.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(
                    v -> assertThat(v).contains("default-src 'none'"));

            URI resubmit = server.url().resolve("api/tasks/" + blocked.id().value() + "/resubmit");
            HttpResponse<String> refused = send(HttpRequest.newBuilder(resubmit)
                    .POST(HttpRequest.BodyPublishers.noBody()).build());
            assertThat(refused.statusCode()).isEqualTo(403);
            assertThat(blocked.info().status()).isEqualTo(TaskStatus.ERROR);

            shop.blocked.set(false);
            HttpResponse<String> done = send(HttpRequest.newBuilder(resubmit).header(SasConsole.TOKEN_HEADER, TOKEN)
                    .POST(HttpRequest.BodyPublishers.ofString("ignored")).build());
            assertThat(done.statusCode()).as(done.body()).isEqualTo(200);
            Drain.untilIdle(runtime);
            assertThat(blocked.info().status()).isEqualTo(TaskStatus.PROCESSED);
        }
    }

    @Test
    void close_frees_the_port_and_is_idempotent() throws Exception {
        SasConsole console = SasConsole.builder().client(client).build();
        ConsoleServer server = console.serve(0);
        int port = server.port();
        server.close();
        server.close();

        try (ConsoleServer again = console.serve(port)) {
            assertThat(again.port()).isEqualTo(port);
            assertThatThrownBy(() -> console.serve(port)).isInstanceOf(UncheckedIOException.class)
                    .hasMessageContaining("cannot listen");
        }
        assertThatThrownBy(() -> console.serve(70_000)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("port must be 0 to 65535, was 70000");
    }

    @Test
    void mounts_under_a_path_of_the_hosts_own_server() throws Exception {
        SasConsole console = SasConsole.builder().client(client).build();
        HttpServer host = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        host.createContext("/ops/sas", console.httpHandler());
        host.start();
        try {
            URI base = URI.create("http://127.0.0.1:" + host.getAddress().getPort() + "/ops/sas");
            HttpResponse<String> bare = send(HttpRequest.newBuilder(base).build());
            assertThat(bare.statusCode()).isEqualTo(308);
            assertThat(bare.headers().firstValue("Location")).contains("/ops/sas/");

            assertThat(send(HttpRequest.newBuilder(URI.create(base + "/")).build()).body()).contains("console.js");
            HttpResponse<String> counts = send(HttpRequest.newBuilder(URI.create(base + "/api/overview")).build());
            assertThat(counts.statusCode()).isEqualTo(200);
            assertThat(counts.body()).contains("\"ERROR\":1");
            assertThat(send(HttpRequest.newBuilder(URI.create(base + "/api/tasks/" + blocked.id().value())).build())
                    .body()).contains("order-9");
            HttpResponse<String> head = send(HttpRequest.newBuilder(URI.create(base + "/console.css"))
                    .method("HEAD", HttpRequest.BodyPublishers.noBody()).build());
            assertThat(head.statusCode()).isEqualTo(200);
            assertThat(head.body()).isEmpty();
        } finally {
            host.stop(0);
        }
    }
}
