package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.Codec;
import dev.sas.core.FlowControl;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.FlowControlStore;
import dev.sas.core.spi.StateStore;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Leases under starvation: a node that cannot renew in time (its renewal thread starved, its
 * supervisor pass held up) never lets the cluster exceed an agent's concurrency limit, and never
 * lets two supervisors act at once. Starvation is made deterministic: a store decorator blocks one
 * node's renewals, or holds a supervisor pass while the manual clock moves past its lease.
 */
class StarvedLeaseTest {

    private final ManualClock clock = new ManualClock();
    private final InMemoryStateStore store = new InMemoryStateStore();
    private final List<SasRuntime> started = new ArrayList<>();

    @AfterEach
    void close() {
        started.forEach(SasRuntime::close);
    }

    /**
     * {@code store} seen through a decorator: {@code hook} runs around each call and may block,
     * record or move the clock; it returns the call's result (by calling {@code proceed}).
     */
    interface Hook {
        Object around(String method, Object[] args, java.util.concurrent.Callable<Object> proceed) throws Exception;
    }

    private StateStore decorated(Hook hook) {
        return decorated(StateStore.class, store, hook);
    }

    /** {@code target} with {@code hook} around each call, its flow control ({@code renewPermits} and the rest) included. */
    private static <T> T decorated(Class<T> type, T target, Hook hook) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (proxy, method, args) -> {
                    try {
                        Object result = hook.around(method.getName(), args, () -> {
                            try {
                                return method.invoke(target, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause() instanceof Exception ex ? ex : new RuntimeException(e.getCause());
                            }
                        });
                        if (method.getName().equals("flowControl")) {
                            return ((Optional<?>) result).map(f -> decorated(FlowControlStore.class, (FlowControlStore) f,
                                    hook));
                        }
                        return result;
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                }));
    }

    @Nested
    class Permits {
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger maxInFlight = new AtomicInteger();
        final List<CompletableFuture<String>> open = new CopyOnWriteArrayList<>();
        final List<String> calls = new CopyOnWriteArrayList<>();
        volatile boolean hold = true;

        CompletionStage<String> call(AgentRequest<String> request) {
            calls.add(request.payload());
            maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            CompletableFuture<String> reply = new CompletableFuture<>();
            if (hold) {
                open.add(reply);
            } else {
                answer(reply);
            }
            return reply;
        }

        /** The service is done with a call before its caller hears of it (dependants of a future run first). */
        void answer(CompletableFuture<String> reply) {
            inFlight.decrementAndGet();
            reply.complete("done");
        }

        SasRuntime node(StateStore on, Workflow<String> wf, String instance) {
            SasRuntime r = SasRuntime.builder().stateStore(on).clock(clock).workflow(wf).instanceId(instance)
                    .pollInterval(Duration.ofMillis(20)).supervisorEnabled(false).shutdownGrace(Duration.ofMillis(200))
                    .build();
            started.add(r);
            return r.start();
        }

        long heldBack(List<SasRuntime> nodes) {
            return nodes.stream().mapToLong(n -> n.metrics().heldBack()).sum();
        }

        @Test
        void a_node_whose_renewals_are_starved_never_lets_three_nodes_exceed_the_concurrency_limit() {
            FlowControl flow = FlowControl.builder().maxConcurrentCalls(2).permitLease(Duration.ofSeconds(1)).build();
            Agent<String, String> agent = Agent.builder("payments").flowControl(flow)
                    .retryPolicy(RetryPolicy.builder().maxAttempts(3).fixedBackoff(Duration.ofSeconds(1)).jitter(0)
                            .build())
                    .call(this::call);
            Workflow<String> wf = Workflow.builder("orders", Codec.string())
                    .step("charge", s -> s.call(agent, ctx -> ctx.input()).completeWithin(Duration.ofMinutes(5)))
                    .build();
            CountDownLatch fed = new CountDownLatch(1);
            AtomicInteger renewals = new AtomicInteger();
            StateStore starving = decorated((method, args, proceed) -> {
                if (method.equals("renewPermits")) {
                    renewals.incrementAndGet();
                    fed.await(); // the renewal thread gets no CPU until the test feeds it
                }
                return proceed.call();
            });
            SasRuntime starved = node(starving, wf, "starved");
            List<TaskId> ids = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                ids.add(starved.client().submit(wf, "order-" + i, "order-" + i).id());
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> inFlight.get() == 2
                    && starved.client().countByStatus().get(TaskStatus.WAITING) == 6);
            SasRuntime b = node(store, wf, "node-b");
            SasRuntime c = node(store, wf, "node-c");

            List<SasRuntime> nodes = List.of(starved, b, c);
            long heldBefore = heldBack(nodes);

            // far past the permits' lease and the waiting tasks' retry time, well before the calls' deadline:
            // each of the six waiting tasks is asked for again once (by any node), and must be held back again
            clock.tick(Duration.ofSeconds(30));
            await().atMost(Duration.ofSeconds(60)).until(() -> calls.size() > 2
                    || heldBack(nodes) >= heldBefore + 6);
            assertThat(maxInFlight).as("calls in flight at the service while the holder was starved").hasValue(2);
            assertThat(calls).hasSize(2);

            // fed again: the calls finish, every task goes through, two at a time
            fed.countDown();
            hold = false;
            open.forEach(this::answer);
            await().atMost(Duration.ofSeconds(120)).until(() -> {
                clock.tick(Duration.ofSeconds(1));
                return b.client().countByStatus().get(TaskStatus.PROCESSED) == ids.size();
            });
            assertThat(maxInFlight).as("never more than the limit").hasValue(2);
            assertThat(calls).hasSize(ids.size());
        }

        @Test
        void a_renewal_held_up_past_the_permits_expiry_finds_it_lapsed_and_counts_it() {
            FlowControl flow = FlowControl.builder().maxConcurrentCalls(1).permitLease(Duration.ofSeconds(3)).build();
            Agent<String, String> agent = Agent.builder("payments").flowControl(flow).call(this::call);
            Workflow<String> wf = Workflow.builder("orders", Codec.string())
                    .step("charge", s -> s.call(agent, ctx -> ctx.input()).completeWithin(Duration.ofSeconds(10)))
                    .build();
            SasRuntime other = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf).instanceId("other")
                    .build();
            AtomicBoolean starve = new AtomicBoolean(true);
            StateStore starving = decorated((method, args, proceed) -> {
                if (method.equals("renewPermits") && starve.getAndSet(false)) {
                    // the renewal is held up here for longer than the permit has left: another node takes it
                    clock.tick(Duration.ofSeconds(5));
                    other.client().submit(wf, "second", "second");
                    Drain.schedulerOnce(other);
                    // the other node's call takes the permit on its agent thread: on a busy machine after
                    // this renewal would have gone on (and found the permit still free, rightly renewing it)
                    await().atMost(Duration.ofSeconds(60)).until(() -> calls.contains("second"));
                }
                return proceed.call();
            });
            SasRuntime overrunning = node(starving, wf, "overrunning");
            TaskId first = overrunning.client().submit(wf, "first", "first").id();
            await().atMost(Duration.ofSeconds(60)).until(() -> calls.size() == 1);
            // the call overruns its deadline (it ignores it): only now does its permit need renewing
            clock.set(overrunning.client().find(first).orElseThrow().completeBy().plusMillis(1_500));

            await().atMost(Duration.ofSeconds(60)).until(() -> overrunning.metrics().permitsLapsed() == 1);
            assertThat(calls).containsExactly("first", "second");
        }
    }

    @Nested
    class SupervisorLease {

        @Test
        void a_supervisor_held_up_past_its_lease_stops_before_writing_while_another_one_leads() {
            Agent<String, String> agent = Agent.builder("slow").call(request -> new CompletableFuture<>());
            Workflow<String> wf = Workflow.builder("orders", Codec.string())
                    .step("charge", s -> s.call(agent, ctx -> ctx.input()).completeWithin(Duration.ofSeconds(5)))
                    .build();
            // a node claims two tasks and dies: their claims expire
            SasRuntime dead = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf).instanceId("dead")
                    .build();
            TaskId t1 = dead.client().submit(wf, "a", "a").id();
            TaskId t2 = dead.client().submit(wf, "b", "b").id();
            Drain.schedulerOnce(dead);
            clock.tick(Duration.ofSeconds(10));

            Duration interval = Duration.ofSeconds(1); // a lease of 3 s
            List<String> writes = new CopyOnWriteArrayList<>();
            AtomicBoolean bTookOver = new AtomicBoolean();
            AtomicReference<SasRuntime> b = new AtomicReference<>();
            AtomicBoolean starveA = new AtomicBoolean(true);
            StateStore forA = decorated((method, args, proceed) -> {
                Object result = proceed.call();
                if (method.equals("write")) {
                    writes.add("a" + (bTookOver.get() ? " after b took over" : ""));
                }
                if (method.equals("findExpired") && starveA.getAndSet(false)) {
                    // a's pass is held up here, its scan in hand, for longer than its lease
                    clock.tick(Duration.ofSeconds(4));
                    assertThat(Drain.supervisorOnce(b.get())).as("b recovers the claims").isEqualTo(2);
                    bTookOver.set(true);
                }
                return result;
            });
            StateStore forB = decorated((method, args, proceed) -> {
                Object result = proceed.call();
                if (method.equals("write")) {
                    writes.add("b");
                }
                return result;
            });
            SasRuntime a = SasRuntime.builder().stateStore(forA).clock(clock).workflow(wf).instanceId("a")
                    .supervisorInterval(interval).build();
            b.set(SasRuntime.builder().stateStore(forB).clock(clock).workflow(wf).instanceId("b")
                    .supervisorInterval(interval).build());

            int recoveredByA = Drain.supervisorOnce(a);

            assertThat(recoveredByA).isZero();
            assertThat(writes).as("only one supervisor wrote").doesNotContain("a after b took over").contains("b");
            assertThat(dead.client().find(t1).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
            assertThat(dead.client().find(t2).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
            assertThat(a.status().supervisorLeader()).as("a knows it no longer leads").isFalse();
            assertThat(a.metrics().supervisorPassesStopped()).isEqualTo(1);
            assertThat(b.get().metrics().supervisorPassesStopped()).isZero();
        }
    }
}
