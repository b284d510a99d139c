package dev.sas.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Alert;
import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.RuntimeBuilder;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStateException;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Every failure mode of the design, injected against real runtimes over the store under test,
 * driven by hand with a {@link ManualClock}: each test asserts the task's final state, the step
 * attempts, the events, and that no step result or remote effect was recorded twice. Subclass it
 * with a fresh store per test, as for {@link StateStoreContract}.
 */
public abstract class FailureModeContract extends StoreTestSupport {

    /** Deadline of every step here. */
    protected static final Duration DEADLINE = Duration.ofSeconds(10);
    /** Retry delays here: fixed 1 s, no jitter. */
    protected static final RetryPolicy THREE_TRIES = RetryPolicy.builder().maxAttempts(3)
            .fixedBackoff(Duration.ofSeconds(1)).jitter(0).build();

    /** Time for every runtime. */
    protected final ManualClock clock = new ManualClock();
    /** Alerts raised by any runtime. */
    protected final List<Alert> alerts = new CopyOnWriteArrayList<>();
    /** Events delivered to listeners of any runtime. */
    protected final List<TaskEvent> delivered = new CopyOnWriteArrayList<>();
    private final List<SasRuntime> runtimes = new ArrayList<>();

    @Override
    void beforeStoreIsDestroyed() {
        for (SasRuntime s : runtimes) {
            s.close();
        }
    }

    /** A runtime over the shared store and clock, not started. */
    protected SasRuntime runtime(String instance, Workflow<?>... workflows) {
        RuntimeBuilder b = SasRuntime.builder().stateStore(store).clock(clock).instanceId(instance)
                .alertSink(alerts::add).onEvent(delivered::add);
        for (Workflow<?> w : workflows) {
            b.workflow(w);
        }
        SasRuntime sas = b.build();
        runtimes.add(sas);
        return sas;
    }

    /** A workflow of one agent step. */
    protected static Workflow<String> oneAgentStep(String name, ScriptedAgent agent) {
        return Workflow.builder(name, Codec.string())
                .step("call", s -> s.call(agent, ctx -> ctx.input()).completeWithin(DEADLINE))
                .build();
    }

    private static void drain(SasRuntime runtime) {
        Drain.untilIdle(runtime);
    }

    private TaskInfo status(SasRuntime sas, TaskId id) {
        return sas.client().find(id).orElseThrow();
    }

    private List<TaskEvent.Type> types(SasRuntime sas, TaskId id) {
        return sas.client().events(id).stream().map(TaskEvent::type).toList();
    }

    private static long count(List<TaskEvent.Type> types, TaskEvent.Type type) {
        return Collections.frequency(types, type);
    }

    // ------------------------------------------------------------------ remote errors

    @Test
    void transient_agent_error_is_retried_to_success_with_one_effect() {
        ScriptedAgent agent = new ScriptedAgent("payments", THREE_TRIES)
                .thenFail(new IllegalStateException("503 busy")).thenFail(new IllegalStateException("503 busy"))
                .thenReply("charged");
        Workflow<String> wf = oneAgentStep("transient", agent);
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "42.00").id();

