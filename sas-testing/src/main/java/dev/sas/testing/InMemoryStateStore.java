package dev.sas.testing;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedSubmits;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.DeadlineRenewal;
import dev.sas.core.spi.DeploymentStore;
import dev.sas.core.spi.ExpiredTask;
import dev.sas.core.spi.FlowControlStore;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.StatusOutbox;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StepCompletionStore;
import dev.sas.core.spi.TaskChange;
import dev.sas.core.spi.TaskDecisions;
import dev.sas.core.spi.TaskSnapshot;
import dev.sas.core.spi.StorableText;
import dev.sas.core.spi.SubmitResult;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.VersionMoves;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.core.spi.WriteOutcome;
import dev.sas.testing.InMemoryTasks.Row;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiFunction;

/**
 * A {@link StateStore} in memory, for tests, demos and single-process use where losing state on
 * exit is fine. It keeps every invariant of the store contract (atomic claim, lease fencing,
 * expired scan, supervisor lease, duplicate submission, retention, agent gates and permits) under
 * one lock. Thread-safe.
 * It cannot join a host transaction: {@code submit} with a transaction throws.
 *
 * <p>Its parts share the lock and the task table ({@code InMemoryTasks}, which also owns how a
 * transition is written): claims, awaiting steps, deployments, agent flow control, schedules and
 * the status outbox each live in a class of their own.
 */
public final class InMemoryStateStore implements StateStore {

    private final InMemoryTasks table = new InMemoryTasks();
    private final Object lock = table.lock;
    private final Map<TaskId, Row> tasks = table.rows;
    private final Map<String, TaskId> byBusinessKey = table.byBusinessKey;
    private final InMemoryClaims claims = new InMemoryClaims(table);
    private final InMemoryAwaits awaits = new InMemoryAwaits(table);
    private final InMemoryDeployments deployments = new InMemoryDeployments(table);
    private final InMemoryFlowControl flowControl = new InMemoryFlowControl(table);
    private final InMemoryVersionMoves versionMoves = new InMemoryVersionMoves(table);
    private final InMemorySchedules schedules = new InMemorySchedules(lock);
    private String supervisorHolder;
    private Instant supervisorExpiresAt = Instant.MIN;
    private final Clock clock;

    /** An empty store without a clock of its own: each runtime's clock is the authority. */
    public InMemoryStateStore() {
        this.clock = null;
    }

    /**
     * An empty store whose {@link #currentTime()} is {@code clock}, as a database server's clock
     * would be: runtimes then follow it, whatever their own clocks show. For tests of clock skew,
     * with a {@link ManualClock} here and others, set ahead or behind, in the runtimes.
     *
     * @throws NullPointerException if {@code clock} is null
     */
    public InMemoryStateStore(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
    }

    @Override
    public Optional<Instant> currentTime() {
        return clock == null ? Optional.empty() : Optional.of(clock.instant());
    }

    @Override
    public SubmitResult submit(NewTask task, TaskEvent received, Object transaction) {
        return submitAll(List.of(task), List.of(received), transaction).get(0);
    }

    /**
     * {@inheritDoc}
     *
     * <p>All under the store's lock: every check runs before anything is inserted, so a refused
     * batch leaves nothing behind.
     *
     * @throws IllegalArgumentException also if {@code transaction} is not null: this store cannot
     *     join one
     */
    @Override
    public List<SubmitResult> submitAll(List<NewTask> tasks, List<TaskEvent> received, Object transaction) {
        Objects.requireNonNull(tasks, "tasks must not be null");
        Objects.requireNonNull(received, "received must not be null");
        if (transaction != null) {
            throw new IllegalArgumentException("InMemoryStateStore cannot join a host transaction (got a "
                    + transaction.getClass().getName() + "); use the JDBC store");
        }
        if (tasks.size() != received.size()) {
            throw new IllegalArgumentException("tasks and received must have the same size, were " + tasks.size()
                    + " and " + received.size());
        }
        synchronized (lock) {
            Set<TaskId> ids = new HashSet<>();
            Set<String> batchKeys = new HashSet<>();
            for (int i = 0; i < tasks.size(); i++) {
                NewTask task = Objects.requireNonNull(tasks.get(i), "tasks[" + i + "] must not be null");
                Objects.requireNonNull(received.get(i), "received[" + i + "] must not be null");
                if (!ids.add(task.taskId())) {
                    throw new IllegalArgumentException("task id " + task.taskId() + " appears twice in the batch");
                }
                String key = InMemoryTasks.key(task.workflow(), task.businessKey());
                boolean inserts = !byBusinessKey.containsKey(key) && batchKeys.add(key);
                if (inserts && this.tasks.containsKey(task.taskId())) {
                    throw new IllegalArgumentException("task id " + task.taskId() + " already exists");
                }
            }
            List<SubmitResult> results = new ArrayList<>(tasks.size());
            for (int i = 0; i < tasks.size(); i++) {
                results.add(insert(tasks.get(i), received.get(i)));
            }
            return results;
        }
    }

