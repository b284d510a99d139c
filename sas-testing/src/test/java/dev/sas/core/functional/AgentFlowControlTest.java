package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.AgentStatus;
import dev.sas.core.CircuitBreaker;
import dev.sas.core.Codec;
import dev.sas.core.FlowControl;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Agent flow control driven by hand on a manual clock: calls held back by capacity, rate limit and
 * circuit breaker wait in WAITING without spending attempts, priorities order them, endpoints are
 * chosen by health, and a dead node's permits come back a lease after its calls' deadline.
 */
class AgentFlowControlTest {

    static final RetryPolicy RETRY = RetryPolicy.builder().maxAttempts(3).fixedBackoff(Duration.ofSeconds(1))
            .jitter(0).build();

    /** A fake remote service: counts its own calls in flight, can hold them open, can be down per endpoint. */
    static final class Service {
        final ManualClock clock;
        final List<AgentRequest<String>> calls = new CopyOnWriteArrayList<>();
        final List<Instant> callTimes = new CopyOnWriteArrayList<>();
        final List<CompletableFuture<String>> open = new CopyOnWriteArrayList<>();
        final Set<String> down = ConcurrentHashMap.newKeySet();
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger maxInFlight = new AtomicInteger();
        volatile boolean hold;

        Service(ManualClock clock) {
            this.clock = clock;
        }

        CompletionStage<String> call(AgentRequest<String> request) {
            calls.add(request);
            callTimes.add(clock.instant());
            if (down.contains(request.endpoint())) {
                return CompletableFuture.failedFuture(new IllegalStateException("503 from " + request.endpoint()));
            }
            if (!hold) {
                return CompletableFuture.completedFuture("done " + request.payload());
            }
            maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            CompletableFuture<String> reply = new CompletableFuture<>();
            reply.whenComplete((r, e) -> inFlight.decrementAndGet());
            open.add(reply);
            return reply;
        }

        /** Completes every call held open so far. */
        void finishOpen() {
            List<CompletableFuture<String>> now = new ArrayList<>(open);
            open.removeAll(now);
            now.forEach(f -> f.complete("done"));
        }

        List<String> endpoints() {
            return calls.stream().map(AgentRequest::endpoint).toList();
        }
    }

    private final ManualClock clock = new ManualClock();
    private final InMemoryStateStore store = new InMemoryStateStore();
    private final Service service = new Service(clock);

    private Agent<String, String> agent(FlowControl flow) {
        return Agent.builder("payments").retryPolicy(RETRY).flowControl(flow).call(service::call);
    }

    private static Workflow<String> workflow(Agent<String, String> agent) {
        return Workflow.builder("orders", Codec.string())
                .step("charge", s -> s.call(agent, ctx -> ctx.input()).completeWithin(Duration.ofMinutes(5)))
                .build();
    }

    private SasRuntime manual(Workflow<String> wf, String instance) {
        return SasRuntime.builder().stateStore(store).clock(clock).workflow(wf).instanceId(instance).build();
    }

    private static TaskInfo find(SasRuntime sas, TaskId id) {
        return sas.client().find(id).orElseThrow();
    }

