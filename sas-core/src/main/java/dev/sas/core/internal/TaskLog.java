package dev.sas.core.internal;

import org.slf4j.MDC;

/**
 * Puts the task id and step of the work at hand into the logging context (slf4j MDC, keys
 * {@value #TASK} and {@value #STEP}) for every line logged meanwhile, SAS's and the step's own:
 * a log pattern with {@code %X{sas.taskId}} then tags each line. Restores what was there before,
 * so scopes nest. Thread-confined, like the MDC.
 */
public final class TaskLog {
    /** MDC key of the task id. */
    public static final String TASK = "sas.taskId";
    /** MDC key of the step index. */
    public static final String STEP = "sas.step";

    private TaskLog() {
    }

    /** A scope that puts back the previous values when closed. */
    public interface Scope extends AutoCloseable {
        @Override
        void close();
    }

    /** Sets the task and step until the returned scope is closed. */
    public static Scope of(Object taskId, Object step) {
        String previousTask = MDC.get(TASK);
        String previousStep = MDC.get(STEP);
        MDC.put(TASK, String.valueOf(taskId));
        MDC.put(STEP, String.valueOf(step));
        return () -> {
            restore(TASK, previousTask);
            restore(STEP, previousStep);
        };
    }

    /** Runs {@code body} with the task and step set. */
    public static void run(Object taskId, Object step, Runnable body) {
        try (Scope ignored = of(taskId, step)) {
            body.run();
        }
    }

    private static void restore(String key, String value) {
        if (value == null) {
            MDC.remove(key);
        } else {
            MDC.put(key, value);
        }
    }
}
