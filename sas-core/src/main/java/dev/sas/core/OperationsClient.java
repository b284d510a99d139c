package dev.sas.core;

import dev.sas.core.internal.AgentGateOperations;
import dev.sas.core.spi.StateStore;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an operator does to tasks and agents: resubmit failed tasks, cancel tasks, move tasks to
 * another version of their workflow, each with an
 * optional {@link OperatorNote} recorded in the task's timeline; see the agents' shared flow-control
 * state and reset their circuit breakers. The console and the CLI act through it.
 *
 * <pre>{@code
 * OperationsClient ops = client.operations();
 * ops.cancel(taskId, OperatorNote.of("alice", "customer withdrew the order"));
 * ops.resubmitAll("orders");
 * }</pre>
 *
 * <p>Obtained from {@link SasClient#operations()}; it shares that client's store, clock and
 * workflows, starts no threads and needs no running scheduler. Thread-safe.
 */
public final class OperationsClient {
    private static final Logger log = LoggerFactory.getLogger(OperationsClient.class);
    private static final EnumSet<TaskStatus> RESUBMITTABLE = EnumSet.of(TaskStatus.ERROR, TaskStatus.COMPENSATION_FAILED);

    private final ClientCore core;
    private final StateStore store;

    OperationsClient(ClientCore core) {
        this.core = core;
        this.store = core.store;
    }

    /**
     * Resubmits an {@code ERROR} task from its failed step (or continues compensating a
     * {@code COMPENSATION_FAILED} one), with its failure count reset. A unit task (a parallel branch
     * or a fan-out element) is resubmitted on its own only while the step of its parent that started
     * it runs; once that step has ended, resubmit the parent instead.
     *
     * @throws NullPointerException if {@code taskId} is null
     * @throws TaskNotFoundException if there is no such task
     * @throws TaskStateException if the task is in another state
     * @throws UnitTaskException if the task is a unit whose parent's step has ended (the message says what to do)
     * @throws StateStoreException if the store failed
     */
    public void resubmit(TaskId taskId) {
        resubmit(taskId, null);
    }

    /**
     * As {@link #resubmit(TaskId)}, recording who resubmitted the task and why in its
     * {@link TaskEvent.Type#RESUBMITTED} event.
     *
     * @param note who and why, or null
     * @throws NullPointerException if {@code taskId} is null
     * @throws TaskNotFoundException if there is no such task
     * @throws TaskStateException if the task is in another state
     * @throws UnitTaskException if the task is a unit whose parent's step has ended (the message says what to do)
     * @throws StateStoreException if the store failed
     */
    public void resubmit(TaskId taskId, OperatorNote note) {
        Objects.requireNonNull(taskId, "taskId must not be null");
        TaskInfo info = (ClientCore.unstorable(taskId.value()) ? Optional.<TaskInfo>empty() : store.find(taskId))
                .orElseThrow(() -> new TaskNotFoundException(taskId));
        if (info.status() == TaskStatus.ERROR || info.status() == TaskStatus.COMPENSATION_FAILED) {
            Optional<UnitTaskException> refused = UnitTasks.refusal(store, "resubmit", info);
            if (refused.isPresent()) {
                throw refused.get();
            }
        }
        resubmitChecked(info, note);
    }

    /** Resubmits a unit task for its group step, which runs: no check of the parent. */
    void resubmitUnit(TaskId unit) {
        resubmitChecked(store.find(unit).orElseThrow(() -> new TaskNotFoundException(unit)), null);
    }

    private void resubmitChecked(TaskInfo info, OperatorNote note) {
        TaskId taskId = info.taskId();
        if (!resubmitted(info, note)) {
            TaskStatus actual = store.find(taskId).orElseThrow(() -> new TaskNotFoundException(taskId)).status();
            throw new TaskStateException("resubmit", taskId, actual, RESUBMITTABLE);
        }
    }

    /** Resubmits the task {@code info} shows, if it is still in a resubmittable state. */
    private boolean resubmitted(TaskInfo info, OperatorNote note) {
        Instant now = core.now();
        TaskEvent event = operatorEvent(info, TaskEvent.Type.RESUBMITTED, now, note);
        if (!store.resubmit(info.taskId(), now, event)) {
            return false;
        }
        log.info("task {} step {}: resubmitted by {}", info.taskId(), info.currentStep(),
                note == null ? "an operator" : note.operator());
        core.hooks.operatorAction(event);
        return true;
    }

    /**
     * Resubmits every {@code ERROR} task of {@code workflow} (every version), page by page. A task
     * that leaves ERROR meanwhile is skipped, and so is a unit task (a parallel branch or a fan-out
     * element) whose parent's step has ended (see {@link #resubmit(TaskId)}; logged).
     *
     * @return how many tasks were resubmitted
     * @throws NullPointerException if {@code workflow} is null
     * @throws StateStoreException if the store failed; tasks resubmitted before stay resubmitted
     */
    public int resubmitAll(String workflow) {
        Objects.requireNonNull(workflow, "workflow must not be null");
        if (ClientCore.unstorable(workflow)) {
            return 0;
        }
        TaskQuery query = TaskQuery.all().withStatus(TaskStatus.ERROR).withWorkflow(workflow).withLimit(500);
        int resubmitted = 0;
        int units = 0;
        List<TaskInfo> page = store.list(query);
        while (!page.isEmpty()) {
            for (TaskInfo info : page) {
                Optional<UnitTaskException> refused = UnitTasks.refusal(store, "resubmit", info);
                if (refused.isPresent()) {
                    units++;
                    log.info("task {}: not resubmitted: {}", info.taskId(), refused.get().getMessage());
                } else if (resubmitted(info, null)) {
                    resubmitted++;
                }
            }
            page = page.size() < query.limit() ? List.of() : store.list(query.after(page.get(page.size() - 1)));
        }
        log.info("workflow {}: {} ERROR tasks resubmitted by an operator{}", workflow, resubmitted,
                units == 0 ? "" : "; " + units + " unit task(s) of ended parent steps left as they are");
        return resubmitted;
    }

    /**
     * Cancels a task that has not finished. When this returns true the cancel is recorded and will
     * be carried out, whatever the task was doing: a scheduler compensates, in reverse order, its
     * completed steps and every step whose effect may have applied (one that timed out or ran out
     * of retries on errors that may be transient; not one that failed definitely, with a
     * {@link NonRetryableException}), then the task ends {@code CANCELLED}, or
     * {@code COMPENSATION_FAILED} if a compensation fails for good (a resubmit continues it).
     *
     * <ul>
     *   <li>A running step is allowed to finish first, and is then compensated, even when it is the
     *       last step: a cancel that arrives before the task is recorded {@code PROCESSED} wins, and
     *       one that arrives after is refused with false.</li>
     *   <li>A cancel that races the supervisor recovering an expired claim is honoured the same way.</li>
     *   <li>An {@code ERROR} task is made due so that a scheduler compensates it; its failed step
     *       is compensated when its effect may have applied.</li>
     *   <li>A {@code COMPENSATING} task goes on compensating and ends {@code CANCELLED}.</li>
     *   <li>A task that cannot run on the node that claims it (its input cannot be decoded, or it
     *       is at a step the registered version lacks) is parked in {@code ERROR} with the cancel
     *       still requested and an alert; once that is fixed, cancelling it again carries it out.</li>
     * </ul>
     *
     * <p>A unit task (a parallel branch or a fan-out element) is cancelled on its own only while
     * the step of its parent that started it runs (its parent's step then fails and compensates);
     * once that step has ended, the parent has compensated, or is compensating, what it did.
     *
     * @return true if the cancel was recorded; false if the task had already finished
     *     ({@code PROCESSED}, {@code COMPENSATED}, {@code CANCELLED}), is {@code COMPENSATION_FAILED}
     *     (resubmit it), or a cancel was already requested and is being carried out
     * @throws NullPointerException if {@code taskId} is null
     * @throws TaskNotFoundException if there is no such task
     * @throws UnitTaskException if the task is a unit in {@code ERROR} or still running whose parent's
     *     step has ended (the message says what to do)
     * @throws StateStoreException if the store failed
     */
    public boolean cancel(TaskId taskId) {
        return cancel(taskId, null);
    }

    /**
     * As {@link #cancel(TaskId)}, recording who cancelled the task and why in its
     * {@link TaskEvent.Type#CANCEL_REQUESTED} event.
     *
     * @param note who and why, or null
     * @return true if the cancel was recorded (see {@link #cancel(TaskId)})
     * @throws NullPointerException if {@code taskId} is null
     * @throws TaskNotFoundException if there is no such task
     * @throws UnitTaskException if the task is a unit in {@code ERROR} or still running whose parent's
     *     step has ended (the message says what to do)
     * @throws StateStoreException if the store failed
     */
    public boolean cancel(TaskId taskId, OperatorNote note) {
        Objects.requireNonNull(taskId, "taskId must not be null");
        TaskInfo info = (ClientCore.unstorable(taskId.value()) ? Optional.<TaskInfo>empty() : store.find(taskId))
                .orElseThrow(() -> new TaskNotFoundException(taskId));
        if (!info.status().isTerminal() || info.status() == TaskStatus.ERROR) {
            Optional<UnitTaskException> refused = UnitTasks.refusal(store, "cancel", info);
            if (refused.isPresent()) {
                throw refused.get();
            }
        }
        return cancelChecked(info, note);
    }

    /** Cancels a unit task for its group step (which is failing or compensating): no check of the parent. */
    boolean cancelUnit(TaskId unit) {
        return cancelChecked(store.find(unit).orElseThrow(() -> new TaskNotFoundException(unit)), null);
    }

    private boolean cancelChecked(TaskInfo info, OperatorNote note) {
        TaskId taskId = info.taskId();
        Instant now = core.now();
        TaskEvent event = operatorEvent(info, TaskEvent.Type.CANCEL_REQUESTED, now, note);
        boolean requested = store.requestCancel(taskId, now, event);
        if (requested) {
            log.info("task {} step {}: cancel requested by {}", taskId, info.currentStep(),
                    note == null ? "an operator" : note.operator());
            core.hooks.operatorAction(event);
        }
        return requested;
    }

    /**
     * Moves a task to another version of its workflow, where it continues at the step the new
     * version's {@link Workflow.Builder#movesFrom mapping} gives for its current step; the steps it
     * completed keep their outputs and attempts under their new names, and a
     * {@link TaskEvent.Type#VERSION_MOVED} event records the move. Only a task no runtime holds and
     * that has no cancel requested moves: {@code PENDING} (it keeps its due time: a delayed or
     * retrying task goes on waiting), {@code WAITING} and {@code PARKED} (due at once), and
     * {@code ERROR} (due at once with its attempts reset, as a resubmit). A task running a step or
     * awaiting a reply is refused, never moved under its holder; move it once it is released.
     *
     * <p>This client must know the new version (built with it, as a runtime's client is); the old one
     * need not be deployed anywhere. Tasks of the new version are claimed only by runtimes that
     * register it.
     *
     * @throws NullPointerException if {@code taskId} is null
     * @throws TaskNotFoundException if there is no such task
     * @throws TaskStateException if the task's state does not allow a move
     * @throws VersionMoveException if the new version is unknown to this client, declares no mapping
     *     from the task's version, or has no place of its own for a step of the task, or the task has
     *     a cancel requested (the message says which)
     * @throws UnsupportedOperationException if the store cannot move tasks
     * @throws StateStoreException if the store failed
     */
    public void moveVersion(TaskId taskId, int toVersion) {
        moveVersion(taskId, toVersion, null);
    }

    /**
     * As {@link #moveVersion(TaskId, int)}, recording who moved the task and why in its
     * {@link TaskEvent.Type#VERSION_MOVED} event.
     *
     * @param note who and why, or null
     * @throws NullPointerException if {@code taskId} is null
     * @throws TaskNotFoundException if there is no such task
     * @throws TaskStateException if the task's state does not allow a move
     * @throws VersionMoveException if the task cannot move to {@code toVersion} (see above)
     * @throws UnsupportedOperationException if the store cannot move tasks
     * @throws StateStoreException if the store failed
     */
    public void moveVersion(TaskId taskId, int toVersion, OperatorNote note) {
        Objects.requireNonNull(taskId, "taskId must not be null");
        new VersionMover(core).move(taskId, toVersion, note);
    }

    // ------------------------------------------------------------------ agents

    /**
     * The shared flow-control state of every agent endpoint that has been called through a limit
     * or a circuit breaker: breaker state (and until when it is open), calls in flight across the
     * cluster, failures counted. Ordered by agent, then endpoint.
     *
     * @throws UnsupportedOperationException if the store does not support flow control
     * @throws StateStoreException if the store failed
     */
    public List<AgentStatus> agents() {
        return AgentGateOperations.statuses(store, core.now());
    }

    /**
     * Closes the circuit breakers of every endpoint of {@code agent} and clears their counters, as
     * an operator does once a service is known to be back: calls go through at once, and tasks
     * waiting for the breaker go on when they next come due (at the latest when the cool-down they
     * were told would have ended). Logged at INFO.
     *
     * @return how many endpoints were reset (0 if the agent's gates were never written)
     * @throws NullPointerException if {@code agent} is null
     * @throws UnsupportedOperationException if the store does not support flow control
     * @throws StateStoreException if the store failed
     */
    public int resetCircuitBreaker(String agent) {
        Objects.requireNonNull(agent, "agent must not be null");
        return AgentGateOperations.reset(store, agent, null, core.now());
    }

    /**
     * Closes the circuit breaker of one endpoint of {@code agent} and clears its counters; see
     * {@link #resetCircuitBreaker(String)}.
     *
     * @return true if the endpoint's gate existed and was reset
     * @throws NullPointerException if an argument is null
     * @throws UnsupportedOperationException if the store does not support flow control
     * @throws StateStoreException if the store failed
     */
    public boolean resetCircuitBreaker(String agent, String endpoint) {
        Objects.requireNonNull(agent, "agent must not be null");
        Objects.requireNonNull(endpoint, "endpoint must not be null");
        return AgentGateOperations.reset(store, agent, endpoint, core.now()) > 0;
    }

    private static TaskEvent operatorEvent(TaskInfo info, TaskEvent.Type type, Instant at, OperatorNote note) {
        return new TaskEvent(info.taskId(), info.businessKey(), info.workflow(), type, info.currentStep(), null, 0, at,
                note == null ? null : note.describe());
    }

    @Override
    public String toString() {
        return "OperationsClient{store=" + store + '}';
    }
}
