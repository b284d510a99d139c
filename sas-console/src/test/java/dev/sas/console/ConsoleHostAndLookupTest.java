package dev.sas.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.StateStoreException;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskId;
import dev.sas.core.TaskNotFoundException;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.StateStore;
import dev.sas.jdbc.JdbcStateStore;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * What a page of another site can get from the console (nothing: every request, reads included,
 * must name an allowed {@code Host}), what API clients see of a store failure (an error id, never
 * the driver's text), and lookups of values no database can hold (not found, on H2 and PostgreSQL).
 */
class ConsoleHostAndLookupTest {

    private static final String TOKEN = "s3cret-operator-token-0123456789";

    private static ConsoleResponse request(SasConsole console, String method, String path, String query,
            String... headers) {
        Map<String, String> h = new HashMap<>();
        for (int i = 0; i < headers.length; i += 2) {
            h.put(headers[i], headers[i + 1]);
        }
        return console.handle(new ConsoleRequest(method, path, query, h, "10.1.2.3"));
    }

    @Nested
    class Hosts {
        private final InMemoryStateStore store = new InMemoryStateStore();
        private final SasClient client = SasClient.builder().stateStore(store).build();

        @Test
        void a_read_naming_a_foreign_host_is_refused_the_page_and_the_api_alike() {
            SasConsole console = SasConsole.builder().client(client).build();

            for (String path : List.of("/", "/api/overview", "/api/info", "/console.js")) {
                ConsoleResponse r = request(console, "GET", path, null, "Host", "rebind.evil.example:8089");
                assertThat(r.status()).as(path).isEqualTo(403);
                assertThat(r.bodyText()).contains("does not answer for the host 'rebind.evil.example:8089'")
                        .doesNotContain("\"counts\"");
            }
            assertThat(request(console, "GET", "/api/overview", null).status()).as("no Host").isEqualTo(403);
            assertThat(request(console, "GET", "/api/overview", null, "Host", "127.0.0.1:8089", "Origin",
                    "http://rebind.evil.example:8089").status()).as("a foreign Origin on a read").isEqualTo(403);
            assertThat(request(console, "GET", "/api/overview", null, "Host", "localhost.evil.example").status())
                    .isEqualTo(403);
            assertThat(request(console, "GET", "/api/overview", null, "Host", "127.0.0.1:80:80").status())
                    .isEqualTo(403);
        }

        @Test
        void localhost_ip_addresses_and_allowed_hosts_are_answered() {
            SasConsole console = SasConsole.builder().client(client).allowedHost("ops.example.com")
                    .allowedHost("intra.example.com:8443").allowedOrigin("https://proxy.example.com").build();

            for (String host : List.of("127.0.0.1:8089", "localhost:8089", "LOCALHOST", "[::1]:8089", "10.0.0.5",
                    "OPS.example.com", "ops.example.com:9000", "intra.example.com:8443", "proxy.example.com")) {
                assertThat(request(console, "GET", "/api/overview", null, "Host", host).status()).as(host)
                        .isEqualTo(200);
            }
            assertThat(request(console, "GET", "/api/overview", null, "Host", "intra.example.com:9999").status())
                    .as("allowed with another port only").isEqualTo(403);
            assertThat(request(console, "GET", "/api/overview", null, "Host", "127.0.0.1:8089", "Origin",
                    "http://127.0.0.1:8089").status()).as("its own origin").isEqualTo(200);
            assertThat(console.config().allowedHosts()).contains("ops.example.com", "intra.example.com:8443",
                    "proxy.example.com");
            assertThatThrownBy(() -> SasConsole.builder().allowedHost("https://ops.example.com"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("allowedHost");
            assertThatThrownBy(() -> SasConsole.builder().allowedHost("ops.example.com/path"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("allowedHost");
        }

        @Test
        void a_served_console_refuses_a_read_through_a_rebound_name() throws Exception {
            SasConsole console = SasConsole.builder().client(client).build();
            try (ConsoleServer server = console.serve(0)) {
                java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
                java.net.http.HttpResponse<String> own = http.send(java.net.http.HttpRequest.newBuilder(
                        server.url().resolve("api/overview")).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
                assertThat(own.statusCode()).isEqualTo(200);
                // the JDK client will not set Host; a raw request does, as a browser would for a rebound name
                try (java.net.Socket s = new java.net.Socket(server.url().getHost(), server.port())) {
                    s.getOutputStream().write(("GET /api/overview HTTP/1.1\r\nHost: rebind.evil.example:"
                            + server.port() + "\r\nConnection: close\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                    String answer = new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                    assertThat(answer).startsWith("HTTP/1.1 403").doesNotContain("\"counts\"");
                }
            }
        }
    }

    @Nested
    class StoreErrors {
        @Test
        void a_store_failure_reaches_the_api_client_as_an_error_id_without_the_drivers_text() {
            StateStore real = new InMemoryStateStore();
            StateStore failing = (StateStore) Proxy.newProxyInstance(StateStore.class.getClassLoader(),
                    new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                        if (method.getName().startsWith("count") || method.getName().equals("find")) {
                            throw new StateStoreException("org.postgresql.util.PSQLException: ERROR: relation"
                                    + " \"secret_schema.sas_task\" does not exist", null);
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            SasConsole console = SasConsole.builder().client(SasClient.builder().stateStore(failing)
                    .trustLocalClock().build()).build();

            for (String path : List.of("/api/overview", "/api/tasks/" + TaskId.random().value())) {
                ConsoleResponse r = request(console, "GET", path, null, "Host", "127.0.0.1");
                assertThat(r.status()).isEqualTo(503);
                assertThat(r.bodyText()).matches("(?s).*the state store failed \\(error [0-9a-f]{8};.*")
                        .doesNotContain("PSQLException").doesNotContain("secret_schema");
            }
        }
    }

    /** Lookups of a value with a NUL or a lone surrogate: not found, and the store is never asked to hold it. */
    abstract static class Lookups {
        abstract StateStore store();

        void nul_and_surrogate_lookups_are_not_found() {
            Shop shop = new Shop();
            try (SasRuntime runtime = SasRuntime.builder().stateStore(store()).clock(new ManualClock())
                    .instanceId("node-a").workflow(shop.orders).build()) {
                TaskHandle blocked = runtime.client().submit(shop.orders, "order-1", Shop.BLOCKED_SKU);
                Drain.untilIdle(runtime);
                assertThat(blocked.info().status()).isEqualTo(TaskStatus.ERROR);
                SasConsole console = SasConsole.builder().client(runtime.client()).actionToken(TOKEN).build();
                String id = blocked.id().value();

                for (String bad : List.of("%00", id.substring(0, 8) + "%00", "%ED%A0%80x")) {
                    ConsoleResponse task = request(console, "GET", "/api/tasks/" + bad, null, "Host", "127.0.0.1");
                    assertThat(task.status()).as(task.bodyText()).isEqualTo(404);
                    ConsoleResponse cancel = request(console, "POST", "/api/tasks/" + bad + "/cancel", null, "Host",
                            "127.0.0.1", SasConsole.TOKEN_HEADER, TOKEN);
                    assertThat(cancel.status()).as(cancel.bodyText()).isEqualTo(404);
                    ConsoleResponse search = request(console, "GET", "/api/search", "q=" + bad + "&workflow=orders",
                            "Host", "127.0.0.1");
                    assertThat(search.status()).as(search.bodyText()).isEqualTo(200);
                    assertThat(search.bodyText()).contains("\"tasks\":[]");
                    ConsoleResponse list = request(console, "GET", "/api/tasks", "workflow=orders" + bad,
                            "Host", "127.0.0.1");
                    assertThat(list.status()).as(list.bodyText()).isEqualTo(200);
                    ConsoleResponse resubmitAll = request(console, "POST", "/api/workflows/orders" + bad
                            + "/resubmit-errors", null, "Host", "127.0.0.1", SasConsole.TOKEN_HEADER, TOKEN);
                    assertThat(resubmitAll.status()).as(resubmitAll.bodyText()).isEqualTo(200);
                }
                SasClient client = runtime.client();
                assertThat(client.find(TaskId.of(id + "\0"))).isEmpty();
                assertThat(client.find("orders", "order-1\0")).isEmpty();
                assertThat(client.events(TaskId.of("\uD800"))).isEmpty();
                assertThatThrownBy(() -> client.operations().resubmit(TaskId.of("a\0"))).isInstanceOf(TaskNotFoundException.class);
                assertThat(blocked.info().status()).as("nothing was resubmitted").isEqualTo(TaskStatus.ERROR);
            }
        }
    }

    @Nested
    class OnH2 extends Lookups {
        private final JdbcStateStore store = JdbcStateStore.builder()
                .url("jdbc:h2:mem:console-nul-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1").build();

        @Override
        StateStore store() {
            return store;
        }

        @Test
        void nul_and_surrogate_lookups_are_not_found_on_h2() {
            try (store) {
                nul_and_surrogate_lookups_are_not_found();
            }
        }
    }

    @Nested
    @EnabledIfEnvironmentVariable(named = "SAS_TEST_POSTGRES_URL", matches = ".+")
    class OnPostgres extends Lookups {
        private final String url = System.getenv("SAS_TEST_POSTGRES_URL");
        private final String prefix = "c" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
        private JdbcStateStore store;

        @Override
        StateStore store() {
            return store;
        }

        @Test
        void nul_and_surrogate_lookups_are_not_found_on_postgres() throws Exception {
            store = JdbcStateStore.builder().url(url).tablePrefix(prefix).maxPoolSize(4).build();
            try (JdbcStateStore closed = store) {
                nul_and_surrogate_lookups_are_not_found();
            } finally {
                drop();
            }
        }

        /** Drops every table and function of this case's prefix. */
        private void drop() throws Exception {
            try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
                List<String> tables = new ArrayList<>();
                try (ResultSet rs = st.executeQuery("SELECT table_name FROM information_schema.tables"
                        + " WHERE table_schema = current_schema() AND table_name LIKE '" + prefix + "%'")) {
                    while (rs.next()) {
                        tables.add(rs.getString(1).toLowerCase(Locale.ROOT));
                    }
                }
                for (String t : tables) {
                    st.execute("DROP TABLE IF EXISTS " + t + " CASCADE");
                }
                // and the trigger functions the schema creates with the prefix (notify_due, ...)
                List<String> functions = new ArrayList<>();
                try (ResultSet rs = st.executeQuery("SELECT p.proname FROM pg_proc p JOIN pg_namespace n"
                        + " ON n.oid = p.pronamespace WHERE n.nspname = current_schema() AND p.proname LIKE '"
                        + prefix + "%'")) {
                    while (rs.next()) {
                        functions.add(rs.getString(1));
                    }
                }
                for (String f : functions) {
                    st.execute("DROP FUNCTION IF EXISTS " + f + "() CASCADE");
                }
            }
        }
    }
}
