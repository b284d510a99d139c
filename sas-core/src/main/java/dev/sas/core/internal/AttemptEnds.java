package dev.sas.core.internal;

import dev.sas.core.NonRetryableException;
import dev.sas.core.internal.TaskStateMachine.CompensationCompleted;
import dev.sas.core.internal.TaskStateMachine.CompensationFailed;
import dev.sas.core.internal.TaskStateMachine.Decision;
import dev.sas.core.internal.TaskStateMachine.HeldBack;
import dev.sas.core.internal.TaskStateMachine.Outcome;
import dev.sas.core.internal.TaskStateMachine.StepCompleted;
import dev.sas.core.internal.TaskStateMachine.StepFailed;
import dev.sas.core.internal.TaskStateMachine.UnstorableResultException;
import dev.sas.core.spi.StorableText;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How an {@link Attempt} of the {@link AttemptRunner} ends, once ({@link Attempt#finish()}): by its
 * deadline (the step thread is interrupted, the task left to the supervisor), or by its result,
 * which becomes an {@link Outcome} for the {@link TaskStateMachine} and is carried out by the
 * {@link DecisionWriter}. Thread-safe. Logs under the runner's name.
 */
final class AttemptEnds {
    private static final Logger log = LoggerFactory.getLogger(AttemptRunner.class);

    private final Clock clock;
    private final Metrics metrics;
    private final PayloadLimit payloadLimit;
    private final ClaimLoop loop;
    private final AgentGates gates;
    private final Admission admission;
    private final DecisionWriter writer;
    private final BooleanSupplier abandoning;

    private volatile ScheduledExecutorService timer;

    AttemptEnds(Clock clock, Metrics metrics, int maxPayloadBytes, ClaimLoop loop, AgentGates gates,
            Admission admission, DecisionWriter writer, BooleanSupplier abandoning) {
        this.clock = clock;
        this.metrics = metrics;
        this.payloadLimit = new PayloadLimit(maxPayloadBytes);
        this.loop = loop;
        this.gates = gates;
        this.admission = admission;
        this.writer = writer;
        this.abandoning = abandoning;
    }

    /** Deadlines are enforced on {@code timer} from now on; without one, only the store rejects late results. */
    void start(ScheduledExecutorService timer) {
        this.timer = timer;
    }

    // ------------------------------------------------------------------ deadline

    void scheduleDeadline(Attempt a, Duration delay) {
        ScheduledExecutorService t = timer;
        if (t == null) {
            return;
        }
        try {
            a.timer = t.schedule(() -> {
                try {
                    onDeadline(a);
                } catch (Throwable e) {
                    // a scheduled task that throws is dropped silently by the executor: say so
                    metrics.internalErrors.increment();
                    log.error("{}: internal error at its deadline; the supervisor will recover it", a, e);
                }
            }, Math.max(1, delay.toMillis()), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException shuttingDown) {
            // no deadline enforcement during shutdown; the store still rejects a late result
        }
    }

    private void onDeadline(Attempt a) {
        TaskLog.run(a.taskId(), a.workflow(), a.stepIndex(), a.attempt(), () -> deadline(a));
    }

    private void deadline(Attempt a) {
        Duration left = Duration.between(clock.instant(), a.completeBy);
        if (!left.isNegative() && !left.isZero()) {
            scheduleDeadline(a, left);
            return;
        }
        if (!a.finish()) {
            return;
        }
        if (a.ticket != null) {
            admission.abandon(a.ticket); // an agent call still waiting for a thread is not made
        }
        endTrace(a, new java.util.concurrent.TimeoutException("no result by its deadline " + a.completeBy));
        metrics.deadlinesMissed.increment();
        log.warn("{}: no result by its deadline {}; left to the supervisor", a, a.completeBy);
        if (a.call != null) {
            gates.timedOut(a.call);
        }
        // The agent's future is not cancelled: its late reply must still arrive, to be rejected and counted.
        synchronized (a) {
            Thread th = a.thread;
            if (th != null) {
                th.interrupt();
            }
        }
        loop.release();
    }

    /** An agent call the store answered stale for before it started: not made, the task let go. */
    void notStarted(Attempt a) {
        if (a.timer != null) {
            a.timer.cancel(false);
        }
        if (a.call != null) {
            gates.notMade(a.call);
        }
        endTrace(a, null);
        loop.release();
    }

    static void endTrace(Attempt a, Throwable error) {
        try {
            a.trace.end(error);
        } catch (Throwable e) {
            log.warn("{}: ending its trace failed ({})", a, e.toString());
        }
    }

    // ------------------------------------------------------------------ result

    void onResult(Attempt a, String output, Throwable error) {
        TaskLog.run(a.taskId(), a.workflow(), a.stepIndex(), a.attempt(), () -> {
            FlowPolicy.Completion gate = null;
            if (a.call != null) {
                gate = gates.complete(a.call, error == null ? null : unwrap(error),
                        a.run.workflow.steps().get(a.step).retryPolicy(a.compensating));
            }
            result(a, output, error, gate);
        });
    }

    /** @param gate what the call's outcome did to its endpoint's breaker, or null for a call not gated */
    private void result(Attempt a, String output, Throwable error, FlowPolicy.Completion gate) {
        if (!a.finish()) {
            metrics.staleRejected.increment();
            log.warn("{}: {} arrived after its deadline {} and was rejected", a,
                    error == null ? "a reply" : "a failure (" + TaskStateMachine.describe(unwrap(error)) + ")",
                    a.completeBy);
            return;
        }
        if (a.timer != null) {
            a.timer.cancel(false);
        }
        if (a.ticket != null) {
            admission.abandon(a.ticket); // a call that failed before an agent thread took it
        }
        Instant now = clock.instant(); // one read for the run's length and the deadline check
        admission.ran(Duration.between(a.startedAt, now).toNanos());
        endTrace(a, error == null ? null : unwrap(error));
        if (abandoning.getAsBoolean()) {
            log.info("{}: finished during shutdown after the grace period; not recorded, left to the supervisor", a);
            loop.release();
            return;
        }
        if (now.isAfter(a.completeBy)) {
            metrics.staleRejected.increment();
            log.warn("{}: result arrived at {}, after its deadline {}, and was rejected; the supervisor will recover it",
                    a, now, a.completeBy);
            loop.release();
            return;
        }
        try {
            Outcome outcome = outcome(a, output, error, gate);
            if (outcome instanceof StepCompleted) {
                // Later steps (and compensations after a cancel) of this claim read it.
                a.run.setOutput(a.step, output);
            }
            Decision d = TaskStateMachine.decide(writer.snapshot(a.run), outcome, now);
            logFailure(a, outcome, d);
            writer.carryOut(a.run, d, outcome instanceof StepCompleted);
        } catch (Throwable e) {
            metrics.internalErrors.increment();
            log.error("{}: internal error while recording its result; the supervisor will recover it", a, e);
            loop.release();
        }
    }

    private Outcome outcome(Attempt a, String output, Throwable error, FlowPolicy.Completion gate) {
        Throwable failure = null;
        if (error != null) {
            failure = unwrap(error);
            boolean refused = a.run.workflow.steps().get(a.step).retryPolicy(a.compensating).isNonRetryable(failure);
            if (gate != null && gate.holdsBack() && !refused) {
                // the endpoint's breaker is open (or this was a probe that failed): the failure is the
                // endpoint's, so the task waits for it like the calls held back, spending no attempt
                metrics.heldBack.increment();
                log.info("{} failed ({}) while {}", a, TaskStateMachine.describe(failure), gate.message());
                return new HeldBack(gate.message() + "; this call failed with " + TaskStateMachine.describe(failure),
                        gate.retryAt());
            }
        } else {
            int bytes = payloadLimit.excess(output);
            String unstorable = StorableText.problem("output of step '" + a.stepName + "'", output);
            if (bytes >= 0) {
                failure = new NonRetryableException(payloadLimit.message("output of step '" + a.stepName + "'", bytes));
            } else if (unstorable != null) {
                failure = new UnstorableResultException(unstorable + ", which no database can store; have the"
                        + " step's codec escape or encode it (JSON, base64)");
            }
        }
        if (failure != null) {
            return a.compensating ? new CompensationFailed(failure, a.startedAt) : new StepFailed(failure, a.startedAt);
        }
        return a.compensating ? new CompensationCompleted(a.startedAt) : new StepCompleted(output, a.startedAt);
    }

    private static void logFailure(Attempt a, Outcome outcome, Decision d) {
        String message = d.transition().lastError();
        if (d.isRetry()) {
            log.info("{} failed ({}); retry at {}", a, message, d.retryAt());
        } else if (outcome instanceof StepFailed || outcome instanceof CompensationFailed) {
            log.warn("{} failed for good ({})", a, message);
        }
    }

    static Throwable unwrap(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
