package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Agent;
import dev.sas.core.AgentStatus;
import dev.sas.core.CircuitBreaker;
import dev.sas.core.Codec;
import dev.sas.core.FlowControl;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskResult;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The payments agent with flow control shown in docs/agents.md, compiled and run. */
class AgentsDocsTest {

    /** Two regions of a payment provider; a region that is down answers every call with an error. */
    static final class PaymentsApi {
        final Set<String> down = ConcurrentHashMap.newKeySet();
        final List<String> calledRegions = new CopyOnWriteArrayList<>();

        CompletionStage<String> charge(String region, String order, String idempotencyKey) {
            calledRegions.add(region);
            return down.contains(region)
                    ? CompletableFuture.failedFuture(new IllegalStateException(region + ": 503 Service Unavailable"))
                    : CompletableFuture.completedFuture("charged " + order + " in " + region);
        }
    }

    private final PaymentsApi api = new PaymentsApi();

    // tag::agent[]
    FlowControl limits = FlowControl.builder()
            .maxConcurrentCalls(20)             // per endpoint, across every node on the store
            .maxCallsPerSecond(50)              // per endpoint, across every node on the store
            .circuitBreaker(CircuitBreaker.builder()
                    .consecutiveFailures(5)     // 5 failures in a row open it ...
                    .failureRate(50, 20)        // ... or half of at least 20 calls within the window
                    .window(Duration.ofSeconds(30))
                    .openFor(Duration.ofSeconds(10))
                    .halfOpenProbes(1)
                    .build())
            .endpoints("eu-west", "us-east")    // in order of preference
            .build();

    Agent<String, String> payments = Agent.builder("payments")
            .flowControl(limits)
            .call(request -> api.charge(request.endpoint(), request.payload(), request.idempotencyKey()));

    Workflow<String> orders = Workflow.builder("orders", Codec.string())
            .step("charge", s -> s.call(payments, ctx -> ctx.input()).completeWithin(Duration.ofSeconds(10)))
            .build();
    // end::agent[]

    private static SasClient client(SasRuntime runtime) {
        return runtime.client();
    }

    @Test
    void calls_go_to_the_healthy_region_and_the_operator_sees_and_resets_the_breaker() {
        api.down.add("eu-west");
        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:agents-docs;DB_CLOSE_DELAY=-1").build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders).build().start()) {
            Map<String, TaskHandle> handles = new java.util.LinkedHashMap<>();
            for (int i = 1; i <= 10; i++) {
                handles.put("order-" + i, runtime.client().submit(orders, "order-" + i, "order-" + i));
            }
            for (TaskHandle h : handles.values()) {
                TaskResult result = h.await(Duration.ofSeconds(30));
                assertThat(result.status()).isEqualTo(TaskStatus.PROCESSED);
                assertThat(result.info().step("charge").output()).endsWith("in us-east");
            }
            assertThat(client(runtime).operations().agents()).filteredOn(a -> a.endpoint().equals("eu-west")).singleElement()
                    .extracting(AgentStatus::breaker).isEqualTo(CircuitBreaker.State.OPEN);

            SasClient client = runtime.client();
            // tag::operator[]
            for (AgentStatus endpoint : client.operations().agents()) {
                System.out.println(endpoint.agent() + "/" + endpoint.endpoint() + ": " + endpoint.breaker()
                        + (endpoint.openUntil() != null ? " until " + endpoint.openUntil() : "")
                        + ", " + endpoint.callsInFlight() + " calls in flight, last failure: " + endpoint.lastFailure());
            }
            // payments/eu-west: OPEN until 2030-01-01T12:00:10Z, 0 calls in flight, last failure: IllegalStateException: eu-west: 503 ...
            // payments/us-east: CLOSED, 0 calls in flight, last failure: null

            api.down.clear(); // the provider says eu-west is back: do not wait for the cool-down
            client.operations().resetCircuitBreaker("payments", "eu-west");
            // end::operator[]

            assertThat(client.operations().agents()).allSatisfy(a -> assertThat(a.breaker()).isEqualTo(CircuitBreaker.State.CLOSED));
            TaskHandle after = client.submit(orders, "order-after-reset", "order-after-reset");
            assertThat(after.await(Duration.ofSeconds(30)).info().step("charge").output()).endsWith("in eu-west");
        }
    }

    @Test
    void a_task_held_back_waits_visibly_and_spends_no_attempt() {
        api.down.add("eu-west");
        api.down.add("us-east");
        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:agents-docs-2;DB_CLOSE_DELAY=-1").build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders).build().start()) {
            for (int i = 1; i <= 12; i++) {
                runtime.client().submit(orders, "order-" + i, "order-" + i);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> runtime.client().operations().agents().stream()
                    .allMatch(a -> a.breaker() == CircuitBreaker.State.OPEN));
            // a call that failed as its endpoint's breaker opened waits briefly to try another endpoint;
            // once both are open, a task is held back before its call is made
            var waiting = await().atMost(Duration.ofSeconds(30)).until(() -> runtime.client()
                    .list(dev.sas.core.TaskQuery.all().withStatus(TaskStatus.WAITING)).stream()
                    .filter(t -> t.lastError() != null && t.lastError().startsWith("no endpoint of agent"))
                    .findFirst(), java.util.Optional::isPresent).get();
            assertThat(waiting.lastError()).startsWith("no endpoint of agent 'payments' can take the call")
                    .contains("circuit breaker of agent 'payments' endpoint 'eu-west' is open until");
            assertThat(runtime.client().events(waiting.taskId())).extracting(TaskEvent::type)
                    .contains(TaskEvent.Type.WAITING);
        }
    }
}
