package dev.sas.core;

import dev.sas.core.internal.TaskLog;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * The task's logging context (slf4j MDC) and how to keep it on threads SAS does not own.
 *
 * <p>While SAS runs a step, calls an agent, records an outcome, recovers a task or raises an alert,
 * the MDC holds the task id ({@value #TASK_ID}), workflow ({@value #WORKFLOW}), step index
 * ({@value #STEP}) and attempt ({@value #ATTEMPT}), so a log pattern with {@code %X{sas.taskId}}
 * tags every line, SAS's and the application's own. The MDC belongs to a thread: work an agent
 * hands to another executor (for instance {@code CompletableFuture.supplyAsync(..., executor)}, or
 * {@code supplyAsync} without one, which runs on the common pool) logs without it, unless that
 * executor is wrapped:
 *
 * <pre>{@code
 * Executor io = TaskLogging.propagating(ForkJoinPool.commonPool());
 * Agent<Order, Receipt> payments = Agent.of("payments",
 *         request -> CompletableFuture.supplyAsync(() -> bank.charge(request.payload()), io));
 * }</pre>
 *
 * <p>Executors given to the runtime ({@code RuntimeBuilder.stepExecutor},
 * {@code RuntimeBuilder.agentExecutor}) need no wrapping: SAS sets the MDC on their threads
 * itself. Only the MDC is carried; a
 * tracing context is carried by the tracing library's own wrapper (OpenTelemetry's
 * {@code Context.taskWrapping}).
 */
public final class TaskLogging {
    /** MDC key of the task id. */
    public static final String TASK_ID = TaskLog.TASK;
    /** MDC key of the workflow name. */
    public static final String WORKFLOW = TaskLog.WORKFLOW;
    /** MDC key of the step index, from 0. */
    public static final String STEP = TaskLog.STEP;
    /** MDC key of the attempt at the step, from 1. */
    public static final String ATTEMPT = TaskLog.ATTEMPT;

    private TaskLogging() {
    }

    /**
     * An executor that runs each command on {@code executor} with the MDC the submitting thread had
     * when it called {@code execute} (the task's, inside an agent or a step), and gives the running
     * thread its own MDC back afterwards, so nothing leaks to the next command of a pooled thread.
     * The result is thread-safe if {@code executor} is.
     *
     * @param executor where the commands run
     * @return the wrapping executor
     * @throws NullPointerException if {@code executor} is null
     */
    public static Executor propagating(Executor executor) {
        return TaskLog.propagating(Objects.requireNonNull(executor, "executor must not be null"));
    }
}
