package dev.sas.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The console's page and API, driven through {@link SasConsole#handle} over an in-memory store. */
class SasConsoleTest {

    private static final String TOKEN = "s3cret-operator-token-0123456789";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Shop shop = new Shop();
    private final InMemoryStateStore store = new InMemoryStateStore();
    private SasRuntime runtime;
    private SasClient client;
    private TaskHandle blocked;
    private final List<TaskHandle> processed = new ArrayList<>();

    @BeforeEach
    void tasks() {
        runtime = SasRuntime.builder().stateStore(store).clock(new ManualClock()).instanceId("node-a")
                .workflow(shop.orders).workflow(shop.refunds).build();
        client = runtime.client();
        for (int i = 1; i <= 4; i++) {
            processed.add(client.submit(shop.orders, "order-" + i, "sku-" + i));
        }
        blocked = client.submit(shop.orders, "order-5", Shop.BLOCKED_SKU);
        client.submit(shop.refunds, "refund-1", "order-1");
        Drain.untilIdle(runtime);
        assertThat(blocked.info().status()).isEqualTo(TaskStatus.ERROR);
    }

    private SasConsole console(boolean actions) {
        SasConsole.Builder b = SasConsole.builder().client(client).title("Shop");
        return (actions ? b.actionToken(TOKEN) : b).build();
    }

    private static ConsoleResponse get(SasConsole console, String pathAndQuery) {
        int q = pathAndQuery.indexOf('?');
        return console.handle(ConsoleRequest.of("GET", q < 0 ? pathAndQuery : pathAndQuery.substring(0, q),
                q < 0 ? null : pathAndQuery.substring(q + 1), Map.of("Host", "127.0.0.1:8089")));
    }

    private static ConsoleResponse post(SasConsole console, String path, Map<String, String> headers) {
        Map<String, String> h = new HashMap<>(headers);
        h.putIfAbsent("Host", "127.0.0.1:8089");
        return console.handle(new ConsoleRequest("POST", path, null, h, "10.1.2.3"));
    }

    private static Map<String, String> withToken(String token) {
        return Map.of(SasConsole.TOKEN_HEADER, token, "Origin", "http://127.0.0.1:8089", "Sec-Fetch-Site",
                "same-origin");
    }

    private static JsonNode json(ConsoleResponse r) throws Exception {
        assertThat(r.header("Content-Type")).startsWith("application/json");
        return JSON.readTree(r.bodyText());
    }

    @Nested
    class Reading {

        @Test
        void overview_counts_tasks_per_state_and_per_workflow_and_state() throws Exception {
            JsonNode o = json(get(console(false), "/api/overview"));

            assertThat(o.get("total").asLong()).isEqualTo(6);
            assertThat(o.get("counts").get("PROCESSED").asLong()).isEqualTo(5);
            assertThat(o.get("counts").get("ERROR").asLong()).isEqualTo(1);
            assertThat(o.get("workflows")).extracting(w -> w.get("name").asText()).containsExactly("orders", "refunds");
            JsonNode orders = o.get("workflows").get(0);
            assertThat(orders.get("counts").get("ERROR").asLong()).isEqualTo(1);
            assertThat(orders.get("counts").get("PROCESSED").asLong()).isEqualTo(4);
            assertThat(orders.get("counts").get("PENDING").asLong()).as("every state present").isZero();
            assertThat(orders.get("total").asLong()).isEqualTo(5);
        }

        @Test
        void lists_tasks_by_state_and_workflow_and_pages_with_a_cursor() throws Exception {
            SasConsole console = console(false);
            JsonNode errors = json(get(console, "/api/tasks?status=ERROR"));
            assertThat(errors.get("tasks")).extracting(t -> t.get("businessKey").asText()).containsExactly("order-5");
            assertThat(errors.get("tasks").get(0).get("lastError").asText()).contains("SKU is blocked");
            assertThat(errors.get("next").isNull()).isTrue();

            JsonNode first = json(get(console, "/api/tasks?workflow=orders&limit=3"));
            assertThat(first.get("tasks")).hasSize(3);
            JsonNode next = first.get("next");
            JsonNode second = json(get(console, "/api/tasks?workflow=orders&limit=3&afterCreatedAt="
                    + next.get("afterCreatedAt").asText() + "&afterId=" + next.get("afterId").asText()));
            assertThat(second.get("tasks")).hasSize(2);
            assertThat(second.get("next").isNull()).isTrue();
            List<String> keys = new ArrayList<>();
            first.get("tasks").forEach(t -> keys.add(t.get("businessKey").asText()));
            second.get("tasks").forEach(t -> keys.add(t.get("businessKey").asText()));
            assertThat(keys).containsExactlyInAnyOrder("order-1", "order-2", "order-3", "order-4", "order-5");
        }