    private static List<TaskId> submit(SasRuntime sas, Workflow<String> wf, int n) {
        List<TaskId> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(sas.client().submit(wf, "order-" + i, "order-" + i).id());
        }
        return ids;
    }

    private static long count(SasRuntime sas, TaskStatus status) {
        return sas.client().countByStatus().get(status);
    }

    /** Runs the scheduler, and moves the clock on a little each time nothing was due, until every task is final. */
    private void runUntilProcessed(List<SasRuntime> nodes, int tasks, Duration step, Duration limit) {
        Instant end = clock.instant().plus(limit);
        while (count(nodes.get(0), TaskStatus.PROCESSED) < tasks) {
            assertThat(clock.instant()).as("all tasks processed by then").isBefore(end);
            for (SasRuntime node : nodes) {
                Drain.schedulerOnce(node);
            }
            clock.tick(step);
        }
    }

    @Nested
    class Capacity {

        @Test
        void calls_over_the_limit_wait_visibly_and_spend_no_attempt() {
            Workflow<String> wf = workflow(agent(FlowControl.builder().maxConcurrentCalls(2).build()));
            SasRuntime sas = manual(wf, "node-1");
            service.hold = true;
            List<TaskId> ids = submit(sas, wf, 5);

            Drain.schedulerOnce(sas);

            assertThat(service.inFlight).hasValue(2);
            assertThat(count(sas, TaskStatus.WAITING)).isEqualTo(3);
            TaskInfo waiting = sas.client().list(TaskQuery.all().withStatus(TaskStatus.WAITING)).get(0);
            assertThat(waiting.lastError()).startsWith("waiting for agent capacity: agent 'payments' endpoint 'default'"
                    + " has 2 of 2 calls in flight");
            assertThat(waiting.nextAttemptAt()).isAfter(clock.instant());
            assertThat(sas.client().events(waiting.taskId())).extracting(TaskEvent::type)
                    .containsSubsequence(TaskEvent.Type.STEP_STARTED, TaskEvent.Type.WAITING);
            assertThat(sas.metrics().heldBack()).isEqualTo(3);
            assertThat(sas.client().operations().agents()).singleElement().satisfies(a -> {
                assertThat(a.agent()).isEqualTo("payments");
                assertThat(a.callsInFlight()).isEqualTo(2);
            });

            for (int round = 0; round < 20 && count(sas, TaskStatus.PROCESSED) < 5; round++) {
                service.finishOpen();
                clock.tick(Duration.ofSeconds(1));
                Drain.schedulerOnce(sas);
            }

            assertThat(count(sas, TaskStatus.PROCESSED)).isEqualTo(5);
            assertThat(service.maxInFlight).as("observed by the service itself").hasValue(2);
            assertThat(service.calls).extracting(AgentRequest::attempt).as("waiting spent no attempt").containsOnly(1);
            for (TaskId id : ids) {
                assertThat(find(sas, id).step("charge").attempts()).isEqualTo(1);
                assertThat(find(sas, id).failureCount()).isZero();
            }
        }

        @Test
        void a_permit_given_back_wakes_the_waiting_task_at_once_without_polling() {
            Workflow<String> wf = workflow(agent(FlowControl.builder().maxConcurrentCalls(1).build()));
            SasRuntime sas = manual(wf, "node-1");
            service.hold = true;
            sas.client().submit(wf, "first", "first");
            sas.client().submit(wf, "second", "second");
            Drain.schedulerOnce(sas);
            TaskId second = sas.client().list(TaskQuery.all().withStatus(TaskStatus.WAITING)).get(0).taskId();
            assertThat(find(sas, second).nextAttemptAt()).as("by itself in 5 s at the latest")
                    .isEqualTo(clock.instant().plusSeconds(5));

            service.finishOpen(); // the first call's permit is given back: the second task is due now

            assertThat(find(sas, second).nextAttemptAt()).isBeforeOrEqualTo(clock.instant());
            Drain.schedulerOnce(sas);
            assertThat(service.calls).hasSize(2);
            assertThat(service.calls.get(1).taskId()).isEqualTo(second);
        }

        @Test
        void the_highest_priority_waiting_task_gets_the_next_free_permit() {
            Workflow<String> wf = workflow(agent(FlowControl.builder().maxConcurrentCalls(1).build()));
            SasRuntime sas = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf).claimBatchSize(1).build();
            service.hold = true;
            sas.client().submit(wf, "blocker", "blocker");
            Drain.schedulerOnce(sas);
            for (int i = 1; i <= 3; i++) {
                sas.client().submit(wf, "low-" + i, "low-" + i, SubmitOptions.builder().priority(1).build());
                clock.tick(Duration.ofMillis(1));
                Drain.schedulerOnce(sas);
            }
            sas.client().submit(wf, "high", "high", SubmitOptions.builder().priority(9).build());
            Drain.schedulerOnce(sas);
            assertThat(count(sas, TaskStatus.WAITING)).isEqualTo(4);

            service.finishOpen();
            clock.tick(Duration.ofMinutes(2)); // every waiting task is due again
            Drain.schedulerOnce(sas);

            assertThat(service.calls).extracting(AgentRequest::payload).containsExactly("blocker", "high");
        }

        @Test
        void a_dead_or_starved_nodes_permit_holds_until_a_lease_past_its_calls_deadline() {
            FlowControl flow = FlowControl.builder().maxConcurrentCalls(1).permitLease(Duration.ofSeconds(5)).build();
            Workflow<String> wf = workflow(agent(flow));
            SasRuntime dead = manual(wf, "dies");
            service.hold = true;
            TaskId first = sas(dead).submit(wf, "first", "first").id();
            Drain.schedulerOnce(dead); // takes the only permit; its node stops: never renewed, never given back
            Instant completeBy = find(dead, first).completeBy();
            SasRuntime survivor = manual(wf, "survives");
            TaskId second = sas(survivor).submit(wf, "second", "second").id();

            // long past the permit's lease, but its call may still run at the service until its deadline
            for (Instant t = clock.instant(); t.isBefore(completeBy.plus(flow.permitLease())); t = clock.tick(
                    Duration.ofSeconds(30))) {
                Drain.schedulerOnce(survivor);
                assertThat(find(survivor, second).status()).as("held at %s", t).isIn(TaskStatus.WAITING,
                        TaskStatus.PENDING);
                assertThat(survivor.client().operations().agents().get(0).callsInFlight()).as("at %s", t).isEqualTo(1);
            }

            clock.set(completeBy.plus(flow.permitLease())); // a lease past the first call's deadline
            assertThat(survivor.client().operations().agents().get(0).callsInFlight()).isZero();
            Instant due = find(survivor, second).nextAttemptAt();
            if (due.isAfter(clock.instant())) {
                clock.set(due);
            }
            Drain.schedulerOnce(survivor);
            assertThat(service.calls).extracting(AgentRequest::payload).containsExactly("first", "second");
        }

        private dev.sas.core.SasClient sas(SasRuntime runtime) {
            return runtime.client();
        }
    }

    @Nested
    class RateLimit {

        @Test
        void three_nodes_together_start_no_more_calls_than_the_rate_in_any_second() {
            int rate = 10;
            Workflow<String> wf = workflow(agent(FlowControl.builder().maxCallsPerSecond(rate).burst(2).build()));
            List<SasRuntime> nodes = List.of(manual(wf, "n1"), manual(wf, "n2"), manual(wf, "n3"));
            int tasks = 60;
            submit(nodes.get(0), wf, tasks);
            Instant start = clock.instant();

            runUntilProcessed(nodes, tasks, Duration.ofMillis(10), Duration.ofSeconds(30));

            List<Instant> times = service.callTimes;
            assertThat(times).hasSize(tasks);
            for (Instant t : times) {
                long inWindow = times.stream().filter(x -> !x.isBefore(t) && x.isBefore(t.plusSeconds(1))).count();
                assertThat(inWindow).as("calls in [%s, +1s)", t).isLessThanOrEqualTo(rate + 1); // burst 2 = rate + 1
            }
            Duration took = Duration.between(start, times.get(times.size() - 1));
            assertThat(took).as("the rate is used, not just respected").isLessThan(Duration.ofMillis(tasks * 100L));
            assertThat(service.calls).extracting(AgentRequest::attempt).containsOnly(1);
            assertThat(nodes.stream().mapToLong(n -> n.metrics().heldBack()).sum()).isPositive();
        }
    }

    @Nested
    class Breaker {

        private final CircuitBreaker breaker = CircuitBreaker.builder().consecutiveFailures(3).noFailureRate()
                .openFor(Duration.ofSeconds(10)).build();

        @Test
        void opens_on_failures_holds_tasks_without_spending_attempts_and_closes_after_a_probe() {
            Workflow<String> wf = workflow(agent(FlowControl.builder().circuitBreaker(breaker).build()));
            SasRuntime sas = manual(wf, "node-1");
            service.down.add("default");
            List<TaskId> ids = submit(sas, wf, 6);

            Drain.schedulerOnce(sas);

            assertThat(service.calls).as("3 failures open the breaker; the others are not called").hasSize(3);
            AgentStatus open = sas.client().operations().agents().get(0);
            assertThat(open.breaker()).isEqualTo(CircuitBreaker.State.OPEN);
            assertThat(open.openUntil()).isEqualTo(clock.instant().plusSeconds(10));
            assertThat(open.lastFailure()).contains("503 from default");
            assertThat(sas.metrics().breakersOpened()).isEqualTo(1);
            assertThat(count(sas, TaskStatus.WAITING)).as("the call that opened it and those held back").isEqualTo(4);
            assertThat(count(sas, TaskStatus.PENDING)).as("two calls failed before it opened: retried").isEqualTo(2);
            assertThat(sas.client().list(TaskQuery.all().withStatus(TaskStatus.WAITING))).allSatisfy(held ->
                    assertThat(held.lastError()).contains("waiting for agent health: the circuit breaker of agent"
                            + " 'payments' endpoint 'default' is open until").contains("after 3 failures in a row"));

            // the service stays down for 30 s: probes fail, the breaker opens again, nobody fails
            for (int second = 0; second < 30; second++) {
                clock.tick(Duration.ofSeconds(1));
                Drain.schedulerOnce(sas);
            }
            assertThat(count(sas, TaskStatus.ERROR)).isZero();
            assertThat(sas.client().operations().agents().get(0).breaker()).isNotEqualTo(CircuitBreaker.State.CLOSED);
            int callsWhileDown = service.calls.size();
            assertThat(callsWhileDown).as("3, then one probe per cool-down").isLessThanOrEqualTo(3 + 3);

            service.down.clear();
            for (int second = 0; second < 60 && count(sas, TaskStatus.PROCESSED) < 6; second++) {
                clock.tick(Duration.ofSeconds(1));
                Drain.schedulerOnce(sas);
            }

            assertThat(count(sas, TaskStatus.PROCESSED)).isEqualTo(6);
            assertThat(sas.client().operations().agents().get(0).breaker()).isEqualTo(CircuitBreaker.State.CLOSED);
            assertThat(sas.metrics().breakersClosed()).isEqualTo(1);
            assertThat(service.calls).extracting(AgentRequest::attempt).as("at most the one attempt spent before it"
                    + " opened").allMatch(a -> a <= 2);
            for (TaskId id : ids) {
                assertThat(sas.client().events(id)).extracting(TaskEvent::type).contains(TaskEvent.Type.WAITING);
            }
        }

        @Test
        void an_operator_sees_and_resets_the_breaker() {
            Workflow<String> wf = workflow(agent(FlowControl.builder().circuitBreaker(breaker).build()));
            SasRuntime sas = manual(wf, "node-1");
            service.down.add("default");
            submit(sas, wf, 3);
            Drain.schedulerOnce(sas);
            assertThat(sas.client().operations().agents().get(0).breaker()).isEqualTo(CircuitBreaker.State.OPEN);
            service.down.clear();

            assertThat(sas.client().operations().resetCircuitBreaker("payments")).isEqualTo(1);

            AgentStatus reset = sas.client().operations().agents().get(0);
            assertThat(reset.breaker()).isEqualTo(CircuitBreaker.State.CLOSED);
            assertThat(reset.consecutiveFailures()).isZero();
            assertThat(reset.openUntil()).isNull();
            TaskId next = sas.client().submit(wf, "after-reset", "after-reset").id();
            Drain.schedulerOnce(sas);
            assertThat(find(sas, next).status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(sas.client().operations().resetCircuitBreaker("payments", "nope")).isFalse();
        }

        @Test
        void a_compensation_whose_call_opens_the_breaker_stays_compensating_and_spends_no_attempt() {
            Agent<String, String> payments = agent(FlowControl.builder().circuitBreaker(CircuitBreaker.builder()
                    .consecutiveFailures(1).noFailureRate().openFor(Duration.ofSeconds(10)).build()).build());
            Workflow<String> wf = Workflow.builder("orders", Codec.string())
                    .step("charge", s -> s.call(payments, ctx -> ctx.input()).compensateWith(payments, ctx -> "refund"))
                    .step("ship", s -> s.execute(ctx -> {
                        service.down.add("default"); // the payment service goes down while the order ships
                        throw new NonRetryableException("no courier");
                    }))
                    .build();
            SasRuntime sas = manual(wf, "node-1");
            TaskId id = sas.client().submit(wf, "o-1", "o-1").id();

            Drain.schedulerOnce(sas);

            TaskInfo waiting = find(sas, id);
            assertThat(waiting.status()).isEqualTo(TaskStatus.COMPENSATING);
            assertThat(waiting.lastError()).contains("waiting for agent health").contains("this call failed with");
            assertThat(waiting.nextAttemptAt()).as("after the cool-down, spread over at most 2 s")
                    .isBetween(clock.instant().plusSeconds(10), clock.instant().plusSeconds(12));
            assertThat(sas.client().events(id)).extracting(TaskEvent::type).endsWith(TaskEvent.Type.WAITING);

            service.down.clear();
            clock.tick(Duration.ofSeconds(12));
            Drain.schedulerOnce(sas);

            assertThat(find(sas, id).status()).isEqualTo(TaskStatus.COMPENSATED);
            List<AgentRequest<String>> refunds = service.calls.stream().filter(AgentRequest::compensation).toList();
            assertThat(refunds).extracting(AgentRequest::attempt).as("the failed refund spent no attempt")
                    .containsExactly(1, 1);
        }
    }

    @Nested
    class Endpoints {

        @Test
        void calls_go_to_the_healthy_endpoint_and_back_to_the_first_once_it_recovers() {
            CircuitBreaker breaker = CircuitBreaker.builder().consecutiveFailures(1).noFailureRate()
                    .openFor(Duration.ofSeconds(10)).build();
            Workflow<String> wf = workflow(agent(FlowControl.builder().circuitBreaker(breaker)
                    .endpoints("eu", "us").build()));
            SasRuntime sas = manual(wf, "node-1");
            service.down.add("eu");
            submit(sas, wf, 5);

            Drain.schedulerOnce(sas);
            Drain.schedulerOnce(sas); // the task whose call opened eu's breaker comes again at once

            assertThat(count(sas, TaskStatus.PROCESSED)).isEqualTo(5);
            assertThat(service.endpoints()).as("one call found eu down; every other went to us")
                    .containsExactly("eu", "us", "us", "us", "us", "us");
            assertThat(service.calls).extracting(AgentRequest::attempt).containsOnly(1);
            Map<String, CircuitBreaker.State> states = new java.util.HashMap<>();
            sas.client().operations().agents().forEach(a -> states.put(a.endpoint(), a.breaker()));
            assertThat(states).containsEntry("eu", CircuitBreaker.State.OPEN).containsEntry("us",
                    CircuitBreaker.State.CLOSED);

            service.down.clear();
            clock.tick(Duration.ofSeconds(10));
            service.calls.clear();
            List<TaskId> later = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                later.add(sas.client().submit(wf, "later-" + i, "later-" + i).id());
            }
            Drain.schedulerOnce(sas);

            assertThat(service.endpoints()).as("eu is probed, closes, and is preferred again")
                    .containsExactly("eu", "eu", "eu");
            assertThat(sas.client().operations().agents()).filteredOn(a -> a.endpoint().equals("eu")).singleElement()
                    .extracting(AgentStatus::breaker).isEqualTo(CircuitBreaker.State.CLOSED);
        }

        @Test
        void an_endpoint_at_capacity_sends_calls_to_the_next_one() {
            Workflow<String> wf = workflow(agent(FlowControl.builder().maxConcurrentCalls(2)
                    .endpoints("primary", "secondary").build()));
            SasRuntime sas = manual(wf, "node-1");
            service.hold = true;
            submit(sas, wf, 5);

            Drain.schedulerOnce(sas);

            assertThat(service.endpoints()).containsExactly("primary", "primary", "secondary", "secondary");
            TaskInfo waiting = sas.client().list(TaskQuery.all().withStatus(TaskStatus.WAITING)).get(0);
            assertThat(waiting.lastError()).startsWith("no endpoint of agent 'payments' can take the call")
                    .contains("endpoint 'primary' has 2 of 2").contains("endpoint 'secondary' has 2 of 2");
        }
    }
}
