package dev.sas.testing.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.OperatorNote;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepRef;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStateException;
import dev.sas.core.TaskStatus;
import dev.sas.core.VersionMoveException;
import dev.sas.core.Workflow;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.VersionMove;
import dev.sas.core.spi.VersionMoves;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.testing.Drain;
import dev.sas.testing.ManualClock;
import dev.sas.testing.ScriptedAgent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Moving tasks between versions of their workflow ({@code OperationsClient.moveVersion},
 * {@link VersionMoves}): a waiting task moved to v2 continues at the mapped step on a node that
 * knows only v2, its completed steps' outputs kept by name; a claimed task is never moved under its
 * holder; an unknown version or an unmapped step is refused with a clear error and changes nothing;
 * the move is recorded as an event. Subclass it like {@link StateStoreContract}; the in-memory store
 * and every JDBC database run it.
 */
public abstract class VersionMoveContract extends StoreTestSupport {

    private static final Duration DEADLINE = Duration.ofSeconds(10);
    private static final RetryPolicy TRIES = RetryPolicy.builder().maxAttempts(3)
            .fixedBackoff(Duration.ofSeconds(1)).jitter(0).build();
    private static final StepRef<String> PREPARE = StepRef.of("prepare");
    private static final StepRef<String> RESERVE = StepRef.of("reserve");

    private final ManualClock clock = new ManualClock();
    private final List<SasRuntime> runtimes = new ArrayList<>();

    @Override
    void beforeStoreIsDestroyed() {
        runtimes.forEach(SasRuntime::close);
    }

    private SasRuntime runtime(String instance, Workflow<?> workflow) {
        SasRuntime sas = SasRuntime.builder().stateStore(store).clock(clock).trustLocalClock().instanceId(instance)
                .workflow(workflow).build();
        runtimes.add(sas);
        return sas;
    }

    /** v1: prepare, reserve, charge (through {@code payments}), ship. */
    private static Workflow<String> v1(ScriptedAgent payments) {
        return Workflow.builder("orders", Codec.string())
                .step(PREPARE, s -> s.execute(ctx -> "prepared " + ctx.input()))
                .step(RESERVE, s -> s.execute(ctx -> "reserved " + ctx.input()))
                .step("charge", s -> s.call(payments, ctx -> ctx.input()).completeWithin(DEADLINE))
                .step("ship", s -> s.reads(PREPARE, RESERVE).execute(ctx -> "v1 shipped"))
                .build();
    }

    /** v2: reserve and prepare swap places, charge becomes charge-v2, ship reads both outputs. */
    private static Workflow<String> v2() {
        return Workflow.builder("orders", Codec.string()).version(2)
                .step(RESERVE, s -> s.execute(ctx -> "v2 reserved"))
                .step(PREPARE, s -> s.execute(ctx -> "v2 prepared"))
                .step("charge-v2", s -> s.execute(ctx -> "charged by v2").completeWithin(DEADLINE))
                .step("ship", s -> s.reads(PREPARE, RESERVE)
                        .execute(ctx -> "v2 shipped after " + ctx.output(PREPARE) + " and " + ctx.output(RESERVE)))
                .movesFrom(1, m -> m.step("charge", "charge-v2"))
                .build();
    }

    private static List<TaskEvent.Type> types(SasClient client, TaskId id) {
        return client.events(id).stream().map(TaskEvent::type).toList();
    }

