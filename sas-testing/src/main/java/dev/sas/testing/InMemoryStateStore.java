package dev.sas.testing;

import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.DeadlineRenewal;
import dev.sas.core.spi.DueBacklog;
import dev.sas.core.spi.ExpiredTask;
import dev.sas.core.spi.GateChange;
import dev.sas.core.spi.GateState;
import dev.sas.core.spi.GateView;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.Permit;
import dev.sas.core.spi.RecordedEvent;
import dev.sas.core.spi.ReplyOutbox;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StepKey;
import dev.sas.core.spi.TaskChange;
import dev.sas.core.spi.TaskDecisions;
import dev.sas.core.spi.TaskSnapshot;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.StorableText;
import dev.sas.core.spi.SubmitResult;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.AwaitWrite;
import dev.sas.core.spi.ReplyTarget;
import dev.sas.core.spi.ReplyWrite;
import dev.sas.core.spi.StepReply;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.core.spi.WriteOutcome;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * A {@link StateStore} in memory, for tests, demos and single-process use where losing state on
 * exit is fine. It keeps every invariant of the store contract (atomic claim, lease fencing,
 * expired scan, supervisor lease, duplicate submission, retention, agent gates and permits) under
 * one lock. Thread-safe.
 * It cannot join a host transaction: {@code submit} with a transaction throws.
 */
public final class InMemoryStateStore implements StateStore {

    private final Object lock = new Object();
    private final Map<TaskId, Row> tasks = new HashMap<>();
    private final Map<String, TaskId> byBusinessKey = new HashMap<>();
    private String supervisorHolder;
    private Instant supervisorExpiresAt = Instant.MIN;
    private final Map<String, Advertisement> advertisements = new HashMap<>();
    private final InMemoryReplies replies = new InMemoryReplies(lock);
    private final InMemorySchedules schedules = new InMemorySchedules(lock);
    private final Map<String, GateState> gates = new TreeMap<>();
    private final Map<String, Permit> permits = new HashMap<>();
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

    private static final class Row {
        TaskId taskId;
        String workflow;
        int version;
        String businessKey;
        TaskStatus status;
        int priority;
        String lockedBy;
        long lease;
        Instant completeBy;
        Instant nextAttemptAt;
        int failureCount;
        int currentStep;
        String currentStepName;
        int attempt;
        Duration stepTimeout;
        boolean cancelRequested;
        Instant createdAt;
        Instant updatedAt;
        String input;
        String replyTo;
        String traceContext;
        String lastError;
        long lastTransition;
        final TreeMap<Integer, StepRow> steps = new TreeMap<>();
        final List<TaskEvent> events = new ArrayList<>();
    }

    private static final class StepRow {
        int index;
        String name;
        StepStatus status;
        int attempts;
        String output;
        String error;
        Instant startedAt;
        Instant finishedAt;
        StepStatus compensationStatus;
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
                String key = key(task.workflow(), task.businessKey());
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

    /** True: {@link #submitClaimed} inserts a task already claimed. */
    @Override
    public boolean claimsAtSubmit() {
        return true;
    }

