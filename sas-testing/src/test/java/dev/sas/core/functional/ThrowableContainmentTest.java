package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Alert;
import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An {@code Error} (or any throwable) at any point of a long-lived thread is contained: the poison
 * task is parked or left to the supervisor, the thread goes on. And listeners cannot make the
 * runtime wait, grow without bound, or be called after {@code close()}.
 */
class ThrowableContainmentTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final InMemoryStateStore real = new InMemoryStateStore();

    /** The real store, except that the first call of {@code method} throws {@code error}. */
    private StateStore throwingOnce(String method, Error error) {
        AtomicBoolean armed = new AtomicBoolean(true);
        return (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {StateStore.class},
                (proxy, m, args) -> {
                    if (m.getName().equals(method) && armed.compareAndSet(true, false)) {
                        throw error;
                    }
                    try {
                        return m.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private static Workflow<String> echo(String name) {
        return Workflow.builder(name, Codec.string()).step("echo", s -> s.execute(ctx -> ctx.input())).build();
    }

    private TaskStatus status(TaskId id) {
        return real.find(id).orElseThrow().status();
    }

    @Nested
    class PoisonTasks {

        @Test
        void input_whose_decode_overflows_the_stack_parks_that_task_and_the_node_goes_on_claiming() {
            Codec<String> nested = Codec.of(s -> s, s -> {
                if (s.startsWith("[[[[")) {
                    throw new StackOverflowError("nested too deep (injected)");
                }
                return s;
            });
            Workflow<String> wf = Workflow.builder("decode", nested).step("echo", s -> s.execute(ctx -> ctx.input()))
                    .build();
            SasRuntime sas = SasRuntime.builder().stateStore(real).workflow(wf).claimBatchSize(1).build().start();
            TaskId poison;
            TaskId next;
            try {
                poison = sas.client().submit(wf, "poison", "[[[[[[[[").id();
                next = sas.client().submit(wf, "next", "plain").id();

                await().atMost(WAIT).until(() -> status(poison) == TaskStatus.ERROR
                        && status(next) == TaskStatus.PROCESSED);
                await().atMost(WAIT).until(() -> sas.inFlight() == 0);
            } finally {
                sas.close();
            }

            TaskInfo parked = real.find(poison).orElseThrow();
            assertThat(parked.lastError()).contains("StackOverflowError").contains("nested too deep (injected)");
            assertThat(parked.lockedBy()).isNull();
            assertThat(sas.inFlight()).isZero();
            assertThat(sas.metrics().internalErrors()).isGreaterThanOrEqualTo(1);
            assertThat(sas.metrics().errors()).isEqualTo(1);
        }

        @Test
        void step_that_throws_an_error_is_a_failed_attempt_and_is_retried() {
            ManualClock clock = new ManualClock();
            AtomicInteger runs = new AtomicInteger();
            Workflow<String> wf = Workflow.builder("linkage", Codec.string())
                    .step("call", s -> s.execute(ctx -> {
                        if (runs.incrementAndGet() == 1) {
                            throw new LinkageError("class Foo changed incompatibly (injected)");
                        }
                        return "ok";
                    }))
                    .build();
            SasRuntime sas = SasRuntime.builder().stateStore(real).clock(clock).workflow(wf).build();
            TaskId id = sas.client().submit(wf, "k", "x").id();

            Drain.untilIdle(sas);

            TaskInfo afterFirst = real.find(id).orElseThrow();
            assertThat(afterFirst.status()).isEqualTo(TaskStatus.PENDING);
            assertThat(afterFirst.lastError()).contains("LinkageError").contains("changed incompatibly");
            assertThat(sas.inFlight()).isZero();

            Drain.afterTime(sas, clock, Duration.ofMinutes(1));

            assertThat(status(id)).isEqualTo(TaskStatus.PROCESSED);
            assertThat(real.events(id)).extracting(TaskEvent::type).contains(TaskEvent.Type.STEP_RETRYING);
            assertThat(sas.metrics().retriesScheduled()).isEqualTo(1);
        }

        @Test
        void step_that_throws_an_assertion_error_without_retries_moves_its_task_to_error() {
            ManualClock clock = new ManualClock();
            Workflow<String> wf = Workflow.builder("assert", Codec.string())
                    .step("call", s -> s.execute(ctx -> {
                        throw new AssertionError("invariant broken (injected)");
                    }).retry(dev.sas.core.RetryPolicy.none()))
                    .build();
            SasRuntime sas = SasRuntime.builder().stateStore(real).clock(clock).workflow(wf).build();
            TaskId id = sas.client().submit(wf, "k", "x").id();

            Drain.untilIdle(sas);

            assertThat(status(id)).isEqualTo(TaskStatus.ERROR);
            assertThat(real.find(id).orElseThrow().lastError()).contains("AssertionError").contains("invariant broken");
            assertThat(sas.inFlight()).isZero();
        }
    }

    @Nested
    class StoreErrors {

        @Test
        void claim_loop_goes_on_after_a_claim_that_threw_an_error() {
            Workflow<String> wf = echo("claim-error");
            StateStore store = throwingOnce("claim", new NoClassDefFoundError("com/acme/Driver (injected)"));
            try (SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).supervisorEnabled(false)
                    .pollInterval(Duration.ofMillis(50)).build().start()) {
                TaskId id = sas.client().submit(wf, "k", "x").id();

                await().atMost(WAIT).until(() -> status(id) == TaskStatus.PROCESSED);
                assertThat(sas.metrics().internalErrors()).isGreaterThanOrEqualTo(1);
            }
        }

        @Test
        void writer_thread_survives_a_store_write_that_threw_an_error_and_later_transitions_are_written() {
            Workflow<String> wf = echo("write-error");
            StateStore store = throwingOnce("write", new OutOfMemoryError("injected"));
            try (SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).supervisorEnabled(false)
                    .writerThreads(1).build().start()) {
                TaskId first = sas.client().submit(wf, "first", "x").id();
                await().atMost(WAIT).until(() -> status(first) == TaskStatus.PROCESSED);

                TaskId second = sas.client().submit(wf, "second", "y").id();
                await().atMost(WAIT).until(() -> status(second) == TaskStatus.PROCESSED);

                assertThat(sas.metrics().internalErrors()).isGreaterThanOrEqualTo(1);
                assertThat(real.events(first).stream().filter(e -> e.type() == TaskEvent.Type.STEP_COMPLETED))
                        .hasSize(1);
            }
        }

        @ParameterizedTest(name = "{0} throws once")
        @ValueSource(strings = {"tryAcquireSupervisorLease", "findExpired"})
        void next_supervisor_pass_recovers_expired_claims_after_a_pass_that_threw_an_error(String method) {
            ManualClock clock = new ManualClock();
            Workflow<String> wf = echo("supervisor-error");
            SasRuntime submitter = SasRuntime.builder().stateStore(real).clock(clock).workflow(wf).build();
            TaskId id = submitter.client().submit(wf, "k", "x").id();
            assertThat(real.claim("dead-node", 1, clock.instant(), Set.of(new WorkflowVersion(wf.name(), wf.version())))).hasSize(1);
            clock.tick(Duration.ofHours(1));

            StateStore store = throwingOnce(method, new StackOverflowError("injected"));
            try (SasRuntime sas = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf)
                    .schedulerEnabled(false).supervisorInterval(Duration.ofMillis(50)).build().start()) {
                await().atMost(WAIT).until(() -> sas.metrics().timeoutsRecovered() == 1);

                assertThat(real.find(id).orElseThrow().lockedBy()).isNull();
                assertThat(sas.metrics().internalErrors()).isGreaterThanOrEqualTo(1);
            }
        }
    }

    @Nested
    class Listeners {

        @Test
        void listener_that_throws_an_error_still_gets_later_events() {
            Workflow<String> wf = echo("listener-error");
            List<TaskEvent> seen = new CopyOnWriteArrayList<>();
            try (SasRuntime sas = SasRuntime.builder().stateStore(real).workflow(wf).onEvent(e -> {
                seen.add(e);
                if (seen.size() == 1) {
                    throw new StackOverflowError("listener recursed (injected)");
                }
            }).build().start()) {
                TaskId first = sas.client().submit(wf, "first", "x").id();
                TaskId second = sas.client().submit(wf, "second", "y").id();

                await().atMost(WAIT).until(() -> seen.stream().filter(e -> e.type() == TaskEvent.Type.PROCESSED)
                        .map(TaskEvent::taskId).toList().containsAll(List.of(first, second)));
                assertThat(sas.metrics().listenerFailures()).isEqualTo(1);
            }
        }

        @Test
        void alert_sink_that_throws_an_error_still_gets_later_alerts() {
            Workflow<String> wf = Workflow.builder("alert-error", Codec.string())
                    .step("call", s -> s.execute(ctx -> {
                        throw new NonRetryableException("refused (injected)");
                    }))
                    .build();
            List<Alert> alerts = new CopyOnWriteArrayList<>();
            try (SasRuntime sas = SasRuntime.builder().stateStore(real).workflow(wf).alertSink(a -> {
                alerts.add(a);
                if (alerts.size() == 1) {
                    throw new AssertionError("pager down (injected)");
                }
            }).build().start()) {
                TaskId first = sas.client().submit(wf, "first", "x").id();
                TaskId second = sas.client().submit(wf, "second", "y").id();

                await().atMost(WAIT).until(() -> alerts.stream().map(Alert::taskId).toList()
                        .containsAll(List.of(first, second)));
                assertThat(sas.metrics().listenerFailures()).isEqualTo(1);
            }
        }
    }

    @Nested
    class BoundedEvents {

        @Test
        void event_queue_capacity_below_one_is_rejected() {
            assertThatThrownBy(() -> SasRuntime.builder().eventQueueCapacity(0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("eventQueueCapacity must be at least 1, was 0");
            assertThat(SasRuntime.builder().stateStore(real).workflow(echo("cap")).build().config()
                    .eventQueueCapacity()).isEqualTo(SasRuntime.DEFAULT_EVENT_QUEUE_CAPACITY);
        }

        @Test
        void slow_listener_gets_events_dropped_and_counted_and_does_not_hold_back_the_scheduler() {
            Workflow<String> wf = echo("slow-listener");
            CountDownLatch release = new CountDownLatch(1);
            AtomicInteger calls = new AtomicInteger();
            SasRuntime sas = SasRuntime.builder().stateStore(real).workflow(wf).eventQueueCapacity(4)
                    .shutdownGrace(Duration.ofMillis(200)).onEvent(e -> {
                        calls.incrementAndGet();
                        waitFor(release);
                    }).build().start();
            try {
                for (int i = 0; i < 20; i++) {
                    sas.client().submit(wf, "k" + i, "x" + i);
                }

                await().atMost(WAIT).until(() -> real.countByStatus().getOrDefault(TaskStatus.PROCESSED, 0L) == 20);
                assertThat(sas.metrics().eventsDropped()).isGreaterThan(0);
                assertThat(calls.get()).isEqualTo(1);
            } finally {
                release.countDown();
                sas.close();
            }
        }

        @Test
        void no_listener_is_called_after_close_returns() {
            Workflow<String> wf = echo("close-listener");
            CountDownLatch blocked = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicInteger calls = new AtomicInteger();
            AtomicReference<Thread> eventThread = new AtomicReference<>();
            SasRuntime sas = SasRuntime.builder().stateStore(real).workflow(wf).eventQueueCapacity(1_000)
                    .shutdownGrace(Duration.ofMillis(200)).onEvent(e -> {
                        calls.incrementAndGet();
                        eventThread.set(Thread.currentThread());
                        blocked.countDown();
                        waitFor(release);
                    }).build().start();
            for (int i = 0; i < 5; i++) {
                sas.client().submit(wf, "k" + i, "x" + i);
            }
            waitFor(blocked);
            await().atMost(WAIT).until(() -> real.countByStatus().getOrDefault(TaskStatus.PROCESSED, 0L) == 5);

            sas.close();
            int callsAtClose = calls.get();
            release.countDown();

            // released only now, the blocked listener returns and its thread ends without another call
            await().atMost(WAIT).until(() -> !eventThread.get().isAlive());
            assertThat(calls.get()).isEqualTo(callsAtClose).isEqualTo(1);
            assertThat(sas.metrics().eventsDropped()).isGreaterThan(0);
            sas.client().submit(wf, "after-close", "z");
            assertThat(calls.get()).isEqualTo(1);
        }

        /** Waits for the latch, giving up quietly when the event thread is interrupted at close. */
        private static void waitFor(CountDownLatch latch) {
            try {
                latch.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
