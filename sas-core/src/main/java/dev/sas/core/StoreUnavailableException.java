package dev.sas.core;

/**
 * The state store could not be reached or cannot take writes for now: the connection was lost or
 * refused, the server is shutting down or starting, the primary was demoted to a read-only standby
 * during a failover, a lock or statement timed out. Nothing about the operation itself is wrong:
 * the runtime retries it later and never fails or parks a task because of it. Whether a write that
 * failed this way committed is unknown; stores recognise its replay as applied.
 *
 * <p>Stores throw it where they can tell (the JDBC store from the SQLState); a plain
 * {@link StateStoreException} may still be transient.
 */
public class StoreUnavailableException extends StateStoreException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message the operation and task concerned
     * @param cause the driver's exception
     */
    public StoreUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