    @Override
    public SubmitResult submitClaimed(NewTask task, TaskEvent received, String instanceId) {
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
                addEvents(r, List.of(new TaskEvent(r.taskId, r.businessKey, r.workflow, TaskEvent.Type.STEP_STARTED,
                        0, r.currentStepName, 1, task.createdAt(), null)));
            }
            return result;
        }
    }

    private SubmitResult insert(NewTask task, TaskEvent received) {
        String key = key(task.workflow(), task.businessKey());
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
        r.replyTo = task.replyTo();
        r.traceContext = task.traceContext();
        addEvents(r, List.of(received));
        tasks.put(r.taskId, r);
        byBusinessKey.put(key, r.taskId);
        return new SubmitResult(r.taskId, true);
    }

    @Override
    public List<ClaimedTask> claim(String instanceId, int limit, Instant now, Set<WorkflowVersion> runnable) {
        Objects.requireNonNull(runnable, "runnable must not be null");
        synchronized (lock) {
            List<Row> due = new ArrayList<>();
            for (Row r : tasks.values()) {
                if (r.lockedBy == null && TaskDecisions.claimable(r.status)
                        && !r.nextAttemptAt.isAfter(now) && runnable.contains(new WorkflowVersion(r.workflow, r.version))) {
                    due.add(r);
                }
            }
            due.sort(Comparator.comparingInt((Row r) -> -r.priority).thenComparing(r -> r.nextAttemptAt));
            List<ClaimedTask> claimed = new ArrayList<>(Math.min(limit, due.size()));
            for (Row r : due) {
                if (claimed.size() >= limit) {
                    break;
                }
                r.lockedBy = instanceId;
                r.lease++;
                r.attempt++;
                r.completeBy = now.plus(r.stepTimeout);
                r.status = TaskDecisions.claimed(r.status);
                r.updatedAt = now;
                boolean compensating = r.status == TaskStatus.COMPENSATING;
                if (compensating || !r.cancelRequested) {
                    // a task whose cancel was requested is not started: the scheduler cancels it at once
                    addEvents(r, List.of(new TaskEvent(r.taskId, r.businessKey, r.workflow,
                            compensating ? TaskEvent.Type.COMPENSATION_STARTED : TaskEvent.Type.STEP_STARTED,
                            r.currentStep, r.currentStepName, r.attempt, now, null)));
                }
                List<String> outputs = new ArrayList<>();
                List<Integer> skipped = new ArrayList<>();
                for (StepRow s : r.steps.values()) {
                    if (s.status == StepStatus.COMPLETED || s.status == StepStatus.WAITING) {
                        while (outputs.size() <= s.index) {
                            outputs.add(null);
                        }
                        outputs.set(s.index, s.output);
                    } else if (s.status == StepStatus.SKIPPED) {
                        skipped.add(s.index);
                    }
                }
                claimed.add(new ClaimedTask(r.taskId, r.workflow, r.version, r.businessKey, r.status, r.lease,
                        r.currentStep, r.attempt, r.failureCount, r.completeBy, r.cancelRequested, r.input,
                        r.replyTo, r.createdAt, outputs, r.traceContext, skipped));
            }
            return claimed;
        }
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
                out.add(apply(t, now));
            }
            return out;
        }
    }

    private WriteOutcome apply(Transition t, Instant now) {
        String unstorable = StorableText.problemIn(t);
        if (unstorable != null) {
            return WriteOutcome.refused(unstorable);
        }
        Row r = tasks.get(t.taskId());
        if (r != null && r.lastTransition == t.id()) {
            return WriteOutcome.APPLIED_ALREADY;
        }
        WriteOutcome fence = check(t, r, now);
        if (fence != null) {
            return fence;
        }
        r.lastTransition = t.id();
        r.status = t.status();
        r.currentStep = t.currentStep();
        r.currentStepName = t.currentStepName();
        r.attempt = t.attempt();
        r.failureCount = t.failureCount();
        r.stepTimeout = t.stepTimeout();
        if (t.keepLock()) {
            r.completeBy = now.plus(t.stepTimeout());
        } else if (t.status() == TaskStatus.AWAITING_REPLY) {
            // nobody holds it; lease and deadline stay in force for the reply and the supervisor
            r.lockedBy = Transition.AWAITING_REPLY_HOLDER;
        } else {
            r.lockedBy = null;
            r.completeBy = null;
            r.nextAttemptAt = t.status().isTerminal() ? null : t.nextAttemptAt();
        }
        if (t.lastError() != null) {
            r.lastError = t.lastError();
        }
        r.updatedAt = now;
        StepUpdate u = t.step();
        if (u != null) {
            StepRow s = r.steps.computeIfAbsent(u.index(), i -> new StepRow());
            s.index = u.index();
            s.name = u.name();
            if (u.compensation()) {
                s.compensationStatus = u.compensationStatus();
                s.error = u.error();
                if (s.status == null) {
                    s.status = StepStatus.COMPLETED;
                }
            } else {
                s.status = u.status();
                s.attempts = u.attempts();
                s.output = u.output();
                s.error = u.error();
                s.startedAt = u.startedAt();
                s.finishedAt = u.finishedAt();
            }
        }
        addEvents(r, t.events());
        return WriteOutcome.APPLIED;
    }

    /** Which attempt a kept reply answers. */
    private record ReplyKey(TaskId taskId, int step, long lease) {
    }

    private final Map<ReplyKey, StepReply> stepReplies = new HashMap<>();

    @Override
    public AwaitWrite awaitReply(Transition awaiting, Function<StepReply, Transition> ifReplied, Instant now) {
        Objects.requireNonNull(awaiting, "awaiting must not be null");
        Objects.requireNonNull(ifReplied, "ifReplied must not be null");
        synchronized (lock) {
            Row r = tasks.get(awaiting.taskId());
            StepReply kept = stepReplies.get(new ReplyKey(awaiting.taskId(), awaiting.fromStep(), awaiting.lease()));
            if (kept == null || r == null || r.lastTransition == awaiting.id()) {
                return new AwaitWrite(apply(awaiting, now), null, awaiting);
            }
            // the reply came first: check the awaiting transition's fences, then write the reply's instead
            WriteOutcome fence = check(awaiting, r, now);
            if (fence != null) {
                return new AwaitWrite(fence, null, awaiting);
            }
            Transition instead = ifReplied.apply(kept);
            return new AwaitWrite(apply(instead, now), kept, instead);
        }
    }

    @Override
    public ReplyWrite acceptReply(StepReply reply, Function<ReplyTarget, Transition> decide, Instant now) {
        Objects.requireNonNull(reply, "reply must not be null");
        Objects.requireNonNull(decide, "decide must not be null");
        synchronized (lock) {
            Row r = tasks.get(reply.taskId());
            if (r == null) {
                return ReplyWrite.of(ReplyWrite.Kind.NOT_FOUND);
            }
            ReplyKey key = new ReplyKey(reply.taskId(), reply.step(), reply.lease());
            ReplyTarget target = new ReplyTarget(r.taskId, r.workflow, r.version, r.businessKey, r.status,
                    r.lease, r.currentStep, r.attempt, r.failureCount, r.completeBy, r.cancelRequested, r.replyTo);
            ReplyWrite.Kind refused = reply.refusal(target, r.lockedBy != null, stepReplies.containsKey(key), now);
            if (refused != null) {
                return ReplyWrite.of(refused);
            }
            if (r.status == TaskStatus.PROCESSING) {
                stepReplies.put(key, reply);
                return ReplyWrite.of(ReplyWrite.Kind.KEPT);
            }
            Transition t = decide.apply(target);
            WriteOutcome outcome = apply(t, now);
            if (outcome.kind() == WriteOutcome.Kind.REFUSED) {
                return ReplyWrite.of(ReplyWrite.Kind.REFUSED);
            }
            if (!outcome.isApplied()) {
                return ReplyWrite.of(ReplyWrite.Kind.STALE);
            }
            stepReplies.put(key, reply);
            return new ReplyWrite(ReplyWrite.Kind.APPLIED, t);
        }
    }

    /** Why {@code t} cannot be written to {@code r}: its lease, state, step, guard or a cancel; null if it can. */
    private static WriteOutcome check(Transition t, Row r, Instant now) {
        if (r == null || r.lease != t.lease() || r.lockedBy == null || r.status != t.fromStatus()
                || r.currentStep != t.fromStep()) {
            return WriteOutcome.STALE;
        }
        boolean expired = r.completeBy.isBefore(now);
        if (t.guard() == Transition.Guard.HOLDER ? expired : !expired) {
            return WriteOutcome.STALE;
        }
        if (t.unlessCancelRequested() && r.cancelRequested) {
            return WriteOutcome.CANCEL_REQUESTED;
        }
        return null;
    }

    @Override
    public List<DeadlineRenewal.Outcome> renewDeadlines(List<DeadlineRenewal> renewals, Instant now) {
        Objects.requireNonNull(renewals, "renewals must not be null");
        Objects.requireNonNull(now, "now must not be null");
        synchronized (lock) {
            List<DeadlineRenewal.Outcome> out = new ArrayList<>(renewals.size());
            for (DeadlineRenewal x : renewals) {
                Row r = tasks.get(Objects.requireNonNull(x, "a renewal must not be null").taskId());
                boolean held = r != null && r.lease == x.lease() && x.holder().equals(r.lockedBy)
                        && r.currentStep == x.step() && r.status == x.status();
                if (held && (!r.completeBy.isBefore(now) || r.completeBy.equals(x.completeBy()))) {
                    r.completeBy = x.completeBy();
                    out.add(DeadlineRenewal.Outcome.RENEWED);
                } else {
                    out.add(DeadlineRenewal.Outcome.STALE);
                }
            }
            return out;
        }
    }

    @Override
    public List<ExpiredTask> findExpired(Instant now, int limit) {
        synchronized (lock) {
            List<Row> expired = new ArrayList<>();
            for (Row r : tasks.values()) {
                if (r.lockedBy != null && r.completeBy.isBefore(now)) {
                    expired.add(r);
                }
            }
            expired.sort(Comparator.comparing(r -> r.completeBy));
            List<ExpiredTask> out = new ArrayList<>();
            for (Row r : expired.subList(0, Math.min(limit, expired.size()))) {
                out.add(new ExpiredTask(r.taskId, r.workflow, r.version, r.businessKey, r.status, r.lease,
                        r.lockedBy, r.currentStep, r.attempt, r.failureCount, r.completeBy, r.cancelRequested,
                        r.replyTo));
            }
            return out;
        }
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

    @Override
    public void advertise(String instanceId, Set<WorkflowVersion> runnable, Instant now, Duration ttl) {
        Objects.requireNonNull(instanceId, "instanceId must not be null");
        Advertisement ad = new Advertisement(Set.copyOf(runnable), now.plus(ttl));
        synchronized (lock) {
            advertisements.put(instanceId, ad);
        }
    }

    @Override
    public Set<WorkflowVersion> runnableByLiveNodes(Instant now) {
        Set<WorkflowVersion> out = new HashSet<>();
        synchronized (lock) {
            for (Advertisement ad : advertisements.values()) {
                if (ad.expiresAt().isAfter(now)) {
                    out.addAll(ad.runnable());
                }
            }
        }
        return out;
    }

    @Override
    public List<DueBacklog> dueBacklog(Instant dueBefore, int limit) {
        Map<WorkflowVersion, long[]> counts = new HashMap<>();
        Map<WorkflowVersion, Instant> since = new HashMap<>();
        synchronized (lock) {
            for (Row r : tasks.values()) {
                if (r.lockedBy == null && r.status == TaskStatus.PENDING && !r.nextAttemptAt.isAfter(dueBefore)) {
                    WorkflowVersion v = new WorkflowVersion(r.workflow, r.version);
                    counts.computeIfAbsent(v, k -> new long[1])[0]++;
                    since.merge(v, r.nextAttemptAt, (x, y) -> x.isBefore(y) ? x : y);
                }
            }
        }
        return counts.entrySet().stream()
                .map(e -> new DueBacklog(e.getKey(), e.getValue()[0], since.get(e.getKey())))
                .sorted(Comparator.comparing(DueBacklog::dueSince))
                .limit(Math.max(0, limit))
                .toList();
    }

    @Override
    public List<RecordedEvent> park(WorkflowVersion version, Instant dueBefore, Instant now, String reason,
            int limit) {
        Objects.requireNonNull(version, "version must not be null");
        Objects.requireNonNull(dueBefore, "dueBefore must not be null");
        Objects.requireNonNull(now, "now must not be null");
        Objects.requireNonNull(reason, "reason must not be null");
        synchronized (lock) {
            if (runnableByLiveNodes(now).contains(version)) {
                return List.of();
            }
            List<RecordedEvent> out = new ArrayList<>();
            for (Row r : tasks.values()) {
                if (out.size() >= limit) {
                    break;
                }
                if (r.workflow.equals(version.workflow()) && r.version == version.version()
                        && r.nextAttemptAt != null && !r.nextAttemptAt.isAfter(dueBefore)
                        && apply(r, TaskDecisions.park(snapshot(r), reason), now)) {
                    out.add(record(r, TaskEvent.Type.PARKED, now, reason));
                }
            }
            return out;
        }
    }

    @Override
    public List<RecordedEvent> unpark(Set<WorkflowVersion> versions, Instant now, String message, int limit) {
        Objects.requireNonNull(versions, "versions must not be null");
        Objects.requireNonNull(now, "now must not be null");
        Objects.requireNonNull(message, "message must not be null");
        synchronized (lock) {
            List<RecordedEvent> out = new ArrayList<>();
            for (Row r : tasks.values()) {
                if (out.size() >= limit) {
                    break;
                }
                if (versions.contains(new WorkflowVersion(r.workflow, r.version))
                        && apply(r, TaskDecisions.unpark(snapshot(r), now), now)) {
                    out.add(record(r, TaskEvent.Type.UNPARKED, now, message));
                }
            }
            return out;
        }
    }

    private RecordedEvent record(Row r, TaskEvent.Type type, Instant now, String message) {
        TaskEvent e = new TaskEvent(r.taskId, r.businessKey, r.workflow, type, r.currentStep, r.currentStepName, 0,
                now, message);
        addEvents(r, List.of(e));
        return new RecordedEvent(e, r.replyTo);
    }

    /** Appends events to the task's log and, if it has a reply channel, to the channel's outbox. Under the lock. */
    private void addEvents(Row r, List<TaskEvent> events) {
        r.events.addAll(events);
        if (r.replyTo != null) {
            for (TaskEvent e : events) {
                replies.append(r.replyTo, e);
            }
        }
    }

    /** {@inheritDoc} Moves under the store's lock, as a JDBC store does under the task's row lock. */
    @Override
    public Optional<dev.sas.core.spi.VersionMoves> versionMoves() {
        return Optional.of(this::moveVersion);
    }

    private dev.sas.core.spi.VersionMove.Result moveVersion(dev.sas.core.spi.VersionMove move, Instant now) {
        synchronized (lock) {
            Row r = tasks.get(move.taskId());
            if (r == null) {
                return new dev.sas.core.spi.VersionMove.Result(dev.sas.core.spi.VersionMove.Kind.NOT_FOUND, null, 0,
                        null, null);
            }
            dev.sas.core.spi.VersionMove.Kind refused = null;
            Map<Integer, String> rows = new TreeMap<>();
            r.steps.forEach((i, s) -> rows.put(i, s.name));
            dev.sas.core.spi.VersionMove.Plan plan = move.plan(r.currentStepName, rows);
            Optional<TaskChange> change = TaskDecisions.moveVersion(snapshot(r), now);
            if (r.version != move.fromVersion()) {
                refused = dev.sas.core.spi.VersionMove.Kind.OTHER_VERSION;
            } else if (change.isEmpty()) {
                refused = dev.sas.core.spi.VersionMove.Kind.NOT_MOVABLE;
            } else if (!plan.complete()) {
                refused = dev.sas.core.spi.VersionMove.Kind.UNMAPPED_STEP;
            }
            if (refused != null) {
                return new dev.sas.core.spi.VersionMove.Result(refused, r.status, r.version, plan.unmapped(), null);
            }
            TaskEvent event = move.event(r.businessKey, r.workflow, r.currentStepName, plan.current(), now);
            apply(r, change, now);
            r.version = move.toVersion();
            r.currentStep = plan.current().index();
            r.currentStepName = plan.current().name();
            r.stepTimeout = plan.current().timeout();
            r.lease++;
            List<StepRow> moved = new ArrayList<>(r.steps.values());
            r.steps.clear();
            for (StepRow s : moved) {
                dev.sas.core.spi.VersionMove.Target t = plan.rows().get(s.index);
                s.index = t.index();
                s.name = t.name();
                r.steps.put(s.index, s);
            }
            addEvents(r, List.of(event));
            return new dev.sas.core.spi.VersionMove.Result(dev.sas.core.spi.VersionMove.Kind.MOVED, r.status,
                    r.version, null, event);
        }
    }

    /** {@inheritDoc} Kept under the store's lock with the events it copies. */
    @Override
    public Optional<dev.sas.core.spi.ScheduleStore> schedules() {
        return Optional.of(schedules);
    }

    @Override
    public Optional<ReplyOutbox> replyOutbox() {
        return Optional.of(replies);
    }

    private record Advertisement(Set<WorkflowVersion> runnable, Instant expiresAt) {
    }

    @Override
    public Optional<TaskInfo> find(TaskId taskId) {
        synchronized (lock) {
            Row r = tasks.get(taskId);
            return r == null ? Optional.empty() : Optional.of(info(r, true));
        }
    }

    private static TaskInfo info(Row r, boolean withSteps) {
        List<TaskInfo.StepInfo> steps = new ArrayList<>();
        if (withSteps) {
            for (StepRow s : r.steps.values()) {
                steps.add(new TaskInfo.StepInfo(s.index, s.name, s.status, s.attempts, s.output, s.error,
                        s.startedAt, s.finishedAt, s.compensationStatus));
            }
        }
        return new TaskInfo(r.taskId, r.workflow, r.version, r.businessKey, r.status, r.priority, r.currentStep,
                r.failureCount, r.lockedBy, r.lease, r.completeBy, r.nextAttemptAt, r.createdAt, r.updatedAt,
                r.lastError, r.cancelRequested, steps);
    }

    @Override
    public Optional<TaskId> findByBusinessKey(String workflow, String businessKey) {
        synchronized (lock) {
            return Optional.ofNullable(byBusinessKey.get(key(workflow, businessKey)));
        }
    }

    @Override
    public List<TaskInfo> list(TaskQuery query) {
        synchronized (lock) {
            return tasks.values().stream()
                    .map(r -> info(r, false))
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
            if (r == null || !apply(r, decision.apply(snapshot(r), now), now)) {
                return false;
            }
            addEvents(r, List.of(event));
            return true;
        }
    }

    /** The row as {@link TaskDecisions} reads it. Under the lock. */
    private static TaskSnapshot snapshot(Row r) {
        return new TaskSnapshot(r.status, r.lockedBy != null, r.nextAttemptAt, r.attempt, r.failureCount,
                r.cancelRequested, r.createdAt);
    }

    /** Writes {@code change}, if there is one, as a JDBC store does. Under the lock. */
    private static boolean apply(Row r, Optional<TaskChange> change, Instant now) {
        if (change.isEmpty()) {
            return false;
        }
        TaskChange c = change.get();
        r.status = c.status();
        r.nextAttemptAt = c.nextAttemptAt();
        r.attempt = c.attempt();
        r.failureCount = c.failureCount();
        r.cancelRequested = c.cancelRequested();
        if (c.releaseHolder()) {
            r.lockedBy = null;
            r.completeBy = null;
        }
        if (c.lastError() != null) {
            r.lastError = c.lastError();
        }
        r.updatedAt = now;
        return true;
    }

    @Override
    public int purge(Instant finishedBefore, int limit) {
        synchronized (lock) {
            int deleted = 0;
            for (Iterator<Row> it = tasks.values().iterator(); it.hasNext() && deleted < limit; ) {
                Row r = it.next();
                if (r.status.isFinal() && r.updatedAt.isBefore(finishedBefore)) {
                    it.remove();
                    stepReplies.keySet().removeIf(k -> k.taskId().equals(r.taskId));
                    byBusinessKey.remove(key(r.workflow, r.businessKey));
                    deleted++;
                }
            }
            return deleted;
        }
    }

    @Override
    public boolean supportsFlowControl() {
        return true;
    }

    @Override
    public <T> T changeGate(String gate, Instant now, Function<GateView, GateChange<T>> decide) {
        Objects.requireNonNull(gate, "gate must not be null");
        Objects.requireNonNull(now, "now must not be null");
        Objects.requireNonNull(decide, "decide must not be null");
        synchronized (lock) {
            permits.values().removeIf(p -> p.gate().equals(gate) && !p.expiresAt().isAfter(now));
            GateState state = gates.get(gate);
            GateChange<T> change = Objects.requireNonNull(decide.apply(view(gate, state, now)),
                    "decide must not return null");
            if (change.state() != null) {
                gates.put(gate, change.state());
            }
            if (change.take() != null) {
                permits.put(change.take().id(), change.take());
            }
            if (change.giveBack() != null) {
                permits.remove(change.giveBack());
            }
            return change.result();
        }
    }

    private GateView view(String gate, GateState state, Instant now) {
        int inUse = 0;
        int probes = 0;
        for (Permit p : permits.values()) {
            if (p.gate().equals(gate) && p.expiresAt().isAfter(now)) {
                inUse++;
                if (p.probe()) {
                    probes++;
                }
            }
        }
        return new GateView(gate, state != null ? state : GateState.initial(now), state != null, inUse, probes);
    }

    @Override
    public int renewPermits(Collection<String> permitIds, Instant now, Instant expiresAt) {
        Objects.requireNonNull(permitIds, "permitIds must not be null");
        Objects.requireNonNull(now, "now must not be null");
        Objects.requireNonNull(expiresAt, "expiresAt must not be null");
        synchronized (lock) {
            int renewed = 0;
            for (String id : permitIds) {
                Permit p = permits.get(id);
                if (p != null && p.expiresAt().isAfter(now)) {
                    permits.put(id, new Permit(p.id(), p.gate(), p.holder(), p.probe(), p.acquiredAt(), expiresAt));
                    renewed++;
                }
            }
            return renewed;
        }
    }

    @Override
    public int wakeWaiting(Set<StepKey> steps, Instant now, int limit) {
        Objects.requireNonNull(steps, "steps must not be null");
        Objects.requireNonNull(now, "now must not be null");
        synchronized (lock) {
            List<Row> waiting = new ArrayList<>();
            for (Row r : tasks.values()) {
                if (steps.contains(new StepKey(r.workflow, r.version, r.currentStep))
                        && TaskDecisions.wake(snapshot(r), now).isPresent()) {
                    waiting.add(r);
                }
            }
            waiting.sort(Comparator.comparingInt((Row r) -> -r.priority).thenComparing(r -> r.nextAttemptAt));
            int woken = 0;
            for (Row r : waiting) {
                if (woken >= limit) {
                    break;
                }
                apply(r, TaskDecisions.wake(snapshot(r), now), now);
                woken++;
            }
            return woken;
        }
    }

    @Override
    public List<GateView> gates(Instant now) {
        Objects.requireNonNull(now, "now must not be null");
        synchronized (lock) {
            List<GateView> out = new ArrayList<>();
            gates.forEach((gate, state) -> out.add(view(gate, state, now)));
            return out;
        }
    }

    private static String key(String workflow, String businessKey) {
        return workflow + '\u0000' + businessKey;
    }

    @Override
    public String toString() {
        return "InMemoryStateStore";
    }
}
