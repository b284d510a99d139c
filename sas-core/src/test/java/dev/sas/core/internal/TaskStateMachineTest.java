package dev.sas.core.internal;

import static dev.sas.core.TaskEvent.Type.CANCELLED;
import static dev.sas.core.TaskEvent.Type.COMPENSATED;
import static dev.sas.core.TaskEvent.Type.COMPENSATING;
import static dev.sas.core.TaskEvent.Type.COMPENSATION_COMPLETED;
import static dev.sas.core.TaskEvent.Type.COMPENSATION_FAILED;
import static dev.sas.core.TaskEvent.Type.COMPENSATION_STARTED;
import static dev.sas.core.TaskEvent.Type.ERROR;
import static dev.sas.core.TaskEvent.Type.PROCESSED;
import static dev.sas.core.TaskEvent.Type.COMPLETION_AWAITED;
import static dev.sas.core.TaskEvent.Type.COMPLETION_RECEIVED;
import static dev.sas.core.TaskEvent.Type.STEP_COMPLETED;
import static dev.sas.core.TaskEvent.Type.STEP_FAILED;
import static dev.sas.core.TaskEvent.Type.STEP_RETRYING;
import static dev.sas.core.TaskEvent.Type.STEP_STARTED;
import static dev.sas.core.TaskEvent.Type.STEP_TIMED_OUT;
import static dev.sas.core.TaskEvent.Type.WAITING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Alert;
import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.StepBuilder;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.internal.TaskStateMachine.CancelRequested;
import dev.sas.core.internal.TaskStateMachine.CompensationCompleted;
import dev.sas.core.internal.TaskStateMachine.CompensationFailed;
import dev.sas.core.internal.TaskStateMachine.Decision;
import dev.sas.core.internal.TaskStateMachine.HeldBack;
import dev.sas.core.internal.TaskStateMachine.NotRunnable;
import dev.sas.core.internal.TaskStateMachine.Outcome;
import dev.sas.core.internal.TaskStateMachine.CompletionReceived;
import dev.sas.core.internal.TaskStateMachine.RequestSent;
import dev.sas.core.internal.TaskStateMachine.Snapshot;
import dev.sas.core.internal.TaskStateMachine.StepCompleted;
import dev.sas.core.internal.TaskStateMachine.StepFailed;
import dev.sas.core.internal.TaskStateMachine.TimedOut;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every state × outcome the task state machine knows, as a table: the task before, what happened,
 * and the transition, events and alerts that must follow. The workflow has four steps: {@code
 * reserve} and {@code charge} can be compensated, {@code email} and {@code ship} cannot. Retries
 * back off a fixed 5 s without jitter, so due times are exact.
 */
class TaskStateMachineTest {
    private static final Instant STARTED = Instant.parse("2030-01-01T00:00:00Z");
    /** When the outcome is decided: 10 s after the attempt started. */
    private static final Instant NOW = STARTED.plus(Duration.ofSeconds(10));
    private static final Duration BACKOFF = Duration.ofSeconds(5);
    private static final Instant EXPIRED_AT = STARTED.plus(Duration.ofSeconds(8));
    private static final TaskId ID = TaskId.of("task-1");
    private static final long LEASE = 7;
    /** When a call held back by its agent's flow control comes again. */
    private static final Instant RETRY_AT = NOW.plus(Duration.ofSeconds(30));
    private static final String HELD = "waiting for agent capacity: agent 'payments' endpoint 'default' has 5 of 5"
            + " calls in flight; comes again at " + RETRY_AT;

    private static final Workflow<String> ORDER = order(true);
    /** The same steps, but a failure goes to ERROR instead of compensating. */
    private static final Workflow<String> NO_COMPENSATION = order(false);

    /** Awaits approval (2 minutes, compensated, 3 attempts), then ships. */
    private static final Workflow<String> APPROVAL = Workflow.builder("approval", Codec.string())
            .step("approve", s -> s.awaitCompletion((ctx, token) -> { }).completeWithin(Duration.ofMinutes(2))
                    .retry(RetryPolicy.builder().maxAttempts(3).fixedBackoff(BACKOFF).jitter(0).build())
                    .compensateWith(ctx -> { }))
            .step("ship", s -> s.execute(ctx -> "s"))
            .build();
    /** When a request APPROVAL sent at STARTED can no longer be applied: its deadline and the grace. */
    private static final Instant APPROVAL_IN_DOUBT = STARTED.plus(Duration.ofMinutes(2)).plusSeconds(1);
    /** Two steps, neither of which can be compensated. */
    private static final Workflow<String> PLAIN = Workflow.builder("plain", Codec.string())
            .step("a", s -> s.execute(ctx -> "a"))
            .step("b", s -> s.execute(ctx -> "b"))
            .build();

