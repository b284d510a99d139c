package dev.sas.reliability;

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
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.RecordedEvent;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.SubmitResult;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.core.spi.WriteOutcome;
import dev.sas.reliability.HistoryChecker.Write;
import dev.sas.reliability.HistoryChecker.WriteKind;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A copy of the in-memory store's protocol (sas-testing's {@code InMemoryStateStore}: claim,
 * fenced write, expired scan, supervisor lease, cancel), in test code, with a switch per bug of
 * issue 31's table, and a log of every write it applied: the "database" of the mutation suite.
 * Its clock is the database clock: every fence and every logged time is read from it, not from
 * the {@code now} a runtime passes. Only what the chaos workflow needs (no replies, no gates, no
 * host transactions). Thread-safe (one lock).
 */
final class MutantStore {

    /** The bugs, as the store (or, for the key, the harness) reproduces them. */
    enum Mutant {
        NONE,
        /** Holder writes without {@code lease = ? AND complete_by >= now} (state and step still checked). */
        NO_WRITE_FENCE,
        /** {@code cancel} answers true but sets nothing. */
        CANCEL_NOT_SET,
        /** A cancel of a running task releases its claim: PENDING, nobody holds it. */
        CANCEL_RELEASES_CLAIM,
        /** The supervisor's scan and its recovery fence see the time 1.5 s ahead. */
        EARLY_RECOVERY,
        /** The claim without {@code locked_by IS NULL}: a held COMPENSATING task can be claimed again. */
        CLAIM_IGNORES_LOCK,
        /** The idempotency key carries the attempt (the harness appends it; the store is correct). */
        KEY_WITH_ATTEMPT,
        /**
         * The claim is sharded by task id: each node claims only the tasks whose id hashes to its own
         * index out of {@link MutationRun#NODES} + 1 buckets, so one bucket has no owner and its
         * tasks are never claimed (a shard whose owner left; the others run as usual).
         */
        CLAIM_SKIPS_A_SHARD,
        /**
         * The claim sees the time {@link #LATE} behind (a due-time index or a poll off by seconds): every
         * task is claimed, each only {@code LATE} after it became claimable. Late, never lost.
         */
        CLAIM_LATE
    }

    static final Duration EARLY = Duration.ofMillis(1_500);
    /** Longer than both stall bounds of the mutation run (history checker 7 s, chaos stall check 3.4 s). */
    static final Duration LATE = Duration.ofSeconds(8);

    private final Object lock = new Object();
    private final Map<TaskId, Row> tasks = new HashMap<>();
    private final Map<String, TaskId> byBusinessKey = new HashMap<>();
    private final List<Write> log = new ArrayList<>();
    private final Clock clock;
    private final Mutant mutant;
    private String supervisorHolder;
    private Instant supervisorExpiresAt = Instant.MIN;
    private final Map<String, Instant> advertised = new HashMap<>();
    private final Map<String, Set<WorkflowVersion>> runnable = new HashMap<>();

    MutantStore(Clock clock, Mutant mutant) {
        this.clock = clock;
        this.mutant = mutant;
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
        String lastError;
        long lastTransition;
        final TreeMap<Integer, TaskInfo.StepInfo> steps = new TreeMap<>();
        final List<TaskEvent> events = new ArrayList<>();
    }

    Instant now() {
        return clock.instant();
    }

    /** The writes applied so far, in order. */
    List<Write> writes() {
        synchronized (lock) {
            return List.copyOf(log);
        }
    }

    /** Each task's state. */
    Map<String, String> states() {
        synchronized (lock) {
            return tasks.values().stream().collect(Collectors.toMap(r -> r.taskId.value(), r -> r.status.name()));
        }
    }

    private void log(Row r, Instant at, WriteKind kind, long lease, int startsStep, Instant deadline, String what) {
        boolean released = r.lockedBy == null;
        boolean claimable = released && !r.status.isTerminal() && r.nextAttemptAt != null;
        log.add(new Write(r.taskId.value(), at.toEpochMilli(), kind, lease, startsStep,
                deadline == null ? -1 : deadline.toEpochMilli(), released,
                claimable ? r.nextAttemptAt.toEpochMilli() : -1, what));
    }

    private static String types(List<TaskEvent> events) {
        return events.stream().map(e -> e.type().name()).collect(Collectors.joining("+"));
    }

    // ------------------------------------------------------------------ the protocol

