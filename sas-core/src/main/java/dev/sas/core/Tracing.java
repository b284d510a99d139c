package dev.sas.core;

import java.util.concurrent.Executor;

/**
 * Carries a trace from a task's submission to its steps, on whichever node runs them:
 * {@link #capture} serializes the submitting thread's trace context (for example as a W3C
 * {@code traceparent}), the store keeps it with the task, and {@link #startStep} restores it around
 * every step attempt and its agent call. {@code sas-opentelemetry} implements it on the
 * OpenTelemetry API. Set with {@code RuntimeBuilder.tracing} (for the runtime's steps and its
 * client) and {@code SasClient.Builder.tracing} (for a client of its own).
 *
 * <p>Implementations must be thread-safe. A method that throws is contained: the submit or the step
 * goes on untraced, and the error is logged.
 */
public interface Tracing {

    /**
     * The trace context to store with a task being submitted on the calling thread, at most
     * {@value dev.sas.core.spi.NewTask#MAX_TRACE_CONTEXT_LENGTH} characters; null stores none.
     *
     * @param workflow the task's workflow
     * @param taskId the new task's id
     * @return the serialized context, or null
     */
    String capture(String workflow, TaskId taskId);

    /**
     * Starts tracing one step (or compensation) attempt, as a child of {@code traceContext} (what
     * {@link #capture} returned at submission, or null). Called on the thread that runs the step,
     * before it runs; the returned trace is {@linkplain StepTrace#end ended} once, with the
     * attempt's result, on whichever thread completes it.
     *
     * @param step the attempt (task, workflow, step, attempt number)
     * @param traceContext the stored context, or null
     * @return the attempt's trace
     */
    StepTrace startStep(StepContext<?> step, String traceContext);

    /** The trace of one step attempt. */
    interface StepTrace {
        /** Runs {@code body} on this thread with the attempt's trace current. */
        void run(Runnable body);

        /** An executor that runs each command with the attempt's trace current (the agent's call). */
        Executor wrap(Executor executor);

        /**
         * Ends the attempt's trace.
         *
         * @param error why the attempt failed (also a missed deadline), or null if it succeeded
         */
        void end(Throwable error);
    }

    /** No tracing: nothing stored, nothing started. */
    static Tracing none() {
        return NoTracing.INSTANCE;
    }
}

/** {@link Tracing#none()}. */
enum NoTracing implements Tracing, Tracing.StepTrace {
    INSTANCE;

    @Override
    public String capture(String workflow, TaskId taskId) {
        return null;
    }

    @Override
    public StepTrace startStep(StepContext<?> step, String traceContext) {
        return this;
    }

    @Override
    public void run(Runnable body) {
        body.run();
    }

    @Override
    public Executor wrap(Executor executor) {
        return executor;
    }

    @Override
    public void end(Throwable error) {
    }
}
