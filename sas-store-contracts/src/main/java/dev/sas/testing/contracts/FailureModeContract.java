package dev.sas.testing.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Alert;
import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.RuntimeBuilder;
import dev.sas.core.SasRuntime;
import dev.sas.core.StateStoreException;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStateException;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import dev.sas.testing.ScriptedAgent;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * Every failure mode of the design, injected against real runtimes over the store under test,
 * driven by hand with a {@link ManualClock}: each test asserts the task's final state, the step
 * attempts, the events, and that no step result or remote effect was recorded twice. Subclass it
 * with a fresh store per test, as for {@link StateStoreContract}.
 *
 * <p>The runtimes here trust the manual clock ({@code trustLocalClock()}), so the tests drive time
 * on every store alike; skew against a store's own clock is tested where the store's clock can be
 * set (an {@code InMemoryStateStore} with a clock, or a node clock offset from a real database's).
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
        return runtime(instance, store, workflows);
    }

    private SasRuntime runtime(String instance, StateStore over, Workflow<?>... workflows) {
        RuntimeBuilder b = SasRuntime.builder().stateStore(over).clock(clock).trustLocalClock().instanceId(instance)
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

    /** {@code rounds} times: runs what is due, then moves the clock on by a second (retries back off 1 s). */
    private void drainEverySecond(SasRuntime sas, int rounds) {
        for (int i = 0; i < rounds; i++) {
            drain(sas);
            clock.tick(Duration.ofSeconds(1));
        }
    }

    /** {@code rounds} times: runs what is due, lets its deadline pass, and one supervisor pass times it out. */
    private void timeOutRounds(SasRuntime sas, int rounds) {
        for (int i = 0; i < rounds; i++) {
            drain(sas);
            clock.tick(DEADLINE.plusSeconds(2));
            Drain.supervisorOnce(sas);
        }
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

        drainEverySecond(sas, 5);

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
        assertThat(Drain.supervisorOnce(sas)).as("deadline not passed yet").isZero();

        clock.tick(DEADLINE.plusSeconds(1));
        assertThat(Drain.supervisorOnce(sas)).isEqualTo(1);
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
    void step_timing_out_max_timeouts_times_ends_in_error_with_an_alert() {
        ScriptedAgent agent = new ScriptedAgent("slow", RetryPolicy.builder().maxAttempts(10)
                .fixedBackoff(Duration.ofSeconds(1)).jitter(0).build());
        for (int i = 0; i < 5; i++) {
            agent.thenHang();
        }
        Workflow<String> wf = Workflow.builder("threshold", Codec.string())
                .step("call", s -> s.call(agent, ctx -> ctx.input()).completeWithin(DEADLINE).maxTimeouts(2))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        timeOutRounds(sas, 4);

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.ERROR);
        assertThat(info.failureCount()).isEqualTo(2);
        assertThat(agent.calls()).hasSize(2);
        assertThat(alerts).singleElement().satisfies(a -> assertThat(a.message()).contains("time-out 2 of 2"));
    }

    @Test
    void a_step_is_tried_at_most_max_attempts_times_however_its_attempts_fail() {
        // Time-out, transient error, time-out: the third attempt is the last the policy allows,
        // although only two of the three time-outs maxTimeouts allows were used.
        ScriptedAgent agent = new ScriptedAgent("payments", THREE_TRIES)
                .thenHang().thenFail(new IllegalStateException("503 busy")).thenHang().thenReply("too late");
        Workflow<String> wf = Workflow.builder("budget", Codec.string())
                .compensateOnFailure(false)
                .step("call", s -> s.call(agent, ctx -> ctx.input()).completeWithin(DEADLINE).maxTimeouts(3))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        timeOutRounds(sas, 5);

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.ERROR);
        assertThat(agent.calls()).hasSize(3);
        assertThat(info.failureCount()).as("time-outs").isEqualTo(2);
        assertThat(alerts).singleElement()
                .satisfies(a -> assertThat(a.message()).contains("time-out 2 of 3, attempt 3 of 3"));
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
        assertThat(Drain.schedulerOnce(nodeB)).as("node B cannot take a held task").isZero();

        clock.tick(DEADLINE.plusSeconds(1));
        assertThat(Drain.supervisorOnce(nodeB)).isEqualTo(1);
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
                    return Drain.supervisorOnce(s);
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

    /** Fencing alone, with clocks trusted as they are: the store's clock would prevent the early recovery. */
    @Test
    void nodes_whose_clocks_disagree_never_record_a_step_twice() {
        ScriptedAgent agent = new ScriptedAgent("payments", THREE_TRIES).thenHang().thenReply("second");
        Workflow<String> wf = oneAgentStep("skew", agent);
        ManualClock behind = new ManualClock(clock.instant());
        SasRuntime slow = SasRuntime.builder().stateStore(store).clock(behind).trustLocalClock().instanceId("slow-clock").workflow(wf).build();
        runtimes.add(slow);
        SasRuntime fast = runtime("fast-clock", wf);
        TaskId id = slow.client().submit(wf, "order-1", "x").id();
        drain(slow);

        // The fast node's clock is 12 s ahead: it sees the claim expired and recovers it.
        clock.tick(DEADLINE.plusSeconds(2));
        assertThat(Drain.supervisorOnce(fast)).isEqualTo(1);
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

    // ------------------------------------------------------------------ commit acknowledgement lost

    /**
     * The store under test, except that the first write holding a transition that {@code lostAck}
     * matches commits and then throws, as when the connection drops after the database committed.
     */
    private StateStore losingTheAcknowledgementOnce(Predicate<Transition> lostAck) {
        AtomicBoolean lost = new AtomicBoolean();
        StateStore real = store;
        return (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {StateStore.class},
                (proxy, method, args) -> {
                    Object result;
                    try {
                        result = method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (method.getName().equals("write")
                            && ((List<?>) args[0]).stream().anyMatch(t -> lostAck.test((Transition) t))
                            && lost.compareAndSet(false, true)) {
                        throw new StateStoreException("write failed: connection reset after the commit (injected)");
                    }
                    return result;
                });
    }

    /** A started runtime over {@code over}, sharing the clock, alerts and listener of the others. */
    private SasRuntime started(StateStore over, Workflow<?> wf) {
        SasRuntime sas = SasRuntime.builder().stateStore(over).clock(clock).trustLocalClock().instanceId("node-ack")
                .alertSink(alerts::add).onEvent(delivered::add).workflow(wf).pollInterval(Duration.ofMillis(20))
                .build();
        runtimes.add(sas);
        sas.start();
        return sas;
    }

    private long deliveredOf(TaskId id, TaskEvent.Type type) {
        return delivered.stream().filter(e -> e.taskId().equals(id) && e.type() == type).count();
    }

    @Test
    void lost_acknowledgement_of_the_final_write_is_recognised_on_replay_and_processed_is_heard_once() {
        Workflow<String> wf = Workflow.builder("lost-ack", Codec.string())
                .step("only", s -> s.execute(ctx -> "done").completeWithin(DEADLINE))
                .build();
        SasRuntime sas = started(losingTheAcknowledgementOnce(t -> t.status() == TaskStatus.PROCESSED), wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        await().atMost(Duration.ofSeconds(30)).until(() -> deliveredOf(id, TaskEvent.Type.PROCESSED) > 0);
        sas.close();

        assertThat(deliveredOf(id, TaskEvent.Type.PROCESSED)).isEqualTo(1);
        assertThat(deliveredOf(id, TaskEvent.Type.STEP_COMPLETED)).isEqualTo(1);
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.PROCESSED);
        List<TaskEvent.Type> types = types(sas, id);
        assertThat(count(types, TaskEvent.Type.STEP_COMPLETED)).isEqualTo(1);
        assertThat(count(types, TaskEvent.Type.PROCESSED)).isEqualTo(1);
        assertThat(sas.metrics().storeFailures()).isEqualTo(1);
        assertThat(sas.metrics().staleRejected()).isZero();
    }

    @Test
    void lost_acknowledgement_of_a_move_to_compensating_at_the_same_step_applies_it_once() {
        List<String> log = new CopyOnWriteArrayList<>();
        Workflow<String> wf = Workflow.builder("lost-ack-saga", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release")))
                .step("charge", s -> s.execute(ctx -> {
                    throw new IllegalStateException("reply lost");
                }).retry(RetryPolicy.builder().maxAttempts(1).build()).completeWithin(DEADLINE)
                        .compensateWith(ctx -> log.add("refund")))
                .build();
        // PROCESSING(charge) -> COMPENSATING(charge) keeps lease, step and lock.
        SasRuntime sas = started(losingTheAcknowledgementOnce(t -> t.fromStatus() == TaskStatus.PROCESSING
                && t.status() == TaskStatus.COMPENSATING), wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        await().atMost(Duration.ofSeconds(30)).until(() -> deliveredOf(id, TaskEvent.Type.COMPENSATED) > 0);
        sas.close();

        assertThat(log).containsExactly("refund", "release");
        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(info.step("charge").compensationStatus()).isEqualTo(StepStatus.COMPENSATED);
        List<TaskEvent.Type> types = types(sas, id);
        assertThat(count(types, TaskEvent.Type.STEP_FAILED)).isEqualTo(1);
        assertThat(count(types, TaskEvent.Type.COMPENSATING)).isEqualTo(1);
        assertThat(count(types, TaskEvent.Type.COMPENSATION_STARTED)).isEqualTo(2);
        assertThat(count(types, TaskEvent.Type.COMPENSATED)).isEqualTo(1);
        assertThat(deliveredOf(id, TaskEvent.Type.COMPENSATING)).isEqualTo(1);
        assertThat(deliveredOf(id, TaskEvent.Type.COMPENSATED)).isEqualTo(1);
    }

    // ------------------------------------------------------------------ values the database cannot store

    @Test
    void error_message_a_database_cannot_store_is_recorded_cleaned_with_the_real_error() {
        Workflow<String> wf = Workflow.builder("nul-error", Codec.string())
                .compensateOnFailure(false)
                .step("charge", s -> s.execute(ctx -> {
                    throw new NonRetryableException("card \u0000 declined \uD800!");
                }))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        drain(sas);

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.ERROR);
        assertThat(info.lastError()).startsWith("NonRetryableException: card \uFFFD declined \uFFFD!")
                .contains("2 characters a database cannot store replaced by U+FFFD");
        assertThat(info.step("charge").status()).isEqualTo(StepStatus.FAILED);
        assertThat(info.step("charge").attempts()).isEqualTo(1);
        assertThat(info.step("charge").error()).isEqualTo(info.lastError());
        assertThat(sas.client().events(id)).filteredOn(e -> e.type() == TaskEvent.Type.ERROR).singleElement()
                .satisfies(e -> assertThat(e.message()).isEqualTo(info.lastError()));
        assertThat(alerts).singleElement().satisfies(a -> assertThat(a.message()).contains("card \uFFFD declined"));
        assertThat(sas.metrics().storeFailures()).isZero();
    }

    @Test
    void output_a_database_cannot_store_fails_the_step_naming_it_and_the_position_and_compensates_it() {
        List<String> log = new CopyOnWriteArrayList<>();
        AtomicInteger labels = new AtomicInteger();
        Workflow<String> wf = Workflow.builder("nul-output", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release")))
                .step("label", s -> s.execute(ctx -> {
                    labels.incrementAndGet();
                    return "ab\u0000c";
                }).retry(THREE_TRIES).compensateWith(ctx -> log.add("void label")))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        drain(sas);

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(labels).as("deterministic: not retried").hasValue(1);
        assertThat(info.lastError()).contains("output of step 'label' has a NUL character U+0000 at index 2");
        assertThat(info.step("label").status()).isEqualTo(StepStatus.FAILED);
        assertThat(info.step("label").output()).isNull();
        // The step ran, so its effect may exist: it is compensated, then the steps before it.
        assertThat(log).containsExactly("void label", "release");
        assertThat(sas.metrics().storeFailures()).isZero();
    }

    @Test
    void a_result_the_store_refuses_fails_its_step_with_the_real_error_and_the_stores_reason() {
        InvocationHandlerStore refusing = new InvocationHandlerStore();
        Workflow<String> wf = Workflow.builder("refused", Codec.string())
                .compensateOnFailure(false)
                .step("only", s -> s.execute(ctx -> "fine").completeWithin(DEADLINE))
                .build();
        SasRuntime sas = SasRuntime.builder().stateStore(refusing.over(store)).clock(clock).trustLocalClock().instanceId("node-a")
                .alertSink(alerts::add).onEvent(delivered::add).workflow(wf).build();
        runtimes.add(sas);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        drain(sas);

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.ERROR);
        assertThat(info.lastError()).contains("the store refused to record the result of step 'only'")
                .contains("value too long (injected)");
        assertThat(info.step("only").attempts()).isEqualTo(1);
        assertThat(deliveredOf(id, TaskEvent.Type.ERROR)).isEqualTo(1);
        assertThat(alerts).singleElement().satisfies(a -> assertThat(a.message()).contains("refused"));
    }

    /** Refuses the first write of a PROCESSED transition, as a database refuses a value too long for its column. */
    private static final class InvocationHandlerStore {
        private final AtomicBoolean refused = new AtomicBoolean();

        StateStore over(StateStore real) {
            return (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {StateStore.class},
                    (proxy, method, args) -> {
                        if (method.getName().equals("write")) {
                            List<?> ts = (List<?>) args[0];
                            if (ts.size() == 1 && ((Transition) ts.get(0)).status() == TaskStatus.PROCESSED
                                    && refused.compareAndSet(false, true)) {
                                return List.of(WriteOutcome.refused("value too long (injected)"));
                            }
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
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
        SasRuntime sas = SasRuntime.builder().stateStore(store).clock(clock).trustLocalClock().workflow(wf).maxPayloadBytes(1000).build();
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

        drainEverySecond(sas, 4);

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
                .step("ship", s -> s.call(shipping, ctx -> "box").completeWithin(DEADLINE).maxTimeouts(2)
                        .compensateWith(ctx -> log.add("cancel shipment")))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();

        timeOutRounds(sas, 3);
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

        drainEverySecond(sas, 4);

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
        repaired.client().operations().resubmit(id);
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

        assertThat(sas.client().operations().cancel(id)).isTrue();
        assertThat(sas.client().operations().cancel(id)).as("already requested").isFalse();
        shipping.hanging().get(0).complete("shipped");

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(log).containsExactly("release");
        assertThat(info.step("ship").status()).as("the running step finished first").isEqualTo(StepStatus.COMPLETED);
        assertThat(info.step("confirm").status()).isEqualTo(StepStatus.PENDING);
        assertThat(types(sas, id)).containsSubsequence(TaskEvent.Type.CANCEL_REQUESTED, TaskEvent.Type.COMPENSATING,
                TaskEvent.Type.CANCELLED);
        assertThat(sas.client().operations().cancel(id)).as("finished").isFalse();
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

        assertThat(sas.client().operations().cancel(id)).isTrue();
        clock.tick(Duration.ofSeconds(1));
        drain(sas);

        // The failed charge attempt may have gone through: it is refunded before the stock is released.
        assertThat(log).containsExactly("refund", "release");
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(payments.calls()).hasSize(1);
    }

    @Test
    void a_task_cancelled_while_it_waits_for_its_delay_or_retry_is_not_started_again() {
        List<String> log = new CopyOnWriteArrayList<>();
        ScriptedAgent payments = new ScriptedAgent("payments", THREE_TRIES)
                .thenFail(new IllegalStateException("busy"));
        Workflow<String> wf = Workflow.builder("cancel-no-start", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release " + ctx.businessKey())))
                .step("charge", s -> s.call(payments, ctx -> "42")
                        .compensateWith(ctx -> log.add("refund " + ctx.businessKey())))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId retrying = sas.client().submit(wf, "retrying", "x").id();
        TaskId delayed = sas.client().submit(wf, "delayed", "x",
                dev.sas.core.SubmitOptions.builder().delay(Duration.ofHours(1)).build()).id();
        drain(sas);
        assertThat(status(sas, retrying).status()).as("waits for its retry").isEqualTo(TaskStatus.PENDING);
        assertThat(status(sas, delayed).status()).as("waits for its delay").isEqualTo(TaskStatus.PENDING);

        assertThat(sas.client().operations().cancel(retrying)).isTrue();
        assertThat(sas.client().operations().cancel(delayed)).isTrue();
        drain(sas); // the clock has not moved: neither the retry time nor the delay is over

        for (TaskId id : List.of(retrying, delayed)) {
            List<TaskEvent.Type> types = types(sas, id);
            assertThat(status(sas, id).status()).as("%s", types).isEqualTo(TaskStatus.CANCELLED);
            assertThat(types.subList(types.indexOf(TaskEvent.Type.CANCEL_REQUESTED), types.size()))
                    .as("nothing started after the cancel request: %s", types)
                    .doesNotContain(TaskEvent.Type.STEP_STARTED);
        }
        assertThat(delivered).as("listeners heard no start after a cancel request either")
                .filteredOn(e -> e.taskId().equals(delayed)).extracting(TaskEvent::type)
                .doesNotContain(TaskEvent.Type.STEP_STARTED);
        assertThat(payments.calls()).as("the retry was not made").hasSize(1);
        // the failed charge may have gone through: refunded before the stock is released; the delayed
        // task ran nothing, so it has nothing to compensate
        assertThat(log).containsExactly("refund retrying", "release retrying");
    }

    @Test
    void cancel_that_lands_between_the_supervisors_scan_and_its_write_is_honoured() {
        List<String> log = new CopyOnWriteArrayList<>();
        ScriptedAgent payments = new ScriptedAgent("payments", THREE_TRIES).thenHang();
        Workflow<String> wf = Workflow.builder("cancel-recovery", Codec.string())
                .compensateOnFailure(false)
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release")))
                .step("charge", s -> s.call(payments, ctx -> "42").completeWithin(DEADLINE).maxTimeouts(1)
                        .compensateWith(ctx -> log.add("refund")))
                .build();
        SasRuntime worker = runtime("worker", wf);
        TaskId id = worker.client().submit(wf, "order-1", "x").id();
        drain(worker);
        clock.tick(DEADLINE.plusSeconds(1));
        boolean[] cancelled = new boolean[1];
        StateStore cancelAfterScan = afterFirstExpiredScan(() -> cancelled[0] = worker.client().operations().cancel(id));
        SasRuntime supervisor = runtime("supervisor", cancelAfterScan, wf);

        assertThat(Drain.supervisorOnce(supervisor)).isEqualTo(1);
        drain(worker);

        assertThat(cancelled[0]).as("the cancel was accepted").isTrue();
        TaskInfo info = status(worker, id);
        assertThat(info.status()).isEqualTo(TaskStatus.CANCELLED);
        // The charge timed out, so it may have gone through: refunded before the stock is released.
        assertThat(log).containsExactly("refund", "release");
        assertThat(info.step("charge").compensationStatus()).isEqualTo(StepStatus.COMPENSATED);
        assertThat(alerts).as("a cancelled task raises no ERROR alert").isEmpty();
        assertThat(types(worker, id)).containsSubsequence(TaskEvent.Type.CANCEL_REQUESTED,
                TaskEvent.Type.STEP_TIMED_OUT, TaskEvent.Type.COMPENSATING, TaskEvent.Type.CANCELLED)
                .doesNotContain(TaskEvent.Type.ERROR);
    }

    @Test
    void cancel_racing_supervisor_recovery_on_several_threads_is_always_honoured() throws Exception {
        int tasks = 24;
        List<String> log = new CopyOnWriteArrayList<>();
        ScriptedAgent payments = new ScriptedAgent("payments", THREE_TRIES);
        for (int i = 0; i < tasks; i++) {
            payments.thenHang();
        }
        Workflow<String> wf = Workflow.builder("cancel-recovery-race", Codec.string())
                .compensateOnFailure(false)
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release " + ctx.taskId())))
                .step("charge", s -> s.call(payments, ctx -> "42").completeWithin(DEADLINE).maxTimeouts(1))
                .build();
        SasRuntime worker = runtime("worker", wf);
        List<TaskId> ids = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            ids.add(worker.client().submit(wf, "order-" + i, "x").id());
        }
        drain(worker);
        clock.tick(DEADLINE.plusSeconds(1));
        SasRuntime supervisor = runtime("supervisor", wf);

        List<Boolean> accepted = race(() -> Drain.supervisorOnce(supervisor), () -> {
            List<Boolean> out = new ArrayList<>();
            for (int i = tasks - 1; i >= 0; i--) {
                out.add(0, worker.client().operations().cancel(ids.get(i)));
            }
            return out;
        });
        // the next pass: a store may have deferred a recovery whose row a cancel held (WriteOutcome.BUSY)
        Drain.supervisorOnce(supervisor);
        drain(worker);

        // Whether the supervisor ended the task in ERROR first or not, the cancel is accepted and carried out.
        assertThat(accepted).as("cancels accepted").containsOnly(true);
        for (TaskId id : ids) {
            TaskInfo info = status(worker, id);
            assertThat(info.status()).as("task %s", id).isEqualTo(TaskStatus.CANCELLED);
            assertThat(log).as("compensations of %s", id).containsOnlyOnce("release " + id);
        }
        assertThat(log).hasSize(tasks);
    }

    @Test
    void cancel_while_the_last_step_runs_compensates_it_and_ends_cancelled() {
        List<String> log = new CopyOnWriteArrayList<>();
        ScriptedAgent shipping = new ScriptedAgent("shipping", THREE_TRIES).thenHang();
        Workflow<String> wf = Workflow.builder("cancel-last", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release")))
                .step("ship", s -> s.call(shipping, ctx -> "box").completeWithin(DEADLINE)
                        .compensateWith(ctx -> log.add("recall " + ctx.output("ship").orElseThrow())))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();
        drain(sas);

        assertThat(sas.client().operations().cancel(id)).isTrue();
        shipping.hanging().get(0).complete("parcel-7");

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(info.step("ship").status()).as("its result is recorded").isEqualTo(StepStatus.COMPLETED);
        assertThat(info.step("ship").output()).isEqualTo("parcel-7");
        assertThat(log).containsExactly("recall parcel-7", "release");
        assertThat(types(sas, id)).doesNotContain(TaskEvent.Type.PROCESSED);
        assertThat(sas.client().operations().cancel(id)).as("finished").isFalse();
    }

    @Test
    void cancel_racing_the_last_step_on_several_threads_is_honoured_or_refused_never_both() throws Exception {
        int tasks = 24;
        List<String> log = new CopyOnWriteArrayList<>();
        ScriptedAgent shipping = new ScriptedAgent("shipping", THREE_TRIES);
        for (int i = 0; i < tasks; i++) {
            shipping.thenHang();
        }
        Workflow<String> wf = Workflow.builder("cancel-last-race", Codec.string())
                .step("ship", s -> s.call(shipping, ctx -> ctx.taskId().value()).completeWithin(DEADLINE)
                        .compensateWith(ctx -> log.add("recall " + ctx.taskId())))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        List<TaskId> ids = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
            ids.add(sas.client().submit(wf, "order-" + i, "x").id());
        }
        drain(sas);
        List<java.util.concurrent.CompletableFuture<String>> replies = shipping.hanging();
        assertThat(replies).hasSize(tasks);

        List<Boolean> accepted = race(() -> {
            replies.forEach(f -> f.complete("shipped"));
            return 0;
        }, () -> {
            List<Boolean> out = new ArrayList<>();
            for (int i = tasks - 1; i >= 0; i--) {
                out.add(0, sas.client().operations().cancel(ids.get(i)));
            }
            return out;
        });

        for (int i = 0; i < tasks; i++) {
            TaskId id = ids.get(i);
            TaskInfo info = status(sas, id);
            if (accepted.get(i)) {
                assertThat(info.status()).as("task %s, cancel accepted", id).isEqualTo(TaskStatus.CANCELLED);
                assertThat(log).as("task %s, cancel accepted", id).containsOnlyOnce("recall " + id);
            } else {
                assertThat(info.status()).as("task %s, cancel refused", id).isEqualTo(TaskStatus.PROCESSED);
                assertThat(info.cancelRequested()).as("task %s, cancel refused", id).isFalse();
                assertThat(log).as("task %s, cancel refused", id).doesNotContain("recall " + id);
            }
        }
    }

    @Test
    void cancel_while_compensating_after_a_failure_ends_cancelled() {
        ScriptedAgent inventory = new ScriptedAgent("inventory", THREE_TRIES).thenHang();
        Workflow<String> wf = Workflow.builder("cancel-compensating", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(inventory, ctx -> "release"))
                .step("ship", s -> s.execute(ctx -> {
                    throw new NonRetryableException("no courier");
                }))
                .build();
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();
        drain(sas);
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.COMPENSATING);

        assertThat(sas.client().operations().cancel(id)).isTrue();
        inventory.hanging().get(0).complete("released");

        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(info.step("reserve").compensationStatus()).isEqualTo(StepStatus.COMPENSATED);
        assertThat(types(sas, id)).endsWith(TaskEvent.Type.COMPENSATION_COMPLETED, TaskEvent.Type.CANCELLED);
    }

    @Test
    void cancelling_an_error_task_compensates_a_failed_step_that_ran_out_of_transient_retries() {
        List<String> log = new CopyOnWriteArrayList<>();
        ScriptedAgent payments = new ScriptedAgent("payments", THREE_TRIES)
                .otherwiseFail(new IllegalStateException("reply lost"));
        Workflow<String> wf = errorThenCancel("cancel-error-transient", log, s -> s.call(payments, ctx -> "42"));
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();
        drainEverySecond(sas, 3);
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.ERROR);

        assertThat(sas.client().operations().cancel(id)).isTrue();
        drain(sas);

        // A reply was lost: the charge may have gone through, so it is refunded too.
        assertThat(log).containsExactly("refund", "release");
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(payments.calls()).as("the step is not run again").hasSize(3);
    }

    @Test
    void cancelling_an_error_task_compensates_a_failed_step_that_timed_out() {
        List<String> log = new CopyOnWriteArrayList<>();
        ScriptedAgent payments = new ScriptedAgent("payments", THREE_TRIES).thenHang();
        Workflow<String> wf = errorThenCancel("cancel-error-timeout", log,
                s -> s.call(payments, ctx -> "42").completeWithin(DEADLINE).maxTimeouts(1));
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();
        drain(sas);
        clock.tick(DEADLINE.plusSeconds(1));
        Drain.supervisorOnce(sas);
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.ERROR);

        assertThat(sas.client().operations().cancel(id)).isTrue();
        drain(sas);

        assertThat(log).containsExactly("refund", "release");
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.CANCELLED);
    }

    @Test
    void cancelling_an_error_task_does_not_compensate_a_step_that_failed_definitely() {
        List<String> log = new CopyOnWriteArrayList<>();
        ScriptedAgent payments = new ScriptedAgent("payments", THREE_TRIES)
                .thenFail(new NonRetryableException("card declined"));
        Workflow<String> wf = errorThenCancel("cancel-error-definite", log, s -> s.call(payments, ctx -> "42"));
        SasRuntime sas = runtime("node-a", wf);
        TaskId id = sas.client().submit(wf, "order-1", "x").id();
        drain(sas);
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.ERROR);

        assertThat(sas.client().operations().cancel(id)).isTrue();
        drain(sas);

        assertThat(log).containsExactly("release");
        TaskInfo info = status(sas, id);
        assertThat(info.status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(info.step("charge").compensationStatus()).isNull();
    }

    /** Reserve, then charge (the step under test, compensated by "refund"); a failure leaves the task in ERROR. */
    private static Workflow<String> errorThenCancel(String name, List<String> log,
            java.util.function.Consumer<dev.sas.core.StepBuilder<String>> charge) {
        return Workflow.builder(name, Codec.string())
                .compensateOnFailure(false)
                .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> log.add("release")))
                .step("charge", s -> {
                    charge.accept(s);
                    s.retry(THREE_TRIES).compensateWith(ctx -> log.add("refund"));
                })
                .build();
    }

    /** The shared store, running {@code hook} once right after the first scan that finds an expired claim. */
    private StateStore afterFirstExpiredScan(Runnable hook) {
        StateStore target = store;
        AtomicBoolean ran = new AtomicBoolean();
        return (StateStore) Proxy.newProxyInstance(StateStore.class.getClassLoader(), new Class<?>[] {StateStore.class},
                (proxy, method, args) -> {
                    Object result;
                    try {
                        result = method.invoke(target, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (method.getName().equals("findExpired") && !((List<?>) result).isEmpty()
                            && ran.compareAndSet(false, true)) {
                        hook.run();
                    }
                    return result;
                });
    }

    /** Runs both at once, released together, and returns {@code b}'s result. */
    private static <T> T race(Callable<?> a, Callable<T> b) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            CountDownLatch start = new CountDownLatch(1);
            Future<?> fa = pool.submit(() -> {
                start.await();
                return a.call();
            });
            Future<T> fb = pool.submit(() -> {
                start.await();
                return b.call();
            });
            start.countDown();
            fa.get(60, TimeUnit.SECONDS);
            return fb.get(60, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
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
        SasRuntime submitter = SasRuntime.builder().stateStore(store).clock(clock).trustLocalClock().workflow(v1).build();
        runtimes.add(submitter);
        TaskId id = submitter.client().submit(v1, "order-1", "payload-kept").id();
        SasRuntime oldDeploy = runtime("old-deploy", other);

        assertThat(Drain.schedulerOnce(oldDeploy)).as("tasks the node without 'orders' claimed").isZero();

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
        SasRuntime submitter = SasRuntime.builder().stateStore(store).clock(clock).trustLocalClock().workflow(v1)
                .schedulerEnabled(false).build();
        runtimes.add(submitter);
        TaskId id = submitter.client().submit(v1, "order-1", "payload-kept").id();
        SasRuntime oldDeploy = runtime("old-deploy", other);
        Drain.supervisorOnce(oldDeploy);
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
            Drain.supervisorOnce(newDeploy);
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
        assertThatThrownBy(() -> sas.client().operations().resubmit(TaskId.random())).isInstanceOf(dev.sas.core.TaskNotFoundException.class);

        broken[0] = false;
        sas.client().operations().resubmit(id);
        drain(sas);

        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(ran).containsExactly("first", "second", "second");
        assertThatThrownBy(() -> sas.client().operations().resubmit(id)).isInstanceOfSatisfying(TaskStateException.class, e -> {
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
        SasRuntime sas = SasRuntime.builder().stateStore(store).clock(clock).trustLocalClock().workflow(wf).onEvent(e -> {
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
