package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Hosts and steps that misbehave: each gets a contained failure, and no task is lost or corrupted. */
class MisuseTest {

    private final InMemoryStateStore store = new InMemoryStateStore();

    private long completedEvents(TaskId id) {
        return store.events(id).stream().filter(e -> e.type() == TaskEvent.Type.STEP_COMPLETED).count();
    }

    @Test
    void step_that_blocks_and_ignores_interruption_is_retried_elsewhere_and_its_late_result_rejected()
            throws Exception {
        CountDownLatch stuck = new CountDownLatch(1);
        AtomicInteger attempts = new AtomicInteger();
        Workflow<String> wf = Workflow.builder("stubborn", Codec.string())
                // 2 s, not less: the retry must run and be recorded within one deadline for the counts to hold (a
                // busy machine held a 300 ms one up long enough to miss it)
                .step("block", s -> s.completeWithin(Duration.ofSeconds(2)).execute(ctx -> {
                    if (attempts.incrementAndGet() == 1) {
                        while (true) { // ignores interrupts until the test lets go
                            try {
                                if (stuck.await(10, TimeUnit.SECONDS)) {
                                    return "first";
                                }
                            } catch (InterruptedException ignored) {
                                // a badly written step swallows the interrupt
                            }
                        }
                    }
                    return "second";
                }))
                .build();
        try (SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).schedulerThreads(2)
                .pollInterval(Duration.ofMillis(50)).supervisorInterval(Duration.ofMillis(100)).build().start()) {
            TaskId id = sas.client().submit(wf, "k", "x").id();

            await().atMost(Duration.ofSeconds(30))
                    .until(() -> store.find(id).orElseThrow().status() == TaskStatus.PROCESSED);
            assertThat(store.find(id).orElseThrow().steps().get(0).output()).isEqualTo("second");

            stuck.countDown();
            await().atMost(Duration.ofSeconds(5)).until(() -> sas.metrics().staleRejected() == 1);
            assertThat(store.find(id).orElseThrow().steps().get(0).output()).isEqualTo("second");
            assertThat(completedEvents(id)).isEqualTo(1);
            assertThat(sas.metrics().deadlinesMissed()).isEqualTo(1);
        }
    }

    @Test
    void agent_reply_after_the_deadline_timer_fired_is_still_rejected_and_counted() {
        CompletableFuture<String> hung = new CompletableFuture<>();
        AtomicInteger calls = new AtomicInteger();
        Agent<String, String> slow = new Agent<>() {
            @Override
            public String name() {
                return "slow";
            }

            @Override
            public CompletionStage<String> call(AgentRequest<String> request) {
                return calls.incrementAndGet() == 1 ? hung : CompletableFuture.completedFuture("fast");
            }
        };
        Workflow<String> wf = Workflow.builder("late-timer", Codec.string())
                // 2 s: the retry must be answered and recorded within one deadline (see above)
                .step("call", s -> s.call(slow, ctx -> "req").completeWithin(Duration.ofSeconds(2)))
                .build();
        try (SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).pollInterval(Duration.ofMillis(50))
                .supervisorInterval(Duration.ofMillis(100)).build().start()) {
            TaskId id = sas.client().submit(wf, "k", "x").id();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> store.find(id).orElseThrow().status() == TaskStatus.PROCESSED);
            // the supervisor may recover the step (and the retry finish) before this node's timer fires
            await().atMost(Duration.ofSeconds(5)).until(() -> sas.metrics().deadlinesMissed() == 1);

            hung.complete("too late");

            await().atMost(Duration.ofSeconds(5)).until(() -> sas.metrics().staleRejected() == 1);
            assertThat(store.find(id).orElseThrow().steps().get(0).output()).isEqualTo("fast");
            assertThat(completedEvents(id)).isEqualTo(1);
        }
    }

    @Test
    void agent_that_completes_its_future_twice_is_recorded_once() {
        ManualClock clock = new ManualClock();
        CompletableFuture<String> reply = new CompletableFuture<>();
        Agent<String, String> sloppy = new Agent<>() {
            @Override
            public String name() {
                return "sloppy";
            }

            @Override
            public CompletionStage<String> call(AgentRequest<String> request) {
                return reply;
            }
        };
        Workflow<String> wf = Workflow.builder("twice", Codec.string())
                .step("call", s -> s.call(sloppy, ctx -> "req"))
                .build();
        SasRuntime sas = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf).build();
        TaskId id = sas.client().submit(wf, "k", "x").id();
        Drain.schedulerOnce(sas);

        reply.complete("one");
        reply.complete("two");
        reply.obtrudeValue("three");

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("call").output()).isEqualTo("one");
        assertThat(completedEvents(id)).isEqualTo(1);
    }

    @Test
    void closing_the_runtime_while_a_step_runs_past_the_grace_period_records_nothing_and_another_node_finishes()
            throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        AtomicInteger attempts = new AtomicInteger();
        Workflow<String> wf = Workflow.builder("closing", Codec.string())
                // 2 s: the second node's attempt must finish within one deadline for "done-2" (see above)
                .step("slow", s -> s.completeWithin(Duration.ofSeconds(2)).execute(ctx -> {
                    if (attempts.incrementAndGet() == 1) {
                        started.countDown();
                        never.await(); // interrupted at shutdown
                    }
                    return "done-" + attempts.get();
                }))
                .build();
        SasRuntime first = SasRuntime.builder().stateStore(store).workflow(wf).instanceId("first")
                .shutdownGrace(Duration.ofMillis(100)).build().start();
        TaskId id = first.client().submit(wf, "k", "x").id();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        first.close();

        TaskInfo afterClose = store.find(id).orElseThrow();
        assertThat(afterClose.status()).as("left claimed, not half-recorded").isEqualTo(TaskStatus.PROCESSING);
        assertThat(afterClose.lockedBy()).isEqualTo("first");
        assertThat(afterClose.steps()).isEmpty();
        assertThat(store.events(id)).extracting(TaskEvent::type)
                .containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.STEP_STARTED);

        try (SasRuntime second = SasRuntime.builder().stateStore(store).workflow(wf).instanceId("second")
                .pollInterval(Duration.ofMillis(50)).supervisorInterval(Duration.ofMillis(100)).build().start()) {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> store.find(id).orElseThrow().status() == TaskStatus.PROCESSED);
        }
        assertThat(store.find(id).orElseThrow().steps().get(0).output()).isEqualTo("done-2");
        assertThat(completedEvents(id)).isEqualTo(1);
    }

    @Test
    void step_finishing_during_shutdown_is_recorded_and_its_task_handed_back_for_the_next_step() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Workflow<String> wf = Workflow.builder("handback", Codec.string())
                .step("one", s -> s.execute(ctx -> {
                    started.countDown();
                    finish.await();
                    return "1";
                }))
                .step("two", s -> s.execute(ctx -> "2"))
                .build();
        SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).shutdownGrace(Duration.ofSeconds(10)).build().start();
        TaskId id = sas.client().submit(wf, "k", "x").id();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        Thread closer = new Thread(sas::close);
        closer.start();
        await().atMost(Duration.ofSeconds(5)).until(() -> closer.getState() == Thread.State.TIMED_WAITING
                || closer.getState() == Thread.State.WAITING);
        finish.countDown();
        closer.join(15_000);

        TaskInfo info = store.find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(info.lockedBy()).isNull();
        assertThat(info.currentStep()).isEqualTo(1);
        assertThat(info.steps()).singleElement().satisfies(s -> {
            assertThat(s.status()).isEqualTo(StepStatus.COMPLETED);
            assertThat(s.output()).isEqualTo("1");
        });
    }

    @Test
    void alert_sink_that_throws_is_contained() {
        ManualClock clock = new ManualClock();
        Workflow<String> wf = Workflow.builder("alerting", Codec.string())
                .step("fail", s -> s.execute(ctx -> {
                    throw new dev.sas.core.NonRetryableException("boom");
                }))
                .build();
        SasRuntime sas = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf).alertSink(a -> {
            throw new IllegalStateException("pager down");
        }).build();
        TaskId id = sas.client().submit(wf, "k", "x").id();
        Drain.schedulerOnce(sas);

        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.ERROR);
        assertThat(sas.metrics().listenerFailures()).isEqualTo(1);
    }
}
