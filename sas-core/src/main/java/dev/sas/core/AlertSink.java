package dev.sas.core;

/**
 * Receives {@link Alert}s (page someone, open a ticket). Called on the runtime's event thread;
 * an exception it throws is logged and contained. The default sink logs at ERROR.
 */
@FunctionalInterface
public interface AlertSink {

    /** Called once per alert raised by this runtime. */
    void alert(Alert alert);
}