    /** {@inheritDoc} A task inserted claimed, under the store's lock. */
    @Override
    public Optional<ClaimedSubmits> claimedSubmits() {
        return Optional.of(this::submitClaimed);
    }

    private SubmitResult submitClaimed(NewTask task, TaskEvent received, String instanceId) {
        Objects.requireNonNull(instanceId, "instanceId must not be null");
        synchronized (lock) {
            SubmitResult result = submitAll(List.of(task), List.of(received), null).get(0);
            if (result.created()) {
                Row r = tasks.get(result.taskId());
                r.status = TaskDecisions.submitted(true);
                r.lockedBy = instanceId;
                r.lease = 1;
                r.attempt = 1;
                r.completeBy = task.createdAt().plus(task.firstStepTimeout());
                table.addEvents(r, List.of(new TaskEvent(r.taskId, r.businessKey, r.workflow, TaskEvent.Type.STEP_STARTED,
                        0, r.currentStepName, 1, task.createdAt(), null)));
            }
            return result;
        }
    }

    private SubmitResult insert(NewTask task, TaskEvent received) {
        String key = InMemoryTasks.key(task.workflow(), task.businessKey());
        TaskId existing = byBusinessKey.get(key);
        if (existing != null) {
            return new SubmitResult(existing, false);
        }
        Row r = new Row();
        r.taskId = task.taskId();
        r.workflow = task.workflow();
        r.version = task.workflowVersion();
        r.businessKey = task.businessKey();
        r.status = TaskDecisions.submitted(false);
        r.priority = task.priority();
        r.nextAttemptAt = task.dueAt();
        r.currentStep = 0;
        r.currentStepName = task.firstStepName();
        r.stepTimeout = task.firstStepTimeout();
        r.createdAt = task.createdAt();
        r.updatedAt = task.createdAt();
        r.input = task.input();
        r.statusChannel = task.statusChannel();
        r.traceContext = task.traceContext();
        table.addEvents(r, List.of(received));
        tasks.put(r.taskId, r);
        byBusinessKey.put(key, r.taskId);
        return new SubmitResult(r.taskId, true);
    }

    @Override
    public List<ClaimedTask> claim(String instanceId, int limit, Instant now, Set<WorkflowVersion> runnable) {
        return claims.claim(instanceId, limit, now, runnable);
    }

    /**
     * {@inheritDoc}
     *
     * <p>A transition holding text a database could not store ({@link StorableText#problemIn}) is
     * refused, as the JDBC store refuses it, so tests here see what production would.
     */
    @Override
    public List<WriteOutcome> write(List<Transition> transitions, Instant now) {
        synchronized (lock) {
            List<WriteOutcome> out = new ArrayList<>(transitions.size());
            for (Transition t : transitions) {
                out.add(table.apply(t, now));
            }
            return out;
        }
    }

    @Override
    public List<DeadlineRenewal.Outcome> renewDeadlines(List<DeadlineRenewal> renewals, Instant now) {
        return claims.renewDeadlines(renewals, now);
    }

    @Override
    public List<ExpiredTask> findExpired(Instant now, int limit) {
        return claims.findExpired(now, limit);
    }

    @Override
    public boolean tryAcquireSupervisorLease(String instanceId, Instant now, Duration ttl) {
        synchronized (lock) {
            if (supervisorHolder == null || supervisorHolder.equals(instanceId) || supervisorExpiresAt.isBefore(now)) {
                supervisorHolder = instanceId;
                supervisorExpiresAt = now.plus(ttl);
                return true;
            }
            return false;
        }
    }

    @Override
    public void releaseSupervisorLease(String instanceId) {
        synchronized (lock) {
            if (instanceId.equals(supervisorHolder)) {
                supervisorHolder = null;
                supervisorExpiresAt = Instant.MIN;
            }
        }
    }

