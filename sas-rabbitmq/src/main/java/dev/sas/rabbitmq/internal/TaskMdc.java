package dev.sas.rabbitmq.internal;

import org.slf4j.MDC;

/**
 * The logging context of one message about a task ({@code sas.taskId}, and {@code sas.step} when
 * known) on a consumer thread, until {@link #close()} (in a {@code finally}) puts back what the
 * thread had before. Not thread-safe (one thread's MDC). Not API.
 */
public final class TaskMdc implements AutoCloseable {
    private static final String TASK = "sas.taskId";
    private static final String STEP = "sas.step";

    private final String previousTask;
    private final String previousStep;

    private TaskMdc(String taskId, String step) {
        this.previousTask = MDC.get(TASK);
        this.previousStep = MDC.get(STEP);
        MDC.put(TASK, taskId);
        if (step != null) {
            MDC.put(STEP, step);
        }
    }

    /** Sets the task and step of the message until {@link #close()}. */
    public static TaskMdc of(String taskId, int stepIndex) {
        return new TaskMdc(taskId, Integer.toString(stepIndex));
    }

    @Override
    public void close() {
        restore(TASK, previousTask);
        restore(STEP, previousStep);
    }

    private static void restore(String key, String value) {
        if (value == null) {
            MDC.remove(key);
        } else {
            MDC.put(key, value);
        }
    }
}
