package dev.sas.core;

/**
 * Receives {@link TaskEvent}s after they are committed, on the runtime's event thread
 * ({@code sas-events}), in commit order per runtime. Must be quick; an exception it throws is
 * logged and does not affect the task or other listeners.
 */
@FunctionalInterface
public interface TaskListener {

    /** Called once per event recorded by this runtime. */
    void onEvent(TaskEvent event);
}