        @Test
        void finds_a_task_by_business_key_in_every_workflow_or_by_its_id() throws Exception {
            SasConsole console = console(false);
            assertThat(json(get(console, "/api/search?q=refund-1")).get("tasks"))
                    .extracting(t -> t.get("workflow").asText()).containsExactly("refunds");
            assertThat(json(get(console, "/api/search?q=order-5&workflow=refunds")).get("tasks")).isEmpty();
            assertThat(json(get(console, "/api/search?q=" + blocked.id().value())).get("tasks"))
                    .extracting(t -> t.get("businessKey").asText()).containsExactly("order-5");
            assertThat(json(get(console, "/api/search?q=nothing-like-it")).get("tasks")).isEmpty();
            assertThat(get(console, "/api/search").status()).isEqualTo(400);
        }

        @Test
        void a_task_shows_a_skipped_step_and_until_when_its_timer_waits() throws Exception {
            dev.sas.core.Workflow<String> shapes = dev.sas.core.Workflow.builder("shapes", dev.sas.core.Codec.string())
                    .step("charge", s -> s.when(ctx -> false).execute(ctx -> "charged"))
                    .timer("remind-after", t -> t.waitFor(java.time.Duration.ofDays(2)))
                    .step("remind", s -> s.execute(ctx -> "reminded"))
                    .build();
            ManualClock clock = new ManualClock();
            TaskHandle task;
            try (SasRuntime other = SasRuntime.builder().stateStore(store).clock(clock).instanceId("node-b")
                    .workflow(shapes).build()) {
                task = other.client().submit(shapes, "shape-1", "x");
                Drain.untilIdle(other);
            }
            String firesAt = clock.instant().plus(java.time.Duration.ofDays(2)).toString();

            JsonNode t = json(get(console(false), "/api/tasks/" + task.id().value()));

            assertThat(t.get("status").asText()).isEqualTo("WAITING");
            assertThat(t.get("steps")).as("the steps recorded (the console's client does not know the workflow)")
                    .extracting(st -> st.get("status").asText()).containsExactly("SKIPPED", "WAITING");
            assertThat(t.get("nextAttemptAt").asText()).isEqualTo(firesAt);
            assertThat(t.get("lastError").asText()).isEqualTo("waiting for timer 'remind-after' until " + firesAt);
            assertThat(t.get("events")).extracting(e -> e.get("type").asText())
                    .contains("STEP_SKIPPED", "TIMER_STARTED");
            assertThat(get(console(false), "/console.js").bodyText()).contains("Timer fires (UTC)");
        }

        @Test
        void a_parent_task_lists_its_child_tasks_and_a_child_links_back_to_its_parent() throws Exception {
            dev.sas.core.Workflow<String> shipping = dev.sas.core.Workflow.builder("shipping", dev.sas.core.Codec.string())
                    .step("pack", s -> s.execute(ctx -> "packed " + ctx.input()))
                    .build();
            dev.sas.core.Workflow<String> parent = dev.sas.core.Workflow.builder("parcels", dev.sas.core.Codec.string())
                    .step("ship", s -> s.childTask(shipping, ctx -> ctx.input()))
                    .build();
            TaskHandle task;
            try (SasRuntime other = SasRuntime.builder().stateStore(store).clock(new ManualClock()).instanceId("node-b")
                    .workflow(shipping).workflow(parent).build()) {
                task = other.client().submit(parent, "parcel-1", "box");
                Drain.untilIdle(other);
                Drain.supervisorOnce(other);
                Drain.untilIdle(other);
            }
            assertThat(task.info().status()).isEqualTo(TaskStatus.PROCESSED);

            JsonNode t = json(get(console(false), "/api/tasks/" + task.id().value()));
            assertThat(t.get("children")).hasSize(1);
            JsonNode child = t.get("children").get(0);
            assertThat(child.get("step").asText()).isEqualTo("ship");
            assertThat(child.get("workflow").asText()).isEqualTo("shipping");
            assertThat(child.get("status").asText()).isEqualTo("PROCESSED");

            JsonNode c = json(get(console(false), "/api/tasks/" + child.get("id").asText()));
            assertThat(c.get("parent").get("id").asText()).isEqualTo(task.id().value());
            assertThat(c.get("parent").get("step").asText()).isEqualTo("ship");
            assertThat(c.get("children")).isEmpty();
            assertThat(get(console(false), "/console.js").bodyText()).as("the task page renders both")
                    .contains("'Branches and child tasks'").contains("'Child task of'");
        }

