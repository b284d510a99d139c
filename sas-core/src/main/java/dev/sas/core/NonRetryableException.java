package dev.sas.core;

/**
 * Thrown by a step, compensation or agent to say that retrying cannot help (a declined card, a
 * rejected request). The step fails at once, whatever its retry policy allows.
 */
public class NonRetryableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** @param message what went wrong, for the task's error and the logs */
    public NonRetryableException(String message) {
        super(message);
    }

    /**
     * @param message what went wrong
     * @param cause the underlying failure
     */
    public NonRetryableException(String message, Throwable cause) {
        super(message, cause);
    }
}