    List<SubmitResult> submitAll(List<NewTask> batch, List<TaskEvent> received) {
        synchronized (lock) {
            Instant now = now();
            List<SubmitResult> out = new ArrayList<>();
            for (int i = 0; i < batch.size(); i++) {
                NewTask task = batch.get(i);
                String key = task.workflow() + '\u0000' + task.businessKey();
                TaskId existing = byBusinessKey.get(key);
                if (existing != null) {
                    out.add(new SubmitResult(existing, false));
                    continue;
                }
                Row r = new Row();
                r.taskId = task.taskId();
                r.workflow = task.workflow();
                r.version = task.workflowVersion();
                r.businessKey = task.businessKey();
                r.status = TaskStatus.PENDING;
                r.priority = task.priority();
                r.nextAttemptAt = task.dueAt();
                r.currentStepName = task.firstStepName();
                r.stepTimeout = task.firstStepTimeout();
                r.createdAt = task.createdAt();
                r.updatedAt = now;
                r.input = task.input();
                r.events.add(received.get(i));
                tasks.put(r.taskId, r);
                byBusinessKey.put(key, r.taskId);
                log(r, now, WriteKind.SUBMIT, 0, -1, null, "SUBMITTED");
                out.add(new SubmitResult(r.taskId, true));
            }
            return out;
        }
    }

    List<ClaimedTask> claim(String instanceId, int limit, Set<WorkflowVersion> runnableHere) {
        synchronized (lock) {
            Instant now = now();
            List<Row> due = new ArrayList<>();
            for (Row r : tasks.values()) {
                boolean free = r.lockedBy == null || (mutant == Mutant.CLAIM_IGNORES_LOCK
                        && r.status == TaskStatus.COMPENSATING);
                if (mutant == Mutant.CLAIM_SKIPS_A_SHARD && !inShard(r.taskId, instanceId)) {
                    continue;
                }
                if (free && (r.status == TaskStatus.PENDING || r.status == TaskStatus.COMPENSATING)
                        && !r.nextAttemptAt.isAfter(mutant == Mutant.CLAIM_LATE ? now.minus(LATE) : now)
                        && runnableHere.contains(new WorkflowVersion(r.workflow, r.version))) {
                    due.add(r);
                }
            }
            due.sort(Comparator.comparingInt((Row r) -> -r.priority).thenComparing(r -> r.nextAttemptAt));
            List<ClaimedTask> claimed = new ArrayList<>();
            for (Row r : due) {
                if (claimed.size() >= limit) {
                    break;
                }
                r.lockedBy = instanceId;
                r.lease++;
                r.attempt++;
                r.completeBy = now.plus(r.stepTimeout);
                if (r.status == TaskStatus.PENDING) {
                    r.status = TaskStatus.PROCESSING;
                }
                r.updatedAt = now;
                boolean compensating = r.status == TaskStatus.COMPENSATING;
                r.events.add(new TaskEvent(r.taskId, r.businessKey, r.workflow,
                        compensating ? TaskEvent.Type.COMPENSATION_STARTED : TaskEvent.Type.STEP_STARTED,
                        r.currentStep, r.currentStepName, r.attempt, now, null));
                log(r, now, WriteKind.CLAIM, r.lease, compensating ? -1 : r.currentStep, r.completeBy,
                        compensating ? "COMPENSATION_STARTED" : "STEP_STARTED");
                List<String> outputs = new ArrayList<>();
                for (TaskInfo.StepInfo s : r.steps.values()) {
                    if (s.status() == StepStatus.COMPLETED) {
                        while (outputs.size() <= s.index()) {
                            outputs.add(null);
                        }
                        outputs.set(s.index(), s.output());
                    }
                }
                claimed.add(new ClaimedTask(r.taskId, r.workflow, r.version, r.businessKey, r.status, r.lease,
                        r.currentStep, r.attempt, r.failureCount, r.completeBy, r.cancelRequested, r.input, null,
                        r.createdAt, outputs, null));
            }
            return claimed;
        }
    }

    /** True if {@code task} hashes to the bucket of node {@code instanceId} ("n0", "n1", ...). */
    private static boolean inShard(TaskId task, String instanceId) {
        int node = Integer.parseInt(instanceId.substring(1));
        return Math.floorMod(task.value().hashCode(), MutationRun.NODES + 1) == node;
    }

    List<WriteOutcome> write(List<Transition> transitions) {
        synchronized (lock) {
            List<WriteOutcome> out = new ArrayList<>();
            for (Transition t : transitions) {
                out.add(apply(t, now()));
            }
            return out;
        }
    }