        @Test
        void a_task_shows_its_steps_errors_and_timeline_with_who_recorded_each_event() throws Exception {
            JsonNode t = json(get(console(true), "/api/tasks/" + blocked.id().value()));

            assertThat(t.get("status").asText()).isEqualTo("ERROR");
            assertThat(t.get("lastError").asText()).contains("SKU is blocked");
            assertThat(t.get("steps")).extracting(s -> s.get("name").asText()).containsExactly("reserve", "charge", "ship");
            assertThat(t.get("steps").get(0).get("status").asText()).isEqualTo("FAILED");
            assertThat(t.get("steps").get(0).get("error").asText()).contains("SKU is blocked");
            assertThat(t.get("steps").get(1).get("status").asText()).isEqualTo("PENDING");
            assertThat(t.get("events")).extracting(e -> e.get("type").asText())
                    .startsWith("RECEIVED", "STEP_STARTED").contains("STEP_FAILED", "ERROR");
            assertThat(t.get("events").get(0).get("by").asText()).isEqualTo("client");
            assertThat(t.get("events").get(1).get("by").asText()).isEqualTo("runtime");
            assertThat(t.get("can").get("resubmit").asBoolean()).isTrue();
            assertThat(t.get("can").get("cancel").asBoolean()).isTrue();
        }

        @Test
        void step_outputs_are_hidden_unless_the_host_allows_payloads() throws Exception {
            String path = "/api/tasks/" + processed.get(0).id().value();
            JsonNode hidden = json(get(console(false), path));
            assertThat(hidden.get("steps").get(1).has("output")).isFalse();
            assertThat(hidden.get("steps").get(1).get("outputHidden").asBoolean()).isTrue();
            assertThat(get(console(false), path).bodyText()).doesNotContain("payment").doesNotContain("reservation-");

            SasConsole showing = SasConsole.builder().client(client).showPayloads(true).build();
            ConsoleResponse shown = get(showing, path);
            assertThat(json(shown).get("steps").get(1).get("output").asText()).isEqualTo("payment <b>42</b>");
            assertThat(shown.bodyText()).as("markup is escaped in JSON").contains("payment \\u003cb\\u003e42");
            assertThat(json(get(showing, "/api/info")).get("payloads").asBoolean()).isTrue();
        }

        @Test
        void unknown_tasks_and_paths_and_bad_parameters_get_clear_errors() throws Exception {
            SasConsole console = console(false);
            ConsoleResponse missing = get(console, "/api/tasks/" + TaskId.random().value());
            assertThat(missing.status()).isEqualTo(404);
            assertThat(json(missing).get("error").asText()).contains("does not exist");
            assertThat(get(console, "/api/nothing").status()).isEqualTo(404);
            assertThat(json(get(console, "/api/tasks?status=DONE")).get("error").asText()).contains("status must be one of");
            assertThat(get(console, "/api/tasks?limit=0").status()).isEqualTo(400);
            assertThat(get(console, "/api/tasks?limit=x").status()).isEqualTo(400);
            assertThat(get(console, "/nope.html").status()).isEqualTo(404);
        }

        @Test
        void the_page_and_its_files_come_from_the_jar_with_security_headers() {
            SasConsole console = console(false);
            ConsoleResponse page = get(console, "/");
            assertThat(page.status()).isEqualTo(200);
            assertThat(page.header("Content-Type")).startsWith("text/html");
            assertThat(page.bodyText()).contains("<script src=\"console.js\"");
            assertThat(page.header("Content-Security-Policy")).contains("script-src 'self'").contains("frame-ancestors 'none'");
            assertThat(page.header("X-Frame-Options")).isEqualTo("DENY");
            assertThat(page.header("X-Content-Type-Options")).isEqualTo("nosniff");
            assertThat(get(console, "/console.js").bodyText()).contains("textContent");
            assertThat(get(console, "/console.css").header("Content-Type")).startsWith("text/css");
            assertThat(get(console, "/api/info").header("Cache-Control")).isEqualTo("no-store");
        }

        @Test
        void info_tells_the_page_whether_actions_are_possible() throws Exception {
            assertThat(json(get(console(false), "/api/info")).get("actions").asBoolean()).isFalse();
            JsonNode info = json(get(console(true), "/api/info"));
            assertThat(info.get("actions").asBoolean()).isTrue();
            assertThat(info.get("title").asText()).isEqualTo("Shop");
            assertThat(info.toString()).doesNotContain(TOKEN);
        }
    }

