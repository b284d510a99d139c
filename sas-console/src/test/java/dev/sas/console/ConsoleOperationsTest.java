package dev.sas.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sas.core.Agent;
import dev.sas.core.CircuitBreaker;
import dev.sas.core.Codec;
import dev.sas.core.FlowControl;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The console's operator API: search by state, workflow, creation time and error text; bulk
 * resubmit and cancel with a preview and a confirmation; who acted and why in the timeline; the
 * agents' flow control with the tasks held back. Driven through {@link SasConsole#handle}.
 */
class ConsoleOperationsTest {

    private static final String TOKEN = "s3cret-operator-token-0123456789";
    private static final String USER_HEADER = "X-Authenticated-User";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Shop shop = new Shop();
    private final ManualClock clock = new ManualClock(Instant.parse("2026-11-27T08:00:00Z"));
    private final InMemoryStateStore store = new InMemoryStateStore();
    private SasRuntime runtime;
    private SasClient client;
    private TaskHandle blocked;
    private TaskHandle blockedLater;
    private SasConsole console;

    @BeforeEach
    void tasks() {
        runtime = SasRuntime.builder().stateStore(store).clock(clock).instanceId("node-a")
                .workflow(shop.orders).workflow(shop.refunds).build();
        client = runtime.client();
        client.submit(shop.orders, "order-1", "sku-1");                 // 08:00
        clock.tick(Duration.ofMinutes(1));
        blocked = client.submit(shop.orders, "order-2", Shop.BLOCKED_SKU); // 08:01
        clock.tick(Duration.ofMinutes(59));
        client.submit(shop.orders, "order-3", "sku-3");                 // 09:00
        clock.tick(Duration.ofMinutes(1));
        blockedLater = client.submit(shop.orders, "order-4", Shop.BLOCKED_SKU); // 09:01
        clock.tick(Duration.ofMinutes(59));
        client.submit(shop.refunds, "refund-1", "order-1");             // 10:00
        Drain.untilIdle(runtime);
        assertThat(blocked.info().status()).isEqualTo(TaskStatus.ERROR);
        // the host names the operator, here from a header its authenticating proxy sets
        console = SasConsole.builder().client(client).actionToken(TOKEN).operator(r -> r.header(USER_HEADER)).build();
    }

    private ConsoleResponse get(String pathAndQuery) {
        int q = pathAndQuery.indexOf('?');
        return console.handle(ConsoleRequest.of("GET", q < 0 ? pathAndQuery : pathAndQuery.substring(0, q),
                q < 0 ? null : pathAndQuery.substring(q + 1), Map.of("Host", "127.0.0.1:8089")));
    }

    private ConsoleResponse post(String pathAndQuery, String user) {
        int q = pathAndQuery.indexOf('?');
        Map<String, String> h = new HashMap<>(Map.of("Host", "127.0.0.1:8089", SasConsole.TOKEN_HEADER, TOKEN,
                "Origin", "http://127.0.0.1:8089", "Sec-Fetch-Site", "same-origin"));
        if (user != null) {
            h.put(USER_HEADER, user);
        }
        return console.handle(new ConsoleRequest("POST", q < 0 ? pathAndQuery : pathAndQuery.substring(0, q),
                q < 0 ? null : pathAndQuery.substring(q + 1), h, "10.1.2.3"));
    }

    private static JsonNode json(ConsoleResponse r) throws Exception {
        assertThat(r.header("Content-Type")).startsWith("application/json");
        return JSON.readTree(r.bodyText());
    }