    private static Workflow<String> order(boolean compensateOnFailure) {
        RetryPolicy retry = RetryPolicy.builder().maxAttempts(3).fixedBackoff(BACKOFF).jitter(0).build();
        return Workflow.builder(compensateOnFailure ? "order" : "order-no-compensation", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "r").retry(retry).completeWithin(Duration.ofMinutes(1))
                        .compensateWith(ctx -> { }))
                .step("charge", s -> s.execute(ctx -> "c").retry(retry).completeWithin(Duration.ofMinutes(2))
                        .compensateWith(ctx -> { }))
                .step("email", s -> s.execute(ctx -> "e").retry(retry).completeWithin(Duration.ofMinutes(3)))
                .step("ship", s -> s.execute(ctx -> "s").retry(retry).completeWithin(Duration.ofMinutes(4)))
                .compensateOnFailure(compensateOnFailure)
                .build();
    }

    // ------------------------------------------------------------------ the table

    static Stream<Arguments> decisions() {
        return Stream.of(
                // PROCESSING: a step completes
                row("the last step completing ends the task PROCESSED unless a cancel came first",
                        processing(3).attempt(2).failures(1), completed("shipped"),
                        expect(TaskStatus.PROCESSED).released().at(3).attempt(2).failures(1)
                                .events(STEP_COMPLETED, PROCESSED).stepRow(StepStatus.COMPLETED).yieldsToCancel()),
                row("the last step completing after a cancel was seen is compensated, not PROCESSED",
                        processing(3).cancelRequested(), completed("shipped"),
                        expect(TaskStatus.COMPENSATING).keptLocked().at(1).attempt(1).failures(0)
                                .events(STEP_COMPLETED, COMPENSATING, COMPENSATION_STARTED)
                                .stepRow(StepStatus.COMPLETED).lastError("cancelled by an operator")),
                row("a middle step completing starts the next step in the same claim",
                        processing(1).attempt(2), completed("charged"),
                        expect(TaskStatus.PROCESSING).keptLocked().at(2).attempt(1).failures(0)
                                .events(STEP_COMPLETED, STEP_STARTED).stepRow(StepStatus.COMPLETED)
                                .yieldsToCancel()),
                row("a middle step completing while the scheduler shuts down hands the task back PENDING, due now",
                        processing(1).shuttingDown(), completed("charged"),
                        expect(TaskStatus.PENDING).released().at(2).attempt(0).failures(0).due(NOW)
                                .events(STEP_COMPLETED).stepRow(StepStatus.COMPLETED).yieldsToCancel()),
                row("a middle step completing after a cancel was seen does not yield to the cancel again",
                        processing(1).cancelRequested(), completed("charged"),
                        expect(TaskStatus.PROCESSING).keptLocked().at(2).attempt(1).events(STEP_COMPLETED, STEP_STARTED)
                                .stepRow(StepStatus.COMPLETED)),

                // PROCESSING: a step fails
                row("a retryable failure with attempts left releases the task PENDING after the backoff",
                        processing(1).attempt(1).failures(1), failed(new IllegalStateException("boom")),
                        expect(TaskStatus.PENDING).released().at(1).attempt(1).failures(1).due(NOW.plus(BACKOFF))
                                .events(STEP_RETRYING).stepRow(StepStatus.PENDING)
                                .lastError("IllegalStateException: boom").retry().yieldsToCancel()),
                row("a non-retryable failure compensates from the step before the failed one",
                        processing(1), failed(new NonRetryableException("card declined")),
                        expect(TaskStatus.COMPENSATING).keptLocked().at(0).attempt(1).failures(0)
                                .events(STEP_FAILED, COMPENSATING, COMPENSATION_STARTED).stepRow(StepStatus.FAILED)
                                .lastError("NonRetryableException: card declined").yieldsToCancel()),
                row("a non-retryable failure of the first step has nothing to compensate and ends in ERROR, counting no attempt that may have applied",
                        processing(0).failures(1), failed(new NonRetryableException("out of stock")),
                        expect(TaskStatus.ERROR).released().at(0).attempt(0).failures(1)
                                .events(STEP_FAILED, ERROR).stepRow(StepStatus.FAILED).alerts(TaskStatus.ERROR)
                                .yieldsToCancel()),
                row("a non-retryable failure ends in ERROR when the workflow does not compensate on failure",
                        processing(NO_COMPENSATION, 2), failed(new NonRetryableException("bounced")),
                        expect(TaskStatus.ERROR).released().at(2).attempt(0).events(STEP_FAILED, ERROR)
                                .stepRow(StepStatus.FAILED).alerts(TaskStatus.ERROR).yieldsToCancel()),
                row("a non-retryable failure after retried attempts ends in ERROR counting none that may have applied",
                        processing(NO_COMPENSATION, 2).attempt(2), failed(new NonRetryableException("bounced")),
                        expect(TaskStatus.ERROR).released().at(2).attempt(0).events(STEP_FAILED, ERROR)
                                .stepRow(StepStatus.FAILED).alerts(TaskStatus.ERROR).yieldsToCancel()),
                row("a transient failure out of attempts ends in ERROR counting every attempt when the workflow does not compensate",
                        processing(NO_COMPENSATION, 1).attempt(3), failed(new IllegalStateException("reply lost")),
                        expect(TaskStatus.ERROR).released().at(1).attempt(3).events(STEP_FAILED, ERROR)
                                .stepRow(StepStatus.FAILED).alerts(TaskStatus.ERROR).yieldsToCancel()),
                row("a non-retryable failure after retried attempts compensates from the step before: the last error decides",
                        processing(1).attempt(2), failed(new NonRetryableException("card declined")),
                        expect(TaskStatus.COMPENSATING).keptLocked().at(0).attempt(1).failures(0)
                                .events(STEP_FAILED, COMPENSATING, COMPENSATION_STARTED).stepRow(StepStatus.FAILED)
                                .yieldsToCancel()),
                row("a transient failure out of attempts compensates the failed step too, which may have applied",
                        processing(1).attempt(3), failed(new IllegalStateException("timeout")),
                        expect(TaskStatus.COMPENSATING).keptLocked().at(1).attempt(1).failures(0)
                                .events(STEP_FAILED, COMPENSATING, COMPENSATION_STARTED).stepRow(StepStatus.FAILED)
                                .yieldsToCancel()),
                row("a send out of attempts (its request may still be queued) is compensated once the request can no longer be applied",
                        processing(APPROVAL, 0).attempt(3), failed(new IllegalStateException("confirm timed out")),
                        expect(TaskStatus.COMPENSATING).released().at(0).attempt(0).failures(0).due(APPROVAL_IN_DOUBT)
                                .events(STEP_FAILED, COMPENSATING).stepRow(StepStatus.FAILED).yieldsToCancel()
                                .lastError("IllegalStateException: confirm timed out; step 'approve' may still be applied until "
                                        + APPROVAL_IN_DOUBT)),
                row("a failure reply out of attempts is compensated at once: the party answered",
                        processing(APPROVAL, 0).attempt(3), failed(new WaitDecisions.FailedReply("declined")),
                        expect(TaskStatus.COMPENSATING).keptLocked().at(0).attempt(1).failures(0)
                                .events(STEP_FAILED, COMPENSATING, COMPENSATION_STARTED).stepRow(StepStatus.FAILED)
                                .yieldsToCancel()),
                row("a transient failure out of attempts at a step without compensation compensates the last one before it",
                        processing(2).attempt(3), failed(new IllegalStateException("smtp down")),
                        expect(TaskStatus.COMPENSATING).keptLocked().at(1).attempt(1)
                                .events(STEP_FAILED, COMPENSATING, COMPENSATION_STARTED).stepRow(StepStatus.FAILED)
                                .yieldsToCancel()),
                row("a failure for good after a cancel was seen ends CANCELLED when nothing is compensable",
                        processing(0).cancelRequested(), failed(new NonRetryableException("out of stock")),
                        expect(TaskStatus.CANCELLED).released().at(0).attempt(1).events(STEP_FAILED, CANCELLED)
                                .stepRow(StepStatus.FAILED)),
                row("a failure for good after a cancel was seen compensates even when the workflow does not compensate on failure",
                        processing(NO_COMPENSATION, 2).attempt(3).cancelRequested(),
                        failed(new IllegalStateException("smtp down")),
                        expect(TaskStatus.COMPENSATING).keptLocked().at(1).attempt(1)
                                .events(STEP_FAILED, COMPENSATING, COMPENSATION_STARTED).stepRow(StepStatus.FAILED)),
                row("a retryable failure after a cancel was seen is retried without yielding to the cancel again",
                        processing(1).cancelRequested(), failed(new IllegalStateException("boom")),
                        expect(TaskStatus.PENDING).released().at(1).attempt(1).due(NOW.plus(BACKOFF))
                                .events(STEP_RETRYING).stepRow(StepStatus.PENDING).retry()),

                // COMPENSATING: a compensation completes
                row("a compensation completing starts the next compensable step in the same claim",
                        compensating(1).attempt(2), compensationCompleted(),
                        expect(TaskStatus.COMPENSATING).keptLocked().at(0).attempt(1).failures(0)
                                .events(COMPENSATION_COMPLETED, COMPENSATION_STARTED)
                                .compensationRow(StepStatus.COMPENSATED)),
                row("a compensation completing while the scheduler shuts down hands the task back COMPENSATING, due now",
                        compensating(1).shuttingDown(), compensationCompleted(),
                        expect(TaskStatus.COMPENSATING).released().at(0).attempt(0).failures(0).due(NOW)
                                .events(COMPENSATION_COMPLETED).compensationRow(StepStatus.COMPENSATED)),
                row("the last compensation completing ends the task COMPENSATED unless a cancel came meanwhile",
                        compensating(0).attempt(2).failures(1), compensationCompleted(),
                        expect(TaskStatus.COMPENSATED).released().at(0).attempt(2).failures(0)
                                .events(COMPENSATION_COMPLETED, COMPENSATED).compensationRow(StepStatus.COMPENSATED)
                                .yieldsToCancel()),
                row("the last compensation completing for a cancel ends the task CANCELLED",
                        compensating(0).cancelRequested(), compensationCompleted(),
                        expect(TaskStatus.CANCELLED).released().at(0).attempt(1)
                                .events(COMPENSATION_COMPLETED, CANCELLED).compensationRow(StepStatus.COMPENSATED)),

                // COMPENSATING: a compensation fails
                row("a compensation failing with attempts left is retried COMPENSATING after the backoff",
                        compensating(1).attempt(2), compensationFailed(new IllegalStateException("refund api down")),
                        expect(TaskStatus.COMPENSATING).released().at(1).attempt(2).due(NOW.plus(BACKOFF))
                                .events(STEP_RETRYING).noStepRow().retry()
                                .lastError("IllegalStateException: refund api down")),
                row("a compensation failing out of attempts ends COMPENSATION_FAILED and alerts",
                        compensating(1).attempt(3).failures(1), compensationFailed(new IllegalStateException("refund api down")),
                        expect(TaskStatus.COMPENSATION_FAILED).released().at(1).attempt(3).failures(1)
                                .events(COMPENSATION_FAILED).compensationRow(StepStatus.COMPENSATION_FAILED)
                                .alerts(TaskStatus.COMPENSATION_FAILED)),
                row("a compensation failing non-retryably ends COMPENSATION_FAILED at once and alerts",
                        compensating(0), compensationFailed(new NonRetryableException("refund refused")),
                        expect(TaskStatus.COMPENSATION_FAILED).released().at(0).attempt(1)
                                .events(COMPENSATION_FAILED).compensationRow(StepStatus.COMPENSATION_FAILED)
                                .alerts(TaskStatus.COMPENSATION_FAILED)),

                // the supervisor finds the claim expired
                row("a PROCESSING time-out under the threshold releases the task PENDING after the backoff",
                        processing(1).attempt(2).failures(0), timedOut(),
                        expect(TaskStatus.PENDING).released().expired().at(1).attempt(2).failures(1)
                                .due(NOW.plus(BACKOFF)).events(STEP_TIMED_OUT).noStepRow().retry()),
                row("a PROCESSING time-out reaching the threshold compensates the timed-out step too",
                        processing(1).failures(2), timedOut(),
                        expect(TaskStatus.COMPENSATING).released().expired().at(1).attempt(0).failures(0).due(NOW)
                                .events(STEP_TIMED_OUT, STEP_FAILED, COMPENSATING).stepRow(StepStatus.FAILED)),
                row("a PROCESSING time-out reaching the threshold with nothing compensable ends in ERROR and alerts, unless a cancel came since the scan",
                        processing(PLAIN, 0).failures(2), timedOut(),
                        expect(TaskStatus.ERROR).released().expired().at(0).attempt(1).failures(3)
                                .events(STEP_TIMED_OUT, STEP_FAILED, ERROR).stepRow(StepStatus.FAILED)
                                .alerts(TaskStatus.ERROR).yieldsToCancel()),
                row("a PROCESSING time-out reaching the threshold ends in ERROR when the workflow does not compensate, unless a cancel came since the scan",
                        processing(NO_COMPENSATION, 1).failures(2), timedOut(),
                        expect(TaskStatus.ERROR).released().expired().at(1).attempt(1).failures(3)
                                .events(STEP_TIMED_OUT, STEP_FAILED, ERROR).stepRow(StepStatus.FAILED)
                                .alerts(TaskStatus.ERROR).yieldsToCancel()),
                row("a PROCESSING time-out of the step's last allowed attempt fails it though time-outs are left",
                        processing(NO_COMPENSATION, 1).attempt(3).failures(0), timedOut(),
                        expect(TaskStatus.ERROR).released().expired().at(1).attempt(3).failures(1)
                                .events(STEP_TIMED_OUT, STEP_FAILED, ERROR).stepRow(StepStatus.FAILED)
                                .alerts(TaskStatus.ERROR).yieldsToCancel()),
                row("a COMPENSATING time-out of the compensation's last allowed attempt ends COMPENSATION_FAILED",
                        compensating(1).attempt(3).failures(0), timedOut(),
                        expect(TaskStatus.COMPENSATION_FAILED).released().expired().at(1).attempt(3).failures(1)
                                .events(STEP_TIMED_OUT, COMPENSATION_FAILED)
                                .compensationRow(StepStatus.COMPENSATION_FAILED).alerts(TaskStatus.COMPENSATION_FAILED)),
                row("a PROCESSING time-out reaching the threshold with a cancel pending compensates anyway",
                        processing(NO_COMPENSATION, 1).failures(2).cancelRequested(), timedOut(),
                        expect(TaskStatus.COMPENSATING).released().expired().at(1).attempt(0).failures(0).due(NOW)
                                .events(STEP_TIMED_OUT, STEP_FAILED, COMPENSATING).stepRow(StepStatus.FAILED)),
                row("a PROCESSING time-out reaching the threshold with a cancel pending and nothing compensable ends CANCELLED",
                        processing(PLAIN, 0).failures(2).cancelRequested(), timedOut(),
                        expect(TaskStatus.CANCELLED).released().expired().at(0).attempt(1).failures(3)
                                .events(STEP_TIMED_OUT, STEP_FAILED, CANCELLED).stepRow(StepStatus.FAILED)),
                row("a COMPENSATING time-out under the threshold releases the task COMPENSATING after the backoff",
                        compensating(1).failures(1), timedOut(),
                        expect(TaskStatus.COMPENSATING).released().expired().at(1).attempt(1).failures(2)
                                .due(NOW.plus(BACKOFF)).events(STEP_TIMED_OUT).noStepRow().retry()),
                row("a COMPENSATING time-out reaching the threshold ends COMPENSATION_FAILED and alerts",
                        compensating(1).failures(2), timedOut(),
                        expect(TaskStatus.COMPENSATION_FAILED).released().expired().at(1).attempt(1).failures(3)
                                .events(STEP_TIMED_OUT, COMPENSATION_FAILED)
                                .compensationRow(StepStatus.COMPENSATION_FAILED).alerts(TaskStatus.COMPENSATION_FAILED)),
                row("a time-out of a workflow this runtime does not know counts against the default maxTimeouts",
                        processing(null, 1).failures(StepBuilder.DEFAULT_MAX_TIMEOUTS - 1), timedOut(),
                        expect(TaskStatus.ERROR).released().expired().at(1).attempt(1)
                                .failures(StepBuilder.DEFAULT_MAX_TIMEOUTS)
                                .events(STEP_TIMED_OUT, STEP_FAILED, ERROR).stepRow(StepStatus.FAILED)
                                .alerts(TaskStatus.ERROR).yieldsToCancel()),
                row("a time-out with a cancel pending, of a workflow this runtime does not know, is handed to a node that can compensate",
                        processing(null, 1).attempt(2).failures(StepBuilder.DEFAULT_MAX_TIMEOUTS - 1).cancelRequested(),
                        timedOut(),
                        expect(TaskStatus.PENDING).released().expired().at(1).attempt(2)
                                .failures(StepBuilder.DEFAULT_MAX_TIMEOUTS).due(NOW).events(STEP_TIMED_OUT)
                                .noStepRow()),

                // an operator asked to cancel
                row("a cancel seen at claim on a first attempt compensates the steps before the current one",
                        processing(2).cancelRequested(), CancelRequestedAtClaim.INSTANCE,
                        expect(TaskStatus.COMPENSATING).keptLocked().at(1).attempt(1).failures(0)
                                .events(COMPENSATING, COMPENSATION_STARTED).noStepRow()
                                .lastError("cancelled by an operator")),
                row("a cancel seen at claim on a retry compensates the current step too, which may have applied",
                        processing(1).attempt(2).cancelRequested(), CancelRequestedAtClaim.INSTANCE,
                        expect(TaskStatus.COMPENSATING).keptLocked().at(1).attempt(1)
                                .events(COMPENSATING, COMPENSATION_STARTED).noStepRow()),
                row("a cancel seen at claim with nothing compensable ends the task CANCELLED without an alert",
                        processing(0).cancelRequested(), CancelRequestedAtClaim.INSTANCE,
                        expect(TaskStatus.CANCELLED).released().at(0).attempt(1).events(CANCELLED).noStepRow()),
                row("a cancel of a step whose request may still be applied releases the task COMPENSATING, due when it no longer can",
                        processing(1).attempt(2).cancelRequested(),
                        new CancelRequested(1, null, List.of(), "cancelled by an operator", NOW.plusSeconds(61)),
                        expect(TaskStatus.COMPENSATING).released().at(1).attempt(0).failures(0).due(NOW.plusSeconds(61))
                                .events(COMPENSATING).noStepRow()
                                .lastError("cancelled by an operator; step 'charge' may still be applied until "
                                        + NOW.plusSeconds(61))),
                row("a cancel of a step whose request can no longer be applied compensates it at once",
                        processing(1).attempt(2).cancelRequested(),
                        new CancelRequested(1, null, List.of(), "cancelled by an operator", NOW),
                        expect(TaskStatus.COMPENSATING).keptLocked().at(1).attempt(1)
                                .events(COMPENSATING, COMPENSATION_STARTED).noStepRow()),
                row("a request in doubt at a step without a compensation holds nothing back: the steps before it are compensated at once",
                        processing(2).attempt(2).cancelRequested(),
                        new CancelRequested(2, null, List.of(), "cancelled by an operator", NOW.plusSeconds(61)),
                        expect(TaskStatus.COMPENSATING).keptLocked().at(1).attempt(1)
                                .events(COMPENSATING, COMPENSATION_STARTED).noStepRow()),
                row("a cancel at a step that sent no request outside SAS compensates it at once",
                        processing(1).cancelRequested(), new RequestSent(),
                        expect(TaskStatus.COMPENSATING).keptLocked().at(1).attempt(1).failures(0)
                                .events(COMPENSATING, COMPENSATION_STARTED).noStepRow()
                                .lastError("cancelled by an operator")),
                row("a cancel reported by the store when recording a completion compensates the completed step",
                        processing(1).cancelRequested(),
                        new CancelRequested(1, StepUpdate.completed(1, "charge", 1, "charged", STARTED, NOW),
                                List.of(event(1, STEP_COMPLETED)), "cancelled by an operator"),
                        expect(TaskStatus.COMPENSATING).keptLocked().at(1).attempt(1)
                                .events(STEP_COMPLETED, COMPENSATING, COMPENSATION_STARTED)
                                .stepRow(StepStatus.COMPLETED)),

                // the agent's flow control held the call back
                row("a call held back by its agent's flow control waits until its retry time, giving the attempt back and keeping the time-outs",
                        processing(1).attempt(2).failures(1), heldBack(),
                        expect(TaskStatus.WAITING).released().at(1).attempt(1).failures(1).due(RETRY_AT)
                                .events(WAITING).noStepRow().lastError(HELD).yieldsToCancel()),
                row("a first attempt held back leaves no attempt counted",
                        processing(0), heldBack(),
                        expect(TaskStatus.WAITING).released().at(0).attempt(0).due(RETRY_AT).events(WAITING)
                                .noStepRow().lastError(HELD).yieldsToCancel()),
                row("a call held back after a cancel was seen waits without yielding to the cancel again",
                        processing(1).cancelRequested(), heldBack(),
                        expect(TaskStatus.WAITING).released().at(1).attempt(0).due(RETRY_AT).events(WAITING)
                                .noStepRow()),
                row("a compensation held back stays COMPENSATING until its retry time, spending no attempt",
                        compensating(1).attempt(2).failures(1), heldBack(),
                        expect(TaskStatus.COMPENSATING).released().at(1).attempt(1).failures(1).due(RETRY_AT)
                                .events(WAITING).noStepRow().lastError(HELD)),

                // a step that awaits a reply (awaitCompletion)
                row("a request sent makes the task await its reply, released, keeping attempts and time-outs, unless a cancel came first",
                        processing(1).attempt(2).failures(1), new RequestSent(),
                        expect(TaskStatus.AWAITING_COMPLETION).released().at(1).attempt(2).failures(1)
                                .events(COMPLETION_AWAITED).noStepRow().yieldsToCancel()),
                row("a request sent after a cancel was seen compensates its step once the request can no longer be applied",
                        processing(APPROVAL, 0).cancelRequested(), new RequestSent(),
                        expect(TaskStatus.COMPENSATING).released().at(0).attempt(0).failures(0)
                                .due(NOW.plus(Duration.ofMinutes(2)).plusSeconds(1)).events(COMPENSATING).noStepRow()
                                .lastError("cancelled by an operator; step 'approve' may still be applied until "
                                        + NOW.plus(Duration.ofMinutes(2)).plusSeconds(1))),
                row("a reply completing an awaiting middle step hands the next step to a scheduler, PENDING and due now",
                        awaiting(1), new CompletionReceived(completed("approved")),
                        expect(TaskStatus.PENDING).released().at(2).attempt(0).failures(0).due(NOW)
                                .events(COMPLETION_RECEIVED, STEP_COMPLETED).stepRow(StepStatus.COMPLETED).yieldsToCancel()),
                row("a reply completing the awaiting last step ends the task PROCESSED",
                        awaiting(3), new CompletionReceived(completed("approved")),
                        expect(TaskStatus.PROCESSED).released().at(3).attempt(1).failures(0)
                                .events(COMPLETION_RECEIVED, STEP_COMPLETED, PROCESSED).stepRow(StepStatus.COMPLETED)
                                .yieldsToCancel()),
                row("a reply reporting a retryable failure releases the task PENDING after the backoff",
                        awaiting(1), new CompletionReceived(failed(new IllegalStateException("mail bounced"))),
                        expect(TaskStatus.PENDING).released().at(1).attempt(1).failures(0).due(NOW.plus(BACKOFF))
                                .events(COMPLETION_RECEIVED, STEP_RETRYING).stepRow(StepStatus.PENDING)
                                .lastError("IllegalStateException: mail bounced").retry().yieldsToCancel()),
                row("a reply reporting a failure for good hands the compensation to a scheduler, COMPENSATING and due now",
                        awaiting(1), new CompletionReceived(failed(new NonRetryableException("rejected"))),
                        expect(TaskStatus.COMPENSATING).released().at(0).attempt(0).failures(0).due(NOW)
                                .events(COMPLETION_RECEIVED, STEP_FAILED, COMPENSATING).stepRow(StepStatus.FAILED)
                                .lastError("NonRetryableException: rejected").yieldsToCancel()),
                row("an awaiting step with no reply by its deadline is retried by the supervisor after the backoff",
                        new Task(ORDER, TaskStatus.AWAITING_COMPLETION, 1), timedOut(),
                        expect(TaskStatus.PENDING).released().expired().at(1).attempt(1).failures(1)
                                .due(NOW.plus(BACKOFF)).events(STEP_TIMED_OUT).noStepRow().retry()),

                // the workflow cannot run here
                row("a task whose workflow is not registered is parked in ERROR with an alert, counting the earlier attempts only",
                        processing(null, 1).attempt(2).failures(1), new NotRunnable("workflow 'order' is not registered"),
                        expect(TaskStatus.ERROR).released().at(1).attempt(1).failures(1).events(ERROR).noStepRow()
                                .alerts(TaskStatus.ERROR).lastError("workflow 'order' is not registered")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("decisions")
    void decides(String sentence, Task task, Object outcome, Expect expected) {
        Snapshot s = task.snapshot();
        Outcome o = outcome instanceof Outcome given ? given : CancelRequested.atClaim(s, null);

        Decision d = TaskStateMachine.decide(s, o, NOW);

        Transition t = d.transition();
        assertThat(t.taskId()).isEqualTo(ID);
        assertThat(t.lease()).isEqualTo(LEASE);
        assertThat(t.fromStep()).as("fromStep").isEqualTo(task.step);
        assertThat(t.guard()).as("guard").isEqualTo(expected.guard);
        assertThat(t.status()).as("status").isEqualTo(expected.status);
        assertThat(t.keepLock()).as("keepLock").isEqualTo(expected.keepLock);
        assertThat(t.currentStep()).as("currentStep").isEqualTo(expected.step);
        assertThat(t.attempt()).as("attempt").isEqualTo(expected.attempt);
        assertThat(t.failureCount()).as("failureCount").isEqualTo(expected.failures);
        assertThat(t.nextAttemptAt()).as("nextAttemptAt").isEqualTo(expected.due);
        assertThat(t.unlessCancelRequested()).as("unlessCancelRequested").isEqualTo(expected.yieldsToCancel);
        assertThat(d.ifCancelRequested() != null).as("decides again on a cancel").isEqualTo(expected.yieldsToCancel);
        assertThat(d.isRetry()).as("retry").isEqualTo(expected.retry);
        assertThat(t.events()).extracting(TaskEvent::type).as("events").containsExactlyElementsOf(expected.events);
        assertThat(t.events()).allSatisfy(e -> {
            assertThat(e.taskId()).isEqualTo(ID);
            assertThat(e.at()).isEqualTo(NOW);
        });
        assertThat(d.alerts()).extracting(Alert::status).as("alerts").containsExactlyElementsOf(expected.alerts);
        if (expected.stepRow == null) {
            assertThat(t.step()).as("step row").isNull();
        } else {
            assertThat(t.step()).as("step row").isNotNull();
            assertThat(t.step().compensation()).as("compensation row").isEqualTo(expected.compensationRow);
            assertThat(expected.compensationRow ? t.step().compensationStatus() : t.step().status())
                    .as("step row status").isEqualTo(expected.stepRow);
        }
        if (expected.lastError != null) {
            assertThat(t.lastError()).as("lastError").isEqualTo(expected.lastError);
        }
        if (task.workflow != null && !t.status().isTerminal()) {
            assertThat(t.currentStepName()).isEqualTo(task.workflow.steps().get(t.currentStep()).name());
            assertThat(t.stepTimeout()).isEqualTo(task.workflow.steps().get(t.currentStep()).completeWithin());
        }
    }

    // ------------------------------------------------------------------ single rules

    @Nested
    class Details {
        @Test
        void a_call_held_back_that_meets_a_cancel_compensates_from_where_a_claim_would() {
            Snapshot retried = processing(1).attempt(2).snapshot();
            Decision d = TaskStateMachine.decide(retried, heldBack(), NOW);
            Decision onCancel = TaskStateMachine.decide(cancelled(retried), d.ifCancelRequested(), NOW);
            assertThat(onCancel.transition().status()).isEqualTo(TaskStatus.COMPENSATING);
            assertThat(onCancel.transition().currentStep()).as("an earlier attempt at charge may have applied").isEqualTo(1);

            Snapshot first = processing(1).snapshot();
            Decision d1 = TaskStateMachine.decide(first, heldBack(), NOW);
            Decision onCancel1 = TaskStateMachine.decide(cancelled(first), d1.ifCancelRequested(), NOW);
            assertThat(onCancel1.transition().currentStep()).as("charge was never called").isZero();
        }

        @Test
        void the_waiting_event_carries_the_reason_and_the_claims_attempt() {
            Transition t = TaskStateMachine.decide(processing(1).attempt(2).snapshot(), heldBack(), NOW).transition();
            assertThat(t.events()).singleElement().satisfies(e -> {
                assertThat(e.message()).isEqualTo(HELD);
                assertThat(e.attempt()).isEqualTo(2);
                assertThat(e.stepName()).isEqualTo("charge");
            });
        }
        @Test
        void a_retry_of_a_task_that_may_be_cancelled_yields_to_the_cancel_and_compensates_the_failed_step() {
            Snapshot s = processing(1).snapshot();
            Decision retry = TaskStateMachine.decide(s, failed(new IllegalStateException("boom")), NOW);

            Decision onCancel = TaskStateMachine.decide(cancelled(s), retry.ifCancelRequested(), NOW);

            assertThat(onCancel.transition().status()).isEqualTo(TaskStatus.COMPENSATING);
            assertThat(onCancel.transition().currentStep()).isEqualTo(1);
            assertThat(onCancel.transition().step().status()).isEqualTo(StepStatus.PENDING);
            assertThat(onCancel.transition().unlessCancelRequested()).isFalse();
            assertThat(onCancel.ifCancelRequested()).isNull();
        }

        @Test
        void a_failed_send_that_meets_a_cancel_compensates_once_its_request_can_no_longer_be_applied() {
            Snapshot s = processing(APPROVAL, 0).snapshot();
            Decision retry = TaskStateMachine.decide(s, failed(new IllegalStateException("confirm timed out")), NOW);

            Decision onCancel = TaskStateMachine.decide(cancelled(s), retry.ifCancelRequested(), NOW);

            assertThat(onCancel.transition().status()).isEqualTo(TaskStatus.COMPENSATING);
            assertThat(onCancel.transition().keepLock()).isFalse();
            assertThat(onCancel.transition().nextAttemptAt()).isEqualTo(APPROVAL_IN_DOUBT);
            Decision later = TaskStateMachine.decide(cancelled(s), retry.ifCancelRequested(), APPROVAL_IN_DOUBT);
            assertThat(later.transition().keepLock()).as("compensates in this claim once it has passed").isTrue();
            Decision answered = TaskStateMachine.decide(s, failed(new WaitDecisions.FailedReply("declined")), NOW);
            assertThat(TaskStateMachine.decide(cancelled(s), answered.ifCancelRequested(), NOW).transition().keepLock())
                    .as("a failure reply leaves nothing in doubt").isTrue();
        }

        @Test
        void a_failure_for_good_that_meets_a_cancel_ends_cancelled_not_in_error_and_without_an_alert() {
            Snapshot s = processing(0).snapshot();
            Decision error = TaskStateMachine.decide(s, failed(new NonRetryableException("no")), NOW);

            Decision onCancel = TaskStateMachine.decide(cancelled(s), error.ifCancelRequested(), NOW);

            assertThat(error.transition().status()).isEqualTo(TaskStatus.ERROR);
            assertThat(onCancel.transition().status()).isEqualTo(TaskStatus.CANCELLED);
            assertThat(onCancel.transition().events()).extracting(TaskEvent::type).containsExactly(STEP_FAILED, CANCELLED);
            assertThat(onCancel.alerts()).isEmpty();
        }

        @Test
        void a_time_out_that_would_end_in_error_yields_to_a_cancel_and_is_decided_again_compensating_the_step() {
            Snapshot s = processing(NO_COMPENSATION, 1).failures(2).snapshot();
            Decision error = TaskStateMachine.decide(s, timedOut(), NOW);

            Decision onCancel = TaskStateMachine.decide(s.withCancelRequested(), error.ifCancelRequested(), NOW);

            assertThat(error.transition().status()).isEqualTo(TaskStatus.ERROR);
            assertThat(error.transition().unlessCancelRequested()).isTrue();
            Transition t = onCancel.transition();
            assertThat(t.guard()).isEqualTo(Transition.Guard.EXPIRED);
            assertThat(t.lease()).isEqualTo(LEASE);
            assertThat(t.status()).isEqualTo(TaskStatus.COMPENSATING);
            assertThat(t.currentStep()).as("the timed-out step may have applied").isEqualTo(1);
            assertThat(t.keepLock()).isFalse();
            assertThat(t.unlessCancelRequested()).isFalse();
            assertThat(onCancel.ifCancelRequested()).isNull();
            assertThat(onCancel.alerts()).isEmpty();
        }

        @Test
        void a_time_out_that_meets_a_cancel_with_nothing_compensable_ends_cancelled_without_an_alert() {
            Snapshot s = processing(PLAIN, 0).failures(2).snapshot();
            Decision error = TaskStateMachine.decide(s, timedOut(), NOW);

            Decision onCancel = TaskStateMachine.decide(s.withCancelRequested(), error.ifCancelRequested(), NOW);

            assertThat(onCancel.transition().status()).isEqualTo(TaskStatus.CANCELLED);
            assertThat(onCancel.transition().events()).extracting(TaskEvent::type)
                    .containsExactly(STEP_TIMED_OUT, STEP_FAILED, CANCELLED);
            assertThat(onCancel.alerts()).isEmpty();
        }

        @Test
        void a_time_out_of_a_workflow_this_runtime_does_not_know_is_not_bounded_by_attempts() {
            Decision d = TaskStateMachine.decide(processing(null, 1).attempt(7).snapshot(), timedOut(), NOW);

            assertThat(d.transition().status()).isEqualTo(TaskStatus.PENDING);
            assertThat(d.isRetry()).isTrue();
            assertThat(d.transition().lastError()).endsWith("(time-out 1 of " + StepBuilder.DEFAULT_MAX_TIMEOUTS + ")");
        }

        @Test
        void the_last_step_completing_after_a_cancel_is_compensated_with_its_result_recorded() {
            Snapshot s = processing(3).snapshot();
            Decision processed = TaskStateMachine.decide(s, completed("shipped"), NOW);

            Decision onCancel = TaskStateMachine.decide(cancelled(s), processed.ifCancelRequested(), NOW);

            Transition t = onCancel.transition();
            assertThat(t.status()).isEqualTo(TaskStatus.COMPENSATING);
            assertThat(t.currentStep()).as("the last compensable step").isEqualTo(1);
            assertThat(t.step()).isEqualTo(StepUpdate.completed(3, "ship", 1, "shipped", STARTED, NOW));
            assertThat(t.events()).extracting(TaskEvent::type)
                    .containsExactly(STEP_COMPLETED, COMPENSATING, COMPENSATION_STARTED);
        }

        @Test
        void the_last_compensation_completing_after_a_cancel_ends_cancelled() {
            Snapshot s = compensating(0).snapshot();
            Decision compensated = TaskStateMachine.decide(s, compensationCompleted(), NOW);

            Decision onCancel = TaskStateMachine.decide(cancelled(s), compensated.ifCancelRequested(), NOW);

            Transition t = onCancel.transition();
            assertThat(t.status()).isEqualTo(TaskStatus.CANCELLED);
            assertThat(t.step().compensationStatus()).isEqualTo(StepStatus.COMPENSATED);
            assertThat(t.events()).extracting(TaskEvent::type).containsExactly(COMPENSATION_COMPLETED, CANCELLED);
            assertThat(onCancel.alerts()).isEmpty();
        }

        @Test
        void the_error_alert_names_the_failed_step_and_its_message() {
            Decision d = TaskStateMachine.decide(processing(0).snapshot(), failed(new NonRetryableException("no stock")),
                    NOW);

            assertThat(d.alerts()).singleElement().satisfies(a -> {
                assertThat(a.stepName()).isEqualTo("reserve");
                assertThat(a.message()).isEqualTo("NonRetryableException: no stock");
                assertThat(a.workflow()).isEqualTo("order");
                assertThat(a.at()).isEqualTo(NOW);
            });
        }

        @Test
        void a_completed_step_row_carries_its_output_attempts_and_times() {
            Decision d = TaskStateMachine.decide(processing(1).attempt(2).snapshot(), completed("charged"), NOW);

            assertThat(d.transition().step()).isEqualTo(StepUpdate.completed(1, "charge", 2, "charged", STARTED, NOW));
        }

        @Test
        void a_time_out_message_says_which_step_attempt_deadline_and_instance() {
            Decision d = TaskStateMachine.decide(processing(1).attempt(2).snapshot(), timedOut(), NOW);

            assertThat(d.transition().lastError()).isEqualTo("step 'charge' attempt 2 passed its deadline " + EXPIRED_AT
                    + " on instance node-b (time-out 1 of 3, attempt 2 of 3)");
        }

        @Test
        void a_parked_task_records_no_step_name_and_the_default_deadline() {
            Decision d = TaskStateMachine.decide(processing(null, 5).snapshot(), new NotRunnable("step 5 of 4"), NOW);

            assertThat(d.transition().currentStepName()).isNull();
            assertThat(d.transition().stepTimeout()).isEqualTo(TaskStateMachine.UNKNOWN_STEP_TIMEOUT);
            assertThat(d.alerts()).singleElement().satisfies(a -> assertThat(a.stepName()).isNull());
        }

        @Test
        void a_task_parked_by_a_runtime_that_knows_its_step_keeps_the_steps_name_and_deadline_for_a_resubmit() {
            Decision d = TaskStateMachine.decide(processing(1).snapshot(), new NotRunnable("input cannot be decoded"),
                    NOW);

            assertThat(d.transition().status()).isEqualTo(TaskStatus.ERROR);
            assertThat(d.transition().currentStepName()).isEqualTo("charge");
            assertThat(d.transition().stepTimeout()).isEqualTo(Duration.ofMinutes(2));
        }

        @Test
        void a_long_error_message_is_cut_at_two_thousand_characters() {
            String described = TaskStateMachine.describe(new IllegalStateException("x".repeat(5000)));

            assertThat(described).startsWith("IllegalStateException: xxx").hasSize(2001).endsWith("…");
        }
    }

    @Nested
    class TransitionFactories {
        @Test
        void end_refuses_a_state_that_is_not_terminal() {
            assertThatThrownBy(() -> Transition.holder(ID, LEASE, TaskStatus.PROCESSING, 0).at(0, "a", Duration.ofSeconds(1))
                    .end(TaskStatus.PENDING))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PENDING");
        }

        @Test
        void release_refuses_a_terminal_state() {
            assertThatThrownBy(() -> Transition.holder(ID, LEASE, TaskStatus.PROCESSING, 0).at(0, "a", Duration.ofSeconds(1))
                    .release(TaskStatus.ERROR, NOW))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ERROR");
        }

        @Test
        void keep_holding_refuses_a_terminal_state() {
            assertThatThrownBy(() -> Transition.holder(ID, LEASE, TaskStatus.PROCESSING, 0).at(0, "a", Duration.ofSeconds(1))
                    .keepHolding(TaskStatus.PROCESSED))
                    .isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void a_builder_names_what_the_positional_constructor_took() {
            Transition built = Transition.expired(ID, LEASE, TaskStatus.PROCESSING, 2).unlessCancelRequested()
                    .at(3, "ship", BACKOFF).attempt(2).failureCount(1).lastError("late").events(event(2, STEP_TIMED_OUT))
                    .release(TaskStatus.PENDING, NOW);

            assertThat(built).isEqualTo(new Transition(ID, LEASE, TaskStatus.PROCESSING, 2, Transition.Guard.EXPIRED,
                    true, TaskStatus.PENDING, false, 3, "ship", 2, 1, BACKOFF, NOW, "late", null,
                    List.of(event(2, STEP_TIMED_OUT)), built.id(), null));
            assertThat(built.id()).isNotZero();
        }

        @Test
        void every_built_transition_has_its_own_id_so_a_replay_is_told_from_a_recomputation() {
            Transition.Builder b = Transition.holder(ID, LEASE, TaskStatus.PROCESSING, 0).at(0, "a", BACKOFF);
            Transition first = b.end(TaskStatus.PROCESSED);
            Transition second = b.end(TaskStatus.PROCESSED);

            assertThat(first.id()).isNotEqualTo(second.id());
            Transition secondWithFirstId = new Transition(second.taskId(), second.lease(), second.fromStatus(),
                    second.fromStep(), second.guard(), second.unlessCancelRequested(), second.status(),
                    second.keepLock(), second.currentStep(), second.currentStepName(), second.attempt(),
                    second.failureCount(), second.stepTimeout(), second.nextAttemptAt(), second.lastError(),
                    second.step(), second.events(), first.id(), second.statusChannel());
            assertThat(secondWithFirstId).isEqualTo(first);
        }

        @Test
        void a_transition_names_a_claimed_state_and_a_real_id() {
            assertThatThrownBy(() -> new Transition(ID, LEASE, TaskStatus.PENDING, 0, Transition.Guard.HOLDER, false,
                    TaskStatus.PROCESSED, false, 0, "a", 1, 0, BACKOFF, null, null, null, List.of(), 7, null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fromStatus")
                    .hasMessageContaining("PENDING");
            assertThatThrownBy(() -> new Transition(ID, LEASE, TaskStatus.PROCESSING, 0, Transition.Guard.HOLDER,
                    false, TaskStatus.PROCESSED, false, 0, "a", 1, 0, BACKOFF, null, null, null, List.of(), 0, null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("id must not be 0");
        }
    }

    @Nested
    class RecorderResults {
        @ParameterizedTest(name = "the store's {0} is the recorder's result of the same name")
        @EnumSource(value = WriteOutcome.Kind.class, names = {"APPLIED_ALREADY", "BUSY"}, mode = EnumSource.Mode.EXCLUDE)
        void every_store_outcome_maps_to_a_recorder_result(WriteOutcome.Kind kind) {
            WriteOutcome outcome = kind == WriteOutcome.Kind.REFUSED ? WriteOutcome.refused("too long")
                    : List.of(WriteOutcome.APPLIED, WriteOutcome.STALE, WriteOutcome.CANCEL_REQUESTED).stream()
                            .filter(o -> o.kind() == kind).findFirst().orElseThrow();
            assertThat(Recorder.Result.of(outcome).name()).isEqualTo(kind.name());
        }

        @Test
        void a_replay_recognised_as_applied_is_applied_for_the_recorder() {
            assertThat(Recorder.Result.of(WriteOutcome.APPLIED_ALREADY)).isEqualTo(Recorder.Result.APPLIED);
            assertThat(WriteOutcome.APPLIED_ALREADY.isApplied()).isTrue();
            assertThat(WriteOutcome.refused("x").isApplied()).isFalse();
            assertThat(WriteOutcome.refused("x")).isEqualTo(WriteOutcome.refused("x")).hasToString("REFUSED(x)");
        }

        @Test
        void a_busy_row_is_not_written_for_the_recorder() {
            assertThat(Recorder.Result.of(WriteOutcome.BUSY)).isEqualTo(Recorder.Result.NOT_WRITTEN);
            assertThat(WriteOutcome.BUSY.isApplied()).isFalse();
        }
    }

    // ------------------------------------------------------------------ fixtures

    private static Arguments row(String sentence, Task task, Object outcome, Expect expected) {
        return Arguments.of(sentence, task, outcome, expected);
    }

    private static Task processing(int step) {
        return processing(ORDER, step);
    }

    private static Task processing(Workflow<String> workflow, int step) {
        return new Task(workflow, TaskStatus.PROCESSING, step);
    }

    /** A task awaiting a reply, as a reply's store read shows it: nobody holds it. */
    private static Task awaiting(int step) {
        return new Task(ORDER, TaskStatus.AWAITING_COMPLETION, step).shuttingDown();
    }

    private static Task compensating(int step) {
        return new Task(ORDER, TaskStatus.COMPENSATING, step);
    }

    private static Snapshot cancelled(Snapshot s) {
        return s.withCancelRequested();
    }

    private static Outcome completed(String output) {
        return new StepCompleted(output, STARTED);
    }

    private static Outcome failed(Throwable error) {
        return new StepFailed(error, STARTED);
    }

    private static Outcome compensationCompleted() {
        return new CompensationCompleted(STARTED);
    }

    private static Outcome compensationFailed(Throwable error) {
        return new CompensationFailed(error, STARTED);
    }

    private static Outcome heldBack() {
        return new HeldBack(HELD, RETRY_AT);
    }

    private static Outcome timedOut() {
        return new TimedOut("node-b", EXPIRED_AT);
    }

    private static TaskEvent event(int step, TaskEvent.Type type) {
        return new TaskEvent(ID, "order-42", "order", type, step, ORDER.steps().get(step).name(), 1, NOW, null);
    }

    private static Expect expect(TaskStatus status) {
        return new Expect(status);
    }

    /** Stands for {@link CancelRequested#atClaim}, which needs the snapshot the row builds. */
    private enum CancelRequestedAtClaim {
        INSTANCE
    }

    /** The task before the outcome (not thread-safe; one per row). */
    static final class Task {
        final Workflow<String> workflow;
        final TaskStatus status;
        final int step;
        int attempt = 1;
        int failures;
        boolean cancelRequested;
        boolean shuttingDown;

        Task(Workflow<String> workflow, TaskStatus status, int step) {
            this.workflow = workflow;
            this.status = status;
            this.step = step;
        }

        Task attempt(int n) {
            attempt = n;
            return this;
        }

        Task failures(int n) {
            failures = n;
            return this;
        }

        Task cancelRequested() {
            cancelRequested = true;
            return this;
        }

        Task shuttingDown() {
            shuttingDown = true;
            return this;
        }

        Snapshot snapshot() {
            return new Snapshot(ID, "order-42", "order", workflow, LEASE, status, step, attempt, failures,
                    cancelRequested, shuttingDown, java.util.Set.of());
        }

        @Override
        public String toString() {
            return status + " at step " + step + " attempt " + attempt;
        }
    }

    /** The decision a row expects (not thread-safe; one per row). */
    static final class Expect {
        final TaskStatus status;
        Transition.Guard guard = Transition.Guard.HOLDER;
        boolean keepLock;
        int step;
        int attempt;
        int failures;
        Instant due;
        boolean yieldsToCancel;
        boolean retry;
        List<TaskEvent.Type> events = List.of();
        List<TaskStatus> alerts = List.of();
        StepStatus stepRow;
        boolean compensationRow;
        String lastError;

        Expect(TaskStatus status) {
            this.status = status;
        }

        Expect keptLocked() {
            keepLock = true;
            return this;
        }

        Expect released() {
            keepLock = false;
            return this;
        }

        Expect expired() {
            guard = Transition.Guard.EXPIRED;
            return this;
        }

        Expect at(int n) {
            step = n;
            return this;
        }

        Expect attempt(int n) {
            attempt = n;
            return this;
        }

        Expect failures(int n) {
            failures = n;
            return this;
        }

        Expect due(Instant at) {
            due = at;
            return this;
        }

        Expect yieldsToCancel() {
            yieldsToCancel = true;
            return this;
        }

        Expect retry() {
            retry = true;
            return this;
        }

        Expect events(TaskEvent.Type... types) {
            events = Arrays.asList(types);
            return this;
        }

        Expect alerts(TaskStatus... statuses) {
            alerts = Arrays.asList(statuses);
            return this;
        }

        Expect stepRow(StepStatus s) {
            stepRow = s;
            compensationRow = false;
            return this;
        }

        Expect compensationRow(StepStatus s) {
            stepRow = s;
            compensationRow = true;
            return this;
        }

        Expect noStepRow() {
            stepRow = null;
            return this;
        }

        Expect lastError(String message) {
            lastError = message;
            return this;
        }

        @Override
        public String toString() {
            return status.toString();
        }
    }
}