    /** {@inheritDoc} Moves under the store's lock, as a JDBC store does under the task's row lock. */
    @Override
    public Optional<VersionMoves> versionMoves() {
        return Optional.of(versionMoves);
    }

    /** {@inheritDoc} Kept under the store's lock with the events it copies. */
    @Override
    public Optional<dev.sas.core.spi.ScheduleStore> schedules() {
        return Optional.of(schedules);
    }

    /** {@inheritDoc} Kept under the store's lock with the tasks it parks. */
    @Override
    public Optional<DeploymentStore> deployments() {
        return Optional.of(deployments);
    }

    /** {@inheritDoc} Kept under the store's lock with the tasks they complete. */
    @Override
    public Optional<StepCompletionStore> stepCompletions() {
        return Optional.of(awaits);
    }

    /** {@inheritDoc} Kept under the store's lock with the tasks it wakes. */
    @Override
    public Optional<FlowControlStore> flowControl() {
        return Optional.of(flowControl);
    }

    @Override
    public Optional<StatusOutbox> statusOutbox() {
        return Optional.of(table.outbox);
    }

    @Override
    public Optional<TaskInfo> find(TaskId taskId) {
        synchronized (lock) {
            Row r = tasks.get(taskId);
            return r == null ? Optional.empty() : Optional.of(InMemoryTasks.info(r, true));
        }
    }

    @Override
    public Optional<TaskId> findByBusinessKey(String workflow, String businessKey) {
        synchronized (lock) {
            return Optional.ofNullable(byBusinessKey.get(InMemoryTasks.key(workflow, businessKey)));
        }
    }

    @Override
    public List<TaskInfo> list(TaskQuery query) {
        synchronized (lock) {
            return tasks.values().stream()
                    .map(r -> InMemoryTasks.info(r, false))
                    .filter(query::matches)
                    .sorted(Comparator.comparing(TaskInfo::createdAt).thenComparing(i -> i.taskId().value()))
                    .limit(query.limit())
                    .toList();
        }
    }

    @Override
    public Map<TaskStatus, Long> countByStatus() {
        synchronized (lock) {
            Map<TaskStatus, Long> counts = new EnumMap<>(TaskStatus.class);
            for (Row r : tasks.values()) {
                counts.merge(r.status, 1L, Long::sum);
            }
            return counts;
        }
    }

    @Override
    public Map<String, Map<TaskStatus, Long>> countByWorkflow() {
        synchronized (lock) {
            Map<String, Map<TaskStatus, Long>> counts = new TreeMap<>();
            for (Row r : tasks.values()) {
                counts.computeIfAbsent(r.workflow, w -> new EnumMap<>(TaskStatus.class)).merge(r.status, 1L, Long::sum);
            }
            return counts;
        }
    }

    @Override
    public List<TaskEvent> events(TaskId taskId) {
        synchronized (lock) {
            Row r = tasks.get(taskId);
            return r == null ? List.of() : List.copyOf(r.events);
        }
    }

    @Override
    public boolean resubmit(TaskId taskId, Instant now, TaskEvent event) {
        return decideThenRecord(taskId, now, event, TaskDecisions::resubmit);
    }

    @Override
    public boolean requestCancel(TaskId taskId, Instant now, TaskEvent event) {
        return decideThenRecord(taskId, now, event, TaskDecisions::requestCancel);
    }

    private boolean decideThenRecord(TaskId taskId, Instant now, TaskEvent event,
            BiFunction<TaskSnapshot, Instant, Optional<TaskChange>> decision) {
        synchronized (lock) {
            Row r = tasks.get(taskId);
            if (r == null || !InMemoryTasks.apply(r, decision.apply(InMemoryTasks.snapshot(r), now), now)) {
                return false;
            }
            table.addEvents(r, List.of(event));
            return true;
        }
    }

    @Override
    public int purge(Instant finishedBefore, int limit) {
        synchronized (lock) {
            int deleted = 0;
            for (Iterator<Row> it = tasks.values().iterator(); it.hasNext() && deleted < limit; ) {
                Row r = it.next();
                if (r.status.isFinal() && r.updatedAt.isBefore(finishedBefore)) {
                    it.remove();
                    awaits.purged(r.taskId);
                    byBusinessKey.remove(InMemoryTasks.key(r.workflow, r.businessKey));
                    deleted++;
                }
            }
            return deleted;
        }
    }

    @Override
    public String toString() {
        return "InMemoryStateStore";
    }
}