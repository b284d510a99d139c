package dev.sas.examples.orders;

/**
 * A remote service could not answer now (HTTP 5xx, 408, 429): worth retrying. Rejections that a
 * retry cannot fix are {@link dev.sas.core.NonRetryableException}s instead.
 */
public class RemoteServiceException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int status;

    /**
     * @param message what failed
     * @param status the HTTP status
     */
    public RemoteServiceException(String message, int status) {
        super(message);
        this.status = status;
    }

    /** The HTTP status. */
    public int status() {
        return status;
    }
}