    @Test
    void a_task_waiting_to_retry_on_v1_moves_to_v2_and_completes_at_the_mapped_step_on_a_v2_only_node() {
        ScriptedAgent payments = new ScriptedAgent("payments", TRIES).thenFail(new IllegalStateException("503"));
        Workflow<String> v1 = v1(payments);
        SasRuntime oldNode = runtime("node-v1", v1);
        TaskId id = oldNode.client().submit(v1, "order-1", "42").id();
        Drain.untilIdle(oldNode);
        TaskInfo waiting = oldNode.client().find(id).orElseThrow();
        assertThat(waiting.status()).as("charge failed once and waits to retry").isEqualTo(TaskStatus.PENDING);
        assertThat(waiting.currentStep()).isEqualTo(2);
        oldNode.close();

        SasRuntime newNode = runtime("node-v2", v2());
        newNode.client().operations().moveVersion(id, 2, OperatorNote.of("alice", "charge fixed in v2"));

        TaskInfo moved = newNode.client().find(id).orElseThrow();
        assertThat(moved.workflowVersion()).isEqualTo(2);
        assertThat(moved.status()).as("a retrying task keeps waiting").isEqualTo(TaskStatus.PENDING);
        assertThat(moved.nextAttemptAt()).isEqualTo(waiting.nextAttemptAt());
        assertThat(moved.lease()).as("a move fences off writes decided before it").isEqualTo(waiting.lease() + 1);
        assertThat(moved.currentStep()).isEqualTo(2);
        assertThat(moved.step("prepare").index()).isEqualTo(1);
        assertThat(moved.step("reserve").index()).isEqualTo(0);
        assertThat(moved.step("charge-v2").attempts()).as("the failed attempt's row, renamed").isEqualTo(1);
        assertThat(moved.step("prepare").output()).isEqualTo("prepared 42");
        assertThat(moved.step("prepare").status()).isEqualTo(StepStatus.COMPLETED);

        Drain.afterTime(newNode, clock, Duration.ofSeconds(1));

        TaskInfo done = newNode.client().find(id).orElseThrow();
        assertThat(done.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(done.step("ship").output()).isEqualTo("v2 shipped after prepared 42 and reserved 42");
        assertThat(done.step("charge-v2").output()).isEqualTo("charged by v2");
        assertThat(done.step("charge-v2").attempts()).as("the attempt on v1 counts").isEqualTo(2);
        assertThat(payments.calls()).as("v1's charge ran once, before the move").hasSize(1);
        assertThat(newNode.client().events(id)).filteredOn(e -> e.type() == TaskEvent.Type.VERSION_MOVED)
                .singleElement().satisfies(e -> {
                    assertThat(e.stepIndex()).isEqualTo(2);
                    assertThat(e.stepName()).isEqualTo("charge-v2");
                    assertThat(e.message()).isEqualTo(
                            "moved from v1 step 'charge' to v2 step 'charge-v2' by alice: charge fixed in v2");
                });
        assertThat(types(newNode.client(), id)).containsSubsequence(TaskEvent.Type.STEP_RETRYING,
                TaskEvent.Type.VERSION_MOVED, TaskEvent.Type.STEP_STARTED, TaskEvent.Type.STEP_COMPLETED,
                TaskEvent.Type.PROCESSED);
    }

    @Test
    void a_task_in_error_moves_due_at_once_with_its_attempts_reset() {
        ScriptedAgent payments = new ScriptedAgent("payments", TRIES)
                .thenFail(new dev.sas.core.NonRetryableException("bug in v1"));
        Workflow<String> v1 = Workflow.builder("orders", Codec.string()).compensateOnFailure(false)
                .step(PREPARE, s -> s.execute(ctx -> "prepared " + ctx.input()))
                .step(RESERVE, s -> s.execute(ctx -> "reserved " + ctx.input()))
                .step("charge", s -> s.call(payments, ctx -> ctx.input()).completeWithin(DEADLINE))
                .build();
        SasRuntime oldNode = runtime("node-v1", v1);
        TaskId id = oldNode.client().submit(v1, "order-1", "7").id();
        Drain.untilIdle(oldNode);
        assertThat(oldNode.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.ERROR);

        SasRuntime newNode = runtime("node-v2", v2());
        newNode.client().operations().moveVersion(id, 2);
        TaskInfo moved = newNode.client().find(id).orElseThrow();
        assertThat(moved.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(moved.failureCount()).isZero();
        Drain.untilIdle(newNode);

        assertThat(newNode.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(newNode.client().find(id).orElseThrow().step("ship").output())
                .isEqualTo("v2 shipped after prepared 7 and reserved 7");
    }

    @Test
    void a_task_running_a_step_is_not_moved_and_is_run_by_one_runner_only() {
        ScriptedAgent payments = new ScriptedAgent("payments", TRIES).thenHang();
        Workflow<String> v1 = v1(payments);
        SasRuntime oldNode = runtime("node-v1", v1);
        SasRuntime newNode = runtime("node-v2", v2());
        TaskId id = oldNode.client().submit(v1, "order-1", "42").id();
        Drain.untilIdle(oldNode);
        TaskInfo running = oldNode.client().find(id).orElseThrow();
        assertThat(running.status()).isEqualTo(TaskStatus.PROCESSING);

        assertThatThrownBy(() -> newNode.client().operations().moveVersion(id, 2))
                .isInstanceOf(TaskStateException.class)
                .hasMessageContaining(id.toString()).hasMessageContaining("PROCESSING");
        Drain.untilIdle(newNode);

        TaskInfo after = newNode.client().find(id).orElseThrow();
        assertThat(after.workflowVersion()).isEqualTo(1);
        assertThat(after.lockedBy()).isEqualTo("node-v1");
        assertThat(after.lease()).as("nobody else claimed it").isEqualTo(running.lease());
        assertThat(types(newNode.client(), id)).doesNotContain(TaskEvent.Type.VERSION_MOVED);

        payments.hanging().get(0).complete("charged by v1");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            Drain.untilIdle(oldNode);
            assertThat(oldNode.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
        });
        TaskInfo done = oldNode.client().find(id).orElseThrow();
        assertThat(done.workflowVersion()).isEqualTo(1);
        assertThat(done.step("charge").attempts()).isEqualTo(1);
        assertThat(done.step("ship").output()).isEqualTo("v1 shipped");
        assertThat(payments.calls()).hasSize(1);
    }

    @Test
    void the_store_never_moves_a_claimed_task_and_says_why() {
        VersionMoves moves = store.versionMoves().orElseThrow(() -> new AssertionError(store + " cannot move"));
        ScriptedAgent payments = new ScriptedAgent("payments", TRIES);
        SasClient client = SasClient.builder().stateStore(store).clock(clock).trustLocalClock().build();
        TaskId id = client.submit(v1(payments), "order-1", "42").id();
        List<ClaimedTask> claimed = store.claim("holder", 1, clock.instant(), Set.of(new WorkflowVersion("orders", 1)));
        assertThat(claimed).hasSize(1);

        VersionMove.Target first = new VersionMove.Target(0, "prepare", DEADLINE);
        VersionMove move = new VersionMove(id, 1, 2, Map.of("prepare", first), null);
        VersionMove.Result result = moves.move(move, clock.instant());

        assertThat(result.kind()).isEqualTo(VersionMove.Kind.NOT_MOVABLE);
        assertThat(result.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(moves.move(new VersionMove(id, 3, 2, Map.of(), null), clock.instant()).kind())
                .isEqualTo(VersionMove.Kind.OTHER_VERSION);
        assertThat(moves.move(new VersionMove(TaskId.of("absent"), 1, 2, Map.of(), null), clock.instant()).kind())
                .isEqualTo(VersionMove.Kind.NOT_FOUND);
        TaskInfo after = store.find(id).orElseThrow();
        assertThat(after.workflowVersion()).isEqualTo(1);
        assertThat(after.lockedBy()).isEqualTo("holder");
        assertThat(store.events(id)).extracting(TaskEvent::type).doesNotContain(TaskEvent.Type.VERSION_MOVED);
    }

    @Test
    void a_move_racing_claims_of_both_versions_leaves_the_task_with_at_most_one_holder() throws Exception {
        VersionMoves moves = store.versionMoves().orElseThrow(() -> new AssertionError(store + " cannot move"));
        SasClient client = SasClient.builder().stateStore(store).clock(clock).trustLocalClock().build();
        Workflow<String> v1 = v1(new ScriptedAgent("payments", TRIES));
        VersionMove.Target prepare = new VersionMove.Target(1, "prepare", DEADLINE);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            for (int i = 0; i < 20; i++) {
                TaskId id = client.submit(v1, "race-" + i, "x").id();
                VersionMove move = new VersionMove(id, 1, 2, Map.of("prepare", prepare), null);
                CountDownLatch start = new CountDownLatch(1);
                Future<List<ClaimedTask>> oldNode = pool.submit(() -> {
                    start.await();
                    return store.claim("node-v1", 1, clock.instant(), Set.of(new WorkflowVersion("orders", 1)));
                });
                Future<VersionMove.Result> mover = pool.submit(() -> {
                    start.await();
                    return moves.move(move, clock.instant());
                });
                Future<List<ClaimedTask>> newNode = pool.submit(() -> {
                    start.await();
                    return store.claim("node-v2", 1, clock.instant(), Set.of(new WorkflowVersion("orders", 2)));
                });
                start.countDown();
                // the v2 node may also take an earlier race's moved task: only this race's task counts
                List<ClaimedTask> byOld = oldNode.get(60, TimeUnit.SECONDS).stream()
                        .filter(c -> c.taskId().equals(id)).toList();
                VersionMove.Result moved = mover.get(60, TimeUnit.SECONDS);
                List<ClaimedTask> byNew = newNode.get(60, TimeUnit.SECONDS).stream()
                        .filter(c -> c.taskId().equals(id)).toList();

                TaskInfo after = store.find(id).orElseThrow();
                assertThat(byOld.size() + byNew.size()).as("race %s: holders", i).isLessThanOrEqualTo(1);
                if (moved.kind() == VersionMove.Kind.MOVED) {
                    assertThat(byOld).as("race %s: a moved task is not run on v1", i).isEmpty();
                    assertThat(after.workflowVersion()).isEqualTo(2);
                    byNew.forEach(c -> assertThat(c.currentStep()).isEqualTo(1));
                } else {
                    assertThat(moved.kind()).as("race %s", i).isEqualTo(VersionMove.Kind.NOT_MOVABLE);
                    assertThat(byOld).as("race %s: refused only because v1 holds it", i).hasSize(1);
                    assertThat(byNew).isEmpty();
                    assertThat(after.workflowVersion()).isEqualTo(1);
                    assertThat(after.lockedBy()).isEqualTo("node-v1");
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void an_unknown_version_an_unmapped_step_or_a_cancel_under_way_is_refused_with_a_clear_error_and_changes_nothing() {
        ScriptedAgent payments = new ScriptedAgent("payments", TRIES).thenFail(new IllegalStateException("503"));
        Workflow<String> v1 = v1(payments);
        SasRuntime oldNode = runtime("node-v1", v1);
        TaskId id = oldNode.client().submit(v1, "order-1", "42").id();
        Drain.untilIdle(oldNode);
        Workflow<String> v3 = Workflow.builder("orders", Codec.string()).version(3)
                .step(PREPARE, s -> s.execute(ctx -> "p"))
                .step(RESERVE, s -> s.execute(ctx -> "r"))
                .step("pay", s -> s.execute(ctx -> "paid"))
                .movesFrom(1, m -> { })
                .build();
        Workflow<String> v4 = Workflow.builder("orders", Codec.string()).version(4)
                .step("charge", s -> s.execute(ctx -> "c"))
                .build();
        SasClient client = SasClient.builder().stateStore(store).clock(clock).trustLocalClock()
                .workflow(v3).workflow(v4).build();
        TaskInfo before = client.find(id).orElseThrow();

        assertThatThrownBy(() -> client.operations().moveVersion(id, 5))
                .isInstanceOf(VersionMoveException.class)
                .hasMessageContaining("'orders' v5 is not known to this client");
        assertThatThrownBy(() -> client.operations().moveVersion(id, 3))
                .isInstanceOf(VersionMoveException.class)
                .hasMessageContaining("step 'charge' of v1 has no step of its own in v3")
                .hasMessageContaining(".movesFrom(1, m -> m.step(\"charge\", ...))");
        assertThatThrownBy(() -> client.operations().moveVersion(id, 4))
                .isInstanceOf(VersionMoveException.class)
                .hasMessageContaining("declares no mapping from v1");
        assertThatThrownBy(() -> client.operations().moveVersion(TaskId.of("absent"), 3))
                .isInstanceOf(dev.sas.core.TaskNotFoundException.class);

        TaskInfo after = client.find(id).orElseThrow();
        assertThat(after.workflowVersion()).isEqualTo(1);
        assertThat(after.status()).isEqualTo(before.status());
        assertThat(after.steps()).isEqualTo(before.steps());
        assertThat(types(client, id)).doesNotContain(TaskEvent.Type.VERSION_MOVED);

        assertThat(client.operations().cancel(id)).isTrue();
        assertThatThrownBy(() -> client.operations().moveVersion(id, 3))
                .isInstanceOf(VersionMoveException.class)
                .hasMessageContaining("with a cancel being carried out");
        assertThat(client.find(id).orElseThrow().workflowVersion()).isEqualTo(1);
    }
}
