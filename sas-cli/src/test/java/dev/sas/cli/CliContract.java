package dev.sas.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sas.core.Agent;
import dev.sas.core.Codec;
import dev.sas.core.FlowControl;
import dev.sas.core.NonRetryableException;
import dev.sas.console.ConsoleRequest;
import dev.sas.console.ConsoleResponse;
import dev.sas.console.SasConsole;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import dev.sas.testing.Drain;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The {@code sas} command against a real database: subclasses name the database. Each test class has
 * its own table prefix; before each test its tasks are made afresh by a runtime driven by hand, then
 * looked at and acted on through the command line, in this JVM.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CliContract {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The JDBC URL of the database (skips the test when it is not configured). */
    abstract String url();

    /** Drops the tables of {@code prefix}, if the database outlives the test. */
    abstract void drop(String url, String prefix);

    private final AtomicBoolean blocked = new AtomicBoolean(true);
    private final Workflow<String> orders = Workflow.builder("orders", Codec.string()).compensateOnFailure(false)
            .step("reserve", s -> s.execute(ctx -> {
                if (ctx.input().startsWith("blocked") && blocked.get()) {
                    throw new NonRetryableException("warehouse refused " + ctx.input());
                }
                return "reservation " + ctx.input();
            }))
            .step("ship", s -> s.execute(ctx -> "shipment-secret"))
            .build();
    private final Workflow<String> refunds = Workflow.builder("refunds", Codec.string())
            .step("refund", s -> s.execute(ctx -> "refunded"))
            .build();
    private final Agent<String, String> bank = Agent.<String, String>builder("bank")
            .flowControl(FlowControl.builder().maxConcurrentCalls(2).build())
            .call(request -> CompletableFuture.completedFuture("paid " + request.payload()));
    private final Workflow<String> payments = Workflow.builder("payments", Codec.string())
            .step("pay", s -> s.call(bank, ctx -> ctx.input()))
            .build();

    private String url;
    private String prefix;
    private JdbcStateStore store;
    private SasRuntime runtime;
    private TaskHandle failed;
    private TaskHandle failed2;
    private final List<TaskHandle> done = new ArrayList<>();

    @BeforeAll
    void createTables() {
        url = url();
        prefix = "cli" + letters(6) + "_";
        store = JdbcStateStore.builder().url(url).tablePrefix(prefix).maxPoolSize(4).build();
    }

    @AfterAll
    void dropTables() {
        if (store != null) {
            store.close();
            drop(url, prefix);
        }
    }

    @BeforeEach
    void tasks() throws SQLException {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            for (String table : new String[] {"event", "step", "task"}) {
                s.execute("DELETE FROM " + prefix + table);
            }
        }
        blocked.set(true);
        done.clear();
        runtime = SasRuntime.builder().stateStore(store).instanceId("node-1").workflow(orders).workflow(refunds)
                .workflow(payments).build();
        for (int i = 1; i <= 3; i++) {
            done.add(runtime.client().submit(orders, "order-" + i, "sku-" + i));
        }
        failed = runtime.client().submit(orders, "order-4", "blocked-sku");
        failed2 = runtime.client().submit(orders, "order-5", "blocked-other");
        done.add(runtime.client().submit(refunds, "refund-1", "x"));
        done.add(runtime.client().submit(payments, "payment-1", "10 EUR"));
        Drain.untilIdle(runtime);
        assertThat(failed.info().status()).isEqualTo(TaskStatus.ERROR);
    }

    /** One run of the command line. */
    record Run(int exit, String out, String err) {
        JsonNode json() throws Exception {
            return JSON.readTree(out);
        }
    }

    private Run sas(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--url", url, "--table-prefix", prefix));
        int exit = SasCli.commandLine(new PrintWriter(out, true), new PrintWriter(err, true))
                .execute(all.toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }

    @Nested
    class Same_json_as_the_console {

        private JsonNode console(boolean payloads, String path) throws Exception {
            return console(payloads, path, null);
        }

        private JsonNode console(boolean payloads, String path, String query) throws Exception {
            SasClient client = SasClient.builder().stateStore(store).build(); // what the CLI holds too
            SasConsole console = SasConsole.builder().client(client).actionToken("t0ken-for-the-json-parity-test-0123")
                    .showPayloads(payloads).build();
            ConsoleResponse r = console.handle(ConsoleRequest.of("GET", path, query, Map.of("Host", "127.0.0.1")));
            assertThat(r.status()).as(path).isEqualTo(200);
            return JSON.readTree(r.body());
        }

        @Test
        void a_task_shown_by_the_cli_and_by_the_console_is_the_same_json_document() throws Exception {
            failed.cancel(); // an operator's event without a note in the timeline
            runtime.client().operations().resubmit(failed2.id(), dev.sas.core.OperatorNote.of("alice", "fixed"));
            for (TaskHandle t : List.of(failed, failed2, done.get(0), done.get(done.size() - 1))) {
                String id = t.id().value();
                assertThat(sas("tasks", "show", id, "--json").json()).as("task %s", id)
                        .isEqualTo(console(false, "/api/tasks/" + id));
                assertThat(sas("tasks", "show", id, "--json", "--payloads").json()).as("task %s with payloads", id)
                        .isEqualTo(console(true, "/api/tasks/" + id));
            }
            JsonNode shown = console(false, "/api/tasks/" + failed2.id().value());
            assertThat(shown.get("events").findValuesAsText("operator")).contains("alice");
            JsonNode finished = console(false, "/api/tasks/" + done.get(0).id().value());
            assertThat(finished.get("steps").get(1).get("outputHidden").asBoolean()).as("ship's output").isTrue();
        }

        @Test
        void tasks_listed_by_the_cli_and_by_the_console_are_the_same_json_documents() throws Exception {
            JsonNode cli = sas("tasks", "list", "--workflow", "orders", "--json").json();
            JsonNode web = console(false, "/api/tasks", "workflow=orders").get("tasks");
            assertThat(cli).hasSize(5);
            assertThat(web).containsExactlyInAnyOrderElementsOf(cli);
        }
    }

    @Nested
    class Tasks_move {

        @Test
        void moves_a_task_in_error_to_the_version_the_workflows_class_supplies_and_it_completes_there() {
            Run r = sas("tasks", "move", failed.id().value(), "--to-version", "2", "--workflows",
                    OrdersV2.class.getName(), "--operator", "bob", "--reason", "v2 reserves elsewhere");

            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains(failed.id().value() + ": moved to v2, now PENDING at step 0");
            try (SasRuntime v2 = SasRuntime.builder().stateStore(store).instanceId("node-v2")
                    .workflow(OrdersV2.ORDERS_V2).build()) {
                Drain.untilIdle(v2);
            }
            assertThat(failed.info().status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(failed.info().workflowVersion()).isEqualTo(2);
            assertThat(sas("tasks", "show", failed.id().value()).out()).contains("VERSION_MOVED")
                    .contains("moved from v1 step 'reserve' to v2 step 'reserve-v2' by bob"); // the table cuts it
        }

        @Test
        void a_refused_move_says_why_and_exits_1_and_a_bad_workflows_class_is_a_usage_error() {
            Run finished = sas("tasks", "move", done.get(0).id().value(), "--to-version", "2", "--workflows",
                    OrdersV2.class.getName());
            assertThat(finished.exit()).isEqualTo(SasCli.REFUSED);
            assertThat(finished.err()).contains("it is PROCESSED");

            Run unknown = sas("tasks", "move", failed.id().value(), "--to-version", "3", "--workflows",
                    OrdersV2.class.getName());
            assertThat(unknown.exit()).isEqualTo(SasCli.REFUSED);
            assertThat(unknown.err()).contains("'orders' v3 is not known to this client");

            Run bad = sas("tasks", "move", failed.id().value(), "--to-version", "2", "--workflows", "no.such.Type");
            assertThat(bad.exit()).isEqualTo(2);
            assertThat(bad.err()).contains("--workflows no.such.Type");
            assertThat(failed.info().workflowVersion()).isEqualTo(1);
        }
    }

    @Nested
    class Tasks_list {

        @Test
        void shows_a_table_of_tasks_in_a_state() {
            Run r = sas("tasks", "list", "--status", "ERROR");

            assertThat(r.exit()).as(r.err()).isZero();
            List<String> lines = r.out().lines().toList();
            assertThat(lines.get(0)).startsWith("ID").contains("WORKFLOW", "BUSINESS KEY", "STATE", "LAST ERROR");
            assertThat(lines).filteredOn(l -> l.contains("ERROR") && l.contains("order-")).hasSize(2);
            assertThat(r.out()).contains(failed.id().value()).contains("warehouse refused blocked-sku")
                    .contains("2 tasks").doesNotContain("order-1");
        }

        @Test
        void prints_json_and_says_when_more_tasks_match_than_the_limit() throws Exception {
            JsonNode all = sas("tasks", "list", "--workflow", "orders", "--json").json();
            assertThat(all).hasSize(5);
            assertThat(all.get(0).get("workflow").asText()).isEqualTo("orders");
            assertThat(all).extracting(t -> t.get("status").asText()).containsOnly("PROCESSED", "ERROR");

            Run limited = sas("tasks", "list", "--limit", "2");
            assertThat(limited.out()).contains("2 tasks (more match: raise --limit)");
            assertThat(sas("tasks", "list", "--limit", "0").exit()).isEqualTo(2);
            assertThat(sas("tasks", "list", "--status", "DONE").exit()).isEqualTo(2);
        }

        @Test
        void takes_enum_values_in_any_case() {
            Run r = sas("tasks", "list", "--status", "error");
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains(failed.id().value()).contains("2 tasks");
        }

        @Test
        void filters_by_creation_time_and_error_text() throws Exception {
            JsonNode byError = sas("tasks", "list", "--error-contains", "WAREHOUSE REFUSED BLOCKED-SKU", "--json").json();
            assertThat(byError).extracting(t -> t.get("id").asText()).containsExactly(failed.id().value());

            assertThat(sas("tasks", "list", "--created-after", "2999-01-01", "--json").json()).isEmpty();
            assertThat(sas("tasks", "list", "--created-before", "2000-01-01T00:00:00Z", "--json").json()).isEmpty();
            assertThat(sas("tasks", "list", "--created-after", "2000-01-01", "--created-before", "2999-01-01",
                    "--json").json()).hasSize(7);
            Run bad = sas("tasks", "list", "--created-after", "yesterday");
            assertThat(bad.exit()).isEqualTo(2);
            assertThat(bad.err()).contains("'yesterday' is not a time");
        }
    }

    @Nested
    class Tasks_show {

        @Test
        void shows_state_steps_and_events_with_outputs_hidden_unless_asked() throws Exception {
            Run r = sas("tasks", "show", done.get(0).id().value());

            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains("state:        PROCESSED").contains("order-1")
                    .contains("reserve").contains("ship").contains("(hidden)").contains("STEP_COMPLETED")
                    .doesNotContain("shipment-secret");
            assertThat(sas("tasks", "show", done.get(0).id().value(), "--payloads").out()).contains("shipment-secret");

            JsonNode json = sas("tasks", "show", failed.id().value(), "--json").json();
            assertThat(json.get("status").asText()).isEqualTo("ERROR");
            assertThat(json.get("steps").get(0).get("error").asText()).contains("warehouse refused");
            assertThat(json.get("events")).extracting(e -> e.get("type").asText()).contains("RECEIVED", "ERROR");
        }

        @Test
        void shows_a_tasks_child_tasks_and_a_child_tasks_parent() throws Exception {
            Workflow<String> parcels = Workflow.builder("parcels", Codec.string())
                    .step("pack", s -> s.execute(ctx -> "packed " + ctx.input())).build();
            Workflow<String> parcelOrders = Workflow.builder("parcel-orders", Codec.string())
                    .step("ship", s -> s.childTask(parcels, ctx -> ctx.input())).build();
            try (SasRuntime other = SasRuntime.builder().stateStore(store).instanceId("node-2").workflow(parcels)
                    .workflow(parcelOrders).build()) {
                TaskHandle parent = other.client().submit(parcelOrders, "parcel-order-1", "a box");
                Drain.untilIdle(other);
                Drain.supervisorOnce(other);
                Drain.untilIdle(other);
                assertThat(parent.info().status()).isEqualTo(TaskStatus.PROCESSED);

                JsonNode json = sas("tasks", "show", parent.id().value(), "--json").json();
                assertThat(json.get("parent").isNull()).isTrue();
                assertThat(json.get("children")).hasSize(1);
                JsonNode child = json.get("children").get(0);
                assertThat(child.get("step").asText()).isEqualTo("ship");
                assertThat(child.get("workflow").asText()).isEqualTo("parcels");
                assertThat(child.get("status").asText()).isEqualTo("PROCESSED");
                String childId = child.get("id").asText();
                JsonNode childJson = sas("tasks", "show", childId, "--json").json();
                assertThat(childJson.get("parent").get("id").asText()).isEqualTo(parent.id().value());
                assertThat(childJson.get("parent").get("step").asText()).isEqualTo("ship");
                assertThat(sas("tasks", "show", parent.id().value()).out()).contains("child ship:").contains(childId);
                assertThat(sas("tasks", "show", childId).out()).contains("parent:").contains(parent.id().value());
            }
        }

        @Test
        void shows_a_parallel_steps_branches() throws Exception {
            Workflow<String> both = Workflow.builder("both-ways", Codec.string())
                    .parallel("fork", p -> p.branch("left", b -> b.step("l", s -> s.execute(ctx -> "left")))
                            .branch("right", b -> b.step("r", s -> s.execute(ctx -> "right"))))
                    .build();
            try (SasRuntime other = SasRuntime.builder().stateStore(store).instanceId("node-3").workflow(both).build()) {
                TaskHandle task = other.client().submit(both, "both-1", "x");
                Drain.untilIdle(other);
                Drain.supervisorOnce(other);
                Drain.untilIdle(other);
                assertThat(task.info().status()).isEqualTo(TaskStatus.PROCESSED);

                JsonNode json = sas("tasks", "show", task.id().value(), "--json").json();
                assertThat(json.get("children")).extracting(c -> c.get("branch").asText()).containsExactly("left", "right");
                assertThat(json.get("children")).extracting(c -> c.get("status").asText()).containsOnly("PROCESSED");
                assertThat(sas("tasks", "show", task.id().value()).out()).contains("child fork/left:")
                        .contains("child fork/right:").contains("both-ways.fork.right");
            }
        }

        @Test
        void shows_a_skipped_step_and_until_when_a_timer_waits() {
            Workflow<String> shapes = Workflow.builder("shapes", Codec.string())
                    .step("charge", s -> s.when(ctx -> false).execute(ctx -> "charged"))
                    .timer("remind-after", t -> t.waitFor(java.time.Duration.ofDays(2)))
                    .step("remind", s -> s.execute(ctx -> "reminded"))
                    .build();
            TaskHandle task;
            try (SasRuntime other = SasRuntime.builder().stateStore(store).instanceId("node-2").workflow(shapes).build()) {
                task = other.client().submit(shapes, "shape-1", "x");
                Drain.untilIdle(other);
            }
            assertThat(task.info().status()).isEqualTo(TaskStatus.WAITING);
            String firesAt = task.info().nextAttemptAt().toString();

            Run r = sas("tasks", "show", task.id().value());

            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains("state:        WAITING").contains("SKIPPED").contains("STEP_SKIPPED")
                    .contains("TIMER_STARTED").contains("timer fires:").contains("until " + firesAt)
                    .contains("last error:   waiting for timer 'remind-after' until " + firesAt);
        }

        @Test
        void finds_a_task_by_business_key_and_says_when_there_is_none() {
            assertThat(sas("tasks", "show", "--key", "order-4", "--workflow", "orders").out())
                    .contains(failed.id().value());
            Run missing = sas("tasks", "show", "no-such-task");
            assertThat(missing.exit()).isEqualTo(1);
            assertThat(missing.err()).contains("no task no-such-task");
            assertThat(sas("tasks", "show", "--key", "order-4").exit()).as("--key needs --workflow").isEqualTo(2);
        }

        @Test
        void with_json_errors_are_json_documents_too() throws Exception {
            Run missing = sas("tasks", "show", "no-such-task", "--json");
            assertThat(missing.exit()).isEqualTo(1);
            assertThat(missing.json().get("error").asText()).contains("no task no-such-task");
            assertThat(missing.json().get("exitCode").asInt()).isEqualTo(1);

            Run usage = sas("tasks", "list", "--limit", "0", "--json");
            assertThat(usage.exit()).isEqualTo(2);
            assertThat(usage.json().get("error").asText()).contains("--limit");
            assertThat(usage.json().get("exitCode").asInt()).isEqualTo(2);
        }
    }

    @Nested
    class Tasks_result {

        @Test
        void prints_the_outputs_of_a_processed_task_and_exits_1_for_one_that_failed() throws Exception {
            Run r = sas("tasks", "result", done.get(0).id().value());
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains("state: PROCESSED").contains("reserve: reservation sku-1")
                    .contains("ship: shipment-secret");

            JsonNode json = sas("tasks", "result", done.get(0).id().value(), "--json").json();
            assertThat(json.get("outputs").get("ship").asText()).isEqualTo("shipment-secret");
            assertThat(json.get("finished").asBoolean()).isTrue();

            Run error = sas("tasks", "result", failed.id().value());
            assertThat(error.exit()).isEqualTo(1);
            assertThat(error.out()).contains("state: ERROR").contains("warehouse refused");
        }
    }

    @Nested
    class Actions {

        @Test
        void resubmit_runs_an_error_task_again_and_refuses_one_in_another_state() {
            blocked.set(false);
            Run r = sas("tasks", "resubmit", failed.id().value());

            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains("resubmitted, now PENDING");
            Drain.untilIdle(runtime);
            assertThat(failed.info().status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(runtime.client().events(failed.id())).extracting(TaskEvent::type)
                    .contains(TaskEvent.Type.RESUBMITTED);

            Run again = sas("tasks", "resubmit", failed.id().value());
            assertThat(again.exit()).isEqualTo(1);
            assertThat(again.err()).contains("not resubmitted").contains("PROCESSED");
        }

        @Test
        void resubmit_all_errors_of_a_workflow() throws Exception {
            blocked.set(false);
            JsonNode r = sas("tasks", "resubmit", "--all-errors", "--workflow", "orders", "--json").json();

            assertThat(r.get("resubmitted").asInt()).isEqualTo(2);
            Drain.untilIdle(runtime);
            assertThat(List.of(failed, failed2)).allSatisfy(h -> assertThat(h.info().status())
                    .isEqualTo(TaskStatus.PROCESSED));
            assertThat(sas("tasks", "resubmit", "--all-errors").exit()).as("needs --workflow").isEqualTo(2);
        }

        @Test
        void cancel_compensates_an_error_task_and_refuses_a_finished_one() throws Exception {
            Run r = sas("tasks", "cancel", failed.id().value());
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains("cancel requested");
            Drain.untilIdle(runtime);
            assertThat(failed.info().status()).isEqualTo(TaskStatus.CANCELLED);

            Run finished = sas("tasks", "cancel", done.get(0).id().value(), "--json");
            assertThat(finished.exit()).isEqualTo(1);
            assertThat(finished.json().get(0).get("done").asBoolean()).isFalse();
            assertThat(finished.err()).contains("not cancelled").contains("it is PROCESSED (finished)");
        }

        @Test
        void an_action_records_who_and_why_in_the_timeline() {
            Run r = sas("tasks", "cancel", failed.id().value(), "--operator", "alice", "--reason", "customer withdrew");
            assertThat(r.exit()).as(r.err()).isZero();

            assertThat(runtime.client().events(failed.id())).filteredOn(e -> e.type() == TaskEvent.Type.CANCEL_REQUESTED)
                    .singleElement().extracting(TaskEvent::message).isEqualTo("by alice: customer withdrew");
            assertThat(sas("tasks", "show", failed.id().value()).out()).contains("by alice: customer withdrew");
            assertThat(sas("tasks", "cancel", failed2.id().value(), "--reason", "two\nlines")
                    .exit()).as("a reason with a line break is refused").isEqualTo(2);
        }

        @Test
        void bulk_cancel_by_filters_previews_the_count_and_acts_only_with_yes() throws Exception {
            JsonNode preview = sas("tasks", "cancel", "--status", "error", "--workflow", "orders",
                    "--error-contains", "warehouse", "--json").json();
            assertThat(preview.get("preview").asBoolean()).isTrue();
            assertThat(preview.get("matching").asInt()).isEqualTo(2);
            assertThat(runtime.client().events(failed.id())).extracting(TaskEvent::type)
                    .doesNotContain(TaskEvent.Type.CANCEL_REQUESTED);
            assertThat(sas("tasks", "cancel", "--status", "error", "--max", "1").exit())
                    .as("more match than --max").isEqualTo(1);

            Run r = sas("tasks", "cancel", "--status", "ERROR", "--workflow", "orders", "--yes", "--reason", "bulk");
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains("2 of 2 tasks cancelled");
            Drain.untilIdle(runtime);
            assertThat(List.of(failed, failed2)).allSatisfy(h -> assertThat(h.info().status())
                    .isEqualTo(TaskStatus.CANCELLED));
            assertThat(done.get(0).info().status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(sas("tasks", "cancel", failed.id().value(), "--status", "ERROR").exit())
                    .as("ids and filters together").isEqualTo(2);
        }
    }

    @Nested
    class Stats {

        @Test
        void counts_tasks_per_workflow_and_state() throws Exception {
            Run r = sas("stats");
            assertThat(r.exit()).as(r.err()).isZero();
            List<String> lines = r.out().lines().toList();
            assertThat(lines.get(0)).startsWith("WORKFLOW").contains("PROCESSED", "ERROR", "TOTAL");
            List<String> header = List.of(lines.get(0).split("\\s+"));
            String[] orders = lines.stream().filter(l -> l.startsWith("orders")).findFirst().orElseThrow().split("\\s+");
            assertThat(orders[header.indexOf("PROCESSED")]).isEqualTo("3");
            assertThat(orders[header.indexOf("ERROR")]).isEqualTo("2");
            assertThat(orders[header.indexOf("PENDING")]).isEqualTo("0");
            assertThat(lines.get(lines.size() - 1)).startsWith("(all)").endsWith("7");

            JsonNode json = sas("stats", "--json").json();
            assertThat(json.get("total").asInt()).isEqualTo(7);
            assertThat(json.get("workflows").get("orders").get("ERROR").asInt()).isEqualTo(2);
            assertThat(json.get("workflows").get("refunds").get("PROCESSED").asInt()).isEqualTo(1);
        }
    }

    @Nested
    class Agents {

        @Test
        void shows_the_flow_control_state_of_every_agent_endpoint() throws Exception {
            Run r = sas("agents");
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out().lines().toList().get(0)).startsWith("AGENT").contains("BREAKER", "IN FLIGHT");
            assertThat(r.out()).contains("bank").contains("CLOSED").contains("1 endpoint");

            JsonNode json = sas("agents", "--json").json();
            assertThat(json).singleElement().satisfies(a -> {
                assertThat(a.get("agent").asText()).isEqualTo("bank");
                assertThat(a.get("breaker").asText()).isEqualTo("CLOSED");
                assertThat(a.get("callsInFlight").asInt()).isZero();
            });
        }
    }

    @Nested
    class Schedules {

        @Test
        void lists_pauses_triggers_and_resumes_a_schedule_and_refuses_an_unknown_one() throws Exception {
            runtime.client().schedules().register(dev.sas.core.Schedule.named("nightly")
                    .cron("0 2 * * *", java.time.ZoneId.of("Europe/Berlin")).submits(refunds, "all").build());
            try {
                Run list = sas("schedules", "list");
                assertThat(list.exit()).as(list.err()).isZero();
                assertThat(list.out().lines().toList().get(0)).startsWith("NAME").contains("FIRES", "NEXT FIRE");
                assertThat(list.out()).contains("nightly").contains("cron:0 2 * * * Europe/Berlin")
                        .contains("refunds v1").contains("ACTIVE").contains("1 schedule");

                Run pause = sas("schedules", "pause", "nightly");
                assertThat(pause.exit()).as(pause.err()).isZero();
                assertThat(pause.out()).contains("schedule nightly paused");
                assertThat(sas("schedules", "list", "--json").json()).singleElement().satisfies(j -> {
                    assertThat(j.get("paused").asBoolean()).isTrue();
                    assertThat(j.get("missedFires").asText()).isEqualTo("RUN_ONCE");
                    assertThat(j.get("missedAfter").asText()).isEqualTo("PT1M");
                    assertThat(j.get("zone").asText()).isEqualTo("Europe/Berlin");
                });

                JsonNode trigger = sas("schedules", "trigger", "nightly", "--json").json();
                assertThat(trigger.get("done").asText()).startsWith("schedule nightly triggered: task ");
                assertThat(runtime.client().list(dev.sas.core.TaskQuery.all().withWorkflow("refunds")))
                        .filteredOn(t -> t.businessKey().startsWith("nightly@triggered-")).hasSize(1);

                assertThat(sas("schedules", "resume", "nightly").exit()).isZero();
                assertThat(runtime.client().schedules().find("nightly").orElseThrow().paused()).isFalse();

                Run missing = sas("schedules", "pause", "nope");
                assertThat(missing.exit()).isEqualTo(SasCli.REFUSED);
                assertThat(missing.err()).contains("schedule 'nope' is not registered");

                JsonNode removed = sas("schedules", "remove", "nightly", "--json").json();
                assertThat(removed.get("done").asText()).isEqualTo("schedule nightly removed");
                assertThat(removed.get("name").asText()).isEqualTo("nightly");
                assertThat(runtime.client().schedules().find("nightly")).isEmpty();
                assertThat(runtime.client().list(dev.sas.core.TaskQuery.all().withWorkflow("refunds")))
                        .as("the tasks it submitted stay")
                        .filteredOn(t -> t.businessKey().startsWith("nightly@triggered-")).hasSize(1);
                Run again = sas("schedules", "remove", "nightly");
                assertThat(again.exit()).isEqualTo(SasCli.REFUSED);
                assertThat(again.err()).contains("schedule 'nightly' is not registered");
            } finally {
                runtime.client().schedules().remove("nightly");
            }
        }
    }

    @Nested
    class Failures {

        @Test
        void a_database_without_the_tables_or_that_cannot_be_reached_exits_3_with_the_reason() {
            StringWriter err = new StringWriter();
            int exit = SasCli.commandLine(new PrintWriter(new StringWriter()), new PrintWriter(err, true))
                    .execute("stats", "--url", url, "--table-prefix", "nothing_here_");
            assertThat(exit).isEqualTo(3);
            assertThat(err.toString()).startsWith("error: ");

            StringWriter err2 = new StringWriter();
            int unreachable = SasCli.commandLine(new PrintWriter(new StringWriter()), new PrintWriter(err2, true))
                    .execute("stats", "--url", "jdbc:nosuchdb://127.0.0.1:1/x");
            assertThat(unreachable).isEqualTo(3);
            assertThat(err2.toString()).contains("cannot open the SAS database");
        }

        @Test
        void no_url_is_a_usage_error() {
            org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("SAS_JDBC_URL") == null,
                    "SAS_JDBC_URL is set in this environment: it supplies the URL");
            StringWriter err = new StringWriter();
            int exit = SasCli.commandLine(new PrintWriter(new StringWriter()), new PrintWriter(err, true))
                    .execute("tasks", "list");
            assertThat(exit).isEqualTo(2);
            assertThat(err.toString()).contains("--url");
        }

        @Test
        void a_url_that_is_not_a_jdbc_url_is_a_usage_error() {
            StringWriter err = new StringWriter();
            int exit = SasCli.commandLine(new PrintWriter(new StringWriter()), new PrintWriter(err, true))
                    .execute("tasks", "list", "--url", "hello");
            assertThat(exit).isEqualTo(2);
            assertThat(err.toString()).contains("url must start with 'jdbc:'");
        }
    }

    static String letters(int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append((char) ('a' + ThreadLocalRandom.current().nextInt(26)));
        }
        return sb.toString();
    }
}
