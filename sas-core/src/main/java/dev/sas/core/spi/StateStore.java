package dev.sas.core.spi;

import dev.sas.core.StateStoreException;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Where tasks, steps, events and the supervisor lease live. Implementations must be thread-safe
 * and keep every invariant of the design, checked by the {@code StateStoreContract} test suite in
 * {@code sas-testing}:
 * <ol>
 *   <li>claiming is atomic: a task is never held by two claimers, and a claimer gets only tasks
 *       of the workflow versions it names;</li>
 *   <li>every claim increments the lease, and every write names the lease it holds and changes
 *       nothing when it moved on (fencing); a replay of a write that was applied is recognised as
 *       applied, never applied twice;</li>
 *   <li>submission can join the host's transaction;</li>
 *   <li>nothing is deleted before the task is final and past its retention;</li>
 *   <li>the expired scan reads only expired rows.</li>
 * </ol>
 * Every method may throw {@link StateStoreException} when the store itself fails; nothing is then
 * taken as written. Times are passed in by the caller, never read here: callers compute them on
 * the store's own clock ({@link #currentTime()}) through a measured offset, so nodes whose clocks
 * disagree still agree on every due time, deadline and lease.
 *
 * <p>What every store keeps is declared here. What a store may keep or not comes as a role
 * interface, obtained the same way for each and empty by default: {@link #statusOutbox()},
 * {@link #claimedSubmits()}, {@link #stepCompletions()}, {@link #deployments()},
 * {@link #versionMoves()}, {@link #schedules()}, {@link #flowControl()} and {@link #signals()}.
 */
public interface StateStore extends AutoCloseable {

    /**
     * Inserts a task and its RECEIVED event, unless a task with the same workflow and business
     * key exists, in which case nothing is written and that task's id is returned.
     *
     * @param transaction the host's open transaction to join (store-specific type), or null to
     *     commit on its own
     * @throws IllegalArgumentException if {@code transaction} is of a type this store cannot join
     */
    SubmitResult submit(NewTask task, TaskEvent received, Object transaction);

    /**
     * Inserts many tasks and their RECEIVED events in one transaction, as {@link #submit} would
     * one by one: a task whose workflow and business key exist is not written and its result
     * carries the existing task's id with {@code created == false}; within the batch the first
     * task of a workflow and business key wins and later ones get its id, also with
     * {@code created == false}. Either every created task and its event commit, or none.
     *
     * @param tasks the tasks, in the order of the results
     * @param received the RECEIVED event of each task, same size and order as {@code tasks}
     * @param transaction the host's open transaction to join (store-specific type, same rules as
     *     {@link #submit}), or null to commit on its own
     * @return one result per task, in the order of {@code tasks}
     * @throws NullPointerException if a list or an element is null
     * @throws IllegalArgumentException if the lists differ in size, a task id appears twice or
     *     already exists, or {@code transaction} is of a type this store cannot join
     */
    List<SubmitResult> submitAll(List<NewTask> tasks, List<TaskEvent> received, Object transaction);

    /**
     * Submission already claimed, if the store can: a runtime with room then starts a task submitted
     * through its own client without a claim, one commit instead of two before the step runs. Empty
     * by default: runtimes then claim every task.
     */
    default Optional<ClaimedSubmits> claimedSubmits() {
        return Optional.empty();
    }

    /**
     * Atomically claims up to {@code limit} due tasks ({@code PENDING}, {@code WAITING} or
     * {@code COMPENSATING}, not locked, {@code nextAttemptAt <= now}), highest priority first, then
     * oldest due. Each is locked by {@code instanceId}, its lease and attempt incremented,
     * {@code completeBy} set to {@code now +} its step timeout, a {@code PENDING} or {@code WAITING}
     * task moved to {@code PROCESSING}, and a start event recorded (none for a task whose cancel
     * was requested and that is not compensating: its step is not started).
     *
     * <p>Only tasks whose workflow and version are in {@code runnable} are claimed: a node never
     * takes a task it has no definition for, so during a rolling deploy the tasks of a new version
     * wait for a node that has it instead of being parked by one that has not. Tasks of other
     * workflows do not count against {@code limit} and do not block the claim of later ones. The
     * claim must stay served by its index (the workflow filter is applied to the due rows in claim
     * order, not to the whole table).
     *
     * @param instanceId the claiming runtime
     * @param limit most tasks to claim; zero or less claims nothing
     * @param now the claim time
     * @param runnable the workflow versions the claimer has registered; empty claims nothing
     * @throws NullPointerException if {@code runnable} is null
     */
    List<ClaimedTask> claim(String instanceId, int limit, Instant now, Set<WorkflowVersion> runnable);

    /**
     * Moves the deadline of claimed tasks their holder has not started yet, in one transaction:
     * each renewal sets the task's {@code completeBy} to {@link DeadlineRenewal#completeBy()} if the
     * task is still locked by {@link DeadlineRenewal#holder()} under {@link DeadlineRenewal#lease()},
     * at {@link DeadlineRenewal#step()} in {@link DeadlineRenewal#status()}, and its current
     * {@code completeBy} is not before {@code now} (an expired claim is the supervisor's; renewing it
     * would race with its recovery). Nothing else changes (no event, lease or attempt). A renewal
     * applied before and sent again (a lost acknowledgement) is answered
     * {@link DeadlineRenewal.Outcome#RENEWED} again. One stale renewal never blocks the others.
     *
     * <p>Runtimes call it so that a deadline runs only while its step runs: when a step starts
     * later than a small tolerance after its claim, and, from a timer, for claimed tasks still
     * waiting for a thread whose reservation nears its end.
     *
     * @param renewals the renewals, at most one per task
     * @param now the store's time, compared with the current deadlines
     * @return one outcome per renewal, in order
     * @throws NullPointerException if an argument or element is null
     */
    List<DeadlineRenewal.Outcome> renewDeadlines(List<DeadlineRenewal> renewals, Instant now);

    /**
     * Writes transitions, each atomically with its step row and events, each conditional on its
     * lease, from-state, step and guard. May write them in one transaction; one failing guard
     * never blocks another. A transition whose {@link Transition#id()} is the id of the last
     * transition applied to its task is a replay: nothing is written and the answer is
     * {@link WriteOutcome#APPLIED_ALREADY}. A transition holding text no store can hold
     * ({@link StorableText#problemIn}), or a value this store cannot hold, is not written and
     * answered {@link WriteOutcome#refused}; it never fails or holds back the others. A store
     * whose rows can be locked by another node's open transaction should not wait for such a lock
     * on a {@link Transition.Guard#EXPIRED} transition: it answers {@link WriteOutcome#BUSY} for
     * that one and writes the others.
     *
     * @return one outcome per transition, in order
     */
    List<WriteOutcome> write(List<Transition> transitions, Instant now);

    /**
     * Locked tasks whose {@code completeBy} is before {@code now}, oldest deadline first. Tasks that
     * await a reply are locked by {@link Transition#AWAITING_COMPLETION_HOLDER}, so the same scan finds
     * those whose deadline passed. Must not read unexpired or unlocked rows.
     */
    List<ExpiredTask> findExpired(Instant now, int limit);

    /**
     * Takes or renews the single supervisor lease: succeeds if nobody holds it, the holder is
     * {@code instanceId}, or the holder's lease expired before {@code now}.
     *
     * @return true if {@code instanceId} now holds the lease until {@code now + ttl}
     */
    boolean tryAcquireSupervisorLease(String instanceId, Instant now, Duration ttl);

    /** Gives up the supervisor lease if {@code instanceId} holds it. */
    void releaseSupervisorLease(String instanceId);

    /** The task and its recorded step rows (steps never started are absent). */
    Optional<TaskInfo> find(TaskId taskId);

    /**
     * The task submitted for this workflow with exactly this business key, compared as Java's
     * {@link String#equals} does: never another key's task (a database that compares strings
     * ignoring trailing spaces or case must check the key it found).
     */
    Optional<TaskId> findByBusinessKey(String workflow, String businessKey);

    /**
     * Tasks matching {@code query} ({@link TaskQuery#matches}), without their steps, ordered by
     * creation time then task id, at most {@code query.limit()}.
     */
    List<TaskInfo> list(TaskQuery query);

    /** Task counts per state (states with no task may be absent). */
    Map<TaskStatus, Long> countByStatus();

    /**
     * Task counts per workflow (every version) and state, for operator consoles; pairs with no task
     * may be absent. The default pages through {@link #list}, reading every task; a store
     * overrides it with one grouped query.
     */
    default Map<String, Map<TaskStatus, Long>> countByWorkflow() {
        Map<String, Map<TaskStatus, Long>> counts = new TreeMap<>();
        TaskQuery query = TaskQuery.all().withLimit(TaskQuery.MAX_LIMIT);
        List<TaskInfo> page = list(query);
        while (!page.isEmpty()) {
            for (TaskInfo t : page) {
                counts.computeIfAbsent(t.workflow(), w -> new EnumMap<>(TaskStatus.class)).merge(t.status(), 1L, Long::sum);
            }
            page = page.size() < query.limit() ? List.of() : list(query.after(page.get(page.size() - 1)));
        }
        return counts;
    }

    /** The task's events in the order they were recorded. */
    List<TaskEvent> events(TaskId taskId);

    /**
     * Makes an {@code ERROR} task {@code PENDING} again (or a {@code COMPENSATION_FAILED} one
     * {@code COMPENSATING}) at the step that failed, with its failure count and attempts reset,
     * due at {@code now}, and records {@code event}.
     *
     * @return false if the task does not exist or is in another state
     */
    boolean resubmit(TaskId taskId, Instant now, TaskEvent event);

    /**
     * Marks a {@code PENDING}, {@code WAITING}, {@code PARKED}, {@code PROCESSING},
     * {@code AWAITING_COMPLETION}, {@code COMPENSATING} or {@code ERROR} task as cancel-requested and records {@code event}; an
     * {@code ERROR} task becomes {@code PENDING} and due at {@code now} with its failure count reset
     * so that a scheduler compensates it, and a {@code WAITING} task becomes due at {@code now} (its
     * cancel does not wait for the agent), as does an unclaimed {@code PENDING} task due after
     * {@code now} (waiting for its submit delay or its retry time: its cancel does not wait for it). An {@code AWAITING_COMPLETION} task is released (no holder, no
     * deadline) and becomes {@code PENDING}, due at {@code now}: a scheduler compensates it, its
     * awaiting step included (the request was sent), and a later completion finds it stale. Its {@code attempt} is kept: on an {@code ERROR} task it counts the
     * attempts at the failed step whose effect may have applied, which decides whether that step is
     * compensated too. A {@code PARKED} task stays parked: it is cancelled once a runtime that can
     * run it claims it. Atomic with every {@link #write}: a transition that yields to a cancel
     * either sees this mark or was written before it (when this method then sees the state it left).
     *
     * @return false if the task does not exist, is in another state, or a cancel was already
     *     requested and the task is not in {@code ERROR} (an {@code ERROR} task that still carries
     *     a cancel, for example one parked because it could not run, is scheduled again)
     */
    boolean requestCancel(TaskId taskId, Instant now, TaskEvent event);

    /**
     * Deletes up to {@code limit} tasks in a final state ({@link TaskStatus#isFinal()}) last
     * updated before {@code finishedBefore}, with their steps and events.
     *
     * @return how many tasks were deleted
     */
    int purge(Instant finishedBefore, int limit);

    /**
     * The store's current time, the authority for every time compared across runtimes (due times,
     * deadlines, leases, retry and delayed-submit times). Runtimes and clients read it now and then
     * to measure their own clock's offset; it must be cheap (one round trip) and must not join a
     * host's transaction. Empty if the store has no clock apart from its callers' (an in-process
     * store): the caller's clock is then the authority.
     *
     * @throws dev.sas.core.StateStoreException if the store cannot be read
     */
    default Optional<Instant> currentTime() {
        return Optional.empty();
    }

    /**
     * The host transaction the calling thread is in, which a submission that names none
     * ({@link dev.sas.core.SubmitOptions#transaction()} null) joins; null when there is none. A
     * store that can find the caller's transaction by itself (for example from a transaction
     * manager's thread-bound state) returns it here, so that a plain {@code submit} inside the
     * host's transaction commits or rolls back with it. Called on the submitting thread. The
     * default returns null: every such submission commits on its own.
     */
    default Object hostTransaction() {
        return null;
    }

    /**
     * The store's status outbox, if it keeps one: then every event of a task submitted with a
     * status channel is also written there, in the same transaction. Empty if the store keeps none
     * (tasks with a status channel are then refused at submit).
     */
    default Optional<StatusOutbox> statusOutbox() {
        return Optional.empty();
    }

    /**
     * The store's recurring schedules, if it keeps them: then runtimes fire them and clients register,
     * list, pause, resume and trigger them. Empty if the store keeps none (registering a schedule then
     * fails).
     */
    default Optional<ScheduleStore> schedules() {
        return Optional.empty();
    }

    /** The store's moves of tasks between workflow versions, if it can move them; empty otherwise. */
    default Optional<VersionMoves> versionMoves() {
        return Optional.empty();
    }

    /**
     * The wake-up hints this store pushes across nodes, if it can (PostgreSQL). Empty otherwise:
     * runtimes then poll adaptively.
     */
    default Optional<StoreSignals> signals() {
        return Optional.empty();
    }

    /**
     * Which workflow versions live runtimes run, and the tasks of versions none runs, if the store
     * keeps them: runtimes then advertise what they run and the active supervisor parks tasks no
     * live runtime can run and unparks them once one can. Empty if it keeps none: nothing is
     * advertised or parked, and such tasks wait until a runtime that runs them claims them.
     */
    default Optional<DeploymentStore> deployments() {
        return Optional.empty();
    }

    /**
     * The completions of steps that await one ({@code StepBuilder.awaitCompletion}), if the store
     * keeps them. Empty if it keeps none: a step whose request was sent cannot be recorded as
     * awaiting (the runtime counts an internal error and the supervisor times the step out), and
     * completing one throws {@link UnsupportedOperationException}.
     */
    default Optional<StepCompletionStore> stepCompletions() {
        return Optional.empty();
    }

    /**
     * The agents' shared flow control, if the store keeps it: gates, permits and waking the tasks
     * that wait for them. Empty if the store keeps none: a runtime whose agents have a
     * {@link dev.sas.core.FlowControl} with limits then refuses to build, and the operator calls on
     * agents throw {@link UnsupportedOperationException}.
     */
    default Optional<FlowControlStore> flowControl() {
        return Optional.empty();
    }

    /** Releases resources the store owns (not a host's data source). Idempotent. */
    @Override
    default void close() {
    }
}
