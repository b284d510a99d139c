package dev.sas.core;

import java.util.Objects;

/**
 * The work of one workflow step, run by a scheduler thread. It may be called more than once for
 * the same task (at-least-once execution), so it should be idempotent, for example by passing
 * {@link StepContext#idempotencyKey()} to the services it calls. The returned output (may be
 * null) is recorded with the step's completion and visible to later steps.
 *
 * <p>Throw {@link NonRetryableException} (or an exception the step's {@link RetryPolicy} marks
 * non-retryable) to fail the task without further attempts.
 *
 * @param <I> the workflow's input type
 */
@FunctionalInterface
public interface Step<I> {

    /**
     * Runs the step.
     *
     * @return the output to record, or null
     * @throws Exception any failure; retried according to the step's retry policy
     */
    String execute(StepContext<I> context) throws Exception;

    /**
     * A step whose typed output is encoded with {@code codec}.
     *
     * @throws NullPointerException if an argument is null
     */
    static <I, O> Step<I> typed(Codec<O> codec, TypedStep<I, O> work) {
        Objects.requireNonNull(codec, "codec must not be null");
        Objects.requireNonNull(work, "work must not be null");
        return context -> {
            O out = work.execute(context);
            return out == null ? null : encodeOutput(codec, out, context.stepName());
        };
    }

    /**
     * Encodes a step's output; an encoding failure is deterministic, so it fails the step
     * without retry.
     *
     * @throws NonRetryableException if the codec throws
     */
    static <O> String encodeOutput(Codec<O> codec, O value, String stepName) {
        try {
            return codec.encode(value);
        } catch (RuntimeException e) {
            throw new NonRetryableException("output of step '" + stepName + "' cannot be encoded: " + e.getMessage(), e);
        }
    }

    /**
     * A step producing a typed output; see {@link Step#typed}.
     *
     * @param <I> the workflow's input type
     * @param <O> the output type
     */
    @FunctionalInterface
    interface TypedStep<I, O> {
        /**
         * Runs the step.
         *
         * @throws Exception any failure
         */
        O execute(StepContext<I> context) throws Exception;
    }
}