    private WriteOutcome apply(Transition t, Instant now) {
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
        Instant deadline = null;
        if (t.keepLock()) {
            r.completeBy = now.plus(t.stepTimeout());
            deadline = r.completeBy;
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
            TaskInfo.StepInfo old = r.steps.get(u.index());
            if (u.compensation()) {
                r.steps.put(u.index(), new TaskInfo.StepInfo(u.index(), u.name(),
                        old == null ? StepStatus.COMPLETED : old.status(), old == null ? 0 : old.attempts(),
                        old == null ? null : old.output(), u.error(), old == null ? null : old.startedAt(),
                        old == null ? null : old.finishedAt(), u.compensationStatus()));
            } else {
                r.steps.put(u.index(), new TaskInfo.StepInfo(u.index(), u.name(), u.status(), u.attempts(), u.output(),
                        u.error(), u.startedAt(), u.finishedAt(), null));
            }
        }
        r.events.addAll(t.events());
        boolean forwardStart = t.keepLock() && t.status() == TaskStatus.PROCESSING;
        log(r, now, t.guard() == Transition.Guard.HOLDER ? WriteKind.HOLDER : WriteKind.EXPIRED, t.lease(),
                forwardStart ? t.currentStep() : -1, deadline, types(t.events()));
        return WriteOutcome.APPLIED;
    }

    /** Why {@code t} cannot be written: its lease, state, step, deadline or a cancel; null if it can. */
    private WriteOutcome check(Transition t, Row r, Instant now) {
        if (r == null || r.status != t.fromStatus() || r.currentStep != t.fromStep()) {
            return WriteOutcome.STALE;
        }
        boolean holder = t.guard() == Transition.Guard.HOLDER;
        boolean unfenced = holder && mutant == Mutant.NO_WRITE_FENCE;
        if (!unfenced && (r.lease != t.lease() || r.lockedBy == null)) {
            return WriteOutcome.STALE;
        }
        if (!unfenced) {
            Instant seen = !holder && mutant == Mutant.EARLY_RECOVERY ? now.plus(EARLY) : now;
            boolean expired = r.completeBy == null || r.completeBy.isBefore(seen);
            if (holder == expired) {
                return WriteOutcome.STALE;
            }
        }
        if (t.unlessCancelRequested() && r.cancelRequested) {
            return WriteOutcome.CANCEL_REQUESTED;
        }
        return null;
    }

    /**
     * Moves the deadline of each task still held as the renewal names it and not past its deadline
     * (a replay of an applied renewal answers RENEWED again), as the in-memory store does; logged as
     * a holder's write that starts the new deadline.
     */
    List<DeadlineRenewal.Outcome> renewDeadlines(List<DeadlineRenewal> renewals) {
        synchronized (lock) {
            Instant now = now();
            List<DeadlineRenewal.Outcome> out = new ArrayList<>(renewals.size());
            for (DeadlineRenewal x : renewals) {
                Row r = tasks.get(x.taskId());
                boolean held = r != null && r.lease == x.lease() && x.holder().equals(r.lockedBy)
                        && r.currentStep == x.step() && r.status == x.status();
                if (held && r.completeBy != null && (!r.completeBy.isBefore(now) || r.completeBy.equals(x.completeBy()))) {
                    r.completeBy = x.completeBy();
                    log(r, now, WriteKind.HOLDER, r.lease, -1, r.completeBy, "RENEWED");
                    out.add(DeadlineRenewal.Outcome.RENEWED);
                } else {
                    out.add(DeadlineRenewal.Outcome.STALE);
                }
            }
            return out;
        }
    }

    List<ExpiredTask> findExpired(int limit) {
        synchronized (lock) {
            Instant seen = mutant == Mutant.EARLY_RECOVERY ? now().plus(EARLY) : now();
            return tasks.values().stream()
                    .filter(r -> r.lockedBy != null && r.completeBy.isBefore(seen))
                    .sorted(Comparator.comparing(r -> r.completeBy))
                    .limit(limit)
                    .map(r -> new ExpiredTask(r.taskId, r.workflow, r.version, r.businessKey, r.status, r.lease,
                            r.lockedBy, r.currentStep, r.attempt, r.failureCount, r.completeBy, r.cancelRequested,
                            null))
                    .toList();
        }
    }

    boolean tryAcquireSupervisorLease(String instanceId, Duration ttl) {
        synchronized (lock) {
            Instant now = now();
            if (supervisorHolder == null || supervisorHolder.equals(instanceId) || supervisorExpiresAt.isBefore(now)) {
                supervisorHolder = instanceId;
                supervisorExpiresAt = now.plus(ttl);
                return true;
            }
            return false;
        }
    }

    void releaseSupervisorLease(String instanceId) {
        synchronized (lock) {
            if (instanceId.equals(supervisorHolder)) {
                supervisorHolder = null;
                supervisorExpiresAt = Instant.MIN;
            }
        }
    }

