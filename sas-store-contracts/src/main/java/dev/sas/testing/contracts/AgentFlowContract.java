package dev.sas.testing.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.CircuitBreaker;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.FlowControlStore;
import dev.sas.core.spi.GateChange;
import dev.sas.core.spi.GateState;
import dev.sas.core.spi.GateView;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.Permit;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.core.spi.WriteOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What every {@link StateStore} that {@linkplain StateStore#flowControl() keeps agent
 * flow control} must do: gates changed atomically across threads (so limits hold across nodes),
 * permits counted until given back or expired, renewed only while live, and tasks that wait in
 * {@link TaskStatus#WAITING} claimed like pending ones. Subclass it like {@link StateStoreContract}.
 */
public abstract class AgentFlowContract extends StoreTestSupport {

    /** A fixed starting instant for every test. */
    protected static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private static final Set<WorkflowVersion> WF_V1 = Set.of(new WorkflowVersion("wf", 1));
    private static final String GATE = "payments/default";

    private static Permit permit(String id, boolean probe, Instant at, Duration lease) {
        return new Permit(id, GATE, "node-1", probe, at, at.plus(lease));
    }

    private FlowControlStore flow() {
        return store.flowControl().orElseThrow(() -> new AssertionError(store + " keeps no flow control"));
    }

    private GateView view(Instant now) {
        return flow().changeGate(GATE, now, GateChange::keep);
    }

    @Test
    public void supports_flow_control() {
        assertThat(store.flowControl()).isPresent();
    }

    @Test
    public void a_gate_never_written_reads_as_initial_and_keeps_what_is_written() {
        GateView first = view(T0);
        assertThat(first.exists()).isFalse();
        assertThat(first.state()).isEqualTo(GateState.initial(T0));
        assertThat(first.permitsInUse()).isZero();

        GateState written = new GateState(CircuitBreaker.State.OPEN, T0.plusMillis(1), T0.plusSeconds(30),
                T0.plusMillis(2), 7, 5, 4, 1, T0.plusNanos(123_456_000), T0.plusNanos(987_654_000), T0.plusSeconds(5), 250,
                "IllegalStateException: 503", T0.plusMillis(3));
        String result = flow().changeGate(GATE, T0.plusMillis(3), v -> GateChange.write(written, "written"));
        assertThat(result).isEqualTo("written");

        GateView read = view(T0.plusMillis(4));
        assertThat(read.exists()).isTrue();
        assertThat(read.state()).as("instants to the millisecond, rate and queue times to the microsecond")
                .isEqualTo(written);
    }

    @Test
    public void permits_count_until_given_back_or_their_lease_ends() {
        Duration lease = Duration.ofSeconds(10);
        flow().changeGate(GATE, T0, v -> GateChange.write(v.state(), 0).taking(permit("a", false, T0, lease)));
        flow().changeGate(GATE, T0, v -> GateChange.write(v.state(), 0).taking(permit("b", true, T0, lease)));
        flow().changeGate(GATE, T0.plusSeconds(5),
                v -> GateChange.write(v.state(), 0).taking(permit("c", false, T0.plusSeconds(5), lease)));

        GateView all = view(T0.plusSeconds(1));
        assertThat(all.permitsInUse()).isEqualTo(3);
        assertThat(all.probesInUse()).isEqualTo(1);

        flow().changeGate(GATE, T0.plusSeconds(2), v -> GateChange.keep(0).givingBack("a"));
        assertThat(view(T0.plusSeconds(2)).permitsInUse()).isEqualTo(2);

        assertThat(view(T0.plusSeconds(10)).permitsInUse()).as("b expired at T0+10s, c lives until T0+15s")
                .isEqualTo(1);
        assertThat(view(T0.plusSeconds(10)).probesInUse()).isZero();
        assertThat(view(T0.plusSeconds(15)).permitsInUse()).isZero();
    }

    @Test
    public void renewal_extends_live_permits_only() {
        Duration lease = Duration.ofSeconds(10);
        for (String id : List.of("a", "b", "c")) {
            flow().changeGate(GATE, T0, v -> GateChange.write(v.state(), 0).taking(permit(id, false, T0, lease)));
        }
        flow().changeGate(GATE, T0, v -> GateChange.keep(0).givingBack("c"));

        assertThat(flow().renewPermits(List.of("a", "c", "unknown"), T0.plusSeconds(5), T0.plusSeconds(20)))
                .as("a renewed; c was given back").isEqualTo(1);
        assertThat(flow().renewPermits(List.of("b"), T0.plusSeconds(10), T0.plusSeconds(20)))
                .as("b expired at T0+10s: another node may count it free already").isZero();
        assertThat(flow().renewPermits(List.of(), T0, T0)).isZero();

        assertThat(view(T0.plusSeconds(19)).permitsInUse()).isEqualTo(1);
        assertThat(view(T0.plusSeconds(20)).permitsInUse()).isZero();
    }

    @Test
    public void gates_lists_every_gate_with_its_live_permits() {
        Duration lease = Duration.ofSeconds(10);
        flow().changeGate("payments/eu", T0, v -> GateChange.write(v.state(), 0)
                .taking(new Permit("p1", "payments/eu", "node-1", false, T0, T0.plus(lease))));
        flow().changeGate("payments/us", T0, v -> GateChange.write(v.state(), 0));
        flow().changeGate("shipping/default", T0, v -> GateChange.write(v.state(), 0)
                .taking(new Permit("p2", "shipping/default", "node-2", true, T0, T0.plus(lease))));

        List<GateView> gates = flow().gates(T0.plusSeconds(1));
        assertThat(gates).extracting(GateView::gate).containsExactly("payments/eu", "payments/us", "shipping/default");
        assertThat(gates).extracting(GateView::permitsInUse).containsExactly(1, 0, 1);
        assertThat(gates).extracting(GateView::probesInUse).containsExactly(0, 0, 1);
        assertThat(flow().gates(T0.plus(lease))).extracting(GateView::permitsInUse).containsExactly(0, 0, 0);
    }

    @Test
    public void a_decision_that_throws_writes_nothing() {
        assertThatThrownBy(() -> flow().changeGate(GATE, T0, v -> {
            throw new IllegalStateException("decided nothing");
        })).hasStackTraceContaining("decided nothing");
        flow().changeGate(GATE, T0, v -> GateChange.write(v.state(), 0));
        assertThatThrownBy(() -> flow().changeGate(GATE, T0, v -> {
            throw new IllegalStateException("decided nothing");
        })).hasStackTraceContaining("decided nothing");
        assertThat(view(T0).state()).isEqualTo(GateState.initial(T0));
    }

    /**
     * The property every limit rests on: changes of one gate from many threads never interleave.
     * Each thread takes a permit only while fewer than 5 are in use, and counts in the gate's state
     * every change it made; none is lost and never more than 5 permits are taken.
     */
    @Test
    public void concurrent_changes_of_one_gate_never_interleave() throws Exception {
        int threads = 8;
        int changesEach = 15;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch go = new CountDownLatch(1);
        AtomicInteger granted = new AtomicInteger();
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < changesEach; i++) {
                        String id = "t" + thread + "-" + i;
                        boolean took = flow().changeGate(GATE, T0, v -> {
                            GateState s = v.state();
                            GateState counted = new GateState(s.breaker(), s.breakerSince(), s.openUntil(),
                                    s.windowStart(), s.windowCalls() + 1, s.windowFailures(), s.consecutiveFailures(),
                                    s.probeSuccesses(), s.rateNext(), s.waitNext(), s.heldUntil(), s.avgHoldMillis(),
                                    s.lastFailure(),
                                    T0);
                            GateChange<Boolean> change = GateChange.write(counted, v.permitsInUse() < 5);
                            return v.permitsInUse() < 5
                                    ? change.taking(permit(id, false, T0, Duration.ofMinutes(1))) : change;
                        });
                        if (took) {
                            granted.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        GateView v = view(T0);
        assertThat(v.state().windowCalls()).as("no change lost").isEqualTo(threads * changesEach);
        assertThat(granted).as("never more than 5 taken").hasValue(5);
        assertThat(v.permitsInUse()).isEqualTo(5);
    }

    @Test
    public void a_waiting_task_is_claimed_like_a_pending_one_when_due_and_in_priority_order() {
        TaskId low = submit("low", 1);
        TaskId high = submit("high", 9);
        List<ClaimedTask> claimed = store.claim("node-1", 10, T0, WF_V1);
        assertThat(claimed).hasSize(2);
        for (ClaimedTask c : claimed) {
            assertThat(store.write(List.of(waiting(c, T0.plusSeconds(5))), T0)).containsExactly(WriteOutcome.APPLIED);
        }
        assertThat(store.find(low).orElseThrow().status()).isEqualTo(TaskStatus.WAITING);
        assertThat(store.find(low).orElseThrow().lastError()).startsWith("waiting for agent capacity");
        assertThat(store.countByStatus()).containsEntry(TaskStatus.WAITING, 2L);
        assertThat(store.claim("node-1", 10, T0.plusSeconds(4), WF_V1)).as("not due yet").isEmpty();

        List<ClaimedTask> again = store.claim("node-2", 1, T0.plusSeconds(5), WF_V1);
        assertThat(again).singleElement().satisfies(c -> {
            assertThat(c.taskId()).isEqualTo(high);
            assertThat(c.status()).isEqualTo(TaskStatus.PROCESSING);
            assertThat(c.attempt()).as("the wait gave the attempt back").isEqualTo(1);
        });
        assertThat(store.events(high)).extracting(TaskEvent::type).containsSubsequence(TaskEvent.Type.STEP_STARTED,
                TaskEvent.Type.WAITING, TaskEvent.Type.STEP_STARTED);
    }

    @Test
    public void a_cancel_of_a_waiting_task_makes_it_due_at_once() {
        TaskId id = submit("waits", 0);
        ClaimedTask c = store.claim("node-1", 1, T0, WF_V1).get(0);
        store.write(List.of(waiting(c, T0.plusSeconds(60))), T0);

        TaskEvent cancel = new TaskEvent(id, "waits", "wf", TaskEvent.Type.CANCEL_REQUESTED, 0, null, 0,
                T0.plusSeconds(1), null);
        assertThat(store.requestCancel(id, T0.plusSeconds(1), cancel)).isTrue();

        assertThat(store.find(id).orElseThrow().status()).isEqualTo(TaskStatus.WAITING);
        assertThat(store.find(id).orElseThrow().nextAttemptAt()).isEqualTo(T0.plusSeconds(1));
        assertThat(store.claim("node-1", 1, T0.plusSeconds(1), WF_V1)).singleElement()
                .satisfies(claimed -> assertThat(claimed.cancelRequested()).isTrue());
    }

    @Test
    public void waking_makes_the_best_waiting_tasks_at_the_given_steps_due_at_their_submission() {
        TaskId low = submit("low", 1);
        TaskId high = submit("high", 9);
        TaskId second = submit("second-high", 9);
        List<ClaimedTask> claimed = store.claim("node-1", 3, T0, WF_V1);
        assertThat(claimed).hasSize(3);
        TaskId pending = submit("pending", 9);
        for (ClaimedTask c : claimed) {
            Instant due = c.taskId().equals(second) ? T0.plusSeconds(6) : T0.plusSeconds(5);
            store.write(List.of(waiting(c, due)), T0);
        }
        Instant now = T0.plusSeconds(1);

        assertThat(flow().wakeWaiting(Set.of(new dev.sas.core.spi.StepKey("wf", 1, 1)), now, 5))
                .as("nobody waits at step 1").isZero();
        assertThat(flow().wakeWaiting(Set.of(new dev.sas.core.spi.StepKey("wf", 1, 0)), now, 1)).isEqualTo(1);

        assertThat(store.find(high).orElseThrow().nextAttemptAt()).as("highest priority, due first; now due since"
                + " it was submitted").isEqualTo(T0);
        assertThat(store.find(high).orElseThrow().status()).isEqualTo(TaskStatus.WAITING);
        assertThat(store.find(second).orElseThrow().nextAttemptAt()).isEqualTo(T0.plusSeconds(6));
        assertThat(store.find(pending).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
        assertThat(flow().wakeWaiting(Set.of(new dev.sas.core.spi.StepKey("wf", 1, 0)), now, 5))
                .as("the two still waiting; one already due is not counted again").isEqualTo(2);
        assertThat(store.find(low).orElseThrow().nextAttemptAt()).isEqualTo(T0);
        assertThat(store.events(high)).extracting(TaskEvent::type).as("no event").endsWith(TaskEvent.Type.WAITING);
    }

    private TaskId submit(String key, int priority) {
        TaskId id = TaskId.random();
        store.submit(new NewTask(id, "wf", 1, key, priority, "input-" + key, null, "first", Duration.ofSeconds(30), T0,
                T0), new TaskEvent(id, key, "wf", TaskEvent.Type.RECEIVED, -1, null, 0, T0, null), null);
        return id;
    }

    /** What the runtime writes for a call held back: WAITING, the claim's attempt given back, due at {@code due}. */
    private static Transition waiting(ClaimedTask c, Instant due) {
        String reason = "waiting for agent capacity: agent 'payments' endpoint 'default' has 5 of 5 calls in flight";
        return Transition.holder(c).unlessCancelRequested().at(c.currentStep(), "first", Duration.ofSeconds(30))
                .attempt(c.attempt() - 1).failureCount(c.failureCount()).lastError(reason)
                .events(new TaskEvent(c.taskId(), c.businessKey(), c.workflow(), TaskEvent.Type.WAITING,
                        c.currentStep(), "first", c.attempt(), T0, reason))
                .release(TaskStatus.WAITING, due);
    }
}
