package dev.sas.core;

/**
 * The state of a task. A task moves {@code PENDING → PROCESSING → PROCESSED}; a task whose next
 * agent call is held back by the agent's flow control (capacity, rate limit, circuit breaker)
 * waits in {@code WAITING} and goes on by itself; a step that awaits its completion (an outside
 * completion, an agent's reply, child tasks, a durable timer) rests in {@code AWAITING_COMPLETION}
 * between {@code PROCESSING} and the step's completion; the supervisor
 * moves a timed-out {@code PROCESSING} task back to {@code PENDING}, and parks a {@code PENDING}
 * task that no live runtime can run ({@code PARKED}) until one can; a task that cannot finish
 * goes to {@code ERROR}, or, when the workflow compensates, through {@code COMPENSATING} to
 * {@code COMPENSATED} or {@code COMPENSATION_FAILED}; a cancelled task ends {@code CANCELLED}.
 */
public enum TaskStatus {
    /** Waiting to be claimed by a scheduler (new, or released for a retry). */
    PENDING,
    /**
     * Held back before calling an agent: the agent's endpoints had no capacity, their rate limit
     * was reached, or their circuit breaker was open ({@link FlowControl}). Its last error says
     * which (e.g. "waiting for agent capacity: ..."), a {@link TaskEvent.Type#WAITING} event records
     * it, and it is claimed again by itself when the endpoint is likely to take the call; no
     * attempt and no time-out is spent. (A compensation held back stays {@code COMPENSATING}.)
     */
    WAITING,
    /**
     * Due, but no live runtime has registered its workflow version for longer than
     * {@link RuntimeBuilder#unrunnableGrace} (a definition removed from every node, a deploy rolled
     * back). The supervisor makes it {@code PENDING} again by itself once a runtime that registers
     * the version is live; no operator action, no retry spent. Its last error says why it waits.
     */
    PARKED,
    /** Claimed by a scheduler, which is running its current step. */
    PROCESSING,
    /**
     * The current step awaits its completion, held by no scheduler and no thread: an outside
     * completion ({@link StepBuilder#awaitCompletion(CompletionRequest)}, delivered by
     * {@link StepCompletionClient#complete(String, Object)} or
     * {@link StepCompletionClient#fail(String, String)} from any node or process), an agent's reply
     * over a transport, the child tasks, branches or fan-out elements of the step, or a durable
     * timer. The step's lease and deadline are kept, so a completion after the deadline or for an
     * older attempt is rejected, and the supervisor treats a task still waiting at its deadline as a
     * timed-out step (retried with the request sent again). Stored as {@code AWAITING_COMPLETION}
     * (called {@code AWAITING_REPLY} before 0.3; schema V17 rewrites stored values).
     */
    AWAITING_COMPLETION,
    /** Every step completed. Final. */
    PROCESSED,
    /** A step failed for good or timed out too often; waits for an operator to resubmit or cancel. */
    ERROR,
    /** Running the compensations of completed steps, in reverse order (claimed or waiting). */
    COMPENSATING,
    /** Every compensation ran after a failure. Final. */
    COMPENSATED,
    /** A compensation failed for good; waits for an operator to resubmit (continue compensating). */
    COMPENSATION_FAILED,
    /** Cancelled by an operator; completed steps were compensated. Final. */
    CANCELLED;

    /** True when no scheduler will move this task again without an operator. */
    public boolean isTerminal() {
        return this != PENDING && this != WAITING && this != PARKED && this != PROCESSING
                && this != AWAITING_COMPLETION && this != COMPENSATING;
    }

    /** True when the task is finished for good and may be purged after its retention period. */
    public boolean isFinal() {
        return this == PROCESSED || this == COMPENSATED || this == CANCELLED;
    }
}