        drain(sas);
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.PENDING);
        clock.tick(Duration.ofSeconds(1));
        drain(sas);
        clock.tick(Duration.ofSeconds(1));
        drain(sas);

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("call").attempts()).isEqualTo(3);
        assertThat(info.step("call").output()).isEqualTo("charged");
        assertThat(agent.calls()).hasSize(3);
        assertThat(agent.calls()).extracting(c -> c.idempotencyKey()).containsOnly(id + ":call");
        assertThat(agent.effects()).hasSize(1);
        List<TaskEvent.Type> types = types(sas, id);
        assertThat(count(types, TaskEvent.Type.STEP_RETRYING)).isEqualTo(2);
        assertThat(count(types, TaskEvent.Type.STEP_COMPLETED)).isEqualTo(1);
        assertThat(count(types, TaskEvent.Type.PROCESSED)).isEqualTo(1);
        assertThat(alerts).isEmpty();
        assertThat(sas.metrics().retriesScheduled()).isEqualTo(2);
    }

    @Test
    void persistent_error_ends_in_error_after_the_attempts_with_an_alert() {
        ScriptedAgent agent = new ScriptedAgent("payments", THREE_TRIES)
                .otherwiseFail(new IllegalStateException("service down"));
        Workflow<String> wf = oneAgentStep("persistent", agent);
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        for (int i = 0; i < 5; i++) {
            drain(sas);
            clock.tick(Duration.ofSeconds(1));
        }

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.ERROR);
        assertThat(info.step("call").status()).isEqualTo(StepStatus.FAILED);
        assertThat(info.step("call").attempts()).isEqualTo(3);
        assertThat(info.lastError()).contains("service down");
        assertThat(agent.calls()).hasSize(3);
        assertThat(alerts).singleElement().satisfies(a -> {
            assertThat(a.taskId()).isEqualTo(id);
            assertThat(a.status()).isEqualTo(TaskStatus.ERROR);
            assertThat(a.stepName()).isEqualTo("call");
            assertThat(a.businessKey()).isEqualTo("order-1");
        });
        assertThat(count(types(sas, id), TaskEvent.Type.ERROR)).isEqualTo(1);
    }

    @Test
    void non_retryable_error_fails_at_once() {
        ScriptedAgent agent = new ScriptedAgent("payments", THREE_TRIES)
                .thenFail(new NonRetryableException("card declined"));
        Workflow<String> wf = oneAgentStep("declined", agent);
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        drain(sas);

        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.ERROR);
        assertThat(status(sas, id).lastError()).contains("card declined");
        assertThat(agent.calls()).hasSize(1);
    }

    @Test
    void agent_that_throws_counts_as_a_failed_attempt_and_is_retried() {
        ScriptedAgent agent = new ScriptedAgent("inventory", THREE_TRIES)
                .thenThrow(new IllegalArgumentException("bug in client")).thenReply("reserved");
        Workflow<String> wf = oneAgentStep("throws", agent);
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        drain(sas);
        clock.tick(Duration.ofSeconds(1));
        drain(sas);

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("call").attempts()).isEqualTo(2);
        assertThat(sas.client().events(id)).filteredOn(e -> e.type() == TaskEvent.Type.STEP_RETRYING)
                .singleElement().satisfies(e -> assertThat(e.message()).contains("bug in client"));
    }

    // ------------------------------------------------------------------ deadlines

    @Test
    void hung_agent_is_recovered_by_the_supervisor_and_the_retry_succeeds() {
        ScriptedAgent agent = new ScriptedAgent("shipping", THREE_TRIES).thenHang().thenReply("booked");
        Workflow<String> wf = oneAgentStep("hang", agent);
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        drain(sas);
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(sas.runSupervisorOnce()).as("deadline not passed yet").isZero();

        clock.tick(DEADLINE.plusSeconds(1));
        assertThat(sas.runSupervisorOnce()).isEqualTo(1);
        TaskInfo recovered = status(sas, id);
        assertThat(recovered.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(recovered.failureCount()).isEqualTo(1);
        assertThat(recovered.lockedBy()).isNull();

        clock.tick(Duration.ofSeconds(1));
        drain(sas);
        TaskInfo done = status(sas, id);
        assertThat(done.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(done.step("call").output()).isEqualTo("booked");
        assertThat(done.step("call").attempts()).isEqualTo(2);

        // The hung call finally answers: rejected, nothing changes.
        agent.hanging().get(0).complete("late");
        assertThat(status(sas, id).step("call").output()).isEqualTo("booked");
        assertThat(sas.metrics().staleRejected()).isEqualTo(1);
        List<TaskEvent.Type> types = types(sas, id);
        assertThat(count(types, TaskEvent.Type.STEP_TIMED_OUT)).isEqualTo(1);
        assertThat(count(types, TaskEvent.Type.STEP_COMPLETED)).isEqualTo(1);
        assertThat(count(types, TaskEvent.Type.PROCESSED)).isEqualTo(1);
    }

    @Test
    void reply_after_the_deadline_is_rejected_and_changes_nothing() {
        ScriptedAgent agent = new ScriptedAgent("shipping", THREE_TRIES).thenHang();
        Workflow<String> wf = oneAgentStep("late", agent);
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();
        drain(sas);
        long eventsBefore = sas.client().events(id).size();

        clock.tick(DEADLINE.plusMillis(1));
        agent.hanging().get(0).complete("too late");

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(info.step("call").output()).isNull();
        assertThat(sas.client().events(id)).hasSize((int) eventsBefore);
        assertThat(sas.metrics().staleRejected()).isEqualTo(1);
        assertThat(sas.inFlight()).as("the late attempt is let go").isZero();
    }

    @Test
    void step_timing_out_past_its_failure_threshold_ends_in_error_with_an_alert() {
        ScriptedAgent agent = new ScriptedAgent("slow", RetryPolicy.builder().maxAttempts(10)
                .fixedBackoff(Duration.ofSeconds(1)).jitter(0).build());
        for (int i = 0; i < 5; i++) {
            agent.thenHang();
        }
        Workflow<String> wf = Workflow.builder("threshold", Codec.string())
                .step("call", s -> s.call(agent, ctx -> ctx.input()).completeWithin(DEADLINE).failureThreshold(2))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        for (int i = 0; i < 4; i++) {
            drain(sas);
            clock.tick(DEADLINE.plusSeconds(2));
            sas.runSupervisorOnce();
        }

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.ERROR);
        assertThat(info.failureCount()).isEqualTo(2);
        assertThat(agent.calls()).hasSize(2);
        assertThat(alerts).singleElement().satisfies(a -> assertThat(a.message()).contains("time-out 2 of 2"));
    }

    // ------------------------------------------------------------------ nodes dying

    @Test
    void task_abandoned_by_a_dead_node_is_finished_by_another_node_and_recorded_once() {
        ScriptedAgent agentOnA = new ScriptedAgent("payments", THREE_TRIES).thenReply("a-reserved").thenHang();
        Workflow<String> wfOnA = Workflow.builder("two-steps", Codec.string())
                .step("reserve", s -> s.call(agentOnA, ctx -> "r").completeWithin(DEADLINE))
                .step("charge", s -> s.call(agentOnA, ctx -> "c").completeWithin(DEADLINE))
                .build();
        ScriptedAgent agentOnB = new ScriptedAgent("payments", THREE_TRIES).thenReply("b-charged");
        Workflow<String> wfOnB = Workflow.builder("two-steps", Codec.string())
                .step("reserve", s -> s.call(agentOnB, ctx -> "r").completeWithin(DEADLINE))
                .step("charge", s -> s.call(agentOnB, ctx -> "c:" + ctx.output("reserve").orElseThrow())
                        .completeWithin(DEADLINE))
                .build();
        SasRuntime nodeA = runtime("node-a", wfOnA);
        SasRuntime nodeB = runtime("node-b", wfOnB);
        TaskId id = nodeA.client().submit(wfOnA, "order-1", "x").id();

        drain(nodeA); // reserve completes, charge hangs: node A now "dies"
        assertThat(status(nodeB, id).lockedBy()).isEqualTo("node-a");
        assertThat(nodeB.runSchedulerOnce()).as("node B cannot take a held task").isZero();

        clock.tick(DEADLINE.plusSeconds(1));
        assertThat(nodeB.runSupervisorOnce()).isEqualTo(1);
        clock.tick(Duration.ofSeconds(1));
        drain(nodeB);

        TaskInfo info = status(nodeB, id);
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("reserve").output()).isEqualTo("a-reserved");
        assertThat(info.step("reserve").attempts()).isEqualTo(1);
        assertThat(info.step("charge").output()).isEqualTo("b-charged");
        assertThat(agentOnB.calls()).singleElement().satisfies(c -> assertThat(c.payload()).isEqualTo("c:a-reserved"));
        // Node A wakes up and replies: fenced off.
        agentOnA.hanging().get(0).complete("a-charged");
        assertThat(status(nodeB, id).step("charge").output()).isEqualTo("b-charged");
        assertThat(count(types(nodeB, id), TaskEvent.Type.STEP_COMPLETED)).isEqualTo(2);
    }

    @Test
    void racing_supervisors_recover_each_expired_claim_exactly_once() throws Exception {
        ScriptedAgent agent = new ScriptedAgent("slow", THREE_TRIES);
        for (int i = 0; i < 40; i++) {
            agent.thenHang();
        }
        Workflow<String> wf = oneAgentStep("race-sup", agent);
        SasRuntime worker = runtime("worker", wf);
        List<TaskId> ids = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            ids.add(worker.client().submit(wf, "k" + i, "x").id());
        }
        drain(worker);
        clock.tick(DEADLINE.plusSeconds(1));

        List<SasRuntime> supervisors = List.of(runtime("sup-1", wf), runtime("sup-2", wf), runtime("sup-3", wf));
        ExecutorService pool = Executors.newFixedThreadPool(supervisors.size());
        int recovered = 0;
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Integer>> results = new ArrayList<>();
            for (SasRuntime s : supervisors) {
                results.add(pool.submit(() -> {
                    start.await();
                    return s.runSupervisorOnce();
                }));
            }
            start.countDown();
            List<Integer> counts = new ArrayList<>();
            for (Future<Integer> f : results) {
                counts.add(f.get(30, TimeUnit.SECONDS));
            }
            recovered = counts.stream().mapToInt(Integer::intValue).sum();
            assertThat(counts).as("only the lease holder recovers").filteredOn(c -> c > 0).hasSize(1);
        } finally {
            pool.shutdownNow();
        }
        assertThat(recovered).isEqualTo(40);
        for (TaskId id : ids) {
            TaskInfo info = status(worker, id);
            assertThat(info.failureCount()).isEqualTo(1);
            assertThat(count(types(worker, id), TaskEvent.Type.STEP_TIMED_OUT)).isEqualTo(1);
        }
    }

    @Test
    void nodes_whose_clocks_disagree_never_record_a_step_twice() {
        ScriptedAgent agent = new ScriptedAgent("payments", THREE_TRIES).thenHang().thenReply("second");
        Workflow<String> wf = oneAgentStep("skew", agent);
        ManualClock behind = new ManualClock(clock.instant());
        SasRuntime slow = SasRuntime.builder().stateStore(store).clock(behind).instanceId("slow-clock").workflow(wf).build();
        runtimes.add(slow);
        SasRuntime fast = runtime("fast-clock", wf);
        TaskId id = slow.client().submit(wf, "order-1", "x").id();
        drain(slow);

        // The fast node's clock is 12 s ahead: it sees the claim expired and recovers it.
        clock.tick(DEADLINE.plusSeconds(2));
        assertThat(fast.runSupervisorOnce()).isEqualTo(1);
        clock.tick(Duration.ofSeconds(1));
        drain(fast);
        // The slow node, still within the deadline by its own clock, answers now.
        behind.tick(Duration.ofSeconds(3));
        agent.hanging().get(0).complete("first");

        TaskInfo info = status(fast, id);
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("call").output()).isEqualTo("second");
        assertThat(count(types(fast, id), TaskEvent.Type.STEP_COMPLETED)).isEqualTo(1);
        assertThat(slow.metrics().staleRejected()).isEqualTo(1);
    }

    // ------------------------------------------------------------------ submission

    @Test
    void duplicate_submission_returns_the_first_task_and_runs_it_once() {
        ScriptedAgent agent = new ScriptedAgent("payments", THREE_TRIES);
        Workflow<String> wf = oneAgentStep("dup", agent);
        SasRuntime sas = runtime("node-a", wf);

        TaskId first = sas.client().submit(wf, "order-1", "x").id();
        TaskId second = sas.client().submit(wf, "order-1", "y").id();
        drain(sas);

        assertThat(second).isEqualTo(first);
        assertThat(agent.calls()).singleElement().satisfies(c -> assertThat(c.payload()).isEqualTo("x"));
        assertThat(sas.client().countByStatus().get(TaskStatus.PROCESSED)).isEqualTo(1L);
    }

    @Test
    void bad_input_is_refused_with_a_clear_error_and_nothing_is_stored() {
        ScriptedAgent agent = new ScriptedAgent("payments", THREE_TRIES);
        Workflow<String> wf = oneAgentStep("inputs", agent);
        SasRuntime sas = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf).maxPayloadBytes(1000).build();
        runtimes.add(sas);

        assertThatThrownBy(() -> sas.client().submit(wf, "k", null).id()).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("input");
        assertThatThrownBy(() -> sas.client().submit(wf, null, "x").id()).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("businessKey");
        assertThatThrownBy(() -> sas.client().submit(wf, "  ", "x").id()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("businessKey must not be blank");
        assertThatThrownBy(() -> sas.client().submit(wf, "k", " ").id()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blank");
        assertThatThrownBy(() -> sas.client().submit(wf, "k", "x".repeat(1001)).id()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1001 bytes").hasMessageContaining("limit of 1000");
        assertThatThrownBy(() -> sas.client().submit(wf, "k".repeat(201), "x").id()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 200");
        assertThat(sas.client().countByStatus().values().stream().mapToLong(Long::longValue).sum()).isZero();
    }

    // ------------------------------------------------------------------ compensation

    @Test
    void failure_compensates_completed_steps_in_reverse_order() {
        List<String> log = new CopyOnWriteArrayList<>();
        Workflow<String> wf = Workflow.builder("saga", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release")))
                .step("charge", s -> s.execute(ctx -> "c").compensateWith(ctx -> log.add("refund:"
                        + ctx.output("charge").orElseThrow() + ":" + ctx.idempotencyKey())))
                .step("audit", s -> s.execute(ctx -> "a"))
                .step("ship", s -> s.execute(ctx -> {
                    throw new NonRetryableException("no courier");
                }).compensateWith(ctx -> log.add("never: ship did not complete")))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        drain(sas);

        assertThat(log).containsExactly("refund:c:" + id + ":charge:compensate", "release");
        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(info.step("reserve").compensationStatus()).isEqualTo(StepStatus.COMPENSATED);
        assertThat(info.step("charge").compensationStatus()).isEqualTo(StepStatus.COMPENSATED);
        assertThat(info.step("audit").compensationStatus()).isNull();
        assertThat(info.step("ship").status()).isEqualTo(StepStatus.FAILED);
        assertThat(info.lastError()).contains("no courier");
        assertThat(types(sas, id)).containsSubsequence(TaskEvent.Type.STEP_FAILED, TaskEvent.Type.COMPENSATING,
                TaskEvent.Type.COMPENSATION_STARTED, TaskEvent.Type.COMPENSATION_COMPLETED,
                TaskEvent.Type.COMPENSATION_STARTED, TaskEvent.Type.COMPENSATION_COMPLETED, TaskEvent.Type.COMPENSATED);
        assertThat(alerts).isEmpty();
    }

    @Test
    void step_whose_outcome_is_unknown_is_compensated_too() {
        List<String> log = new CopyOnWriteArrayList<>();
        ScriptedAgent payments = new ScriptedAgent("payments", THREE_TRIES)
                .otherwiseFail(new IllegalStateException("reply lost"));
        Workflow<String> wf = Workflow.builder("unknown-outcome", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release")))
                .step("charge", s -> s.call(payments, ctx -> "42").completeWithin(DEADLINE)
                        .compensateWith(ctx -> log.add("refund " + ctx.idempotencyKey())))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        for (int i = 0; i < 4; i++) {
            drain(sas);
            clock.tick(Duration.ofSeconds(1));
        }

        // The charge may have gone through with its reply lost: it is refunded, then stock released.
        assertThat(log).containsExactly("refund " + id + ":charge:compensate", "release");
        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(info.step("charge").status()).isEqualTo(StepStatus.FAILED);
        assertThat(info.step("charge").compensationStatus()).isEqualTo(StepStatus.COMPENSATED);
    }

    @Test
    void step_timing_out_for_good_is_compensated_too() {
        List<String> log = new CopyOnWriteArrayList<>();
        ScriptedAgent shipping = new ScriptedAgent("shipping", THREE_TRIES).thenHang().thenHang();
        Workflow<String> wf = Workflow.builder("timeout-comp", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release")))
                .step("ship", s -> s.call(shipping, ctx -> "box").completeWithin(DEADLINE).failureThreshold(2)
                        .compensateWith(ctx -> log.add("cancel shipment")))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        for (int i = 0; i < 3; i++) {
            drain(sas);
            clock.tick(DEADLINE.plusSeconds(2));
            sas.runSupervisorOnce();
        }
        drain(sas);

        assertThat(log).containsExactly("cancel shipment", "release");
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(shipping.calls()).hasSize(2);
    }

    @Test
    void compensation_that_keeps_failing_ends_compensation_failed_with_an_alert() {
        List<String> log = new CopyOnWriteArrayList<>();
        Workflow<String> wf = Workflow.builder("saga-fail", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release")))
                .step("charge", s -> s.execute(ctx -> "c").retry(THREE_TRIES).compensateWith(ctx -> {
                    log.add("refund attempt " + ctx.attempt());
                    throw new IllegalStateException("refund service down");
                }))
                .step("ship", s -> s.execute(ctx -> {
                    throw new NonRetryableException("no courier");
                }))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        for (int i = 0; i < 4; i++) {
            drain(sas);
            clock.tick(Duration.ofSeconds(1));
        }

        assertThat(log).containsExactly("refund attempt 1", "refund attempt 2", "refund attempt 3");
        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.COMPENSATION_FAILED);
        assertThat(info.step("charge").compensationStatus()).isEqualTo(StepStatus.COMPENSATION_FAILED);
        assertThat(info.step("reserve").compensationStatus()).as("stops at the failed one").isNull();
        assertThat(alerts).singleElement().satisfies(a -> {
            assertThat(a.status()).isEqualTo(TaskStatus.COMPENSATION_FAILED);
            assertThat(a.stepName()).isEqualTo("charge");
        });

        // An operator fixes the refund service and resubmits: compensation continues.
        Workflow<String> fixed = Workflow.builder("saga-fail", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release")))
                .step("charge", s -> s.execute(ctx -> "c").compensateWith(ctx -> log.add("refund ok")))
                .step("ship", s -> s.execute(ctx -> "s"))
                .build();
        SasRuntime repaired = runtime("node-b", fixed);
        repaired.client().resubmit(id);
        drain(repaired);
        assertThat(status(repaired, id).status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(log).endsWith("refund ok", "release");
    }

    @Test
    void cancel_compensates_completed_steps_and_ends_cancelled() {
        List<String> log = new CopyOnWriteArrayList<>();
        ScriptedAgent shipping = new ScriptedAgent("shipping", THREE_TRIES).thenHang();
        Workflow<String> wf = Workflow.builder("cancel", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release")))
                .step("ship", s -> s.call(shipping, ctx -> "ship").completeWithin(DEADLINE))
                .step("confirm", s -> s.execute(ctx -> "c"))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();
        drain(sas);
        assertThat(status(sas, id).currentStep()).isEqualTo(1);

        assertThat(sas.client().cancel(id)).isTrue();
        assertThat(sas.client().cancel(id)).as("already requested").isFalse();
        shipping.hanging().get(0).complete("shipped");

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(log).containsExactly("release");
        assertThat(info.step("ship").status()).as("the running step finished first").isEqualTo(StepStatus.COMPLETED);
        assertThat(info.step("confirm").status()).isEqualTo(StepStatus.PENDING);
        assertThat(types(sas, id)).containsSubsequence(TaskEvent.Type.CANCEL_REQUESTED, TaskEvent.Type.COMPENSATING,
                TaskEvent.Type.CANCELLED);
        assertThat(sas.client().cancel(id)).as("finished").isFalse();
    }

    @Test
    void cancel_while_a_step_waits_for_its_retry_compensates_that_step_too() {
        List<String> log = new CopyOnWriteArrayList<>();
        ScriptedAgent payments = new ScriptedAgent("payments", THREE_TRIES)
                .thenFail(new IllegalStateException("reply lost"));
        Workflow<String> wf = Workflow.builder("cancel-retry", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release")))
                .step("charge", s -> s.call(payments, ctx -> "42")
                        .compensateWith(ctx -> log.add("refund")))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();
        drain(sas);
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.PENDING);

        assertThat(sas.client().cancel(id)).isTrue();
        clock.tick(Duration.ofSeconds(1));
        drain(sas);

        // The failed charge attempt may have gone through: it is refunded before the stock is released.
        assertThat(log).containsExactly("refund", "release");
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(payments.calls()).hasSize(1);
    }

    // ------------------------------------------------------------------ operators and redeploys

    @Test
    void a_node_missing_the_workflow_leaves_its_task_pending_and_a_redeploy_finishes_it_without_a_resubmit() {
        ScriptedAgent agent = new ScriptedAgent("payments", THREE_TRIES);
        Workflow<String> v1 = Workflow.builder("orders", Codec.string())
                .step("charge", s -> s.call(agent, ctx -> ctx.input()))
                .build();
        Workflow<String> other = Workflow.builder("other", Codec.string())
                .step("x", s -> s.execute(ctx -> "x"))
                .build();
        SasRuntime submitter = SasRuntime.builder().stateStore(store).clock(clock).workflow(v1).build();
        runtimes.add(submitter);
        TaskId id = submitter.client().submit(v1, "order-1", "payload-kept").id();
        SasRuntime oldDeploy = runtime("old-deploy", other);

        assertThat(oldDeploy.runSchedulerOnce()).as("tasks the node without 'orders' claimed").isZero();

        TaskInfo waiting = status(oldDeploy, id);
        assertThat(waiting.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(waiting.lastError()).isNull();
        assertThat(alerts).isEmpty();
        assertThat(agent.calls()).isEmpty();

        SasRuntime newDeploy = runtime("new-deploy", v1);
        drain(newDeploy);
        assertThat(status(newDeploy, id).status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(agent.calls()).singleElement().satisfies(c -> assertThat(c.payload()).isEqualTo("payload-kept"));
    }

    @Test
    void a_task_no_live_runtime_can_run_is_parked_after_the_grace_period_and_resumes_by_itself_when_its_definition_returns() {
        ScriptedAgent agent = new ScriptedAgent("payments", THREE_TRIES);
        Workflow<String> v1 = Workflow.builder("orders", Codec.string())
                .step("charge", s -> s.call(agent, ctx -> ctx.input()))
                .build();
        Workflow<String> other = Workflow.builder("other", Codec.string())
                .step("x", s -> s.execute(ctx -> "x"))
                .build();
        SasRuntime submitter = SasRuntime.builder().stateStore(store).clock(clock).workflow(v1)
                .schedulerEnabled(false).build();
        runtimes.add(submitter);
        TaskId id = submitter.client().submit(v1, "order-1", "payload-kept").id();
        SasRuntime oldDeploy = runtime("old-deploy", other);
        oldDeploy.runSupervisorOnce();
        for (int minute = 0; minute < 4; minute++) {
            Drain.afterTime(oldDeploy, clock, Duration.ofMinutes(1));
        }
        assertThat(status(oldDeploy, id).status()).as("within the grace period").isEqualTo(TaskStatus.PENDING);

        for (int minute = 0; minute < 2; minute++) {
            Drain.afterTime(oldDeploy, clock, Duration.ofMinutes(1));
        }
        TaskInfo parked = status(oldDeploy, id);
        assertThat(parked.status()).isEqualTo(TaskStatus.PARKED);
        assertThat(parked.lastError()).contains("workflow 'orders' version 1", "runs by itself");
        assertThat(types(oldDeploy, id)).containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.PARKED);
        assertThat(delivered).extracting(TaskEvent::type).contains(TaskEvent.Type.PARKED);
        assertThat(agent.calls()).isEmpty();

        SasRuntime newDeploy = runtime("new-deploy", v1);
        for (int i = 0; i < 6; i++) { // a minute: the supervisor's next check; advertisements renewed meanwhile
            newDeploy.runSupervisorOnce();
            Drain.afterTime(oldDeploy, clock, Duration.ofSeconds(10));
        }
        assertThat(status(oldDeploy, id).status()).isEqualTo(TaskStatus.PENDING);
        drain(newDeploy);

        assertThat(status(newDeploy, id).status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(types(newDeploy, id)).containsSubsequence(TaskEvent.Type.PARKED, TaskEvent.Type.UNPARKED,
                TaskEvent.Type.STEP_STARTED, TaskEvent.Type.PROCESSED);
        assertThat(agent.calls()).singleElement().satisfies(c -> assertThat(c.payload()).isEqualTo("payload-kept"));
        assertThat(alerts).isEmpty();
    }

    @Test
    void resubmitted_error_task_resumes_at_its_failed_step_without_rerunning_completed_ones() {
        List<String> ran = new CopyOnWriteArrayList<>();
        boolean[] broken = {true};
        Workflow<String> wf = Workflow.builder("resume", Codec.string())
                .compensateOnFailure(false)
                .step("first", s -> s.execute(ctx -> {
                    ran.add("first");
                    return "1";
                }))
                .step("second", s -> s.execute(ctx -> {
                    ran.add("second");
                    if (broken[0]) {
                        throw new NonRetryableException("broken");
                    }
                    return "2";
                }))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();
        drain(sas);
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.ERROR);
        assertThatThrownBy(() -> sas.client().resubmit(TaskId.random())).isInstanceOf(dev.sas.core.TaskNotFoundException.class);

        broken[0] = false;
        sas.client().resubmit(id);
        drain(sas);

        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(ran).containsExactly("first", "second", "second");
        assertThatThrownBy(() -> sas.client().resubmit(id)).isInstanceOfSatisfying(TaskStateException.class, e -> {
            assertThat(e.taskId()).isEqualTo(id);
            assertThat(e.actual()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(e.allowed()).containsExactlyInAnyOrder(TaskStatus.ERROR, TaskStatus.COMPENSATION_FAILED);
        }).hasMessageContaining("PROCESSED");
    }

    @Test
    void listener_that_throws_does_not_affect_the_task() {
        Workflow<String> wf = Workflow.builder("listener", Codec.string())
                .step("only", s -> s.execute(ctx -> "done"))
                .build();
        SasRuntime sas = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf).onEvent(e -> {
            throw new IllegalStateException("listener bug");
        }).onEvent(delivered::add).build();
        runtimes.add(sas);
        TaskId id = sas.client().submit(wf, "k", "x").id();
        drain(sas);

        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(delivered).extracting(TaskEvent::type).contains(TaskEvent.Type.PROCESSED);
        assertThat(sas.metrics().listenerFailures()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void output_the_codec_cannot_encode_fails_the_step_without_retry() {
        Codec<Integer> picky = Codec.of(i -> {
            if (i < 0) {
                throw new IllegalArgumentException("negative amounts cannot be encoded");
            }
            return Integer.toString(i);
        }, Integer::valueOf);
        Workflow<String> wf = Workflow.builder("codec", Codec.string())
                .step("amount", s -> s.execute(dev.sas.core.Step.typed(picky, ctx -> -5)).retry(THREE_TRIES))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "k", "x").id();
        drain(sas);

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.ERROR);
        assertThat(info.step("amount").attempts()).isEqualTo(1);
        assertThat(info.lastError()).contains("negative amounts cannot be encoded");
    }
}
