package dev.sas.core.internal;

import dev.sas.core.StepDefinition;
import dev.sas.core.internal.TaskStateMachine.Decision;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link AttemptRunner}'s part for a step that awaits its completion: sends the step's request
 * with a signed token on the step thread, then makes the task await its completion in one
 * transition (or applies a completion that arrived while the request was being sent). Thread-safe.
 * Logs under the runner's name.
 */
final class AwaitingSteps {
    private static final Logger log = LoggerFactory.getLogger(AttemptRunner.class);

    private final Clock clock;
    private final Recorder recorder;
    private final EventBus events;
    private final Metrics metrics;
    private final ClaimLoop loop;
    private final DecisionWriter writer;
    private final AttemptEnds ends;
    private final BooleanSupplier abandoning;

    private volatile CompletionTokens completionTokens = CompletionTokens.NONE;
    private volatile dev.sas.core.SasClient childClient;

    AwaitingSteps(Clock clock, Recorder recorder, EventBus events, Metrics metrics, ClaimLoop loop,
            DecisionWriter writer, AttemptEnds ends, BooleanSupplier abandoning) {
        this.clock = clock;
        this.recorder = recorder;
        this.events = events;
        this.metrics = metrics;
        this.loop = loop;
        this.writer = writer;
        this.ends = ends;
        this.abandoning = abandoning;
    }

    void completionTokens(CompletionTokens tokens) {
        this.completionTokens = tokens;
    }

    /** The client through which child task steps start their child (the runtime's own). */
    void childClient(dev.sas.core.SasClient client) {
        this.childClient = client;
    }

    /**
     * Sends an awaiting step's request on this step thread. A failure to send is a failed attempt,
     * recorded like any step's; once sent, the task is handed to the store to await its reply.
     */
    void sendRequest(Attempt a, StepDefinition<Object> def) {
        Throwable failure = null;
        a.thread = Thread.currentThread();
        try {
            // a child task step sends no request: it starts (or finds) its child, and the child's end completes it
            String token = def.startsChildTask() ? null
                    : completionTokens.issue(new CompletionToken(a.run.taskId, a.step, a.run.lease));
            a.trace.run(() -> {
                try {
                    if (token == null) {
                        def.startChild(a, childClient);
                    } else {
                        def.sendRequest(a, token);
                    }
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            });
        } catch (Throwable e) {
            failure = e;
        } finally {
            synchronized (a) {
                a.thread = null;
            }
            if (a.isFinished()) {
                Thread.interrupted(); // the deadline's interrupt was for the step, not for this pool thread
            }
        }
        if (failure != null) {
            ends.onResult(a, null, failure);
        } else {
            requestSent(a);
        }
    }

    /** The request went out: one transition makes the task await its reply (or applies a reply kept meanwhile). */
    private void requestSent(Attempt a) {
        if (!a.finish()) {
            metrics.staleRejected.increment();
            log.warn("{}: its request was sent after its deadline {}; the supervisor will recover it", a, a.completeBy);
            return;
        }
        if (a.timer != null) {
            a.timer.cancel(false);
        }
        AttemptEnds.endTrace(a, null);
        TaskRun run = a.run;
        if (abandoning.getAsBoolean()) {
            log.info("{}: request sent during shutdown after the grace period; not recorded, left to the supervisor", a);
            loop.release();
            return;
        }
        Instant now = clock.instant();
        try {
            Decision d = TaskStateMachine.decide(writer.snapshot(run), new TaskStateMachine.RequestSent(), now);
            AtomicReference<Decision> replied = new AtomicReference<>();
            dev.sas.core.spi.AwaitWrite w = recorder.awaitCompletion(d.transition().withStatusChannel(run.statusChannel), reply -> {
                Decision rd = TaskStateMachine.decide(writer.snapshot(run),
                        TaskStateMachine.CompletionReceived.of(reply, a.startedAt), now);
                replied.set(rd);
                return rd.transition().withStatusChannel(run.statusChannel);
            }, now);
            Recorder.Result result = Recorder.Result.of(w.outcome());
            if (w.completion() == null) {
                awaiting(a, d, result, w.outcome().reason());
                return;
            }
            // a reply arrived while the request was being sent: it was applied instead
            Decision rd = replied.get();
            boolean completed = w.completion().kind() == dev.sas.core.spi.StepCompletion.Kind.COMPLETED;
            log.info("{}: its completion arrived while the request was being sent; {}", a,
                    completed ? "the step completed" : "the attempt failed");
            if (result == Recorder.Result.APPLIED) {
                if (completed) {
                    run.setOutput(a.step, w.completion().payload());
                }
                writer.applied(run, rd, completed, now);
            } else if (result == Recorder.Result.CANCEL_REQUESTED && rd.ifCancelRequested() != null) {
                run.cancelRequested = true;
                writer.carryOut(run, TaskStateMachine.decide(writer.snapshot(run), rd.ifCancelRequested(),
                        clock.instant()), false);
            } else {
                writer.notRecorded(run.taskId, run.currentStep, result, w.outcome().reason());
                loop.release();
            }
        } catch (dev.sas.core.StateStoreException e) {
            metrics.storeFailures.increment();
            log.warn("{}: could not record that its request was sent ({}); the supervisor will recover it at its"
                    + " deadline {} and send it again", a, e.getMessage(), a.completeBy);
            loop.release();
        } catch (Throwable e) {
            metrics.internalErrors.increment();
            log.error("{}: internal error after sending its request; the supervisor will recover it", a, e);
            loop.release();
        }
    }

    private void awaiting(Attempt a, Decision d, Recorder.Result result, String refusal) {
        TaskRun run = a.run;
        if (result == Recorder.Result.APPLIED) {
            log.debug("{}: request sent; awaiting its completion until {}", a, a.completeBy);
            events.publish(d.transition().events(), run.statusChannel);
            loop.release();
        } else if (result == Recorder.Result.CANCEL_REQUESTED && d.ifCancelRequested() != null) {
            run.cancelRequested = true;
            writer.carryOut(run, TaskStateMachine.decide(writer.snapshot(run), d.ifCancelRequested(), clock.instant()),
                    false);
        } else {
            writer.notRecorded(run.taskId, run.currentStep, result, refusal);
            loop.release();
        }
    }
}
