package dev.sas.core;

/** The root of every exception SAS throws for its own reasons. Unchecked. */
public class SasException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** @param message what went wrong and what to do */
    public SasException(String message) {
        super(message);
    }

    /**
     * @param message what went wrong and what to do
     * @param cause the underlying failure
     */
    public SasException(String message, Throwable cause) {
        super(message, cause);
    }
}
