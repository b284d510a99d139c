package dev.sas.spring.boot.tests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskResult;
import dev.sas.core.TaskStatus;
import dev.sas.core.Tracing;
import dev.sas.spring.boot.internal.SasLifecycle;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The shop on a real web server, on whichever Spring Boot line this module builds against: on H2,
 * or on PostgreSQL when {@code SAS_TEST_POSTGRES_URL} is set (tables of this run's own prefix,
 * dropped when the context closes, after SAS has stopped).
 */
@SpringBootTest(classes = {ShopApplication.class, SasOnSpringBootTest.Cleanup.class}, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"management.endpoints.web.exposure.include=health,metrics",
                "management.endpoint.health.show-details=always", "sas.scheduler.poll-interval=200ms",
                "sas.console.enabled=true", "sas.console.token=" + SasOnSpringBootTest.CONSOLE_TOKEN})
@DirtiesContext
class SasOnSpringBootTest {

    static final String CONSOLE_TOKEN = "console-token-for-tests-0123456789";
    static final String PREFIX = "sbt" + Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36) + "_";
    static final String POSTGRES = System.getenv("SAS_TEST_POSTGRES_URL");
    static final boolean ON_POSTGRES = POSTGRES != null && POSTGRES.matches("jdbc:postgresql://(127\\.0\\.0\\.1|localhost).*");

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry r) {
        r.add("spring.datasource.url", () -> ON_POSTGRES ? POSTGRES : "jdbc:h2:mem:" + PREFIX + ";DB_CLOSE_DELAY=-1");
        r.add("sas.table-prefix", () -> PREFIX);
        r.add("shop.orders-table", () -> PREFIX + "orders");
    }

    /**
     * On PostgreSQL, drops this run's tables and trigger functions once SAS has stopped (beans are destroyed
     * after lifecycles stop). Listed in {@code classes} above: with explicit classes Spring does not look
     * for nested configuration, and the tables of every run stayed behind.
     */
    @TestConfiguration(proxyBeanMethods = false)
    static class Cleanup {
        @Bean
        DisposableBean dropTables(JdbcTemplate jdbc) {
            return () -> {
                if (!ON_POSTGRES) {
                    return;
                }
                String like = PREFIX.toLowerCase(Locale.ROOT) + "%";
                for (String t : jdbc.queryForList("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                        + " AND tablename LIKE ?", String.class, like)) {
                    jdbc.execute("DROP TABLE IF EXISTS " + t + " CASCADE");
                }
                for (String f : jdbc.queryForList("SELECT p.proname FROM pg_proc p JOIN pg_namespace n"
                        + " ON n.oid = p.pronamespace WHERE n.nspname = current_schema() AND p.proname LIKE ?",
                        String.class, like)) {
                    jdbc.execute("DROP FUNCTION IF EXISTS " + f + "() CASCADE");
                }
            };
        }
    }

    @Autowired
    ShopApplication.Orders orders;
    @Autowired
    SasClient sas;
    @Autowired
    ApplicationContext context;
    @Autowired
    Environment environment;
    @Autowired
    InMemorySpanExporter spans;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void a_submit_inside_transactional_commits_with_the_order_and_runs_through_the_agent_bean() {
        TaskId id = orders.place("o-1", false);
        assertThat(orders.exists("o-1")).isTrue();
        TaskResult result = sas.handle(id).await(Duration.ofSeconds(60));
        assertThat(result.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(result.output("charge", Codec.string())).contains("paid o-1");
        assertThat(result.output("confirm", Codec.string())).contains("confirmed o-1");
    }

    @Test
    void a_rolled_back_transaction_leaves_neither_the_order_nor_the_task() {
        assertThatThrownBy(() -> orders.place("o-2", true)).hasMessage("payment declined");
        assertThat(orders.exists("o-2")).isFalse();
        assertThat(sas.find("confirm-order", "o-2")).isEmpty();
    }

    @Test
    void actuator_health_reports_sas_up_through_this_boot_lines_indicator() throws Exception {
        String expected = SpringBootVersion.getVersion().startsWith("3.") ? "Boot3HealthIndicator" : "Boot4HealthIndicator";
        assertThat(context.getBean("sasHealthIndicator").getClass().getSimpleName()).isEqualTo(expected);
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            HttpResponse<String> health = get("/actuator/health");
            assertThat(health.statusCode()).isEqualTo(200);
            String sasComponent = component(health.body().replaceAll("\\s", ""), "sas");
            assertThat(sasComponent).contains("\"status\":\"UP\"", "\"instanceId\"", "\"lastClaim\"");
        });
    }

    @Test
    void a_sas_meter_is_served_by_actuator_metrics() throws Exception {
        sas.handle(orders.place("o-3", false)).await(Duration.ofSeconds(60));
        HttpResponse<String> meter = get("/actuator/metrics/sas.tasks.submitted");
        assertThat(meter.statusCode()).as(meter.body()).isEqualTo(200);
        Matcher value = Pattern.compile("\"value\"\\s*:\\s*([0-9.Ee+-]+)").matcher(meter.body());
        assertThat(value.find()).as(meter.body()).isTrue();
        assertThat(Double.parseDouble(value.group(1))).isGreaterThanOrEqualTo(1.0);
    }

    @Test
    void steps_continue_the_submitters_trace_in_the_applications_open_telemetry() {
        assertThat(context.getBeansOfType(Tracing.class)).as("the Tracing bean on the application's OpenTelemetry")
                .hasSize(1);
        sas.handle(orders.place("o-4", false)).await(Duration.ofSeconds(60));
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(spans.getFinishedSpanItems())
                .extracting(SpanData::getName).contains("sas.step confirm-order charge"));
        List<SpanData> finished = spans.getFinishedSpanItems();
        assertThat(finished).filteredOn(s -> s.getName().equals("sas.submit confirm-order")).isNotEmpty();
        Map<String, Long> tracesOfSteps = finished.stream().filter(s -> s.getName().startsWith("sas.step confirm-order"))
                .collect(java.util.stream.Collectors.groupingBy(SpanData::getTraceId, java.util.stream.Collectors.counting()));
        assertThat(finished).filteredOn(s -> s.getName().equals("sas.submit confirm-order"))
                .anySatisfy(submit -> assertThat(tracesOfSteps).containsKey(submit.getTraceId()));
    }

    @Test
    void the_runtime_runs_and_stops_after_the_web_server() {
        assertThat(context.getBean(SasRuntime.class).status().running()).isTrue();
        int sasPhase = context.getBean(SasLifecycle.class).getPhase();
        Map<String, SmartLifecycle> web = new java.util.HashMap<>(context.getBeansOfType(SmartLifecycle.class));
        web.values().removeIf(l -> !l.getClass().getName().contains("WebServer"));
        assertThat(web).as("the web server's lifecycles").isNotEmpty();
        // a lower phase starts earlier and stops later
        assertThat(web.values()).allSatisfy(l -> assertThat(sasPhase).isLessThan(l.getPhase()));
    }

    @Test
    void the_console_is_served_under_sas_by_the_applications_own_server() throws Exception {
        HttpResponse<String> bare = get("/sas");
        assertThat(bare.statusCode()).isEqualTo(302);
        assertThat(bare.headers().firstValue("Location")).hasValueSatisfying(l -> assertThat(l).endsWith("/sas/"));
        HttpResponse<String> page = get("/sas/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("console.js");
        HttpResponse<String> info = get("/sas/api/info");
        assertThat(info.body().replaceAll("\\s", "")).contains("\"actions\":true");
        HttpResponse<String> tasks = get("/sas/api/tasks?status=PROCESSED");
        assertThat(tasks.statusCode()).as(tasks.body()).isEqualTo(200);
    }

    @Test
    void console_actions_need_an_operator_principal_or_the_token() throws Exception {
        SubmitOptions later = SubmitOptions.builder().delay(Duration.ofHours(1)).build();
        TaskId anonymous = sas.submit(confirmOrder(), "c-anonymous", "x", later).id();
        TaskId viewer = sas.submit(confirmOrder(), "c-viewer", "x", later).id();
        TaskId byToken = sas.submit(confirmOrder(), "c-token", "x", later).id();
        TaskId byOperator = sas.submit(confirmOrder(), "c-operator", "x", later).id();

        assertThat(cancel(anonymous, null, null).statusCode()).isEqualTo(403);
        assertThat(cancel(viewer, "Authorization", basic("viewer", "viewer-secret")).statusCode()).isEqualTo(403);
        assertThat(cancel(byOperator, "Authorization", basic("ops", "wrong")).statusCode()).as("bad password")
                .isEqualTo(401);
        assertThat(cancel(byToken, "X-SAS-Console-Token", CONSOLE_TOKEN).statusCode()).isEqualTo(200);
        assertThat(cancel(byOperator, "Authorization", basic("ops", "ops-secret")).statusCode()).isEqualTo(200);

        // a task not yet due is cancelled when it comes up; the request is what the console records
        assertThat(sas.find(byToken).orElseThrow().cancelRequested()).isTrue();
        assertThat(sas.find(byOperator).orElseThrow().cancelRequested()).isTrue();
        assertThat(sas.find(anonymous).orElseThrow().cancelRequested()).isFalse();
        // the event names who acted: the signed-in principal, or the console for a token
        assertThat(sas.events(byOperator)).filteredOn(e -> e.type() == TaskEvent.Type.CANCEL_REQUESTED)
                .singleElement().extracting(TaskEvent::message).isEqualTo("by ops");
        assertThat(sas.events(byToken)).filteredOn(e -> e.type() == TaskEvent.Type.CANCEL_REQUESTED)
                .singleElement().extracting(TaskEvent::message).isEqualTo("by console");
        assertThat(sas.find(viewer).orElseThrow().cancelRequested()).isFalse();
    }

    @SuppressWarnings("unchecked")
    private dev.sas.core.Workflow<String> confirmOrder() {
        return context.getBean("confirmOrder", dev.sas.core.Workflow.class);
    }

    private static String basic(String user, String password) {
        return "Basic " + java.util.Base64.getEncoder().encodeToString((user + ":" + password)
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private HttpResponse<String> cancel(TaskId task, String header, String value) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + environment.getProperty("local.server.port") + "/sas/api/tasks/"
                + task.value() + "/cancel");
        HttpRequest.Builder post = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.noBody());
        if (header != null) {
            post.header(header, value);
        }
        return http.send(post.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The JSON object of one health component, e.g. {"status":"UP","details":{...}}, in whatever key order. */
    static String component(String health, String name) {
        int start = health.indexOf("\"" + name + "\":{");
        assertThat(start).as("component " + name + " in " + health).isNotNegative();
        int from = start + name.length() + 3;
        int depth = 0;
        for (int i = from; i < health.length(); i++) {
            char c = health.charAt(i);
            if (c == '{') {
                depth++;
            } else if (c == '}' && --depth == 0) {
                return health.substring(from, i + 1);
            }
        }
        throw new AssertionError("unbalanced JSON: " + health);
    }

    private HttpResponse<String> get(String path) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + environment.getProperty("local.server.port") + path);
        return http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
