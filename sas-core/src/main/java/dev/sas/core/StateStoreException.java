package dev.sas.core;

/**
 * The state store failed (database unreachable, constraint violated). Names the operation and,
 * where there is one, the task. The runtime logs it, backs off and tries again; nothing that was
 * not committed is taken as done.
 */
public class StateStoreException extends SasException {

    private static final long serialVersionUID = 1L;

    /** @param message the operation and task concerned */
    public StateStoreException(String message) {
        super(message);
    }

    /**
     * @param message the operation and task concerned
     * @param cause the driver's exception
     */
    public StateStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
