package dev.sas.core;

import dev.sas.core.internal.CompletionToken;
import dev.sas.core.internal.CompletionTokens;
import dev.sas.core.internal.StepCompletions;
import dev.sas.core.internal.TaskLog;
import dev.sas.core.spi.CompletionWrite;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StepCompletion;
import dev.sas.core.spi.StorableText;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Completes steps that await completion from outside ({@link StepBuilder#awaitCompletion(CompletionRequest)}):
 * a webhook handler, a queue consumer or a person's decision hands it the token the step's request
 * carried, with the step's output or its failure. Works from any node or process that holds a
 * client of the store; it is the way Temporal's {@code ActivityCompletionClient} completes an
 * activity by its task token.
 *
 * <pre>{@code
 * StepCompletionClient completion = client.stepCompletion();
 * completion.complete(token, "approved by ann");
 * completion.fail(token, "rejected by ann", false);
 * }</pre>
 *
 * <p>Obtained from {@link SasClient#stepCompletion()}; it checks tokens with that client's
 * {@link CompletionTokenKeys} ({@link SasClient.Builder#completionTokenKeys}) and decides the task's next
 * state from the workflows the client knows. Thread-safe.
 */
public final class StepCompletionClient {
    private static final Logger log = LoggerFactory.getLogger(StepCompletionClient.class);

    private final ClientCore core;
    private final StateStore store;
    private final CompletionTokens completionTokens;

    StepCompletionClient(ClientCore core) {
        this.core = core;
        this.store = core.store;
        this.completionTokens = CompletionTokenKeys.tokens(core.config.completionTokenKeys());
    }

    /**
     * Completes the step attempt {@code replyToken} names with {@code reply} as its output: the
     * reply to a request a step sent with {@link StepBuilder#awaitCompletion(CompletionRequest)}. Works from
     * any node or process holding only a store (a webhook handler, a queue consumer). In one fenced
     * store transaction it checks that the task still awaits this very attempt (same step, same
     * lease) and that the store's time is before the step's deadline, then records the step as
     * completed exactly as a scheduler would (the next step becomes due, or the task
     * {@code PROCESSED}; events, status channels, listeners and handles see it). A reply that arrives
     * while the request's send is still being recorded is kept and applied by that record.
     *
     * <p>The reply is encoded with the step's codec: a step defined by name takes a {@link String},
     * stored as is; a typed step ({@link TypedStepBuilder}) takes a value of its type. The client
     * must know the workflow (it submitted to it, was built with {@link SasClient.Builder#workflow(Workflow)},
     * or is a runtime's client): it checks the step and decides the task's next state from it.
     * The token must be one the client's {@link CompletionTokenKeys} signed (current or previous key): a
     * forged, altered, truncated or malformed token answers {@link CompletionOutcome#INVALID_TOKEN} (logged
     * at WARN without the token; counted by a runtime's client, {@link SasMetrics#invalidCompletionTokens()}).
     * A valid token naming a task that no longer exists answers {@link CompletionOutcome#NOT_FOUND}; a late
     * or stale reply is logged at INFO (never its payload) and counted by a runtime's client
     * ({@link SasMetrics#lateCompletions()}).
     *
     * @param replyToken the token the request carried ({@link CompletionRequest#send})
     * @param reply the step's output, or null
     * @return what became of the reply; only {@link CompletionOutcome#COMPLETED} changed the task
     * @throws IllegalArgumentException if {@code replyToken} is null or blank, the step named does not await a
     *     reply, the workflow is unknown to this client for a non-string reply, or the reply cannot be
     *     encoded, is too large or unstorable
     * @throws IllegalStateException if the client has no {@link CompletionTokenKeys}
     *     ({@link SasClient.Builder#completionTokenKeys})
     * @throws StateStoreException if the store failed; the reply may then have been recorded or not
     *     (sending it again is safe: a duplicate answers {@link CompletionOutcome#ALREADY_COMPLETED})
     */
    public CompletionOutcome complete(String replyToken, Object reply) {
        return reply(replyToken, (target, def) -> def.encodeReply(reply), StepCompletion.Kind.COMPLETED);
    }

    /**
     * Completes the step attempt {@code replyToken} names with text already encoded with the step's
     * codec (for transports that carry the encoded reply); otherwise as
     * {@link #complete(String, Object)}. The text is decoded with the step's codec before it is
     * accepted, so a reply the next step could not read is refused here, not found by that step.
     *
     * @param replyToken the token the request carried
     * @param encodedReply the step's output as the step's codec encodes it, or null
     * @return what became of the reply
     * @throws IllegalArgumentException if {@code replyToken} is null or blank or names a step that does not
     *     await a reply, the workflow is unknown to this client, or the reply cannot be decoded by the
     *     step's codec (the message names the codec's exception; it is the cause), is too large or unstorable
     * @throws IllegalStateException if the client has no {@link CompletionTokenKeys}
     * @throws StateStoreException if the store failed
     */
    public CompletionOutcome completeEncoded(String replyToken, String encodedReply) {
        return reply(replyToken, (target, def) -> def.checkEncodedReply(encodedReply),
                StepCompletion.Kind.COMPLETED);
    }

    /**
     * Records the step attempt {@code replyToken} names as failed with {@code error}: retried per
     * the step's {@link RetryPolicy} (the request is sent again, with the same idempotency key), or
     * the step fails when the policy is spent. Fenced and bounded like
     * {@link #complete(String, Object)}.
     *
     * @param replyToken the token the request carried
     * @param error what went wrong (stored as the task's last error)
     * @return what became of the failure; only {@link CompletionOutcome#FAILED} changed the task
     * @throws NullPointerException if {@code error} is null
     * @throws IllegalArgumentException if {@code replyToken} is null or blank or names a step that does not
     *     await a reply, or the workflow is unknown to this client
     * @throws IllegalStateException if the client has no {@link CompletionTokenKeys}
     * @throws StateStoreException if the store failed
     */
    public CompletionOutcome fail(String replyToken, String error) {
        return fail(replyToken, error, true);
    }

    /**
     * Records the step attempt {@code replyToken} names as failed with {@code error}, like
     * {@link #fail(String, String)}; with {@code retryable} false the step fails for good at
     * once (as a {@link NonRetryableException} would), whatever its retry policy.
     *
     * @param replyToken the token the request carried
     * @param error what went wrong (stored as the task's last error)
     * @param retryable whether the step's retry policy may retry it
     * @return what became of the failure
     * @throws NullPointerException if {@code error} is null
     * @throws IllegalArgumentException if {@code replyToken} is null or blank or names a step that does not
     *     await a reply, or the workflow is unknown to this client
     * @throws IllegalStateException if the client has no {@link CompletionTokenKeys}
     * @throws StateStoreException if the store failed
     */
    public CompletionOutcome fail(String replyToken, String error, boolean retryable) {
        Objects.requireNonNull(error, "error must not be null");
        String message = StorableText.replaceUnstorable(error.length() > MAX_REPLY_ERROR_LENGTH
                ? error.substring(0, MAX_REPLY_ERROR_LENGTH) + "…" : error);
        return reply(replyToken, (target, def) -> message, retryable ? StepCompletion.Kind.FAILED
                : StepCompletion.Kind.FAILED_FOR_GOOD);
    }

    /** Longest error a {@link #fail} records, in chars (longer ones are cut). */
    private static final int MAX_REPLY_ERROR_LENGTH = 2000;

    /** Encodes a reply for the awaiting step it answers. */
    private interface ReplyPayload {
        String encode(TaskInfo task, StepDefinition<?> step);
    }

    private CompletionOutcome reply(String replyToken, ReplyPayload payload, StepCompletion.Kind kind) {
        if (replyToken == null || replyToken.isBlank()) {
            throw new IllegalArgumentException("replyToken must not be " + (replyToken == null ? "null" : "blank")
                    + ": pass the token the step's CompletionRequest.send was given, unchanged");
        }
        CompletionTokens.Checked checked = completionTokens.check(replyToken);
        if (!checked.accepted()) {
            log.warn("a reply was refused: its token is {}; nothing changed", checked.refusal());
            core.hooks.completionRejected(CompletionOutcome.INVALID_TOKEN);
            return CompletionOutcome.INVALID_TOKEN;
        }
        CompletionToken token = checked.token();
        if (checked.unsigned()) {
            log.warn("task {} step {}: a reply with an unsigned (format 1) token was accepted"
                    + " (CompletionTokenKeys.acceptUnsignedTokens()); turn that off once the upgrade's awaiting steps are"
                    + " answered", token.taskId(), token.step());
        }
        if (ClientCore.unstorable(token.taskId().value())) {
            return CompletionOutcome.NOT_FOUND; // no store holds such an id; PostgreSQL would throw on a NUL
        }
        TaskInfo info = store.find(token.taskId()).orElse(null);
        if (info == null) {
            return CompletionOutcome.NOT_FOUND;
        }
        return accept(token, info, payload, kind);
    }

    /**
     * Completes (or fails for good) the child task step that {@code parent} awaits, with the end of
     * {@code child}: its result if it ended {@link TaskStatus#PROCESSED}, else its failure. Fenced
     * like a reply by token (the parent's current step and lease, read in {@code parent}), so a
     * delivery repeated by another pass or node answers {@link CompletionOutcome#ALREADY_COMPLETED} or
     * {@link CompletionOutcome#STALE} and changes nothing.
     */
    CompletionOutcome childEnded(TaskInfo parent, TaskInfo child) {
        String failure = child.status() == TaskStatus.PROCESSED ? null : ChildCall.failure(child);
        Workflow<?> wf = core.workflow(parent.workflow(), parent.workflowVersion());
        if (failure == null && wf != null && parent.currentStep() < wf.steps().size()) {
            try {
                wf.steps().get(parent.currentStep()).checkEncodedReply(ChildCall.result(child));
            } catch (IllegalArgumentException e) {
                failure = ChildCall.failure(child) + ", but its result cannot be this step's output: " + e.getMessage();
            }
        }
        return unitsEnded(parent, failure == null ? ChildCall.result(child) : null, failure);
    }

    /**
     * The units of {@code parent}'s current step (a parallel step, {@link ChildGroup}) have ended: it
     * completes with {@code output}, or, when {@code failure} is not null, fails for good with it.
     * Fenced like {@link #childEnded}. Called by {@link ChildRelay}.
     */
    CompletionOutcome unitsEnded(TaskInfo parent, String output, String failure) {
        CompletionToken token = new CompletionToken(parent.taskId(), parent.currentStep(), parent.lease());
        if (failure == null) {
            return accept(token, parent, (target, def) -> output, StepCompletion.Kind.COMPLETED);
        }
        String error = failure.length() > MAX_REPLY_ERROR_LENGTH ? failure.substring(0, MAX_REPLY_ERROR_LENGTH) + "…"
                : failure;
        return accept(token, parent, (target, def) -> error, StepCompletion.Kind.FAILED_FOR_GOOD);
    }

    private CompletionOutcome accept(CompletionToken token, TaskInfo info, ReplyPayload payload, StepCompletion.Kind kind) {
        Workflow<?> wf = core.workflow(info.workflow(), info.workflowVersion());
        if (wf == null) {
            throw new IllegalArgumentException("the reply token names task " + token.taskId() + " of workflow '"
                    + info.workflow() + "' version " + info.workflowVersion() + ", which this client does not know;"
                    + " build the client with SasClient.builder().workflow(...) (or use a runtime's client) so it"
                    + " can encode the reply and decide the step's next state");
        }
        if (token.step() >= wf.steps().size()) {
            return CompletionOutcome.NOT_FOUND;
        }
        StepDefinition<?> def = wf.steps().get(token.step());
        if (!def.awaitsCompletion()) {
            throw new IllegalArgumentException("the reply token names step '" + def.name() + "' of workflow '"
                    + wf.name() + "', which does not await a reply (define it with awaitCompletion(...)); pass the token a"
                    + " CompletionRequest was given");
        }
        String encoded = payload.encode(info, def);
        String what = "reply to step '" + def.name() + "' of task " + token.taskId();
        int bytes = core.payloadLimit.excess(encoded);
        if (bytes >= 0) {
            throw new IllegalArgumentException(core.payloadLimit.message(what, bytes));
        }
        String unstorable = StorableText.problem(what, encoded);
        if (unstorable != null) {
            throw new IllegalArgumentException(unstorable + "; no database can store it: have the step's codec escape"
                    + " or encode it (JSON, base64)");
        }
        Instant now = core.now();
        StepCompletion reply = new StepCompletion(token.taskId(), token.step(), token.lease(),
                kind, encoded, now);
        AtomicReference<StepCompletions.Decided> decided =
                new AtomicReference<>();
        CompletionWrite w = store.stepCompletions().orElseThrow(() -> new UnsupportedOperationException("the store "
                + store + " does not support steps that await a completion")).acceptCompletion(reply, target -> {
            StepCompletions.Decided d = StepCompletions.decide(target, wf, reply);
            decided.set(d);
            return d.transition();
        }, now);
        CompletionOutcome outcome = switch (w.kind()) {
            case APPLIED, KEPT -> kind == StepCompletion.Kind.COMPLETED ? CompletionOutcome.COMPLETED
                    : CompletionOutcome.FAILED;
            case DUPLICATE -> CompletionOutcome.ALREADY_COMPLETED;
            case LATE -> CompletionOutcome.LATE;
            case STALE, REFUSED -> CompletionOutcome.STALE;
            case NOT_FOUND -> CompletionOutcome.NOT_FOUND;
        };
        TaskLog.run(token.taskId(), wf.name(), token.step(), 0, () -> logReply(token, def,
                w, outcome));
        if (w.kind() == CompletionWrite.Kind.APPLIED) {
            core.hooks.replied(w.transition(), decided.get() == null ? List.of() : decided.get().alerts());
            if (w.transition().status().isTerminal()) {
                core.waiters.finished(token.taskId());
            }
        } else if (outcome == CompletionOutcome.LATE || outcome == CompletionOutcome.STALE) {
            core.hooks.completionRejected(outcome);
        }
        return outcome;
    }

    private static void logReply(CompletionToken token, StepDefinition<?> def,
            CompletionWrite w, CompletionOutcome outcome) {
        switch (w.kind()) {
            case APPLIED -> log.info("task {} step {}: reply accepted ({}); task now {}", token.taskId(), def.name(),
                    outcome, w.transition().status());
            case KEPT -> log.info("task {} step {}: reply accepted ({}) while its request is being sent; applied"
                    + " when that is recorded", token.taskId(), def.name(), outcome);
            case DUPLICATE -> log.info("task {} step {}: duplicate reply to attempt with lease {} ignored",
                    token.taskId(), def.name(), token.lease());
            case LATE -> log.info("task {} step {}: late reply rejected: it came after the attempt's deadline",
                    token.taskId(), def.name());
            case STALE -> log.info("task {} step {}: stale reply rejected: the task no longer awaits the attempt with"
                    + " lease {}", token.taskId(), def.name(), token.lease());
            case REFUSED -> log.warn("task {} step {}: the store refused to record the reply", token.taskId(),
                    def.name());
            case NOT_FOUND -> log.info("task {}: reply for a task that no longer exists ignored", token.taskId());
        }
    }

    @Override
    public String toString() {
        return "StepCompletionClient{store=" + store + '}';
    }
}
