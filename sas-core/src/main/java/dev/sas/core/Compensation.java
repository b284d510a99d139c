package dev.sas.core;

/**
 * Undoes a completed step (refund a payment, release stock). Runs at least once per completed
 * step when its task fails or is cancelled, in reverse step order, with its own deadline and
 * retries. Must be idempotent: use {@link StepContext#idempotencyKey()}.
 *
 * @param <I> the workflow's input type
 */
@FunctionalInterface
public interface Compensation<I> {

    /**
     * Runs the compensation.
     *
     * @throws Exception any failure; retried according to the step's retry policy
     */
    void compensate(StepContext<I> context) throws Exception;
}
