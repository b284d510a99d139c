package dev.sas.testing.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sas.core.Codec;
import dev.sas.core.SasClient;
import dev.sas.core.StateStoreException;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.DeadlineRenewal;
import dev.sas.core.spi.DeploymentStore;
import dev.sas.core.spi.DueBacklog;
import dev.sas.core.spi.ExpiredTask;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.RecordedEvent;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.SubmitResult;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.core.spi.WriteOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link StateStore} must show. Subclass it, return a fresh empty store from
 * {@link #createStore()}, and run it: the in-memory store and every JDBC database run this same
 * suite. Tests pass explicit instants, so stores must never read a clock of their own.
 */
public abstract class StateStoreContract extends StoreTestSupport {

    /** A fixed starting instant for every test. */
    protected static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    /** What the helpers' claims name as runnable: workflow "wf" version 1, which {@link #submit} uses. */
    protected static final Set<WorkflowVersion> WF_V1 = Set.of(new WorkflowVersion("wf", 1));
    /** The step timeout used for submitted tasks. */
    protected static final Duration TIMEOUT = Duration.ofSeconds(30);

    /**
     * An open transaction of the host application, of the type the store joins (for JDBC: a
     * connection with auto-commit off). The tests of joining a host transaction use it.
     */
    public interface HostTransaction extends AutoCloseable {

        /** What to pass as {@code transaction} to {@code submit} and {@code submitAll}. */
        Object transaction();

        /** Commits the host's transaction. */
        void commit() throws Exception;

        /** Rolls the host's transaction back. */
        void rollback() throws Exception;

        /** Ends the transaction (rolling back what was not committed) and releases it. */
        @Override
        void close() throws Exception;
    }

    /**
     * Begins a host transaction the store can join, or returns null (the default) if the store
     * joins none: the tests of joining are then skipped.
     */
    protected HostTransaction beginHostTransaction() throws Exception {
        return null;
    }

    // ---------------------------------------------------------------- helpers

    /** Submits a task of workflow "wf" due at {@code due} and returns its id. */
    protected TaskId submit(String businessKey, int priority, Instant due) {
        TaskId id = TaskId.random();
        NewTask task = new NewTask(id, "wf", 1, businessKey, priority, "input-" + businessKey, null, "first",
                TIMEOUT, T0, due);
        SubmitResult result = store.submit(task, received(id, businessKey, T0), null);
        assertThat(result.created()).as("created %s", businessKey).isTrue();
        return result.taskId();
    }

    /** Submits a task due at {@link #T0}. */
    protected TaskId submit(String businessKey) {
        return submit(businessKey, 0, T0);
    }

    private static TaskEvent received(TaskId id, String key, Instant at) {
        return new TaskEvent(id, key, "wf", TaskEvent.Type.RECEIVED, -1, null, 0, at, null);
    }

    private static TaskEvent event(ClaimedTask c, TaskEvent.Type type, int step, Instant at) {
        return new TaskEvent(c.taskId(), c.businessKey(), c.workflow(), type, step, "s" + step, c.attempt(), at, null);
    }

    /** A holder transition completing the claimed step and moving on to the next, keeping the lock. */
    protected static Transition continueTo(ClaimedTask c, int nextStep, String output, Instant now) {
        StepUpdate step = new StepUpdate(c.currentStep(), "s" + c.currentStep(), StepStatus.COMPLETED, c.attempt(),
                output, null, c.completeBy().minus(TIMEOUT), now, false, null);
        return Transition.holder(c).unlessCancelRequested().at(nextStep, "s" + nextStep, TIMEOUT).attempt(1)
                .failureCount(0).recording(step)
                .events(event(c, TaskEvent.Type.STEP_COMPLETED, c.currentStep(), now),
                        event(c, TaskEvent.Type.STEP_STARTED, nextStep, now))
                .keepHolding(TaskStatus.PROCESSING);
    }

    /** A holder transition completing the claimed step and the task. */
    protected static Transition finish(ClaimedTask c, String output, Instant now) {
        StepUpdate step = new StepUpdate(c.currentStep(), "s" + c.currentStep(), StepStatus.COMPLETED, c.attempt(),
                output, null, now, now, false, null);
        return Transition.holder(c).at(c.currentStep(), "s" + c.currentStep(), TIMEOUT).attempt(c.attempt())
                .failureCount(c.failureCount()).recording(step)
                .events(event(c, TaskEvent.Type.STEP_COMPLETED, c.currentStep(), now),
                        event(c, TaskEvent.Type.PROCESSED, -1, now))
                .end(TaskStatus.PROCESSED);
    }

    /** A transition releasing the task to {@code status} (PENDING/COMPENSATING or terminal) with an error. */
    protected static Transition release(ClaimedTask c, Transition.Guard guard, TaskStatus status, int failureCount,
            Instant nextAttemptAt, String error, Instant now) {
        StepUpdate step = new StepUpdate(c.currentStep(), "s" + c.currentStep(),
                status == TaskStatus.ERROR ? StepStatus.FAILED : StepStatus.PENDING, c.attempt(), null, error, now,
                null, false, null);
        Transition.Builder b = (guard == Transition.Guard.HOLDER ? Transition.holder(c)
                : Transition.expired(c.taskId(), c.lease(), c.status(), c.currentStep()))
                .at(c.currentStep(), "s" + c.currentStep(), TIMEOUT).attempt(c.attempt()).failureCount(failureCount)
                .lastError(error).recording(step)
                .events(event(c, status == TaskStatus.ERROR ? TaskEvent.Type.ERROR : TaskEvent.Type.STEP_RETRYING,
                        c.currentStep(), now));
        return status.isTerminal() ? b.end(status) : b.release(status, nextAttemptAt);
    }

    private List<ClaimedTask> claim(String instance, int limit, Instant now) {
        return store.claim(instance, limit, now, WF_V1);
    }

    /** Submits a task of {@code workflow} version {@code version}, due at {@link #T0}. */
    protected TaskId submitOf(String workflow, int version, String businessKey, int priority) {
        TaskId id = TaskId.random();
        NewTask task = new NewTask(id, workflow, version, businessKey, priority, "input-" + businessKey, null, "first",
                TIMEOUT, T0, T0);
        TaskEvent received = new TaskEvent(id, businessKey, workflow, TaskEvent.Type.RECEIVED, -1, null, 0, T0, null);
        SubmitResult result = store.submit(task, received, null);
        assertThat(result.created()).as("created %s", businessKey).isTrue();
        return result.taskId();
    }

    private TaskInfo task(TaskId id) {
        return store.find(id).orElseThrow(() -> new AssertionError("task " + id + " not found"));
    }

    private List<TaskEvent.Type> eventTypes(TaskId id) {
        return store.events(id).stream().map(TaskEvent::type).toList();
    }

    // ---------------------------------------------------------------- submission

    @Test
    void submitted_task_is_pending_with_its_input_and_a_received_event() {
        TaskId id = submit("k1", 5, T0);

        TaskInfo info = task(id);
        assertThat(info.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(info.workflow()).isEqualTo("wf");
        assertThat(info.workflowVersion()).isEqualTo(1);
        assertThat(info.businessKey()).isEqualTo("k1");
        assertThat(info.priority()).isEqualTo(5);
        assertThat(info.lockedBy()).isNull();
        assertThat(info.createdAt()).isEqualTo(T0);
        assertThat(info.nextAttemptAt()).isEqualTo(T0);
        assertThat(info.steps()).isEmpty();
        List<TaskEvent> events = store.events(id);
        assertThat(events).hasSize(1);
        assertThat(events.get(0).type()).isEqualTo(TaskEvent.Type.RECEIVED);
        assertThat(events.get(0).businessKey()).isEqualTo("k1");
        assertThat(events.get(0).workflow()).isEqualTo("wf");
        assertThat(events.get(0).at()).isEqualTo(T0);
        assertThat(store.findByBusinessKey("wf", "k1")).contains(id);
        assertThat(store.findByBusinessKey("wf", "other")).isEmpty();
        assertThat(store.findByBusinessKey("other-wf", "k1")).isEmpty();
    }

    @Test
    void business_keys_are_compared_exactly_and_a_key_ending_with_a_space_is_refused() {
        TaskId id = submit("k");
        assertThat(store.findByBusinessKey("wf", "k ")).as("the task of another key").isEmpty();
        assertThat(store.findByBusinessKey("wf", "K")).as("the task of another key").isEmpty();
        assertThat(store.findByBusinessKey("wf", "k")).contains(id);

        Workflow<String> wf = Workflow.builder("wf", Codec.string()).step("first", s -> s.execute(ctx -> "x")).build();
        SasClient client = SasClient.builder().stateStore(store).trustLocalClock().workflow(wf).build();
        assertThatThrownBy(() -> client.submit(wf, "k ", "input")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("businessKey 'k '").hasMessageContaining("ends with a space");
        assertThatThrownBy(() -> client.submitAll(wf, java.util.Map.of("k2 ", "input")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("businessKey 'k2 '");
        assertThat(store.findByBusinessKey("wf", "k2")).as("nothing of the refused batch stored").isEmpty();
        assertThat(client.find("wf", "k ")).isEmpty();
        assertThat(client.find("wf", "k")).map(TaskInfo::taskId).contains(id);
        assertThat(client.submit(wf, " k", "input").created()).as("a leading space makes another key").isTrue();
    }

    @Test
    void the_trace_context_stored_at_submission_comes_back_with_every_claim() {
        String traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\nvendor=x";
        TaskId traced = TaskId.random();
        store.submit(new NewTask(traced, "wf", 1, "traced", 0, "in", null, "first", TIMEOUT, T0, T0, traceparent),
                received(traced, "traced", T0), null);
        TaskId plain = submit("untraced");
        List<ClaimedTask> claimed = claim("node-a", 10, T0.plusSeconds(1));
        assertThat(claimed).extracting(ClaimedTask::traceContext).containsExactlyInAnyOrder(traceparent, null);
        assertThat(claimed).filteredOn(c -> c.taskId().equals(plain)).singleElement()
                .extracting(ClaimedTask::traceContext).isNull();
    }

    @Test
    void duplicate_business_key_returns_the_first_task_and_writes_nothing() {
        TaskId first = submit("dup");
        TaskId second = TaskId.random();
        SubmitResult result = store.submit(new NewTask(second, "wf", 1, "dup", 0, "other input", null, "first",
                TIMEOUT, T0, T0), received(second, "dup", T0), null);

        assertThat(result).isEqualTo(new SubmitResult(first, false));
        assertThat(store.find(second)).isEmpty();
        assertThat(store.events(first)).hasSize(1);
        assertThat(store.countByStatus().getOrDefault(TaskStatus.PENDING, 0L)).isEqualTo(1L);
    }

    @Test
    void same_business_key_in_another_workflow_is_a_different_task() {
        TaskId first = submit("shared");
        TaskId other = TaskId.random();
        SubmitResult result = store.submit(new NewTask(other, "wf2", 1, "shared", 0, "x", null, "first", TIMEOUT,
                T0, T0), received(other, "shared", T0), null);
        assertThat(result.created()).isTrue();
        assertThat(result.taskId()).isEqualTo(other).isNotEqualTo(first);
    }

    @Test
    void racing_duplicate_submissions_create_exactly_one_task() throws Exception {
        List<SubmitResult> results = race(8, i -> {
            TaskId id = TaskId.random();
            return store.submit(new NewTask(id, "wf", 1, "race", 0, "in", null, "first", TIMEOUT, T0, T0),
                    received(id, "race", T0), null);
        });
        assertThat(results).filteredOn(SubmitResult::created).hasSize(1);
        assertThat(results).extracting(SubmitResult::taskId).containsOnly(results.get(0).taskId());
    }

    /** Runs {@code submit} for 0 .. {@code threads - 1} on as many threads, released at once; the results in that order. */
    private static List<SubmitResult> race(int threads, java.util.function.IntFunction<SubmitResult> submit)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<SubmitResult>> futures = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int index = i;
                futures.add(pool.submit(() -> {
                    start.await();
                    return submit.apply(index);
                }));
            }
            start.countDown();
            List<SubmitResult> results = new ArrayList<>();
            for (Future<SubmitResult> f : futures) {
                results.add(f.get(30, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    // ---------------------------------------------------------------- submission claimed at once

    /** A task of "wf" v1 due at {@link #T0}, inserted claimed by {@code instance} (the store must claim at submit). */
    private NewTask newTask(String businessKey) {
        return new NewTask(TaskId.random(), "wf", 1, businessKey, 0, "input-" + businessKey, null, "first", TIMEOUT,
                T0, T0);
    }

    private DeploymentStore deployments() {
        return store.deployments().orElseThrow(() -> new AssertionError(store + " keeps no deployments"));
    }

    private SubmitResult submitClaimed(NewTask task, String instance) {
        return store.claimedSubmits().orElseThrow()
                .submitClaimed(task, received(task.taskId(), task.businessKey(), T0), instance);
    }

    @Test
    void a_task_submitted_claimed_is_held_as_a_claim_holds_it_and_no_claim_takes_it() {
        assumeTrue(store.claimedSubmits().isPresent(), "the store does not claim at submit");
        NewTask task = newTask("held");
        assertThat(submitClaimed(task, "a")).isEqualTo(new SubmitResult(task.taskId(), true));

        TaskInfo info = task(task.taskId());
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(info.lockedBy()).isEqualTo("a");
        assertThat(info.lease()).isEqualTo(1);
        assertThat(info.currentStep()).isZero();
        assertThat(info.completeBy()).isEqualTo(T0.plus(TIMEOUT));
        List<TaskEvent> events = store.events(task.taskId());
        assertThat(events).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.RECEIVED,
                TaskEvent.Type.STEP_STARTED);
        assertThat(events.get(1)).extracting(TaskEvent::stepIndex, TaskEvent::stepName, TaskEvent::attempt,
                TaskEvent::at).containsExactly(0, "first", 1, T0);
        assertThat(claim("b", 10, T0.plusSeconds(1))).as("held by a").isEmpty();
        assertThat(store.findExpired(T0.plus(TIMEOUT), 10)).as("deadline not passed").isEmpty();

        ClaimedTask c = ClaimedTask.atSubmit(task);
        assertThat(store.write(List.of(finish(c, "done", T0.plusSeconds(2))), T0.plusSeconds(2)))
                .containsExactly(WriteOutcome.APPLIED);
        assertThat(task(task.taskId()).status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(eventTypes(task.taskId())).containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.STEP_STARTED,
                TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.PROCESSED);
    }

    @Test
    void a_task_submitted_claimed_with_its_own_received_event_keeps_both_events_in_order() {
        assumeTrue(store.claimedSubmits().isPresent(), "the store does not claim at submit");
        NewTask task = newTask("imported");
        TaskEvent received = new TaskEvent(task.taskId(), "imported", "wf", TaskEvent.Type.RECEIVED, -1, null, 0, T0,
                "imported from the old system");
        assertThat(store.claimedSubmits().orElseThrow().submitClaimed(task, received, "a").created()).isTrue();

        List<TaskEvent> events = store.events(task.taskId());
        assertThat(events).extracting(TaskEvent::type, TaskEvent::message).containsExactly(
                tuple(TaskEvent.Type.RECEIVED, "imported from the old system"), tuple(TaskEvent.Type.STEP_STARTED, null));
        assertThat(events.get(1)).extracting(TaskEvent::stepIndex, TaskEvent::stepName, TaskEvent::attempt)
                .containsExactly(0, "first", 1);
    }

    @Test
    void a_task_submitted_claimed_whose_holder_died_expires_and_its_next_claim_fences_off_the_first() {
        assumeTrue(store.claimedSubmits().isPresent(), "the store does not claim at submit");
        NewTask task = newTask("orphan");
        submitClaimed(task, "dead");
        Instant late = T0.plus(TIMEOUT).plusMillis(1);
        assertThat(store.findExpired(late, 10)).extracting(ExpiredTask::taskId).containsExactly(task.taskId());

        ClaimedTask first = ClaimedTask.atSubmit(task);
        assertThat(store.write(List.of(release(first, Transition.Guard.EXPIRED, TaskStatus.PENDING, 1, late,
                "timed out", late)), late)).containsExactly(WriteOutcome.APPLIED);
        ClaimedTask second = claim("b", 10, late).get(0);
        assertThat(second.taskId()).isEqualTo(task.taskId());
        assertThat(second.lease()).isEqualTo(2);
        assertThat(store.write(List.of(finish(first, "late", late)), late)).as("the dead holder's write")
                .containsExactly(WriteOutcome.STALE);
        assertThat(store.write(List.of(finish(second, "done", late)), late)).containsExactly(WriteOutcome.APPLIED);
        assertThat(task(task.taskId()).steps()).singleElement().extracting(TaskInfo.StepInfo::output)
                .isEqualTo("done");
    }

    @Test
    void a_duplicate_submitted_claimed_writes_and_claims_nothing() {
        assumeTrue(store.claimedSubmits().isPresent(), "the store does not claim at submit");
        TaskId first = submit("dup-claimed");
        NewTask again = newTask("dup-claimed");

        assertThat(submitClaimed(again, "a")).isEqualTo(new SubmitResult(first, false));
        assertThat(store.find(again.taskId())).isEmpty();
        TaskInfo info = task(first);
        assertThat(info.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(info.lockedBy()).isNull();
        assertThat(eventTypes(first)).containsExactly(TaskEvent.Type.RECEIVED);
        assertThat(claim("b", 10, T0)).extracting(ClaimedTask::taskId, ClaimedTask::lease)
                .containsExactly(tuple(first, 1L));
    }

    @Test
    void racing_claimed_submissions_of_one_business_key_create_and_claim_exactly_one_task() throws Exception {
        assumeTrue(store.claimedSubmits().isPresent(), "the store does not claim at submit");
        List<SubmitResult> results = race(8, i -> submitClaimed(newTask("race-claimed"), "node-" + i));
        assertThat(results).filteredOn(SubmitResult::created).hasSize(1);
        assertThat(results).extracting(SubmitResult::taskId).containsOnly(results.get(0).taskId());
        TaskInfo info = task(results.get(0).taskId());
        assertThat(info.lockedBy()).isEqualTo("node-" + results.indexOf(results.stream()
                .filter(SubmitResult::created).findFirst().orElseThrow()));
        assertThat(info.lease()).isEqualTo(1);
        assertThat(eventTypes(info.taskId())).containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.STEP_STARTED);
    }

    // ---------------------------------------------------------------- claiming

    @Test
    void claim_takes_due_tasks_by_priority_then_due_time_and_stamps_the_claim() {
        TaskId low = submit("low", 0, T0);
        TaskId high = submit("high", 9, T0.plusSeconds(1));
        TaskId later = submit("later", 0, T0.plusSeconds(2));
        TaskId notDue = submit("notDue", 100, T0.plusSeconds(60));

        Instant now = T0.plusSeconds(5);
        List<ClaimedTask> claimed = claim("node-a", 10, now);

        assertThat(claimed).extracting(ClaimedTask::taskId).containsExactly(high, low, later);
        ClaimedTask c = claimed.get(0);
        assertThat(c.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(c.attempt()).isEqualTo(1);
        assertThat(c.currentStep()).isZero();
        assertThat(c.completeBy()).isEqualTo(now.plus(TIMEOUT));
        assertThat(c.input()).isEqualTo("input-high");
        assertThat(c.businessKey()).isEqualTo("high");
        assertThat(c.outputs()).isEmpty();
        TaskInfo info = task(high);
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(info.lockedBy()).isEqualTo("node-a");
        assertThat(info.lease()).isEqualTo(c.lease());
        assertThat(eventTypes(high)).containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.STEP_STARTED);
        TaskEvent started = store.events(high).get(1);
        assertThat(started.stepIndex()).isZero();
        assertThat(started.stepName()).isEqualTo("first");
        assertThat(started.attempt()).isEqualTo(1);
        assertThat(task(notDue).status()).isEqualTo(TaskStatus.PENDING);
        assertThat(claim("node-b", 10, now)).as("everything due is already held").isEmpty();
    }

    @Test
    void claim_takes_only_tasks_of_the_workflow_versions_the_claimer_names() {
        TaskId v1 = submitOf("orders", 1, "o-1", 0);
        TaskId v2 = submitOf("orders", 2, "o-2", 9);
        TaskId other = submitOf("billing", 1, "b-1", 9);
        // the unnamed tasks have the higher priority: they are at the head of the claim order
        List<ClaimedTask> claimed = store.claim("old-node", 10, T0, Set.of(new WorkflowVersion("orders", 1)));

        assertThat(claimed).extracting(ClaimedTask::taskId).containsExactly(v1);
        assertThat(task(v2).status()).isEqualTo(TaskStatus.PENDING);
        assertThat(task(other).status()).isEqualTo(TaskStatus.PENDING);
        assertThat(store.events(v2)).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.RECEIVED);
        assertThat(store.claim("old-node", 10, T0, Set.of(new WorkflowVersion("orders", 1)))).isEmpty();
    }

    @Test
    void claim_naming_no_workflow_claims_nothing() {
        submit("k");
        assertThat(store.claim("a", 10, T0, Set.of())).isEmpty();
        assertThat(claim("a", 10, T0)).hasSize(1);
    }

    @Test
    void tasks_of_unnamed_workflows_do_not_count_against_the_limit() {
        for (int i = 0; i < 5; i++) {
            submitOf("new-only", 2, "n" + i, 5);
        }
        submit("k1");
        submit("k2");
        assertThat(claim("a", 2, T0)).hasSize(2);
    }

    @Test
    void claimers_with_disjoint_workflow_versions_split_the_work_between_them() throws Exception {
        Set<WorkflowVersion> oldNode = Set.of(new WorkflowVersion("orders", 1));
        Set<WorkflowVersion> newNode = Set.of(new WorkflowVersion("orders", 2), new WorkflowVersion("billing", 1));
        Set<TaskId> forOld = new HashSet<>();
        Set<TaskId> forNew = new HashSet<>();
        for (int i = 0; i < 60; i++) {
            forOld.add(submitOf("orders", 1, "o1-" + i, i % 3));
            forNew.add(submitOf("orders", 2, "o2-" + i, i % 3));
            forNew.add(submitOf("billing", 1, "b-" + i, i % 3));
        }
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Set<TaskId>> old = pool.submit(() -> drainClaims("old", oldNode));
            Future<Set<TaskId>> fresh = pool.submit(() -> drainClaims("new", newNode));
            Set<TaskId> byOld = new HashSet<>(old.get(60, TimeUnit.SECONDS));
            Set<TaskId> byNew = new HashSet<>(fresh.get(60, TimeUnit.SECONDS));
            // A locking store may skip rows the other claimer's scan held at that moment and return
            // an empty batch early; a claim after the race takes the rest.
            byOld.addAll(drainClaims("old", oldNode));
            byNew.addAll(drainClaims("new", newNode));
            assertThat(byOld).isEqualTo(forOld);
            assertThat(byNew).isEqualTo(forNew);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void advertised_workflow_versions_count_until_their_time_to_live_ends_and_a_new_advertisement_replaces_the_old() {
        WorkflowVersion v1 = new WorkflowVersion("orders", 1);
        WorkflowVersion v2 = new WorkflowVersion("orders", 2);
        WorkflowVersion billing = new WorkflowVersion("billing", 1);
        deployments().advertise("old", Set.of(v1, billing), T0, Duration.ofSeconds(30));
        deployments().advertise("new", Set.of(v1, v2), T0, Duration.ofSeconds(60));

        assertThat(deployments().runnableByLiveNodes(T0.plusSeconds(10))).containsExactlyInAnyOrder(v1, v2, billing);
        assertThat(deployments().runnableByLiveNodes(T0.plusSeconds(45))).containsExactlyInAnyOrder(v1, v2);

        deployments().advertise("new", Set.of(v2), T0.plusSeconds(50), Duration.ofSeconds(60));
        assertThat(deployments().runnableByLiveNodes(T0.plusSeconds(55))).containsExactly(v2);
        deployments().advertise("new", Set.of(), T0.plusSeconds(56), Duration.ZERO);
        assertThat(deployments().runnableByLiveNodes(T0.plusSeconds(57))).isEmpty();
    }

    @Test
    void due_backlog_counts_unclaimed_pending_tasks_per_workflow_version_due_by_the_cutoff() {
        submitOf("orders", 1, "a", 0);
        submitOf("orders", 2, "b", 0);
        submitOf("orders", 2, "c", 0);
        TaskId claimedOne = submitOf("billing", 1, "d", 0);
        submit("later", 0, T0.plusSeconds(600));
        assertThat(store.claim("x", 10, T0, Set.of(new WorkflowVersion("billing", 1))))
                .extracting(ClaimedTask::taskId).containsExactly(claimedOne);

        List<DueBacklog> backlog = deployments().dueBacklog(T0.plusSeconds(60), 10);

        assertThat(backlog).extracting(DueBacklog::workflowVersion, DueBacklog::tasks, DueBacklog::dueSince)
                .containsExactlyInAnyOrder(
                        tuple(new WorkflowVersion("orders", 1), 1L, T0),
                        tuple(new WorkflowVersion("orders", 2), 2L, T0));
        assertThat(deployments().dueBacklog(T0.minusSeconds(1), 10)).isEmpty();
    }

    // ---------------------------------------------------------------- parking (rolling deploys)

    private static final WorkflowVersion ORDERS_V2 = new WorkflowVersion("orders", 2);
    private static final String PARK_REASON = "no live runtime has registered workflow 'orders' version 2";

    @Test
    void park_moves_only_unclaimed_pending_tasks_of_that_version_due_by_the_cutoff_and_records_why() {
        TaskId due = submitOf("orders", 2, "due", 0);
        TaskId otherVersion = submitOf("orders", 1, "v1", 0);
        TaskId claimed = submitOf("orders", 2, "claimed", 9);
        assertThat(store.claim("x", 1, T0, Set.of(ORDERS_V2))).extracting(ClaimedTask::taskId).containsExactly(claimed);
        TaskId notYetDue = TaskId.random();
        store.submit(new NewTask(notYetDue, "orders", 2, "later", 0, "in", "channel", "first", TIMEOUT, T0,
                T0.plusSeconds(600)), new TaskEvent(notYetDue, "later", "orders", TaskEvent.Type.RECEIVED, -1, null, 0,
                T0, null), null);

        List<RecordedEvent> parked = deployments().park(ORDERS_V2, T0.plusSeconds(60), T0.plusSeconds(120), PARK_REASON, 10);

        assertThat(parked).extracting(e -> e.event().taskId()).containsExactly(due);
        TaskEvent event = parked.get(0).event();
        assertThat(event.type()).isEqualTo(TaskEvent.Type.PARKED);
        assertThat(event.message()).isEqualTo(PARK_REASON);
        assertThat(event.businessKey()).isEqualTo("due");
        assertThat(event.workflow()).isEqualTo("orders");
        assertThat(event.at()).isEqualTo(T0.plusSeconds(120));
        TaskInfo info = task(due);
        assertThat(info.status()).isEqualTo(TaskStatus.PARKED);
        assertThat(info.lastError()).isEqualTo(PARK_REASON);
        assertThat(info.lockedBy()).isNull();
        assertThat(eventTypes(due)).containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.PARKED);
        assertThat(store.events(due).get(1).message()).isEqualTo(PARK_REASON);
        assertThat(task(otherVersion).status()).isEqualTo(TaskStatus.PENDING);
        assertThat(task(claimed).status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(task(notYetDue).status()).isEqualTo(TaskStatus.PENDING);
        // visible where operators look, and out of the claim and the backlog
        assertThat(store.countByStatus()).containsEntry(TaskStatus.PARKED, 1L);
        assertThat(store.list(byStatus(TaskStatus.PARKED, 10))).extracting(TaskInfo::taskId).containsExactly(due);
        assertThat(store.claim("y", 10, T0.plusSeconds(700), Set.of(ORDERS_V2))).extracting(ClaimedTask::taskId)
                .containsExactly(notYetDue);
        assertThat(deployments().dueBacklog(T0.plusSeconds(700), 10)).extracting(DueBacklog::workflowVersion)
                .containsExactly(new WorkflowVersion("orders", 1));
    }

    @Test
    void park_takes_at_most_the_limit_and_nothing_while_a_live_runtime_advertises_the_version() {
        for (int i = 0; i < 5; i++) {
            submitOf("orders", 2, "o" + i, 0);
        }
        deployments().advertise("new", Set.of(ORDERS_V2), T0, Duration.ofSeconds(30));
        assertThat(deployments().park(ORDERS_V2, T0, T0.plusSeconds(10), PARK_REASON, 10)).as("advertised").isEmpty();

        Instant later = T0.plusSeconds(40);
        assertThat(deployments().park(ORDERS_V2, T0, later, PARK_REASON, 2)).hasSize(2);
        assertThat(deployments().park(ORDERS_V2, T0, later, PARK_REASON, 2)).hasSize(2);
        assertThat(deployments().park(ORDERS_V2, T0, later, PARK_REASON, 2)).hasSize(1);
        assertThat(deployments().park(ORDERS_V2, T0, later, PARK_REASON, 2)).isEmpty();
        assertThat(store.countByStatus()).containsEntry(TaskStatus.PARKED, 5L);
    }

    @Test
    void unpark_makes_parked_tasks_of_the_named_versions_due_at_once_with_an_event_and_leaves_the_others() {
        TaskId a = submitOf("orders", 2, "a", 0);
        TaskId b = submitOf("orders", 2, "b", 0);
        TaskId c = submitOf("orders", 2, "c", 0);
        TaskId billing = submitOf("billing", 3, "bill", 0);
        TaskId pending = submitOf("orders", 2, "pending", 0);
        Instant parkedAt = T0.plusSeconds(60);
        deployments().park(new WorkflowVersion("billing", 3), T0, parkedAt, "no billing v3", 10);
        // parks a, b and c (the batch may pick any three of the four)
        assertThat(deployments().park(ORDERS_V2, T0, parkedAt, PARK_REASON, 3)).hasSize(3);
        Set<TaskId> parkedOrders = new HashSet<>();
        for (TaskId id : List.of(a, b, c, pending)) {
            if (task(id).status() == TaskStatus.PARKED) {
                parkedOrders.add(id);
            }
        }

        Instant now = T0.plusSeconds(300);
        List<RecordedEvent> first = deployments().unpark(Set.of(ORDERS_V2, new WorkflowVersion("other", 1)), now, "back", 2);
        List<RecordedEvent> second = deployments().unpark(Set.of(ORDERS_V2), now, "back", 2);

        assertThat(first).hasSize(2);
        assertThat(second).hasSize(1);
        Set<TaskId> unparked = new HashSet<>();
        for (RecordedEvent e : first) {
            unparked.add(e.event().taskId());
        }
        for (RecordedEvent e : second) {
            unparked.add(e.event().taskId());
            assertThat(e.event().type()).isEqualTo(TaskEvent.Type.UNPARKED);
            assertThat(e.event().message()).isEqualTo("back");
            assertThat(e.event().at()).isEqualTo(now);
        }
        assertThat(unparked).isEqualTo(parkedOrders);
        for (TaskId id : parkedOrders) {
            TaskInfo info = task(id);
            assertThat(info.status()).isEqualTo(TaskStatus.PENDING);
            assertThat(info.nextAttemptAt()).isEqualTo(now);
            assertThat(eventTypes(id)).containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.PARKED,
                    TaskEvent.Type.UNPARKED);
        }
        assertThat(task(billing).status()).isEqualTo(TaskStatus.PARKED);
        assertThat(deployments().unpark(Set.of(ORDERS_V2), now, "back", 10)).as("nothing left to unpark").isEmpty();
        assertThat(store.claim("new", 10, now, Set.of(ORDERS_V2))).hasSize(4);
    }

    @Test
    void a_parked_task_can_be_cancelled_and_stays_parked_until_a_runtime_that_can_run_it_claims_it() {
        TaskId id = submitOf("orders", 2, "a", 0);
        deployments().park(ORDERS_V2, T0, T0.plusSeconds(60), PARK_REASON, 10);

        assertThat(store.requestCancel(id, T0.plusSeconds(70), cancelEvent(id))).isTrue();
        assertThat(task(id).status()).isEqualTo(TaskStatus.PARKED);
        assertThat(task(id).cancelRequested()).isTrue();

        deployments().unpark(Set.of(ORDERS_V2), T0.plusSeconds(80), "back", 10);
        List<ClaimedTask> claimed = store.claim("new", 10, T0.plusSeconds(80), Set.of(ORDERS_V2));
        assertThat(claimed).extracting(ClaimedTask::cancelRequested).containsExactly(true);
    }

    @Test
    void parking_racing_claims_never_parks_a_claimed_task_and_never_loses_one() throws Exception {
        int n = 150;
        Set<TaskId> all = new HashSet<>();
        for (int i = 0; i < n; i++) {
            all.add(submitOf("orders", 2, "r" + i, i % 3));
        }
        Set<TaskId> claimed = ConcurrentHashMap.newKeySet();
        Set<TaskId> parked = ConcurrentHashMap.newKeySet();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<?> claimer = pool.submit(() -> {
                for (List<ClaimedTask> b = store.claim("new", 5, T0, Set.of(ORDERS_V2)); !b.isEmpty();
                        b = store.claim("new", 5, T0, Set.of(ORDERS_V2))) {
                    b.forEach(c -> assertThat(claimed.add(c.taskId())).as("claimed twice").isTrue());
                }
                return null;
            });
            Future<?> parker = pool.submit(() -> {
                for (int round = 0; round < 1_000; round++) {
                    List<RecordedEvent> b;
                    try {
                        b = deployments().park(ORDERS_V2, T0, T0.plusSeconds(60), PARK_REASON, 5);
                    } catch (StateStoreException e) {
                        continue; // e.g. a deadlock victim: rolled back, the supervisor tries again next pass
                    }
                    if (b.isEmpty()) {
                        return null;
                    }
                    b.forEach(e -> assertThat(parked.add(e.event().taskId())).as("parked twice").isTrue());
                }
                return null;
            });
            claimer.get(60, TimeUnit.SECONDS);
            parker.get(60, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        // a claim that lost a row to the parker (or the parker's last empty read) may leave a few PENDING
        parked.addAll(deployments().park(ORDERS_V2, T0, T0.plusSeconds(60), PARK_REASON, n).stream()
                .map(e -> e.event().taskId()).toList());
        claimed.addAll(store.claim("new", n, T0, Set.of(ORDERS_V2)).stream().map(ClaimedTask::taskId).toList());

        // either may have taken every task (the race has no fixed winner): disjoint, not "some of each"
        assertThat(java.util.Collections.disjoint(claimed, parked)).as("claimed and also parked").isTrue();
        Set<TaskId> union = new HashSet<>(claimed);
        union.addAll(parked);
        assertThat(union).isEqualTo(all);
        for (TaskId id : parked) {
            assertThat(task(id).status()).isEqualTo(TaskStatus.PARKED);
            assertThat(eventTypes(id)).containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.PARKED);
        }
        for (TaskId id : claimed) {
            assertThat(task(id).status()).isEqualTo(TaskStatus.PROCESSING);
            assertThat(eventTypes(id)).doesNotContain(TaskEvent.Type.PARKED);
        }
    }

    private Set<TaskId> drainClaims(String instance, Set<WorkflowVersion> runnable) {
        Set<TaskId> seen = new HashSet<>();
        while (true) {
            List<ClaimedTask> batch = store.claim(instance, 7, T0, runnable);
            if (batch.isEmpty()) {
                return seen;
            }
            for (ClaimedTask c : batch) {
                assertThat(runnable).contains(new WorkflowVersion(c.workflow(), c.workflowVersion()));
                assertThat(seen.add(c.taskId())).as("claimed twice: %s", c.taskId()).isTrue();
            }
        }
    }

    @Test
    void claim_respects_the_limit() {
        for (int i = 0; i < 5; i++) {
            submit("k" + i);
        }
        assertThat(claim("a", 2, T0)).hasSize(2);
        assertThat(claim("a", 2, T0)).hasSize(2);
        assertThat(claim("a", 2, T0)).hasSize(1);
        assertThat(claim("a", 2, T0)).isEmpty();
    }

    @Test
    void every_claim_increments_the_lease() {
        TaskId id = submit("lease");
        ClaimedTask first = claim("a", 1, T0).get(0);
        Instant later = T0.plus(TIMEOUT).plusSeconds(1);
        assertThat(store.write(List.of(release(first, Transition.Guard.EXPIRED, TaskStatus.PENDING, 1, later, "timeout",
                later)), later)).containsExactly(WriteOutcome.APPLIED);
        ClaimedTask second = claim("b", 1, later).get(0);

        assertThat(second.taskId()).isEqualTo(id);
        assertThat(second.lease()).isGreaterThan(first.lease());
        assertThat(second.attempt()).isEqualTo(2);
        assertThat(second.failureCount()).isEqualTo(1);
    }

    @Test
    void racing_claimers_never_hold_the_same_task() throws Exception {
        int tasks = 400;
        for (int i = 0; i < tasks; i++) {
            submit("r" + i);
        }
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        Set<TaskId> seen = ConcurrentHashMap.newKeySet();
        AtomicInteger duplicates = new AtomicInteger();
        AtomicInteger total = new AtomicInteger();
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String instance = "node-" + t;
                futures.add(pool.submit(() -> {
                    start.await();
                    while (true) {
                        List<ClaimedTask> batch = store.claim(instance, 7, T0, WF_V1);
                        if (batch.isEmpty()) {
                            return null;
                        }
                        for (ClaimedTask c : batch) {
                            total.incrementAndGet();
                            if (!seen.add(c.taskId())) {
                                duplicates.incrementAndGet();
                            }
                        }
                    }
                }));
            }
            start.countDown();
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(duplicates).hasValue(0);
        assertThat(total).hasValue(tasks);
        assertThat(seen).hasSize(tasks);
    }

    // ---------------------------------------------------------------- fencing

    @Test
    void holder_write_records_the_step_and_moves_on_keeping_the_lock() {
        TaskId id = submit("cont");
        ClaimedTask c = claim("a", 1, T0).get(0);
        Instant now = T0.plusSeconds(3);

        assertThat(store.write(List.of(continueTo(c, 1, "out-0", now)), now)).containsExactly(WriteOutcome.APPLIED);

        TaskInfo info = task(id);
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(info.lockedBy()).isEqualTo("a");
        assertThat(info.lease()).isEqualTo(c.lease());
        assertThat(info.currentStep()).isEqualTo(1);
        assertThat(info.completeBy()).isEqualTo(now.plus(TIMEOUT));
        assertThat(info.steps()).hasSize(1);
        TaskInfo.StepInfo s0 = info.steps().get(0);
        assertThat(s0.index()).isZero();
        assertThat(s0.name()).isEqualTo("s0");
        assertThat(s0.status()).isEqualTo(StepStatus.COMPLETED);
        assertThat(s0.output()).isEqualTo("out-0");
        assertThat(s0.attempts()).isEqualTo(1);
        assertThat(s0.finishedAt()).isEqualTo(now);
        assertThat(eventTypes(id)).containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.STEP_STARTED,
                TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.STEP_STARTED);
        assertThat(store.findExpired(now.plus(TIMEOUT), 10)).as("new deadline not yet passed").isEmpty();
    }

    @Test
    void finishing_releases_the_lock_and_the_task_is_never_claimed_again() {
        TaskId id = submit("fin");
        ClaimedTask c = claim("a", 1, T0).get(0);
        assertThat(store.write(List.of(finish(c, "done", T0)), T0)).containsExactly(WriteOutcome.APPLIED);

        TaskInfo info = task(id);
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.lockedBy()).isNull();
        assertThat(claim("a", 10, T0.plusSeconds(3600))).isEmpty();
        assertThat(store.findExpired(T0.plusSeconds(3600), 10)).isEmpty();
        assertThat(store.countByStatus().get(TaskStatus.PROCESSED)).isEqualTo(1L);
    }

    @Test
    void write_with_a_lease_that_moved_on_is_stale_and_changes_nothing() {
        TaskId id = submit("fence");
        ClaimedTask old = claim("a", 1, T0).get(0);
        Instant expired = T0.plus(TIMEOUT).plusSeconds(1);
        store.write(List.of(release(old, Transition.Guard.EXPIRED, TaskStatus.PENDING, 1, expired, "timeout", expired)),
                expired);
        ClaimedTask current = claim("b", 1, expired).get(0);
        int eventsBefore = store.events(id).size();

        // The old holder's late reply: its lease is gone.
        assertThat(store.write(List.of(finish(old, "late", expired)), expired)).containsExactly(WriteOutcome.STALE);

        TaskInfo info = task(id);
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(info.lockedBy()).isEqualTo("b");
        assertThat(info.lease()).isEqualTo(current.lease());
        assertThat(info.steps()).allSatisfy(s -> assertThat(s.output()).isNotEqualTo("late"));
        assertThat(store.events(id)).hasSize(eventsBefore);
    }

    @Test
    void replaying_a_write_that_already_applied_is_recognised_as_applied_and_records_nothing_twice() {
        TaskId id = submit("replay");
        ClaimedTask c = claim("a", 1, T0).get(0);
        Transition moveOn = continueTo(c, 1, "out", T0);
        assertThat(store.write(List.of(moveOn), T0)).containsExactly(WriteOutcome.APPLIED);
        int events = store.events(id).size();

        // The commit's acknowledgement was lost and the writer tries again: same lease, still held.
        assertThat(store.write(List.of(moveOn), T0.plusSeconds(1))).containsExactly(WriteOutcome.APPLIED_ALREADY);

        assertThat(store.events(id)).hasSize(events);
        assertThat(task(id).currentStep()).isEqualTo(1);
        assertThat(task(id).lockedBy()).isEqualTo("a");
        // A final write replayed: recognised too, so the writer can tell its listeners.
        ClaimedTask atStep1 = new ClaimedTask(id, "wf", 1, "replay", TaskStatus.PROCESSING, c.lease(), 1, 1, 0,
                T0.plus(TIMEOUT), false, "", null, T0, List.of());
        Transition done = finish(atStep1, "last", T0);
        assertThat(store.write(List.of(done), T0)).containsExactly(WriteOutcome.APPLIED);
        assertThat(store.write(List.of(done), T0.plusSeconds(1))).containsExactly(WriteOutcome.APPLIED_ALREADY);
        assertThat(eventTypes(id)).containsOnlyOnce(TaskEvent.Type.PROCESSED);
        assertThat(task(id).status()).isEqualTo(TaskStatus.PROCESSED);
    }

    @Test
    void replaying_a_move_to_compensating_at_the_same_step_applies_once_and_fences_off_the_old_view() {
        TaskId id = submit("comp-replay");
        ClaimedTask c = claim("a", 1, T0).get(0);
        // Step 0 failed for good, possibly after applying its effect: compensate it, in this claim.
        Transition toCompensating = Transition.holder(c).unlessCancelRequested().at(0, "s0", TIMEOUT).attempt(1)
                .failureCount(0).lastError("declined")
                .recording(StepUpdate.failed(0, "s0", 1, "declined", T0, T0))
                .events(event(c, TaskEvent.Type.STEP_FAILED, 0, T0), event(c, TaskEvent.Type.COMPENSATING, -1, T0),
                        event(c, TaskEvent.Type.COMPENSATION_STARTED, 0, T0))
                .keepHolding(TaskStatus.COMPENSATING);
        assertThat(store.write(List.of(toCompensating), T0)).containsExactly(WriteOutcome.APPLIED);
        List<TaskEvent.Type> events = eventTypes(id);

        // Lease, step and lock are unchanged: only the state and the transition id tell the replay.
        assertThat(store.write(List.of(toCompensating), T0)).containsExactly(WriteOutcome.APPLIED_ALREADY);
        assertThat(eventTypes(id)).isEqualTo(events);
        assertThat(eventTypes(id)).containsOnlyOnce(TaskEvent.Type.COMPENSATING);
        // Another transition computed from the PROCESSING view (say, the step's result after all) is stale.
        assertThat(store.write(List.of(finish(c, "late", T0)), T0)).containsExactly(WriteOutcome.STALE);
        TaskInfo info = task(id);
        assertThat(info.status()).isEqualTo(TaskStatus.COMPENSATING);
        assertThat(info.lockedBy()).isEqualTo("a");
        assertThat(info.step("s0").status()).isEqualTo(StepStatus.FAILED);
        assertThat(eventTypes(id)).isEqualTo(events);
    }

    @Test
    void replay_after_another_claimer_took_the_released_task_is_recognised_and_changes_nothing() {
        TaskId id = submit("replay-released");
        ClaimedTask c = claim("a", 1, T0).get(0);
        Transition retryLater = release(c, Transition.Guard.HOLDER, TaskStatus.PENDING, 0, T0, "busy", T0);
        assertThat(store.write(List.of(retryLater), T0)).containsExactly(WriteOutcome.APPLIED);
        ClaimedTask next = claim("b", 1, T0).get(0);
        int events = store.events(id).size();

        assertThat(store.write(List.of(retryLater), T0)).containsExactly(WriteOutcome.APPLIED_ALREADY);

        TaskInfo info = task(id);
        assertThat(info.lockedBy()).isEqualTo("b");
        assertThat(info.lease()).isEqualTo(next.lease());
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(store.events(id)).hasSize(events);
    }

    @Test
    void transition_holding_text_no_database_can_store_is_refused_and_the_rest_of_its_batch_applies() {
        submit("u1");
        TaskId badId = submit("u2");
        submit("u3");
        TaskId surrogateId = submit("u4");
        List<ClaimedTask> claimed = claim("a", 4, T0);
        ClaimedTask bad = claimed.stream().filter(c -> c.taskId().equals(badId)).findFirst().orElseThrow();
        ClaimedTask surrogate = claimed.stream().filter(c -> c.taskId().equals(surrogateId)).findFirst().orElseThrow();
        List<ClaimedTask> good = claimed.stream().filter(c -> c != bad && c != surrogate).toList();
        int badEvents = store.events(badId).size();

        List<WriteOutcome> outcomes = store.write(List.of(finish(good.get(0), "fine", T0),
                finish(bad, "ab\u0000c", T0),
                release(surrogate, Transition.Guard.HOLDER, TaskStatus.PENDING, 0, T0, "half \uD83D pair", T0),
                finish(good.get(1), "fine", T0)), T0);

        assertThat(outcomes.get(0)).isEqualTo(WriteOutcome.APPLIED);
        assertThat(outcomes.get(1).kind()).isEqualTo(WriteOutcome.Kind.REFUSED);
        assertThat(outcomes.get(1).reason()).contains("output of step 0").contains("NUL").contains("index 2");
        assertThat(outcomes.get(2).kind()).isEqualTo(WriteOutcome.Kind.REFUSED);
        assertThat(outcomes.get(2).reason()).contains("unpaired surrogate U+D83D at index 5");
        assertThat(outcomes.get(3)).isEqualTo(WriteOutcome.APPLIED);
        for (ClaimedTask c : good) {
            assertThat(task(c.taskId()).status()).isEqualTo(TaskStatus.PROCESSED);
        }
        TaskInfo untouched = task(badId);
        assertThat(untouched.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(untouched.steps()).isEmpty();
        assertThat(store.events(badId)).hasSize(badEvents);
        assertThat(task(surrogateId).status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(task(surrogateId).lastError()).isNull();
        // Refused is not written: the same task accepts a storable result afterwards.
        assertThat(store.write(List.of(finish(bad, "abc", T0)), T0)).containsExactly(WriteOutcome.APPLIED);
    }

    @Test
    void holder_write_after_the_deadline_is_stale() {
        TaskId id = submit("late");
        ClaimedTask c = claim("a", 1, T0).get(0);
        Instant late = c.completeBy().plusMillis(1);

        assertThat(store.write(List.of(finish(c, "late", late)), late)).containsExactly(WriteOutcome.STALE);
        assertThat(task(id).status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(task(id).steps()).isEmpty();
        // Exactly at the deadline is still in time.
        assertThat(store.write(List.of(finish(c, "ok", c.completeBy())), c.completeBy()))
                .containsExactly(WriteOutcome.APPLIED);
    }

    // ---------------------------------------------------------------- deadline renewals (admission)

    private static DeadlineRenewal renewal(ClaimedTask c, String holder, Instant completeBy) {
        return new DeadlineRenewal(c.taskId(), holder, c.lease(), c.status(), c.currentStep(), completeBy);
    }

    @Test
    void renewing_the_deadline_of_a_held_task_moves_it_and_nothing_else() {
        TaskId id = submit("renew");
        TaskId other = submit("renew-other");
        List<ClaimedTask> claimed = claim("a", 2, T0);
        ClaimedTask c = claimed.get(0).taskId().equals(id) ? claimed.get(0) : claimed.get(1);
        ClaimedTask d = claimed.get(0).taskId().equals(id) ? claimed.get(1) : claimed.get(0);
        int eventsBefore = store.events(id).size();
        Instant now = T0.plusSeconds(20);
        Instant later = now.plus(TIMEOUT);

        assertThat(store.renewDeadlines(List.of(renewal(c, "a", later)), now))
                .containsExactly(DeadlineRenewal.Outcome.RENEWED);

        TaskInfo info = task(id);
        assertThat(info.completeBy()).isEqualTo(later);
        assertThat(info.lease()).isEqualTo(c.lease());
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(info.lockedBy()).isEqualTo("a");
        assertThat(store.events(id)).hasSize(eventsBefore);
        assertThat(task(other).completeBy()).as("only the renewed task").isEqualTo(d.completeBy());
        Instant afterOldDeadline = c.completeBy().plusSeconds(1);
        assertThat(store.findExpired(afterOldDeadline, 10)).extracting(ExpiredTask::taskId).containsExactly(other);
        // the holder's result is in time until the new deadline
        assertThat(store.write(List.of(finish(c, "ok", afterOldDeadline)), afterOldDeadline))
                .containsExactly(WriteOutcome.APPLIED);
    }

    @Test
    void a_renewal_with_a_lease_that_moved_on_or_of_another_holder_is_stale_and_changes_nothing() {
        TaskId id = submit("renew-fence");
        TaskId other = submit("renew-fence-other");
        List<ClaimedTask> first = claim("a", 2, T0);
        ClaimedTask old = first.get(0).taskId().equals(id) ? first.get(0) : first.get(1);
        ClaimedTask held = first.get(0).taskId().equals(id) ? first.get(1) : first.get(0);
        Instant expired = T0.plus(TIMEOUT).plusSeconds(1);
        store.write(List.of(release(old, Transition.Guard.EXPIRED, TaskStatus.PENDING, 1, expired, "timeout", expired)),
                expired);
        ClaimedTask current = claim("b", 1, expired).get(0);
        assertThat(current.taskId()).isEqualTo(id);
        Instant now = expired;

        // one stale renewal does not hold back the other in its batch
        assertThat(store.renewDeadlines(List.of(renewal(old, "a", now.plus(TIMEOUT)),
                renewal(current, "a", now.plus(TIMEOUT)), renewal(held, "a", now.plus(TIMEOUT))), T0.plusSeconds(1)))
                .containsExactly(DeadlineRenewal.Outcome.STALE, DeadlineRenewal.Outcome.STALE,
                        DeadlineRenewal.Outcome.RENEWED);
        assertThat(task(id).completeBy()).isEqualTo(current.completeBy());
        assertThat(task(id).lockedBy()).isEqualTo("b");
        assertThat(task(other).completeBy()).isEqualTo(now.plus(TIMEOUT));
        assertThat(store.renewDeadlines(List.of(new DeadlineRenewal(current.taskId(), "b", current.lease(),
                current.status(), current.currentStep() + 1, now.plus(TIMEOUT))), now))
                .as("another step").containsExactly(DeadlineRenewal.Outcome.STALE);
    }

    @Test
    void a_renewal_after_the_deadline_passed_is_stale_and_the_supervisor_still_recovers_the_task() {
        TaskId id = submit("renew-late");
        ClaimedTask c = claim("a", 1, T0).get(0);
        Instant late = c.completeBy().plusMillis(1);

        assertThat(store.renewDeadlines(List.of(renewal(c, "a", late.plus(TIMEOUT))), late))
                .containsExactly(DeadlineRenewal.Outcome.STALE);
        assertThat(task(id).completeBy()).isEqualTo(c.completeBy());
        assertThat(store.findExpired(late, 10)).extracting(ExpiredTask::taskId).containsExactly(id);
        // exactly at the deadline is still in time, as for a holder's write
        assertThat(store.renewDeadlines(List.of(renewal(c, "a", late.plus(TIMEOUT))), c.completeBy()))
                .containsExactly(DeadlineRenewal.Outcome.RENEWED);
    }

    @Test
    void replaying_a_renewal_that_applied_is_answered_renewed_and_changes_nothing() {
        TaskId id = submit("renew-replay");
        ClaimedTask c = claim("a", 1, T0).get(0);
        Instant now = T0.plusSeconds(10);
        DeadlineRenewal r = renewal(c, "a", now.plus(TIMEOUT));
        assertThat(store.renewDeadlines(List.of(r), now)).containsExactly(DeadlineRenewal.Outcome.RENEWED);
        int eventsBefore = store.events(id).size();

        // sent again after its acknowledgement was lost, even once its own deadline has passed
        assertThat(store.renewDeadlines(List.of(r), now)).containsExactly(DeadlineRenewal.Outcome.RENEWED);
        Instant muchLater = r.completeBy().plusSeconds(1);
        assertThat(store.renewDeadlines(List.of(r), muchLater)).containsExactly(DeadlineRenewal.Outcome.RENEWED);

        TaskInfo info = task(id);
        assertThat(info.completeBy()).isEqualTo(r.completeBy());
        assertThat(info.lease()).isEqualTo(c.lease());
        assertThat(store.events(id)).hasSize(eventsBefore);
        assertThat(store.renewDeadlines(List.of(), now)).isEmpty();
    }

    @Test
    void expired_guard_applies_only_after_the_deadline_and_only_once() {
        TaskId id = submit("exp");
        ClaimedTask c = claim("a", 1, T0).get(0);
        Transition recover = release(c, Transition.Guard.EXPIRED, TaskStatus.PENDING, 1, T0, "timeout", T0);

        assertThat(store.write(List.of(recover), c.completeBy())).as("not expired yet").containsExactly(WriteOutcome.STALE);
        Instant after = c.completeBy().plusMillis(1);
        assertThat(store.write(List.of(recover), after)).containsExactly(WriteOutcome.APPLIED);
        Transition sameRecoveryBySecondSupervisor = release(c, Transition.Guard.EXPIRED, TaskStatus.PENDING, 1, T0,
                "timeout", T0);
        assertThat(store.write(List.of(sameRecoveryBySecondSupervisor), after)).as("second supervisor")
                .containsExactly(WriteOutcome.STALE);
        assertThat(store.write(List.of(recover), after)).as("the first supervisor's replay")
                .containsExactly(WriteOutcome.APPLIED_ALREADY);

        TaskInfo info = task(id);
        assertThat(info.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(info.lockedBy()).isNull();
        assertThat(info.failureCount()).isEqualTo(1);
        assertThat(info.lastError()).isEqualTo("timeout");
        assertThat(store.events(id).stream().filter(e -> e.type() == TaskEvent.Type.STEP_RETRYING)).hasSize(1);
    }

    @Test
    void a_batch_applies_each_transition_on_its_own_guard() {
        submit("b1");
        submit("b2");
        List<ClaimedTask> claimed = claim("a", 2, T0);
        ClaimedTask good = claimed.get(0);
        ClaimedTask stale = new ClaimedTask(claimed.get(1).taskId(), "wf", 1, "b2", TaskStatus.PROCESSING,
                claimed.get(1).lease() + 5, 0, 1, 0, claimed.get(1).completeBy(), false, "", null, T0, List.of());

        List<WriteOutcome> outcomes = store.write(List.of(finish(stale, "x", T0), finish(good, "y", T0)), T0);

        assertThat(outcomes).containsExactly(WriteOutcome.STALE, WriteOutcome.APPLIED);
        assertThat(task(good.taskId()).status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(task(stale.taskId()).status()).isEqualTo(TaskStatus.PROCESSING);
    }

    @Test
    void a_batch_of_every_outcome_answers_each_transition_on_its_own_and_records_only_what_applied() {
        for (int i = 0; i < 6; i++) {
            submit("mix" + i);
        }
        List<ClaimedTask> c = claim("a", 6, T0);
        assertThat(c).hasSize(6);
        Instant now = T0.plusMillis(1);
        Transition done = finish(c.get(0), "done", now);
        assertThat(store.write(List.of(done), now)).containsExactly(WriteOutcome.APPLIED);
        assertThat(store.requestCancel(c.get(2).taskId(), now, cancelEvent(c.get(2).taskId()))).isTrue();
        ClaimedTask movedOn = new ClaimedTask(c.get(1).taskId(), "wf", 1, c.get(1).businessKey(), TaskStatus.PROCESSING,
                c.get(1).lease() + 1, 0, 1, 0, c.get(1).completeBy(), false, "", null, T0, List.of());
        Transition early = release(c.get(5), Transition.Guard.EXPIRED, TaskStatus.PENDING, 1, now, "too early", now);

        List<WriteOutcome> outcomes = store.write(List.of(finish(c.get(4), "four", now), done,
                finish(movedOn, "stale", now), continueTo(c.get(2), 1, "two", now), early,
                finish(c.get(3), "three", now)), now);

        assertThat(outcomes).containsExactly(WriteOutcome.APPLIED, WriteOutcome.APPLIED_ALREADY, WriteOutcome.STALE,
                WriteOutcome.CANCEL_REQUESTED, WriteOutcome.STALE, WriteOutcome.APPLIED);
        assertThat(task(c.get(4).taskId()).status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(task(c.get(3).taskId()).status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(task(c.get(5).taskId()).status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(task(c.get(5).taskId()).failureCount()).isZero();
        assertThat(task(c.get(1).taskId()).status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(task(c.get(2).taskId()).currentStep()).isZero();
        for (ClaimedTask x : c) {
            List<TaskEvent.Type> types = eventTypes(x.taskId());
            assertThat(Collections.frequency(types, TaskEvent.Type.STEP_STARTED)).as("starts of %s", x.businessKey())
                    .isEqualTo(1);
            assertThat(Collections.frequency(types, TaskEvent.Type.PROCESSED)).as("ends of %s", x.businessKey())
                    .isEqualTo(x == c.get(1) || x == c.get(2) || x == c.get(5) ? 0 : 1);
        }
    }

    @Test
    void two_transitions_of_one_task_in_a_batch_apply_in_turn() {
        TaskId id = submit("twice");
        ClaimedTask c = claim("a", 1, T0).get(0);
        Instant now = T0.plusMillis(1);
        Transition next = continueTo(c, 1, "zero", now);
        ClaimedTask atOne = new ClaimedTask(id, "wf", 1, "twice", TaskStatus.PROCESSING, c.lease(), 1, 1, 0,
                now.plus(TIMEOUT), false, "", null, T0, List.of("zero"));

        assertThat(store.write(List.of(next, finish(atOne, "one", now)), now))
                .containsExactly(WriteOutcome.APPLIED, WriteOutcome.APPLIED);
        assertThat(task(id).status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(eventTypes(id)).containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.STEP_STARTED,
                TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.STEP_STARTED, TaskEvent.Type.STEP_COMPLETED,
                TaskEvent.Type.PROCESSED);
    }

    @Test
    void each_claims_start_is_told_in_its_place_while_it_runs_after_a_cancel_request_and_after_a_recovery() {
        TaskId id = submit("starts");
        Instant claimed = T0.plusMillis(10);
        ClaimedTask first = claim("a", 1, claimed).get(0);
        TaskEvent received = received(id, "starts", T0);
        TaskEvent started = new TaskEvent(id, "starts", "wf", TaskEvent.Type.STEP_STARTED, 0, "first", 1, claimed,
                null);
        assertThat(store.events(id)).as("while the step runs").containsExactly(received, started);

        Instant asked = claimed.plusMillis(5);
        TaskEvent cancel = new TaskEvent(id, "starts", "wf", TaskEvent.Type.CANCEL_REQUESTED, -1, null, 0, asked, null);
        assertThat(store.requestCancel(id, asked, cancel)).isTrue();
        assertThat(store.events(id)).as("after a cancel request").containsExactly(received, started, cancel);

        Instant late = first.completeBy().plusMillis(1);
        Transition recovery = release(first, Transition.Guard.EXPIRED, TaskStatus.PENDING, 1, late, "timeout", late);
        assertThat(store.write(List.of(recovery), late)).containsExactly(WriteOutcome.APPLIED);
        ClaimedTask second = claim("b", 1, late).get(0);
        assertThat(second.cancelRequested()).isTrue();
        assertThat(second.attempt()).isEqualTo(2);
        // the claim of a task whose cancel was requested starts no step: it records no start
        assertThat(store.events(id)).as("after a recovery and a second claim").containsExactly(received, started,
                cancel, recovery.events().get(0));

        Instant end = late.plusMillis(3);
        Transition finished = finish(second, null, end);
        assertThat(store.write(List.of(finished), end)).containsExactly(WriteOutcome.APPLIED);
        assertThat(store.events(id)).as("at the end").containsExactly(received, started, cancel,
                recovery.events().get(0), finished.events().get(0), finished.events().get(1));
    }

    @Test
    void released_task_is_due_again_only_at_its_next_attempt() {
        TaskId id = submit("retry");
        ClaimedTask c = claim("a", 1, T0).get(0);
        Instant next = T0.plusSeconds(10);
        assertThat(store.write(List.of(release(c, Transition.Guard.HOLDER, TaskStatus.PENDING, 0, next, "boom", T0)), T0))
                .containsExactly(WriteOutcome.APPLIED);

        assertThat(claim("a", 1, next.minusMillis(1))).isEmpty();
        List<ClaimedTask> again = claim("a", 1, next);
        assertThat(again).extracting(ClaimedTask::taskId).containsExactly(id);
        assertThat(again.get(0).attempt()).isEqualTo(2);
    }

    @Test
    void outputs_of_completed_steps_come_with_a_later_claim() {
        TaskId id = submit("outs");
        ClaimedTask c = claim("a", 1, T0).get(0);
        Instant t1 = T0.plusSeconds(1);
        store.write(List.of(continueTo(c, 1, "zero", t1)), t1);
        // The node dies on step 1; the supervisor releases it.
        Instant expired = t1.plus(TIMEOUT).plusSeconds(1);
        ClaimedTask onStep1 = new ClaimedTask(id, "wf", 1, "outs", TaskStatus.PROCESSING, c.lease(), 1, 1, 0,
                t1.plus(TIMEOUT), false, "", null, T0, List.of());
        assertThat(store.write(List.of(release(onStep1, Transition.Guard.EXPIRED, TaskStatus.PENDING, 1, expired,
                "timeout", expired)), expired)).containsExactly(WriteOutcome.APPLIED);

        ClaimedTask resumed = claim("b", 1, expired).get(0);
        assertThat(resumed.currentStep()).isEqualTo(1);
        assertThat(resumed.outputs()).containsExactly("zero");
        assertThat(store.events(id).get(store.events(id).size() - 1).stepName()).isEqualTo("s1");
    }

    @Test
    void compensation_result_keeps_the_step_result() {
        TaskId id = submit("comp");
        ClaimedTask c = claim("a", 1, T0).get(0);
        store.write(List.of(continueTo(c, 1, "reserved", T0)), T0);
        // Step 1 fails for good: compensate step 0, released for a claim.
        StepUpdate failed = new StepUpdate(1, "s1", StepStatus.FAILED, 1, null, "declined", T0, T0, false, null);
        Transition toCompensating = Transition.holder(id, c.lease(), TaskStatus.PROCESSING, 1).at(0, "s0", TIMEOUT)
                .attempt(0).failureCount(0).lastError("declined").recording(failed)
                .release(TaskStatus.COMPENSATING, T0);
        assertThat(store.write(List.of(toCompensating), T0)).containsExactly(WriteOutcome.APPLIED);
        assertThat(task(id).status()).isEqualTo(TaskStatus.COMPENSATING);

        ClaimedTask comp = claim("a", 1, T0).get(0);
        assertThat(comp.status()).isEqualTo(TaskStatus.COMPENSATING);
        assertThat(comp.currentStep()).isZero();
        assertThat(comp.outputs()).containsExactly("reserved");
        assertThat(store.events(id).get(store.events(id).size() - 1).type())
                .isEqualTo(TaskEvent.Type.COMPENSATION_STARTED);
        StepUpdate undone = new StepUpdate(0, "s0", null, 0, null, null, T0, T0, true, StepStatus.COMPENSATED);
        Transition done = Transition.holder(comp).at(0, "s0", TIMEOUT).attempt(1).failureCount(0).recording(undone)
                .end(TaskStatus.COMPENSATED);
        assertThat(store.write(List.of(done), T0)).containsExactly(WriteOutcome.APPLIED);

        TaskInfo info = task(id);
        assertThat(info.status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(info.lastError()).isEqualTo("declined");
        assertThat(info.step("s0").status()).isEqualTo(StepStatus.COMPLETED);
        assertThat(info.step("s0").output()).isEqualTo("reserved");
        assertThat(info.step("s0").compensationStatus()).isEqualTo(StepStatus.COMPENSATED);
        assertThat(info.step("s1").status()).isEqualTo(StepStatus.FAILED);
        assertThat(info.step("s1").error()).isEqualTo("declined");
    }

    // ---------------------------------------------------------------- supervisor scan and lease

    @Test
    void expired_scan_returns_only_locked_rows_past_their_deadline_oldest_first() {
        submit("a1");
        claim("n1", 1, T0);
        submit("a2");
        claim("n2", 1, T0.plusSeconds(5));
        TaskId fresh = submit("fresh");
        claim("n3", 1, T0.plusSeconds(100));
        submit("pending");
        TaskId done = submit("done");
        ClaimedTask d = claim("n4", 1, T0.plusSeconds(100)).get(0);
        assertThat(d.taskId()).isIn(done, store.findByBusinessKey("wf", "pending").orElseThrow());
        store.write(List.of(finish(d, "x", T0.plusSeconds(100))), T0.plusSeconds(100));

        List<ExpiredTask> expired = store.findExpired(T0.plusSeconds(60), 10);

        assertThat(expired).extracting(ExpiredTask::businessKey).containsExactly("a1", "a2");
        ExpiredTask e = expired.get(0);
        assertThat(e.lockedBy()).isEqualTo("n1");
        assertThat(e.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(e.completeBy()).isEqualTo(T0.plus(TIMEOUT));
        assertThat(e.failureCount()).isZero();
        assertThat(e.attempt()).isEqualTo(1);
        assertThat(store.findExpired(T0.plusSeconds(60), 1)).hasSize(1);
        assertThat(task(fresh).status()).isEqualTo(TaskStatus.PROCESSING);
    }

    @Test
    void supervisor_lease_is_exclusive_until_it_expires() {
        Duration ttl = Duration.ofSeconds(10);
        assertThat(store.tryAcquireSupervisorLease("s1", T0, ttl)).isTrue();
        assertThat(store.tryAcquireSupervisorLease("s2", T0.plusSeconds(5), ttl)).isFalse();
        assertThat(store.tryAcquireSupervisorLease("s1", T0.plusSeconds(5), ttl)).as("renewal").isTrue();
        assertThat(store.tryAcquireSupervisorLease("s2", T0.plusSeconds(14), ttl)).as("renewed until 15s").isFalse();
        assertThat(store.tryAcquireSupervisorLease("s2", T0.plusSeconds(16), ttl)).as("expired").isTrue();
        assertThat(store.tryAcquireSupervisorLease("s1", T0.plusSeconds(17), ttl)).isFalse();
        store.releaseSupervisorLease("s1");
        assertThat(store.tryAcquireSupervisorLease("s1", T0.plusSeconds(17), ttl)).as("release by non-holder").isFalse();
        store.releaseSupervisorLease("s2");
        assertThat(store.tryAcquireSupervisorLease("s1", T0.plusSeconds(17), ttl)).isTrue();
    }

    @Test
    void racing_supervisors_elect_exactly_one() throws Exception {
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Boolean>> futures = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                String me = "sup-" + i;
                futures.add(pool.submit(() -> {
                    start.await();
                    return store.tryAcquireSupervisorLease(me, T0, Duration.ofSeconds(10));
                }));
            }
            start.countDown();
            int winners = 0;
            for (Future<Boolean> f : futures) {
                winners += f.get(30, TimeUnit.SECONDS) ? 1 : 0;
            }
            assertThat(winners).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }

    // ---------------------------------------------------------------- operators

    @Test
    void resubmit_makes_an_error_task_pending_at_its_failed_step() {
        TaskId id = submit("err");
        ClaimedTask c = claim("a", 1, T0).get(0);
        store.write(List.of(continueTo(c, 1, "zero", T0)), T0);
        ClaimedTask onStep1 = new ClaimedTask(id, "wf", 1, "err", TaskStatus.PROCESSING, c.lease(), 1, 1, 0,
                T0.plus(TIMEOUT), false, "", null, T0, List.of());
        store.write(List.of(release(onStep1, Transition.Guard.HOLDER, TaskStatus.ERROR, 2, null, "boom", T0)), T0);
        assertThat(task(id).status()).isEqualTo(TaskStatus.ERROR);
        assertThat(claim("a", 1, T0.plusSeconds(999))).isEmpty();
        assertThat(store.resubmit(TaskId.random(), T0, resubmitted(id))).isFalse();

        Instant now = T0.plusSeconds(100);
        assertThat(store.resubmit(id, now, resubmitted(id))).isTrue();
        assertThat(store.resubmit(id, now, resubmitted(id))).as("no longer in ERROR").isFalse();

        TaskInfo info = task(id);
        assertThat(info.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(info.failureCount()).isZero();
        assertThat(info.currentStep()).isEqualTo(1);
        ClaimedTask again = claim("b", 1, now).get(0);
        assertThat(again.currentStep()).isEqualTo(1);
        assertThat(again.attempt()).isEqualTo(1);
        assertThat(again.outputs()).containsExactly("zero");
        assertThat(eventTypes(id)).contains(TaskEvent.Type.RESUBMITTED);
    }

    private static TaskEvent resubmitted(TaskId id) {
        return new TaskEvent(id, "err", "wf", TaskEvent.Type.RESUBMITTED, -1, null, 0, T0, null);
    }

    private static TaskEvent cancelEvent(TaskId id) {
        return new TaskEvent(id, "c", "wf", TaskEvent.Type.CANCEL_REQUESTED, -1, null, 0, T0, null);
    }

    @Test
    void cancel_request_is_reported_to_a_holder_that_yields_to_it() {
        TaskId id = submit("cancel");
        ClaimedTask c = claim("a", 1, T0).get(0);
        assertThat(store.requestCancel(id, T0, cancelEvent(id))).isTrue();
        assertThat(store.requestCancel(id, T0, cancelEvent(id))).as("already requested").isFalse();

        assertThat(store.write(List.of(continueTo(c, 1, "zero", T0)), T0)).containsExactly(WriteOutcome.CANCEL_REQUESTED);
        assertThat(task(id).currentStep()).isZero();
        Transition ignoring = finish(c, "done", T0);
        assertThat(store.write(List.of(ignoring), T0)).containsExactly(WriteOutcome.APPLIED);
        assertThat(task(id).cancelRequested()).isTrue();
    }

    @Test
    void cancel_of_an_error_task_makes_it_due_so_a_scheduler_compensates_it() {
        TaskId id = submit("c-err");
        ClaimedTask c = claim("a", 1, T0).get(0);
        store.write(List.of(release(c, Transition.Guard.HOLDER, TaskStatus.ERROR, 0, null, "boom", T0)), T0);

        Instant now = T0.plusSeconds(50);
        assertThat(store.requestCancel(id, now, cancelEvent(id))).isTrue();

        List<ClaimedTask> claimed = claim("b", 1, now);
        assertThat(claimed).hasSize(1);
        assertThat(claimed.get(0).cancelRequested()).isTrue();
        assertThat(claimed.get(0).attempt()).as("the attempt that may have applied is kept, then counted on")
                .isEqualTo(2);
        assertThat(claimed.get(0).failureCount()).isZero();
        assertThat(eventTypes(id)).contains(TaskEvent.Type.CANCEL_REQUESTED);
    }

    @Test
    void cancel_of_an_error_task_that_still_carries_a_cancel_schedules_it_again() {
        TaskId id = submit("c-parked");
        assertThat(store.requestCancel(id, T0, cancelEvent(id))).isTrue();
        ClaimedTask c = claim("a", 1, T0).get(0);
        // The claimer could not carry the cancel out (say, undecodable input) and parked the task.
        store.write(List.of(release(c, Transition.Guard.HOLDER, TaskStatus.ERROR, 0, null, "parked", T0)), T0);
        assertThat(task(id).cancelRequested()).isTrue();

        assertThat(store.requestCancel(id, T0.plusSeconds(5), cancelEvent(id))).isTrue();

        assertThat(task(id).status()).isEqualTo(TaskStatus.PENDING);
        assertThat(claim("b", 1, T0.plusSeconds(5))).singleElement()
                .satisfies(again -> assertThat(again.cancelRequested()).isTrue());
        assertThat(store.requestCancel(id, T0.plusSeconds(6), cancelEvent(id))).as("now being carried out").isFalse();
    }

    @Test
    void a_recovery_that_yields_to_a_cancel_requested_after_the_scan_is_reported_and_changes_nothing() {
        TaskId id = submit("c-expired");
        ClaimedTask c = claim("a", 1, T0).get(0);
        Instant later = T0.plus(TIMEOUT).plusSeconds(1);
        assertThat(store.findExpired(later, 10)).extracting(ExpiredTask::cancelRequested).containsExactly(false);
        assertThat(store.requestCancel(id, later, cancelEvent(id))).isTrue();
        Transition fail = release(c, Transition.Guard.EXPIRED, TaskStatus.ERROR, 1, null, "timed out", later);
        Transition yielding = new Transition(fail.taskId(), fail.lease(), fail.fromStatus(), fail.fromStep(),
                fail.guard(), true, fail.status(), false, fail.currentStep(), fail.currentStepName(), fail.attempt(),
                fail.failureCount(), fail.stepTimeout(), null, fail.lastError(), fail.step(), fail.events(),
                fail.id() == Long.MAX_VALUE ? 1 : fail.id() + 1, fail.statusChannel());

        assertThat(store.write(List.of(yielding), later)).containsExactly(WriteOutcome.CANCEL_REQUESTED);

        TaskInfo info = task(id);
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(info.lockedBy()).isEqualTo("a");
        assertThat(eventTypes(id)).doesNotContain(TaskEvent.Type.ERROR);
        assertThat(store.write(List.of(fail), later)).as("decided again, with the cancel")
                .containsExactly(WriteOutcome.APPLIED);
    }

    @Test
    void cancel_of_a_finished_task_is_refused() {
        TaskId id = submit("c-done");
        ClaimedTask c = claim("a", 1, T0).get(0);
        store.write(List.of(finish(c, "x", T0)), T0);
        assertThat(store.requestCancel(id, T0, cancelEvent(id))).isFalse();
        assertThat(store.requestCancel(TaskId.random(), T0, cancelEvent(id))).isFalse();
        assertThat(task(id).cancelRequested()).isFalse();
    }

    @Test
    void cancel_of_a_task_waiting_for_its_submit_delay_makes_it_due_now() {
        Instant due = T0.plus(Duration.ofHours(1));
        TaskId id = submit("c-delayed", 0, due);
        Instant now = T0.plusSeconds(5);
        assertThat(claim("a", 1, now)).as("not due before its delay").isEmpty();

        assertThat(store.requestCancel(id, now, cancelEvent(id))).isTrue();

        assertThat(task(id).nextAttemptAt()).isEqualTo(now);
        assertThat(claim("a", 1, now)).as("claimed at once, to be cancelled").singleElement()
                .satisfies(c -> assertThat(c.cancelRequested()).isTrue());
        assertThat(eventTypes(id)).as("its claim starts no step").endsWith(TaskEvent.Type.CANCEL_REQUESTED);
    }

    @Test
    void cancel_of_a_task_waiting_for_its_retry_time_makes_it_due_now() {
        TaskId id = submit("c-retry");
        ClaimedTask c = claim("a", 1, T0).get(0);
        Instant retryAt = T0.plus(Duration.ofHours(1));
        store.write(List.of(release(c, Transition.Guard.HOLDER, TaskStatus.PENDING, 1, retryAt, "busy", T0)), T0);
        Instant now = T0.plusSeconds(5);
        assertThat(claim("b", 1, now)).as("not due before its retry time").isEmpty();

        assertThat(store.requestCancel(id, now, cancelEvent(id))).isTrue();

        assertThat(claim("b", 1, now)).as("claimed at once, to be cancelled").singleElement().satisfies(again -> {
            assertThat(again.cancelRequested()).isTrue();
            assertThat(again.attempt()).as("the failed attempt is kept, then counted on").isEqualTo(2);
        });
        assertThat(eventTypes(id)).as("its claim starts no step").endsWith(TaskEvent.Type.CANCEL_REQUESTED);
    }

    @Test
    void cancel_keeps_an_earlier_due_time_of_a_pending_task() {
        TaskId id = submit("c-due");
        assertThat(store.requestCancel(id, T0.plusSeconds(30), cancelEvent(id))).isTrue();
        assertThat(task(id).nextAttemptAt()).as("due since T0, not moved later").isEqualTo(T0);
    }

    @Test
    void list_returns_tasks_in_a_state_oldest_first() {
        TaskId a = submit("l1");
        TaskId b = submit("l2");
        TaskId c = submit("l3");
        ClaimedTask claimed = claim("x", 1, T0).get(0);
        store.write(List.of(finish(claimed, "o", T0)), T0);

        List<TaskId> pending = store.list(byStatus(TaskStatus.PENDING, 10)).stream().map(TaskInfo::taskId).toList();
        assertThat(pending).hasSize(2).doesNotContain(claimed.taskId());
        assertThat(List.of(a, b, c)).containsAll(pending);
        assertThat(store.list(byStatus(TaskStatus.PROCESSED, 10))).extracting(TaskInfo::taskId)
                .containsExactly(claimed.taskId());
        assertThat(store.list(byStatus(TaskStatus.PENDING, 1))).hasSize(1);
        assertThat(store.countByStatus().get(TaskStatus.PENDING)).isEqualTo(2L);
    }

    @Test
    void list_filters_by_workflow_and_pages_through_every_task_once_with_a_cursor() {
        List<TaskId> all = new java.util.ArrayList<>();
        for (int i = 0; i < 7; i++) {
            all.add(submit("page-" + i));
        }
        TaskId other = TaskId.random();
        store.submit(new NewTask(other, "other-wf", 1, "page-x", 0, "in", null, "first", TIMEOUT, T0, T0),
                new TaskEvent(other, "page-x", "other-wf", TaskEvent.Type.RECEIVED, -1, null, 0, T0, null), null);

        assertThat(store.list(TaskQuery.all().withWorkflow("other-wf"))).extracting(TaskInfo::taskId)
                .containsExactly(other);
        TaskQuery query = TaskQuery.all().withWorkflow("wf").withLimit(3);
        List<TaskId> seen = new java.util.ArrayList<>();
        List<TaskInfo> page = store.list(query);
        while (!page.isEmpty()) {
            page.forEach(t -> seen.add(t.taskId()));
            page = store.list(query.after(page.get(page.size() - 1)));
        }
        assertThat(seen).as("every task once, in (createdAt, id) order").containsExactlyInAnyOrderElementsOf(all)
                .doesNotHaveDuplicates();
        assertThat(store.list(TaskQuery.all().withStatus(TaskStatus.PENDING).withWorkflow("other-wf")))
                .extracting(TaskInfo::taskId).containsExactly(other);
    }

    @Test
    void count_by_workflow_counts_each_workflow_and_state_and_matches_the_default_over_list() {
        submit("w1");
        submit("w2");
        submitOf("other-wf", 2, "w3", 0);
        submitOf("other-wf", 3, "w4", 0);
        ClaimedTask claimed = claim("x", 1, T0).get(0);
        store.write(List.of(finish(claimed, "o", T0)), T0);

        java.util.Map<String, java.util.Map<TaskStatus, Long>> counts = store.countByWorkflow();

        assertThat(counts).containsOnlyKeys("wf", "other-wf");
        assertThat(counts.get("wf")).containsEntry(TaskStatus.PENDING, 1L).containsEntry(TaskStatus.PROCESSED, 1L);
        assertThat(counts.get("wf").getOrDefault(TaskStatus.ERROR, 0L)).isZero();
        assertThat(counts.get("other-wf")).as("every version of a workflow").containsEntry(TaskStatus.PENDING, 2L);
        StateStore listOnly = new StateStore() {
            // only what the default countByWorkflow uses; it must agree with the store's own query
            @Override public List<TaskInfo> list(TaskQuery query) { return store.list(query); }
            @Override public SubmitResult submit(NewTask t, TaskEvent e, Object tx) { throw new UnsupportedOperationException(); }
            @Override public List<SubmitResult> submitAll(List<NewTask> t, List<TaskEvent> e, Object tx) { throw new UnsupportedOperationException(); }
            @Override public List<ClaimedTask> claim(String i, int l, Instant n, Set<WorkflowVersion> r) { throw new UnsupportedOperationException(); }
            @Override public List<WriteOutcome> write(List<Transition> t, Instant n) { throw new UnsupportedOperationException(); }
            @Override public List<dev.sas.core.spi.DeadlineRenewal.Outcome> renewDeadlines(List<dev.sas.core.spi.DeadlineRenewal> r, Instant n) { throw new UnsupportedOperationException(); }
            @Override public List<ExpiredTask> findExpired(Instant n, int l) { throw new UnsupportedOperationException(); }
            @Override public boolean tryAcquireSupervisorLease(String i, Instant n, Duration t) { throw new UnsupportedOperationException(); }
            @Override public void releaseSupervisorLease(String i) { throw new UnsupportedOperationException(); }
            @Override public java.util.Optional<TaskInfo> find(TaskId id) { throw new UnsupportedOperationException(); }
            @Override public java.util.Optional<TaskId> findByBusinessKey(String w, String k) { throw new UnsupportedOperationException(); }
            @Override public java.util.Map<TaskStatus, Long> countByStatus() { throw new UnsupportedOperationException(); }
            @Override public List<TaskEvent> events(TaskId id) { throw new UnsupportedOperationException(); }
            @Override public boolean resubmit(TaskId id, Instant n, TaskEvent e) { throw new UnsupportedOperationException(); }
            @Override public boolean requestCancel(TaskId id, Instant n, TaskEvent e) { throw new UnsupportedOperationException(); }
            @Override public int purge(Instant f, int l) { throw new UnsupportedOperationException(); }
        };
        assertThat(listOnly.countByWorkflow()).isEqualTo(counts);
    }

    private static TaskQuery byStatus(TaskStatus status, int limit) {
        return TaskQuery.all().withStatus(status).withLimit(limit);
    }

    // ---------------------------------------------------------------- retention

    @Test
    void purge_deletes_only_final_tasks_past_retention_with_their_steps_and_events() {
        TaskId old = submit("old");
        TaskId recent = submit("recent");
        TaskId running = submit("running");
        TaskId failed = submit("failed");
        List<ClaimedTask> claimed = new ArrayList<>(claim("a", 4, T0));
        claimed.sort((x, y) -> x.businessKey().compareTo(y.businessKey()));
        // failed, old, recent, running
        store.write(List.of(release(claimed.get(0), Transition.Guard.HOLDER, TaskStatus.ERROR, 0, null, "e", T0),
                finish(claimed.get(1), "x", T0)), T0);
        assertThat(store.write(List.of(finish(claimed.get(2), "x", T0.plusSeconds(20))), T0.plusSeconds(20)))
                .containsExactly(WriteOutcome.APPLIED);

        int deleted = store.purge(T0.plusSeconds(10), 100);

        assertThat(deleted).isEqualTo(1);
        assertThat(store.find(old)).isEmpty();
        assertThat(store.events(old)).isEmpty();
        assertThat(store.findByBusinessKey("wf", "old")).isEmpty();
        assertThat(store.find(recent)).isPresent();
        assertThat(store.find(running)).isPresent();
        assertThat(store.find(failed)).as("ERROR waits for an operator").isPresent();
        assertThat(store.purge(T0.plusSeconds(500), 100)).isEqualTo(1);
        assertThat(store.find(recent)).isEmpty();
    }

    @Test
    void purge_respects_its_batch_limit() {
        List<TaskId> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(submit("p" + i));
        }
        List<Transition> finishes = new ArrayList<>();
        for (ClaimedTask c : claim("a", 5, T0)) {
            finishes.add(finish(c, null, T0));
        }
        assertThat(store.write(finishes, T0)).containsOnly(WriteOutcome.APPLIED);

        assertThat(store.purge(T0.plusSeconds(1), 2)).isEqualTo(2);
        assertThat(store.purge(T0.plusSeconds(1), 2)).isEqualTo(2);
        assertThat(store.purge(T0.plusSeconds(1), 2)).isEqualTo(1);
        assertThat(store.purge(T0.plusSeconds(1), 2)).isZero();
        assertThat(ids).allSatisfy(id -> assertThat(store.find(id)).isEmpty());
    }

    @Test
    void null_output_and_error_round_trip_and_events_keep_their_order() {
        TaskId id = submit("order");
        ClaimedTask c = claim("a", 1, T0).get(0);
        store.write(List.of(finish(c, null, T0)), T0);
        assertThat(task(id).steps().get(0).output()).isNull();
        List<TaskEvent.Type> types = eventTypes(id);
        assertThat(types).containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.STEP_STARTED,
                TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.PROCESSED);
        assertThat(Collections.frequency(types, TaskEvent.Type.PROCESSED)).isEqualTo(1);
    }

    @Test
    void unknown_task_is_absent_everywhere() {
        TaskId nobody = TaskId.random();
        assertThat(store.find(nobody)).isEmpty();
        assertThat(store.events(nobody)).isEmpty();
        assertThat(store.resubmit(nobody, T0, resubmitted(nobody))).isFalse();
        assertThat(store.write(List.of(), T0)).isEmpty();
    }

    // ---------------------------------------------------------------- batch submission

    private static NewTask newTask(TaskId id, String workflow, String businessKey, int priority) {
        return new NewTask(id, workflow, 1, businessKey, priority, "input-" + businessKey, null, "first", TIMEOUT,
                T0, T0);
    }

    private static TaskEvent received(NewTask task) {
        return new TaskEvent(task.taskId(), task.businessKey(), task.workflow(), TaskEvent.Type.RECEIVED, -1, null, 0,
                T0, null);
    }

    private List<SubmitResult> submitAll(List<NewTask> tasks, Object transaction) {
        return store.submitAll(tasks, tasks.stream().map(StateStoreContract::received).toList(), transaction);
    }

    private static List<NewTask> batch(String keyPrefix, int n) {
        List<NewTask> tasks = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            tasks.add(newTask(TaskId.random(), "wf", keyPrefix + i, i % 3));
        }
        return tasks;
    }

    @Test
    void submit_all_creates_every_task_with_its_received_event_and_answers_in_input_order() {
        List<NewTask> tasks = batch("b", 5);

        List<SubmitResult> results = submitAll(tasks, null);

        assertThat(results).containsExactlyElementsOf(
                tasks.stream().map(t -> new SubmitResult(t.taskId(), true)).toList());
        for (NewTask t : tasks) {
            TaskInfo info = task(t.taskId());
            assertThat(info.status()).isEqualTo(TaskStatus.PENDING);
            assertThat(info.businessKey()).isEqualTo(t.businessKey());
            assertThat(info.priority()).isEqualTo(t.priority());
            assertThat(info.nextAttemptAt()).isEqualTo(T0);
            assertThat(eventTypes(t.taskId())).containsExactly(TaskEvent.Type.RECEIVED);
            assertThat(store.findByBusinessKey("wf", t.businessKey())).contains(t.taskId());
        }
        ClaimedTask first = claim("a", 1, T0).get(0);
        assertThat(first.input()).isEqualTo("input-b2");
    }

    @Test
    void submit_all_of_nothing_writes_nothing() {
        assertThat(store.submitAll(List.of(), List.of(), null)).isEmpty();
        assertThat(store.countByStatus().values()).allMatch(n -> n == 0);
    }

    @Test
    void submit_all_duplicates_inside_the_batch_get_the_first_tasks_id() {
        NewTask first = newTask(TaskId.random(), "wf", "same", 0);
        NewTask other = newTask(TaskId.random(), "wf", "other", 0);
        NewTask again = newTask(TaskId.random(), "wf", "same", 9);
        NewTask otherWorkflow = newTask(TaskId.random(), "wf2", "same", 0);

        List<SubmitResult> results = submitAll(List.of(first, other, again, otherWorkflow), null);

        assertThat(results).containsExactly(new SubmitResult(first.taskId(), true),
                new SubmitResult(other.taskId(), true), new SubmitResult(first.taskId(), false),
                new SubmitResult(otherWorkflow.taskId(), true));
        assertThat(store.find(again.taskId())).isEmpty();
        assertThat(task(first.taskId()).priority()).isZero();
        assertThat(store.events(first.taskId())).hasSize(1);
        assertThat(store.countByStatus()).containsEntry(TaskStatus.PENDING, 3L);
    }

    @Test
    void submit_all_duplicates_of_earlier_submissions_get_the_existing_ids_and_write_nothing() {
        TaskId single = submit("single");
        List<NewTask> earlier = batch("e", 3);
        submitAll(earlier, null);
        NewTask fresh = newTask(TaskId.random(), "wf", "fresh", 0);
        NewTask dupSingle = newTask(TaskId.random(), "wf", "single", 0);
        NewTask dupBatch = newTask(TaskId.random(), "wf", "e1", 0);

        List<SubmitResult> results = submitAll(List.of(dupBatch, fresh, dupSingle), null);

        assertThat(results).containsExactly(new SubmitResult(earlier.get(1).taskId(), false),
                new SubmitResult(fresh.taskId(), true), new SubmitResult(single, false));
        assertThat(store.find(dupBatch.taskId())).isEmpty();
        assertThat(store.find(dupSingle.taskId())).isEmpty();
        assertThat(store.events(single)).hasSize(1);
        assertThat(store.events(earlier.get(1).taskId())).hasSize(1);
        assertThat(store.countByStatus()).containsEntry(TaskStatus.PENDING, 5L);

        TaskId replay = TaskId.random();
        assertThat(store.submit(newTask(replay, "wf", "fresh", 0), received(newTask(replay, "wf", "fresh", 0)), null))
                .as("a single submit sees batch-submitted tasks too")
                .isEqualTo(new SubmitResult(fresh.taskId(), false));
    }

    @Test
    void submit_all_replayed_with_the_same_ids_creates_nothing_twice() {
        List<NewTask> tasks = batch("r", 3);
        submitAll(tasks, null);

        List<SubmitResult> again = submitAll(tasks, null);

        assertThat(again).containsExactlyElementsOf(
                tasks.stream().map(t -> new SubmitResult(t.taskId(), false)).toList());
        assertThat(tasks).allSatisfy(t -> assertThat(store.events(t.taskId())).hasSize(1));
    }

    @Test
    void submit_all_with_a_task_id_twice_or_lists_of_different_sizes_is_refused_and_writes_nothing() {
        TaskId id = TaskId.random();
        List<NewTask> twice = List.of(newTask(id, "wf", "x1", 0), newTask(id, "wf", "x2", 0));
        assertThatThrownBy(() -> submitAll(twice, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(id.value());
        NewTask one = newTask(TaskId.random(), "wf", "y", 0);
        assertThatThrownBy(() -> store.submitAll(List.of(one), List.of(), null))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(store.find(id)).isEmpty();
        assertThat(store.find(one.taskId())).isEmpty();
    }

    @Test
    void submit_all_of_2500_tasks_creates_them_all_in_one_call() {
        List<NewTask> tasks = batch("big", 2500);
        tasks.add(1200, newTask(TaskId.random(), "wf", "big7", 0));

        List<SubmitResult> results = submitAll(tasks, null);

        assertThat(results).hasSize(2501);
        for (int i = 0; i < tasks.size(); i++) {
            SubmitResult expected = i == 1200 ? new SubmitResult(tasks.get(7).taskId(), false)
                    : new SubmitResult(tasks.get(i).taskId(), true);
            assertThat(results.get(i)).as("result %d", i).isEqualTo(expected);
        }
        assertThat(store.countByStatus()).containsEntry(TaskStatus.PENDING, 2500L);
        assertThat(eventTypes(tasks.get(2500).taskId())).containsExactly(TaskEvent.Type.RECEIVED);
        assertThat(store.findByBusinessKey("wf", "big2499")).contains(tasks.get(2500).taskId());
    }

    @Test
    void submit_all_of_a_large_batch_keeps_every_field_of_every_task() {
        List<NewTask> tasks = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            tasks.add(new NewTask(TaskId.random(), "wf", 1, "f" + i, i, "input \u00fc\u4e2d " + i, i % 3 == 0 ? "ch" : null,
                    "first-" + i, TIMEOUT.plusSeconds(i), T0, T0.minusSeconds(i), i % 2 == 0 ? "trace-" + i : null));
        }
        assertThat(submitAll(tasks, null)).allMatch(SubmitResult::created);
        for (int i = 0; i < 40; i++) {
            TaskInfo info = task(tasks.get(i).taskId());
            assertThat(info.priority()).as("priority %d", i).isEqualTo(i);
            assertThat(info.nextAttemptAt()).as("due %d", i).isEqualTo(T0.minusSeconds(i));
            assertThat(info.createdAt()).isEqualTo(T0);
        }

        List<ClaimedTask> claimed = claim("a", 100, T0);

        assertThat(claimed).hasSize(40);
        assertThat(claimed.get(0).businessKey()).as("highest priority first").isEqualTo("f39");
        for (ClaimedTask c : claimed) {
            int i = Integer.parseInt(c.businessKey().substring(1));
            assertThat(c.input()).as("input %d", i).isEqualTo("input \u00fc\u4e2d " + i);
            assertThat(c.statusChannel()).as("statusChannel %d", i).isEqualTo(i % 3 == 0 ? "ch" : null);
            assertThat(c.traceContext()).as("trace %d", i).isEqualTo(i % 2 == 0 ? "trace-" + i : null);
            assertThat(c.completeBy()).as("step timeout %d", i).isEqualTo(T0.plus(TIMEOUT).plusSeconds(i));
            assertThat(store.events(c.taskId()).get(1)).extracting(TaskEvent::type, TaskEvent::stepName)
                    .as("first step name %d", i).containsExactly(TaskEvent.Type.STEP_STARTED, "first-" + i);
        }
    }

    @Test
    void submit_all_of_a_large_batch_holding_an_earlier_key_creates_the_rest_also_in_a_host_transaction()
            throws Exception {
        TaskId existing = submit("lb17");
        List<NewTask> tasks = batch("lb", 120);

        List<SubmitResult> results = submitAll(tasks, null);

        for (int i = 0; i < tasks.size(); i++) {
            SubmitResult expected = i == 17 ? new SubmitResult(existing, false)
                    : new SubmitResult(tasks.get(i).taskId(), true);
            assertThat(results.get(i)).as("result %d", i).isEqualTo(expected);
        }
        assertThat(store.find(tasks.get(17).taskId())).isEmpty();
        assertThat(store.countByStatus()).containsEntry(TaskStatus.PENDING, 120L);

        TaskId inHost = submit("hb40");
        List<NewTask> hostBatch = batch("hb", 80);
        try (HostTransaction tx = beginHostTransaction()) {
            assumeTrue(tx != null, "the store joins no host transaction");
            List<SubmitResult> hostResults = submitAll(hostBatch, tx.transaction());
            assertThat(hostResults.get(40)).isEqualTo(new SubmitResult(inHost, false));
            assertThat(hostResults).filteredOn(SubmitResult::created).hasSize(79);
            tx.commit();
        }
        assertThat(task(hostBatch.get(0).taskId()).status()).isEqualTo(TaskStatus.PENDING);
        assertThat(task(hostBatch.get(79).taskId()).status()).isEqualTo(TaskStatus.PENDING);
        assertThat(store.find(hostBatch.get(40).taskId())).isEmpty();
    }

    @Test
    void submit_all_in_a_host_transaction_that_rolls_back_leaves_nothing() throws Exception {
        List<NewTask> tasks = batch("rb", 3);
        try (HostTransaction tx = beginHostTransaction()) {
            assumeTrue(tx != null, "the store joins no host transaction");
            assertThat(submitAll(tasks, tx.transaction())).allMatch(SubmitResult::created);
            tx.rollback();
        }
        for (NewTask t : tasks) {
            assertThat(store.find(t.taskId())).isEmpty();
            assertThat(store.events(t.taskId())).isEmpty();
            assertThat(store.findByBusinessKey("wf", t.businessKey())).isEmpty();
        }
        assertThat(submitAll(tasks, null)).as("the keys are free again").allMatch(SubmitResult::created);
    }

    @Test
    void submit_all_in_a_host_transaction_commits_with_it() throws Exception {
        TaskId existing = submit("hc1");
        List<NewTask> tasks = List.of(newTask(TaskId.random(), "wf", "hc0", 0),
                newTask(TaskId.random(), "wf", "hc1", 0));
        try (HostTransaction tx = beginHostTransaction()) {
            assumeTrue(tx != null, "the store joins no host transaction");
            assertThat(submitAll(tasks, tx.transaction())).containsExactly(
                    new SubmitResult(tasks.get(0).taskId(), true), new SubmitResult(existing, false));
            tx.commit();
        }
        assertThat(task(tasks.get(0).taskId()).status()).isEqualTo(TaskStatus.PENDING);
        assertThat(eventTypes(tasks.get(0).taskId())).containsExactly(TaskEvent.Type.RECEIVED);
        assertThat(store.find(tasks.get(1).taskId())).isEmpty();
    }
}