    @Nested
    class Acting {

        private String resubmitPath() {
            return "/api/tasks/" + blocked.id().value() + "/resubmit";
        }

        @Test
        void resubmit_with_the_token_from_the_consoles_own_origin_runs_the_task_again() throws Exception {
            shop.blocked.set(false);
            ConsoleResponse r = post(console(true), resubmitPath(), withToken(TOKEN));

            assertThat(r.status()).isEqualTo(200);
            assertThat(json(r).get("status").asText()).isEqualTo("PENDING");
            Drain.untilIdle(runtime);
            assertThat(blocked.info().status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(client.events(blocked.id())).extracting(TaskEvent::type).contains(TaskEvent.Type.RESUBMITTED);
        }

        @Test
        void a_read_only_console_refuses_every_action() throws Exception {
            ConsoleResponse r = post(console(false), resubmitPath(), withToken(TOKEN));

            assertThat(r.status()).isEqualTo(403);
            assertThat(json(r).get("error").asText()).contains("read-only");
            assertThat(blocked.info().status()).isEqualTo(TaskStatus.ERROR);
            assertThat(json(get(console(false), "/api/tasks/" + blocked.id().value())).get("can").get("resubmit")
                    .asBoolean()).isFalse();
        }

        @Test
        void an_action_without_the_token_or_with_a_wrong_one_is_refused() throws Exception {
            SasConsole console = console(true);
            ConsoleResponse none = post(console, resubmitPath(), Map.of("Origin", "http://127.0.0.1:8089"));
            ConsoleResponse wrong = post(console, resubmitPath(), withToken(TOKEN + "x"));
            ConsoleResponse prefix = post(console, resubmitPath(), withToken(TOKEN.substring(0, 20)));

            assertThat(none.status()).isEqualTo(403);
            assertThat(json(none).get("error").asText()).contains("needs the operator token");
            assertThat(wrong.status()).isEqualTo(403);
            assertThat(json(wrong).get("error").asText()).contains("token is wrong");
            assertThat(prefix.status()).isEqualTo(403);
            assertThat(blocked.info().status()).isEqualTo(TaskStatus.ERROR);
            assertThat(client.events(blocked.id())).extracting(TaskEvent::type).doesNotContain(TaskEvent.Type.RESUBMITTED);
        }

        @Test
        void an_action_from_another_origin_is_refused_even_with_the_token() throws Exception {
            SasConsole console = console(true);
            ConsoleResponse otherOrigin = post(console, resubmitPath(), Map.of(SasConsole.TOKEN_HEADER, TOKEN,
                    "Origin", "https://evil.example"));
            ConsoleResponse otherPort = post(console, resubmitPath(), Map.of(SasConsole.TOKEN_HEADER, TOKEN,
                    "Origin", "http://127.0.0.1:9999"));
            ConsoleResponse crossSite = post(console, resubmitPath(), Map.of(SasConsole.TOKEN_HEADER, TOKEN,
                    "Sec-Fetch-Site", "cross-site"));
            ConsoleResponse nullOrigin = post(console, resubmitPath(), Map.of(SasConsole.TOKEN_HEADER, TOKEN,
                    "Origin", "null"));

            assertThat(List.of(otherOrigin, otherPort, crossSite, nullOrigin)).extracting(ConsoleResponse::status)
                    .containsOnly(403);
            assertThat(json(otherOrigin).get("error").asText()).contains("https://evil.example");
            assertThat(blocked.info().status()).isEqualTo(TaskStatus.ERROR);

            SasConsole behindProxy = SasConsole.builder().client(client).actionToken(TOKEN)
                    .allowedOrigin("https://ops.example.com").build();
            shop.blocked.set(false);
            assertThat(post(behindProxy, resubmitPath(), Map.of(SasConsole.TOKEN_HEADER, TOKEN, "Origin",
                    "https://ops.example.com", "Host", "10.0.0.5:8089")).status()).isEqualTo(200);
        }

        @Test
        void the_same_origin_behind_a_tls_proxy_that_keeps_the_host_may_act() {
            shop.blocked.set(false);
            SasConsole console = SasConsole.builder().client(client).actionToken(TOKEN).allowedHost("ops.example.com")
                    .build();
            ConsoleResponse r = post(console, resubmitPath(), Map.of(SasConsole.TOKEN_HEADER, TOKEN, "Origin",
                    "https://ops.example.com", "Host", "OPS.example.com", "Sec-Fetch-Site", "same-origin"));
            assertThat(r.status()).as(r.bodyText()).isEqualTo(200);
        }

        @Test
        void a_client_that_sends_no_origin_such_as_a_script_may_act_with_the_token() {
            ConsoleResponse r = post(console(true), resubmitPath(), Map.of(SasConsole.TOKEN_HEADER, TOKEN));
            assertThat(r.status()).isEqualTo(200);
        }

        @Test
        void actions_need_post_and_reads_need_get() throws Exception {
            SasConsole console = console(true);
            ConsoleResponse viaGet = console.handle(ConsoleRequest.of("GET", resubmitPath(), null,
                    Map.of(SasConsole.TOKEN_HEADER, TOKEN, "Host", "localhost:8089")));
            assertThat(viaGet.status()).isEqualTo(405);
            assertThat(viaGet.header("Allow")).isEqualTo("POST");
            assertThat(blocked.info().status()).isEqualTo(TaskStatus.ERROR);
            ConsoleResponse postToRead = post(console, "/api/overview", withToken(TOKEN));
            assertThat(postToRead.status()).isEqualTo(405);
            assertThat(postToRead.header("Allow")).isEqualTo("GET, HEAD");
        }

        @Test
        void resubmitting_a_task_in_another_state_is_a_conflict_naming_the_state() throws Exception {
            ConsoleResponse r = post(console(true), "/api/tasks/" + processed.get(0).id().value() + "/resubmit",
                    withToken(TOKEN));
            assertThat(r.status()).isEqualTo(409);
            assertThat(json(r).get("error").asText()).contains("PROCESSED");
        }

        @Test
        void cancel_compensates_an_error_task_and_a_finished_one_cannot_be_cancelled() throws Exception {
            SasConsole console = console(true);
            ConsoleResponse r = post(console, "/api/tasks/" + blocked.id().value() + "/cancel", withToken(TOKEN));
            assertThat(r.status()).isEqualTo(200);
            Drain.untilIdle(runtime);
            assertThat(blocked.info().status()).isEqualTo(TaskStatus.CANCELLED);

            ConsoleResponse again = post(console, "/api/tasks/" + processed.get(0).id().value() + "/cancel",
                    withToken(TOKEN));
            assertThat(again.status()).isEqualTo(409);
            assertThat(json(again).get("error").asText()).contains("cannot be cancelled");
        }

        @Test
        void bulk_resubmit_resubmits_every_error_task_of_the_workflow() throws Exception {
            TaskHandle second = client.submit(shop.orders, "order-6", Shop.BLOCKED_SKU);
            Drain.untilIdle(runtime);
            assertThat(second.info().status()).isEqualTo(TaskStatus.ERROR);
            shop.blocked.set(false);

            ConsoleResponse r = post(console(true), "/api/workflows/" + URLEncoder.encode("orders",
                    StandardCharsets.UTF_8) + "/resubmit-errors", withToken(TOKEN));

            assertThat(r.status()).isEqualTo(200);
            assertThat(json(r).get("resubmitted").asInt()).isEqualTo(2);
            Drain.untilIdle(runtime);
            assertThat(List.of(blocked, second)).allSatisfy(h -> assertThat(h.info().status())
                    .isEqualTo(TaskStatus.PROCESSED));
            assertThat(post(console(false), "/api/workflows/orders/resubmit-errors", withToken(TOKEN)).status())
                    .isEqualTo(403);
        }
    }

    @Nested
    class Building {

        @Test
        void a_client_is_required_and_a_short_token_is_refused_naming_the_setting() {
            assertThatThrownBy(() -> SasConsole.builder().build()).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("client");
            assertThatThrownBy(() -> SasConsole.builder().actionToken("short")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("actionToken must be at least 16 characters, was 5");
            assertThatThrownBy(() -> SasConsole.builder().actionToken("with a space in it ....")).isInstanceOf(
                    IllegalArgumentException.class).hasMessageContaining("actionToken");
            assertThatThrownBy(() -> SasConsole.builder().allowedOrigin("https://x.example/path"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("allowedOrigin");
            assertThatThrownBy(() -> SasConsole.builder().title(" ")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("title");
        }

        @Test
        void the_token_is_never_in_the_config_or_its_string() {
            SasConsole console = console(true);
            assertThat(console.config().actionsEnabled()).isTrue();
            assertThat(console.config().toString()).doesNotContain(TOKEN);
            assertThat(console.toString()).doesNotContain(TOKEN);
        }
    }
}
