package dev.sas.core;

/**
 * Sends the request of a step that completes later, when its reply arrives through
 * {@link StepCompletionClient#complete(String, Object)} (or {@link StepCompletionClient#fail(String, String)}),
 * from any node or process. Set on a step with {@link StepBuilder#awaitCompletion(CompletionRequest)} or
 * {@link TypedStepBuilder#awaitCompletion(CompletionRequest)}. No thread waits for the reply: once the
 * request is sent, the task rests {@link TaskStatus#AWAITING_COMPLETION} in the store until the reply
 * arrives or the step's deadline ({@link AbstractStepBuilder#completeWithin}) passes.
 *
 * <p>Implementations must be thread-safe: attempts of many tasks call it at once.
 *
 * @param <I> the workflow's input type
 */
@FunctionalInterface
public interface CompletionRequest<I> {

    /**
     * Sends the request (publish to a queue, e-mail an approval link, call a webhook-based API). The
     * {@code replyToken} is opaque, URL-safe, and must travel with the request so the reply can name
     * it. Throwing counts as a failed attempt ({@link NonRetryableException} fails the step). Runs on
     * a scheduler thread; returns as soon as the request is sent. A request may be sent again after
     * a time-out or a failure, with a new token but the same {@link StepContext#idempotencyKey()}.
     *
     * @param context the step's context (input, earlier outputs, idempotency key, deadline)
     * @param replyToken names this attempt of this step; the reply must carry it
     * @throws Exception if the request could not be sent
     */
    void send(StepContext<I> context, String replyToken) throws Exception;
}