    private static List<String> keys(JsonNode tasks) {
        List<String> out = new ArrayList<>();
        tasks.forEach(t -> out.add(t.get("businessKey").asText()));
        return out;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String q(Map<String, String> params) {
        return params.entrySet().stream().map(e -> e.getKey() + "=" + enc(e.getValue())).collect(Collectors.joining("&"));
    }

    @Nested
    class Moving_a_task_to_another_version {

        private final Workflow<String> ordersV2 = Workflow.builder("orders", Codec.string()).version(2)
                .step("reserve-v2", s -> s.execute(ctx -> "v2 reservation " + ctx.input()))
                .step("ship", s -> s.execute(ctx -> "v2 shipment"))
                .movesFrom(1, m -> m.step("reserve", "reserve-v2"))
                .build();

        @BeforeEach
        void aConsoleWhoseApplicationKnowsV2() {
            SasClient withV2 = SasClient.builder().stateStore(store).clock(clock).workflow(ordersV2).build();
            console = SasConsole.builder().client(withV2).actionToken(TOKEN).operator(r -> r.header(USER_HEADER)).build();
        }

        @Test
        void moves_a_task_in_error_records_who_and_why_and_refuses_what_it_cannot_move() throws Exception {
            String id = blocked.id().value();
            assertThat(json(get("/api/tasks/" + id)).get("can").get("move").asBoolean()).isTrue();

            ConsoleResponse moved = post("/api/tasks/" + id + "/move?toVersion=2&reason=" + enc("v2 reserves elsewhere"),
                    "alice");
            assertThat(moved.status()).as(moved.bodyText()).isEqualTo(200);
            assertThat(json(moved).get("message").asText()).isEqualTo("order-2 (orders): moved to v2");
            JsonNode task = json(get("/api/tasks/" + id));
            assertThat(task.get("version").asInt()).isEqualTo(2);
            assertThat(task.get("status").asText()).isEqualTo("PENDING");
            JsonNode event = task.get("events").get(task.get("events").size() - 1);
            assertThat(event.get("type").asText()).isEqualTo("VERSION_MOVED");
            assertThat(event.get("by").asText()).isEqualTo("operator");
            assertThat(event.get("message").asText())
                    .isEqualTo("moved from v1 step 'reserve' to v2 step 'reserve-v2' by alice: v2 reserves elsewhere");

            ConsoleResponse unknown = post("/api/tasks/" + blockedLater.id().value() + "/move?toVersion=7", "alice");
            assertThat(unknown.status()).isEqualTo(409);
            assertThat(json(unknown).get("error").asText()).contains("'orders' v7 is not known to this client");
            ConsoleResponse notNumber = post("/api/tasks/" + blockedLater.id().value() + "/move?toVersion=two", "alice");
            assertThat(notNumber.status()).isEqualTo(400);
            assertThat(json(notNumber).get("error").asText()).contains("toVersion must be a number");
            ConsoleResponse again = post("/api/tasks/" + id + "/move?toVersion=2", "alice");
            assertThat(again.status()).isEqualTo(409);
            assertThat(json(again).get("error").asText()).contains("at v2 already");
        }
    }

    @Nested
    class Searching {

        @Test
        void filters_by_creation_time_state_workflow_and_error_text_like_the_cli() throws Exception {
            assertThat(keys(json(get("/api/query?createdAfter=2026-11-27T08:30:00Z")).get("tasks")))
                    .containsExactly("order-3", "order-4", "refund-1");
            assertThat(keys(json(get("/api/query?createdBefore=2026-11-27T09:00:00Z")).get("tasks")))
                    .as("createdBefore is exclusive").containsExactly("order-1", "order-2");
            assertThat(keys(json(get("/api/query?createdAfter=2026-11-27T09:00:00Z&createdBefore=2026-11-27T10:00:00Z"))
                    .get("tasks"))).as("createdAfter is inclusive, createdBefore exclusive").containsExactly("order-3", "order-4");
            assertThat(keys(json(get("/api/query?status=error")).get("tasks"))).as("a state in any case")
                    .containsExactly("order-2", "order-4");
            assertThat(keys(json(get("/api/query?error=" + enc("sku IS blocked") + "&createdAfter=2026-11-27")).get("tasks")))
                    .as("error text ignoring case; a date is its start, UTC").containsExactly("order-2", "order-4");
            assertThat(keys(json(get("/api/query?workflow=refunds")).get("tasks"))).containsExactly("refund-1");
            assertThat(json(get("/api/query?status=ERROR&createdAfter=2026-11-27T08:30:00Z")).get("filter").asText())
                    .isEqualTo("state ERROR, created at or after 2026-11-27T08:30:00Z");
        }

        @Test
        void pages_with_a_cursor_through_the_filtered_tasks() throws Exception {
            JsonNode first = json(get("/api/query?workflow=orders&limit=3"));
            assertThat(keys(first.get("tasks"))).containsExactly("order-1", "order-2", "order-3");
            JsonNode next = first.get("next");
            JsonNode second = json(get("/api/query?workflow=orders&limit=3&afterCreatedAt="
                    + next.get("afterCreatedAt").asText() + "&afterId=" + next.get("afterId").asText()));
            assertThat(keys(second.get("tasks"))).containsExactly("order-4");
            assertThat(second.get("next").isNull()).isTrue();
        }

        @Test
        void bad_filters_are_refused_naming_the_parameter() throws Exception {
            ConsoleResponse time = get("/api/query?createdAfter=yesterday");
            assertThat(time.status()).isEqualTo(400);
            assertThat(json(time).get("error").asText()).contains("createdAfter").contains("2026-11-27T08:00:00Z");
            ConsoleResponse order = get("/api/query?createdAfter=2026-11-28&createdBefore=2026-11-27");
            assertThat(order.status()).isEqualTo(400);
            assertThat(json(order).get("error").asText()).contains("must be before createdBefore");
            assertThat(json(get("/api/query?status=DONE")).get("error").asText()).contains("status must be one of");
        }
    }

    @Nested
    class Bulk {

        private final Map<String, String> errors = Map.of("status", "ERROR", "workflow", "orders");

        private JsonNode preview(String action, Map<String, String> filters) throws Exception {
            ConsoleResponse r = get("/api/bulk?action=" + action + "&" + q(filters));
            assertThat(r.status()).isEqualTo(200);
            return json(r);
        }

        private String confirmed(JsonNode preview, Map<String, String> filters, String reason) {
            Map<String, String> p = new LinkedHashMap<>(filters);
            p.put("count", preview.get("count").asText());
            p.put("confirm", preview.get("confirm").asText());
            if (reason != null) {
                p.put("reason", reason);
            }
            return q(p);
        }

        @Test
        void a_preview_counts_the_matching_tasks_and_changes_nothing() throws Exception {
            JsonNode p = preview("cancel", errors);

            assertThat(p.get("matching").asInt()).isEqualTo(2);
            assertThat(p.get("tooMany").asBoolean()).isFalse();
            assertThat(p.get("confirm").asText()).isNotBlank();
            assertThat(keys(p.get("sample"))).containsExactly("order-2", "order-4");
            assertThat(p.get("message").asText()).isEqualTo("2 tasks match state ERROR, workflow orders");
            assertThat(blocked.info().cancelRequested()).isFalse();
            assertThat(blockedLater.info().cancelRequested()).isFalse();
        }

        @Test
        void a_bulk_cancel_is_refused_without_the_previews_confirmation_and_count() throws Exception {
            JsonNode p = preview("cancel", errors);

            ConsoleResponse none = post("/api/bulk/cancel?" + q(errors), "alice");
            assertThat(none.status()).isEqualTo(428);
            assertThat(json(none).get("error").asText()).contains("needs the confirm and count of its preview");

            Map<String, String> wrongCount = new LinkedHashMap<>(errors);
            wrongCount.put("count", "1");
            wrongCount.put("confirm", p.get("confirm").asText());
            ConsoleResponse count = post("/api/bulk/cancel?" + q(wrongCount), "alice");
            assertThat(count.status()).isEqualTo(409);
            assertThat(json(count).get("error").asText()).contains("changed since the preview").contains("nothing was done");

            Map<String, String> forged = new LinkedHashMap<>(errors);
            forged.put("count", "2");
            forged.put("confirm", "0123456789abcdef0123456789abcdef");
            assertThat(post("/api/bulk/cancel?" + q(forged), "alice").status()).isEqualTo(409);

            ConsoleResponse otherFilter = post("/api/bulk/cancel?" + confirmed(p, Map.of("status", "ERROR"), null),
                    "alice");
            assertThat(otherFilter.status()).as("the confirmation is for these filters only").isEqualTo(409);

            ConsoleResponse otherAction = post("/api/bulk/resubmit?" + confirmed(p, errors, null), "alice");
            assertThat(otherAction.status()).as("and for this action only").isEqualTo(409);

            assertThat(List.of(blocked, blockedLater)).allSatisfy(t -> {
                assertThat(t.info().cancelRequested()).isFalse();
                assertThat(client.events(t.id())).extracting(TaskEvent::type)
                        .doesNotContain(TaskEvent.Type.CANCEL_REQUESTED, TaskEvent.Type.RESUBMITTED);
            });
        }

        @Test
        void a_confirmed_bulk_cancel_cancels_what_was_previewed_recording_who_and_why() throws Exception {
            JsonNode p = preview("cancel", errors);

            ConsoleResponse r = post("/api/bulk/cancel?" + confirmed(p, errors, "customer withdrew the orders"), "alice");

            assertThat(r.status()).isEqualTo(200);
            JsonNode body = json(r);
            assertThat(body.get("done").asInt()).isEqualTo(2);
            assertThat(body.get("message").asText()).isEqualTo("2 of 2 tasks cancelled");
            Drain.untilIdle(runtime);
            assertThat(List.of(blocked, blockedLater)).allSatisfy(t -> {
                assertThat(t.info().status()).isEqualTo(TaskStatus.CANCELLED);
                assertThat(client.events(t.id())).filteredOn(e -> e.type() == TaskEvent.Type.CANCEL_REQUESTED)
                        .extracting(TaskEvent::message).containsExactly("by alice: customer withdrew the orders");
            });
            JsonNode event = timelineEvent(blocked, "CANCEL_REQUESTED");
            assertThat(event.get("by").asText()).isEqualTo("operator");
            assertThat(event.get("operator").asText()).isEqualTo("alice");
            assertThat(event.get("reason").asText()).isEqualTo("customer withdrew the orders");
        }

        @Test
        void a_bulk_action_is_refused_when_the_matching_tasks_changed_since_the_preview() throws Exception {
            JsonNode p = preview("resubmit", errors);
            shop.blocked.set(false);
            assertThat(post("/api/tasks/" + blocked.id().value() + "/resubmit", "bob").status()).isEqualTo(200);

            ConsoleResponse r = post("/api/bulk/resubmit?" + confirmed(p, errors, null), "alice");

            assertThat(r.status()).isEqualTo(409);
            assertThat(json(r).get("error").asText()).contains("2 then, 1 now");
            assertThat(client.events(blockedLater.id())).extracting(TaskEvent::type)
                    .doesNotContain(TaskEvent.Type.RESUBMITTED);
        }

        @Test
        void a_bulk_resubmit_is_capped_by_max_and_needs_a_filter_and_the_token() throws Exception {
            JsonNode p = preview("resubmit", Map.of("workflow", "orders", "max", "3"));
            assertThat(p.get("tooMany").asBoolean()).isTrue();
            assertThat(p.get("confirm").isNull()).isTrue();
            assertThat(p.get("message").asText()).contains("more than 3 tasks match");
            ConsoleResponse capped = post("/api/bulk/resubmit?workflow=orders&max=3&count=3&confirm=x", "alice");
            assertThat(capped.status()).isEqualTo(409);
            assertThat(json(capped).get("error").asText()).contains("more than 3");

            ConsoleResponse noFilter = get("/api/bulk?action=cancel");
            assertThat(noFilter.status()).isEqualTo(400);
            assertThat(json(noFilter).get("error").asText()).contains("needs at least one filter");
            assertThat(get("/api/bulk?action=delete&status=ERROR").status()).isEqualTo(400);
            assertThat(get("/api/bulk?action=cancel&status=ERROR&max=0").status()).isEqualTo(400);

            JsonNode ok = preview("resubmit", errors);
            ConsoleResponse noToken = console.handle(new ConsoleRequest("POST", "/api/bulk/resubmit",
                    confirmed(ok, errors, null), Map.of("Host", "127.0.0.1:8089"), null));
            assertThat(noToken.status()).isEqualTo(403);
            ConsoleResponse asGet = get("/api/bulk/resubmit?" + confirmed(ok, errors, null));
            assertThat(asGet.status()).isEqualTo(405);
            assertThat(asGet.header("Allow")).isEqualTo("POST");
            assertThat(blocked.info().status()).isEqualTo(TaskStatus.ERROR);
        }

        @Test
        void a_confirmed_bulk_resubmit_runs_the_tasks_again() throws Exception {
            shop.blocked.set(false);
            JsonNode p = preview("resubmit", errors);

            JsonNode body = json(post("/api/bulk/resubmit?" + confirmed(p, errors, "SKU unblocked"), null));

            assertThat(body.get("done").asInt()).isEqualTo(2);
            Drain.untilIdle(runtime);
            assertThat(blocked.info().status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(client.events(blockedLater.id())).filteredOn(e -> e.type() == TaskEvent.Type.RESUBMITTED)
                    .extracting(TaskEvent::message).as("no operator named by the host: 'console'")
                    .containsExactly("by console: SKU unblocked");
        }
    }

    @Nested
    class WhoAndWhy {

        @Test
        void a_single_resubmit_and_cancel_record_the_operator_and_the_reason_in_the_timeline() throws Exception {
            shop.blocked.set(false);
            assertThat(post("/api/tasks/" + blocked.id().value() + "/resubmit?reason=" + enc("warehouse unblocked it"),
                    "carol").status()).isEqualTo(200);
            assertThat(post("/api/tasks/" + blockedLater.id().value() + "/cancel", "dave").status()).isEqualTo(200);

            JsonNode resubmitted = timelineEvent(blocked, "RESUBMITTED");
            assertThat(resubmitted.get("message").asText()).isEqualTo("by carol: warehouse unblocked it");
            assertThat(resubmitted.get("operator").asText()).isEqualTo("carol");
            assertThat(resubmitted.get("reason").asText()).isEqualTo("warehouse unblocked it");
            JsonNode cancelled = timelineEvent(blockedLater, "CANCEL_REQUESTED");
            assertThat(cancelled.get("operator").asText()).isEqualTo("dave");
            assertThat(cancelled.get("reason").isNull()).isTrue();
        }

        @Test
        void a_bad_reason_is_refused_and_nothing_is_done() throws Exception {
            ConsoleResponse r = post("/api/tasks/" + blocked.id().value() + "/resubmit?reason=" + "x".repeat(501), "erin");
            assertThat(r.status()).isEqualTo(400);
            assertThat(json(r).get("error").asText()).contains("reason must be at most 500");
            assertThat(blocked.info().status()).isEqualTo(TaskStatus.ERROR);
        }

        @Test
        void resubmitting_every_error_of_a_workflow_records_the_operator_too() throws Exception {
            shop.blocked.set(false);
            JsonNode r = json(post("/api/workflows/orders/resubmit-errors?reason=fixed", "frank"));
            assertThat(r.get("resubmitted").asInt()).isEqualTo(2);
            assertThat(client.events(blockedLater.id())).filteredOn(e -> e.type() == TaskEvent.Type.RESUBMITTED)
                    .extracting(TaskEvent::message).containsExactly("by frank: fixed");
        }

        @Test
        void when_the_hosts_operator_function_fails_the_page_loads_and_actions_are_refused() throws Exception {
            console = SasConsole.builder().client(client).actionToken(TOKEN).operator(r -> {
                throw new IllegalStateException("no authentication in the security context");
            }).build();
            assertThat(json(get("/api/info")).get("operator").asText()).isEqualTo(SasConsole.DEFAULT_OPERATOR);

            ConsoleResponse r = post("/api/tasks/" + blocked.id().value() + "/cancel", null);

            assertThat(r.status()).isEqualTo(400);
            assertThat(json(r).get("error").asText()).contains("operator could not be identified");
            assertThat(blocked.info().cancelRequested()).isFalse();
        }

        @Test
        void info_names_the_operator_the_host_reports() throws Exception {
            Map<String, String> h = Map.of("Host", "127.0.0.1:8089", USER_HEADER, "grace");
            assertThat(json(console.handle(ConsoleRequest.of("GET", "/api/info", null, h))).get("operator").asText())
                    .isEqualTo("grace");
            assertThat(json(get("/api/info")).get("operator").asText()).isEqualTo(SasConsole.DEFAULT_OPERATOR);
        }
    }

    private JsonNode timelineEvent(TaskHandle task, String type) throws Exception {
        JsonNode events = json(get("/api/tasks/" + task.id().value())).get("events");
        List<JsonNode> found = new ArrayList<>();
        events.forEach(e -> {
            if (e.get("type").asText().equals(type)) {
                found.add(e);
            }
        });
        assertThat(found).as(type + " events").hasSize(1);
        return found.get(0);
    }

    @Nested
    class Agents {

        @Test
        void shows_each_endpoints_breaker_calls_and_failures_and_the_tasks_held_back() throws Exception {
            RetryPolicy retry = RetryPolicy.builder().maxAttempts(3).fixedBackoff(Duration.ofSeconds(1)).jitter(0).build();
            Agent<String, String> payments = Agent.builder("payments").retryPolicy(retry)
                    .flowControl(FlowControl.builder().circuitBreaker(CircuitBreaker.builder().consecutiveFailures(1)
                            .noFailureRate().openFor(Duration.ofMinutes(10)).build()).build())
                    .call(req -> CompletableFuture.failedFuture(new IllegalStateException("503 from payments")));
            Workflow<String> payouts = Workflow.builder("payouts", Codec.string())
                    .step("pay", s -> s.call(payments, ctx -> ctx.input()).completeWithin(Duration.ofMinutes(5)))
                    .build();
            SasRuntime node = SasRuntime.builder().stateStore(store).clock(clock).instanceId("node-b")
                    .workflow(payouts).build();
            for (int i = 1; i <= 3; i++) {
                node.client().submit(payouts, "payout-" + i, "p-" + i);
            }
            Drain.schedulerOnce(node);

            JsonNode a = json(get("/api/agents"));

            assertThat(a.get("supported").asBoolean()).isTrue();
            JsonNode agent = a.get("agents").get(0);
            assertThat(agent.get("name").asText()).isEqualTo("payments");
            JsonNode endpoint = agent.get("endpoints").get(0);
            assertThat(endpoint.get("endpoint").asText()).isEqualTo(FlowControl.DEFAULT_ENDPOINT);
            assertThat(endpoint.get("breaker").asText()).isEqualTo("OPEN");
            assertThat(Instant.parse(endpoint.get("openUntil").asText())).isEqualTo(clock.instant().plus(Duration.ofMinutes(10)));
            assertThat(Instant.parse(endpoint.get("breakerSince").asText())).isEqualTo(clock.instant());
            assertThat(endpoint.get("callsInFlight").asInt()).isZero();
            assertThat(endpoint.get("failuresInWindow").asInt()).isEqualTo(1);
            assertThat(endpoint.get("lastFailure").asText()).contains("503 from payments");
            long waiting = node.client().countByStatus().get(TaskStatus.WAITING);
            assertThat(waiting).isPositive();
            assertThat(agent.get("waiting").asLong()).isEqualTo(waiting);
            assertThat(keys(agent.get("waitingTasks"))).allMatch(k -> k.startsWith("payout-")).hasSize((int) waiting);
            assertThat(a.get("waitingUnattributed").asInt()).isZero();
        }

        @Test
        void no_agent_called_through_flow_control_shows_an_empty_list() throws Exception {
            JsonNode a = json(get("/api/agents"));
            assertThat(a.get("agents")).isEmpty();
            assertThat(a.get("waitingTotal").asInt()).isZero();
        }
    }
}
