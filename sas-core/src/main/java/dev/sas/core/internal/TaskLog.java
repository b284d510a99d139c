package dev.sas.core.internal;

import java.util.Map;
import java.util.concurrent.Executor;
import org.slf4j.MDC;

/**
 * Puts the task id, workflow, step and attempt of the work at hand into the logging context (slf4j
 * MDC, keys {@value #TASK}, {@value #WORKFLOW}, {@value #STEP} and {@value #ATTEMPT}) for every
 * line logged meanwhile, SAS's and the step's own: a log pattern with {@code %X{sas.taskId}} then
 * tags each line. Restores what was there before, so scopes nest. Thread-confined, like the MDC;
 * {@link #propagating} carries it to another thread.
 */
public final class TaskLog {
    /** MDC key of the task id. */
    public static final String TASK = "sas.taskId";
    /** MDC key of the workflow name. */
    public static final String WORKFLOW = "sas.workflow";
    /** MDC key of the step index. */
    public static final String STEP = "sas.step";
    /** MDC key of the attempt at the step, from 1. */
    public static final String ATTEMPT = "sas.attempt";

    private TaskLog() {
    }

    /** A scope that puts back the previous values when closed. */
    public interface Scope extends AutoCloseable {
        @Override
        void close();
    }

    /** Sets the task and step (no workflow or attempt) until the returned scope is closed. */
    public static Scope of(Object taskId, Object step) {
        return of(taskId, null, step, 0);
    }

    /**
     * Sets the task, workflow, step and attempt until the returned scope is closed; a null
     * {@code workflow} or {@code step}, or an {@code attempt} below 1, leaves that key unset.
     */
    public static Scope of(Object taskId, String workflow, Object step, int attempt) {
        String previousTask = MDC.get(TASK);
        String previousWorkflow = MDC.get(WORKFLOW);
        String previousStep = MDC.get(STEP);
        String previousAttempt = MDC.get(ATTEMPT);
        MDC.put(TASK, String.valueOf(taskId));
        set(WORKFLOW, workflow);
        set(STEP, step == null ? null : String.valueOf(step));
        set(ATTEMPT, attempt > 0 ? Integer.toString(attempt) : null);
        return () -> {
            set(TASK, previousTask);
            set(WORKFLOW, previousWorkflow);
            set(STEP, previousStep);
            set(ATTEMPT, previousAttempt);
        };
    }

    /** Runs {@code body} with the task and step set. */
    public static void run(Object taskId, Object step, Runnable body) {
        run(taskId, null, step, 0, body);
    }

    /** Runs {@code body} with the task, workflow, step and attempt set. */
    public static void run(Object taskId, String workflow, Object step, int attempt, Runnable body) {
        Scope scope = of(taskId, workflow, step, attempt);
        try {
            body.run();
        } finally {
            scope.close();
        }
    }

    /**
     * An executor that runs each command with the logging context the submitting thread had when
     * it called {@code execute}, and restores the running thread's own context afterwards.
     */
    public static Executor propagating(Executor executor) {
        return command -> {
            Map<String, String> context = MDC.getCopyOfContextMap();
            executor.execute(() -> {
                Map<String, String> own = MDC.getCopyOfContextMap();
                replace(context);
                try {
                    command.run();
                } finally {
                    replace(own);
                }
            });
        };
    }

    private static void replace(Map<String, String> context) {
        if (context == null || context.isEmpty()) {
            MDC.clear();
        } else {
            MDC.setContextMap(context);
        }
    }

    private static void set(String key, String value) {
        if (value == null) {
            MDC.remove(key);
        } else {
            MDC.put(key, value);
        }
    }
}