    void advertise(String instanceId, Set<WorkflowVersion> versions, Duration ttl) {
        synchronized (lock) {
            advertised.put(instanceId, now().plus(ttl));
            runnable.put(instanceId, Set.copyOf(versions));
        }
    }

    Set<WorkflowVersion> runnableByLiveNodes() {
        synchronized (lock) {
            Instant now = now();
            return advertised.entrySet().stream().filter(e -> e.getValue().isAfter(now))
                    .flatMap(e -> runnable.get(e.getKey()).stream()).collect(Collectors.toSet());
        }
    }

    boolean requestCancel(TaskId taskId, TaskEvent event) {
        synchronized (lock) {
            Instant now = now();
            Row r = tasks.get(taskId);
            if (r == null || r.cancelRequested || !(r.status == TaskStatus.PENDING || r.status == TaskStatus.PROCESSING
                    || r.status == TaskStatus.COMPENSATING)) {
                return false;
            }
            if (mutant == Mutant.CANCEL_NOT_SET) {
                r.events.add(event);
                log(r, now, WriteKind.CANCEL, r.lease, -1, null, "CANCEL_REQUESTED (not set)");
                return true;
            }
            if (mutant == Mutant.CANCEL_RELEASES_CLAIM && r.status == TaskStatus.PROCESSING) {
                r.status = TaskStatus.PENDING;
                r.lockedBy = null;
                r.completeBy = null;
                r.nextAttemptAt = now;
            }
            r.cancelRequested = true;
            r.updatedAt = now;
            r.events.add(event);
            log(r, now, WriteKind.CANCEL, r.lease, -1, null, "CANCEL_REQUESTED");
            return true;
        }
    }

    Optional<TaskInfo> find(TaskId taskId) {
        synchronized (lock) {
            Row r = tasks.get(taskId);
            return r == null ? Optional.empty() : Optional.of(info(r));
        }
    }

    private static TaskInfo info(Row r) {
        return new TaskInfo(r.taskId, r.workflow, r.version, r.businessKey, r.status, r.priority, r.currentStep,
                r.failureCount, r.lockedBy, r.lease, r.completeBy, r.nextAttemptAt, r.createdAt, r.updatedAt,
                r.lastError, r.cancelRequested, List.copyOf(r.steps.values()), r.attempt);
    }

    Optional<TaskId> findByBusinessKey(String workflow, String businessKey) {
        synchronized (lock) {
            return Optional.ofNullable(byBusinessKey.get(workflow + '\u0000' + businessKey));
        }
    }

    List<TaskInfo> list(TaskQuery query) {
        synchronized (lock) {
            return tasks.values().stream().map(MutantStore::info).filter(query::matches)
                    .sorted(Comparator.comparing(TaskInfo::createdAt).thenComparing(i -> i.taskId().value()))
                    .limit(query.limit()).toList();
        }
    }

    Map<TaskStatus, Long> countByStatus() {
        synchronized (lock) {
            Map<TaskStatus, Long> counts = new EnumMap<>(TaskStatus.class);
            tasks.values().forEach(r -> counts.merge(r.status, 1L, Long::sum));
            return counts;
        }
    }

    List<TaskEvent> events(TaskId taskId) {
        synchronized (lock) {
            Row r = tasks.get(taskId);
            return r == null ? List.of() : List.copyOf(r.events);
        }
    }

    List<DueBacklog> dueBacklog(int limit) {
        synchronized (lock) {
            Instant now = now();
            Map<WorkflowVersion, long[]> counts = new HashMap<>();
            Map<WorkflowVersion, Instant> since = new HashMap<>();
            for (Row r : tasks.values()) {
                if (r.lockedBy == null && r.status == TaskStatus.PENDING && !r.nextAttemptAt.isAfter(now)) {
                    WorkflowVersion v = new WorkflowVersion(r.workflow, r.version);
                    counts.computeIfAbsent(v, k -> new long[1])[0]++;
                    since.merge(v, r.nextAttemptAt, (x, y) -> x.isBefore(y) ? x : y);
                }
            }
            return counts.entrySet().stream().map(e -> new DueBacklog(e.getKey(), e.getValue()[0], since.get(e.getKey())))
                    .limit(limit).toList();
        }
    }

    /** Nothing is ever parked here: every node runs the chaos workflow. */
    List<RecordedEvent> park() {
        return List.of();
    }

    /** A view of this store for one node, whose mutating calls can be frozen (a paused process). */
    NodeStore forNode(String node) {
        return new NodeStore(this, node);
    }
}
