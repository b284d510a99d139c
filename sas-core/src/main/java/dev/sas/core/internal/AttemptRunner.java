package dev.sas.core.internal;

import dev.sas.core.Agent;
import dev.sas.core.Alert;
import dev.sas.core.FlowControl;
import dev.sas.core.NonRetryableException;
import dev.sas.core.StepDefinition;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import dev.sas.core.Tracing;
import dev.sas.core.Workflow;
import dev.sas.core.internal.TaskStateMachine.CancelRequested;
import dev.sas.core.internal.TaskStateMachine.CompensationCompleted;
import dev.sas.core.internal.TaskStateMachine.CompensationFailed;
import dev.sas.core.internal.TaskStateMachine.Decision;
import dev.sas.core.internal.TaskStateMachine.HeldBack;
import dev.sas.core.internal.TaskStateMachine.NotRunnable;
import dev.sas.core.internal.TaskStateMachine.Outcome;
import dev.sas.core.internal.TaskStateMachine.Snapshot;
import dev.sas.core.internal.TaskStateMachine.StepCompleted;
import dev.sas.core.internal.TaskStateMachine.StepFailed;
import dev.sas.core.internal.TaskStateMachine.UnstorableResultException;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.StorableText;
import dev.sas.core.spi.Transition;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler's running half: runs each claimed task's current step (or compensation) on a step
 * thread, enforces its deadline, asks the {@link TaskStateMachine} what the result means, records
 * that through the {@link Recorder}, and only then acts on it: runs the next step in the same claim,
 * or hands the task back to the {@link ClaimLoop}. Decides no policy itself. Thread-safe; a task is
 * touched by one thread at a time.
 */
final class AttemptRunner {
    private static final Logger log = LoggerFactory.getLogger(AttemptRunner.class);

    private final Registry registry;
    private final Clock clock;
    private final String instanceId;
    private final Recorder recorder;
    private final EventBus events;
    private final Metrics metrics;
    private final PayloadLimit payloadLimit;
    private final ClaimLoop loop;
    private final AgentGates gates;
    private final Admission admission;

    private volatile boolean abandoning;
    private volatile boolean stopping;
    private volatile Executor stepExecutor = Runnable::run;
    private volatile Function<String, Executor> agentExecutors = name -> Runnable::run;
    private volatile ScheduledExecutorService timer;
    private volatile Tracing tracing = Tracing.none();
    private volatile ReplyTokens replyTokens = ReplyTokens.NONE;

    AttemptRunner(Registry registry, Clock clock, String instanceId, Recorder recorder, EventBus events,
            Metrics metrics, int maxPayloadBytes, ClaimLoop loop, AgentGates gates, Admission admission) {
        this.registry = registry;
        this.clock = clock;
        this.instanceId = instanceId;
        this.recorder = recorder;
        this.events = events;
        this.metrics = metrics;
        this.payloadLimit = new PayloadLimit(maxPayloadBytes);
        this.loop = loop;
        this.gates = gates;
        this.admission = admission;
        gates.onWake(loop::wakeUp);
    }

    void tracing(Tracing tracing) {
        this.tracing = tracing;
    }

    void replyTokens(ReplyTokens tokens) {
        this.replyTokens = tokens;
    }

    void start(Executor stepExecutor, Function<String, Executor> agentExecutors, ScheduledExecutorService timer) {
        this.stepExecutor = stepExecutor;
        this.agentExecutors = agentExecutors;
        this.timer = timer;
        gates.start(timer, stepExecutor);
    }

    /** From now on, a task whose step finishes is handed back to the store instead of going on here. */
    void stopping() {
        stopping = true;
    }

    /** From now on, results are not recorded; their tasks are left to the supervisor. */
    void abandon() {
        abandoning = true;
    }

    // ------------------------------------------------------------------ claim

    /** Starts a task the claim loop just claimed. */
    void onClaimed(ClaimedTask c) {
        TaskLog.run(c.taskId(), c.workflow(), c.currentStep(), c.attempt(), () -> claimed(c));
    }

    private void claimed(ClaimedTask c) {
        Workflow<?> wf = registry.find(c.workflow(), c.workflowVersion());
        if (wf == null) {
            park(c, wf, "workflow '" + c.workflow() + "' version " + c.workflowVersion() + " is not registered on instance "
                    + instanceId + "; deploy it, then resubmit the task (its input and progress are kept)");
            return;
        }
        if (c.currentStep() >= wf.steps().size()) {
            park(c, wf, "task is at step " + c.currentStep() + " but workflow '" + wf.name() + "' version "
                    + wf.version() + " has " + wf.steps().size()
                    + " steps; register the version the task was submitted with");
            return;
        }
        Object input;
        try {
            input = wf.inputCodec().decode(c.input());
        } catch (Throwable e) {
            // Errors too: a StackOverflowError from a deeply nested input is this task's poison, not the node's.
            if (!(e instanceof RuntimeException)) {
                metrics.internalErrors.increment();
                log.error("task {} step {}: decoding its input threw", c.taskId(), c.currentStep(), e);
            }
            park(c, wf, "input cannot be decoded by workflow '" + wf.name() + "': " + TaskStateMachine.describe(e));
            return;
        }
        TaskRun run = new TaskRun(c, wf, input);
        Instant now = clock.instant();
        if (run.cancelRequested && !run.compensating()) {
            // its claim started nothing (the store recorded no start): cancel or compensate at once
            Snapshot s = snapshot(run);
            carryOut(run, TaskStateMachine.decide(s, CancelRequested.atClaim(s), now), false);
            return;
        }
        events.publish(List.of(new TaskEvent(run.taskId, run.businessKey, wf.name(), run.compensating()
                ? TaskEvent.Type.COMPENSATION_STARTED : TaskEvent.Type.STEP_STARTED, run.currentStep, run.stepName(),
                run.attempt, now, null)), run.replyTo);
        dispatch(run);
    }

    /** Moves a task this runtime cannot run to ERROR, keeping everything, and alerts. */
    private void park(ClaimedTask c, Workflow<?> wf, String reason) {
        log.error("task {} step {}: {}", c.taskId(), c.currentStep(), reason);
        Snapshot s = new Snapshot(c.taskId(), c.businessKey(), c.workflow(), wf, c.lease(), c.status(),
                c.currentStep(), c.attempt(), c.failureCount(), c.cancelRequested(), false, Set.copyOf(c.skippedSteps()));
        Decision d = TaskStateMachine.decide(s, new NotRunnable(reason), clock.instant());
        Transition t = d.transition().withReplyTo(c.replyTo());
        recorder.write(t, c.completeBy(), (result, refusal, at) -> {
            try {
                if (result == Recorder.Result.APPLIED) {
                    metrics.errors.increment();
                    events.publish(t.events(), c.replyTo());
                    d.alerts().forEach(a -> events.alert(stamped(a, at)));
                } else {
                    notRecorded(c.taskId(), c.currentStep(), result, refusal);
                }
            } finally {
                loop.release();
            }
        });
    }

    // ------------------------------------------------------------------ run a step

    private void dispatch(TaskRun run) {
        Admission.Ticket ticket = admission.enqueue(run);
        try {
            stepExecutor.execute(() -> startAttempt(run, ticket));
        } catch (RejectedExecutionException e) {
            admission.abandon(ticket);
            log.warn("task {} step {}: not started, the runtime is shutting down; the supervisor will recover it",
                    run.taskId, run.stepName());
            loop.release();
        }
    }

    private void startAttempt(TaskRun run, Admission.Ticket ticket) {
        TaskLog.run(run.taskId, run.workflow.name(), run.currentStep, run.attempt, () -> {
            try {
                attempt(run, ticket);
            } catch (Throwable e) {
                admission.abandon(ticket); // never left waiting: a waiting task holds the claim gate shut
                throw e;
            }
        });
    }

    /**
     * Runs the step on this thread, or hands its agent call to the agent's executor. Its deadline
     * starts when the step starts ({@link Admission#begin}): here for a step that runs on this
     * thread, on the agent's thread for an agent call.
     */
    private void attempt(TaskRun run, Admission.Ticket ticket) {
        if (abandoning || clock.instant().isAfter(run.completeBy)) {
            admission.abandon(ticket);
            // Waited too long for a worker (all busy, or stuck in steps that ignore interrupts).
            log.warn("task {} step {}: not started before its deadline {}; left to the supervisor", run.taskId,
                    run.stepName(), run.completeBy);
            metrics.deadlinesMissed.increment();
            loop.release();
            return;
        }
        StepDefinition<Object> def = run.workflow.steps().get(run.currentStep);
        Agent<?, ?> agent = def.agent(run.compensating()).orElse(null);
        boolean handsOff = agent != null && (run.compensating() || !def.awaitsCompletion());
        if (!handsOff && !admission.begin(ticket)) {
            loop.release(); // no longer this node's (Admission logged why)
            return;
        }
        Attempt a = new Attempt(run, clock);
        Outcome instead = StepShapes.instead(a, def, clock.instant());
        if (instead != null) {
            // skipped, a timer, or a skipped step passed over: decided without running anything
            admission.abandon(ticket);
            a.finish();
            try {
                carryOut(run, TaskStateMachine.decide(snapshot(run), instead, clock.instant()), false);
            } catch (Throwable e) {
                metrics.internalErrors.increment();
                log.error("{}: internal error while deciding its shape; the supervisor will recover it", a, e);
                loop.release();
            }
            return;
        }
        String endpoint = FlowControl.DEFAULT_ENDPOINT;
        if (agent != null && gates.gated(agent.name())) {
            AgentGates.Admission admitted = gates.admit(agent.name(), a.completeBy);
            if (admitted instanceof AgentGates.Held held) {
                admission.abandon(ticket);
                holdBack(a, held);
                return;
            }
            a.call = ((AgentGates.Granted) admitted).call();
            endpoint = a.call.endpoint();
        }
        if (handsOff) {
            a.ticket = ticket;
            ticket.attempt = a;
        }
        scheduleDeadline(a, Duration.between(a.startedAt, a.completeBy));
        a.trace = startTrace(a);
        if (!a.compensating && def.awaitsCompletion()) {
            sendRequest(a, def);
            return;
        }
        AtomicReference<CompletionStage<String>> invoked = new AtomicReference<>();
        CompletionStage<String> stage;
        a.thread = Thread.currentThread();
        try {
            Function<String, Executor> agents = startingOnAgentThread(a, withTaskLog(agentExecutors, a.trace));
            String to = endpoint;
            a.trace.run(() -> invoked.set(a.compensating
                    ? def.compensate(a, agents, to).thenApply(done -> null)
                    : def.invoke(a, agents, to)));
            stage = invoked.get();
        } catch (Throwable e) {
            stage = CompletableFuture.failedFuture(e);
        } finally {
            synchronized (a) {
                a.thread = null;
            }
            if (a.isFinished()) {
                Thread.interrupted(); // the deadline's interrupt was for the step, not for this pool thread
            }
        }
        stage.whenComplete((out, err) -> onResult(a, out, err));
    }

    // ------------------------------------------------------------------ a step that awaits a reply

    /**
     * Sends an awaiting step's request on this step thread. A failure to send is a failed attempt,
     * recorded like any step's; once sent, the task is handed to the store to await its reply.
     */
    private void sendRequest(Attempt a, StepDefinition<Object> def) {
        Throwable failure = null;
        a.thread = Thread.currentThread();
        try {
            String token = replyTokens.issue(new ReplyToken(a.run.taskId, a.step, a.run.lease));
            a.trace.run(() -> {
                try {
                    def.sendRequest(a, token);
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
            onResult(a, null, failure);
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
        endTrace(a, null);
        TaskRun run = a.run;
        if (abandoning) {
            log.info("{}: request sent during shutdown after the grace period; not recorded, left to the supervisor", a);
            loop.release();
            return;
        }
        Instant now = clock.instant();
        try {
            Decision d = TaskStateMachine.decide(snapshot(run), new TaskStateMachine.RequestSent(), now);
            AtomicReference<Decision> replied = new AtomicReference<>();
            dev.sas.core.spi.AwaitWrite w = recorder.awaitReply(d.transition().withReplyTo(run.replyTo), reply -> {
                Decision rd = TaskStateMachine.decide(snapshot(run), TaskStateMachine.ReplyReceived.of(reply, a.startedAt),
                        now);
                replied.set(rd);
                return rd.transition().withReplyTo(run.replyTo);
            }, now);
            Recorder.Result result = Recorder.Result.of(w.outcome());
            if (w.reply() == null) {
                awaiting(a, d, result, w.outcome().reason(), now);
                return;
            }
            // a reply arrived while the request was being sent: it was applied instead
            Decision rd = replied.get();
            boolean completed = w.reply().kind() == dev.sas.core.spi.StepReply.Kind.COMPLETED;
            log.info("{}: its reply arrived while the request was being sent; {}", a,
                    completed ? "the step completed" : "the attempt failed");
            if (result == Recorder.Result.APPLIED) {
                if (completed) {
                    run.setOutput(a.step, w.reply().payload());
                }
                applied(run, rd, completed, now);
            } else if (result == Recorder.Result.CANCEL_REQUESTED && rd.ifCancelRequested() != null) {
                run.cancelRequested = true;
                carryOut(run, TaskStateMachine.decide(snapshot(run), rd.ifCancelRequested(), clock.instant()), false);
            } else {
                notRecorded(run.taskId, run.currentStep, result, w.outcome().reason());
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

    private void awaiting(Attempt a, Decision d, Recorder.Result result, String refusal, Instant now) {
        TaskRun run = a.run;
        if (result == Recorder.Result.APPLIED) {
            log.debug("{}: request sent; awaiting its reply until {}", a, a.completeBy);
            events.publish(d.transition().events(), run.replyTo);
            loop.release();
        } else if (result == Recorder.Result.CANCEL_REQUESTED && d.ifCancelRequested() != null) {
            run.cancelRequested = true;
            carryOut(run, TaskStateMachine.decide(snapshot(run), d.ifCancelRequested(), clock.instant()), false);
        } else {
            notRecorded(run.taskId, run.currentStep, result, refusal);
            loop.release();
        }
    }

    /**
     * Agent executors that carry the caller's logging context (task, workflow, step, attempt) and
     * the attempt's trace to the agent's thread.
     */
    private static Function<String, Executor> withTaskLog(Function<String, Executor> executors,
            Tracing.StepTrace trace) {
        return name -> trace.wrap(TaskLog.propagating(executors.apply(name)));
    }

    /**
     * Agent executors whose call first {@link Admission#begin begins} the attempt on the agent's
     * thread: the deadline restarts there if the call waited for a thread, and a call the store
     * answered stale for is not made.
     */
    private Function<String, Executor> startingOnAgentThread(Attempt a, Function<String, Executor> executors) {
        Admission.Ticket ticket = a.ticket;
        if (ticket == null) {
            return executors;
        }
        return name -> {
            Executor executor = executors.apply(name);
            return command -> {
                try {
                    executor.execute(() -> {
                        if (admission.begin(ticket)) {
                            command.run();
                        } else if (a.finish()) {
                            notStarted(a);
                        }
                    });
                } catch (RuntimeException rejected) {
                    admission.abandon(ticket);
                    throw rejected;
                }
            };
        };
    }

    /** An agent call the store answered stale for before it started: not made, the task let go. */
    private void notStarted(Attempt a) {
        if (a.timer != null) {
            a.timer.cancel(false);
        }
        if (a.call != null) {
            gates.notMade(a.call);
        }
        endTrace(a, null);
        loop.release();
    }

    /** The attempt's trace; a tracing failure leaves the attempt untraced. */
    private Tracing.StepTrace startTrace(Attempt a) {
        try {
            Tracing.StepTrace t = tracing.startStep(a, a.run.traceContext);
            return t != null ? t : Tracing.none().startStep(a, null);
        } catch (Throwable e) {
            log.warn("{}: starting its trace failed; the attempt is not traced ({})", a, e.toString());
            return Tracing.none().startStep(a, null);
        }
    }

    private static void endTrace(Attempt a, Throwable error) {
        try {
            a.trace.end(error);
        } catch (Throwable e) {
            log.warn("{}: ending its trace failed ({})", a, e.toString());
        }
    }

    /** The agent's flow control held the call back: the call is not made and the task waits. */
    private void holdBack(Attempt a, AgentGates.Held held) {
        a.finish();
        metrics.heldBack.increment();
        log.debug("{}: held back ({})", a, held.message());
        try {
            carryOut(a.run, TaskStateMachine.decide(snapshot(a.run), new HeldBack(held.message(), held.retryAt()),
                    clock.instant()), false);
        } catch (Throwable e) {
            metrics.internalErrors.increment();
            log.error("{}: internal error while holding it back; the supervisor will recover it", a, e);
            loop.release();
        }
    }

    private void scheduleDeadline(Attempt a, Duration delay) {
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

    private void onResult(Attempt a, String output, Throwable error) {
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
        admission.ran(Duration.between(a.startedAt, clock.instant()).toNanos());
        endTrace(a, error == null ? null : unwrap(error));
        if (abandoning) {
            log.info("{}: finished during shutdown after the grace period; not recorded, left to the supervisor", a);
            loop.release();
            return;
        }
        Instant now = clock.instant();
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
            Decision d = TaskStateMachine.decide(snapshot(a.run), outcome, now);
            logFailure(a, outcome, d);
            carryOut(a.run, d, outcome instanceof StepCompleted);
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

    // ------------------------------------------------------------------ carry out a decision

    /**
     * Records the decision, then acts on it: goes on in this claim, or releases the task. When the
     * store reports a cancel the transition yielded to, decides again for the cancel.
     *
     * @param stepCompleted the decision records a step's completion (counted once written)
     */
    private void carryOut(TaskRun run, Decision d, boolean stepCompleted) {
        carryOut(run, d, stepCompleted, false);
    }

    /** @param fallback the decision replaces one the store refused: a second refusal is not handled again */
    private void carryOut(TaskRun run, Decision d, boolean stepCompleted, boolean fallback) {
        // the store writes the events to the task's reply channel outbox too
        Transition t = d.transition().withReplyTo(run.replyTo);
        recorder.write(t, run.completeBy, (result, refusal, at) -> TaskLog.run(run.taskId, run.workflow.name(), run.currentStep, run.attempt, () -> {
            try {
                if (result == Recorder.Result.APPLIED) {
                    applied(run, d, stepCompleted, at);
                } else if (result == Recorder.Result.CANCEL_REQUESTED && d.ifCancelRequested() != null) {
                    run.cancelRequested = true;
                    carryOut(run, TaskStateMachine.decide(snapshot(run), d.ifCancelRequested(), clock.instant()),
                            false, fallback);
                } else if (result == Recorder.Result.REFUSED && !fallback) {
                    Outcome failed = refused(run, t, refusal);
                    log.error("task {} step {}: the store refused to record {} ({}); failing the step instead",
                            run.taskId, run.currentStep, t.status(), refusal);
                    carryOut(run, TaskStateMachine.decide(snapshot(run), failed, clock.instant()), false, true);
                } else {
                    notRecorded(run.taskId, run.currentStep, result, refusal);
                    loop.release();
                }
            } catch (Throwable e) {
                metrics.internalErrors.increment();
                log.error("task {} step {}: internal error after recording; the supervisor will recover it",
                        run.taskId, run.currentStep, e);
                loop.release();
            }
        }));
    }

    private void applied(TaskRun run, Decision d, boolean stepCompleted, Instant at) {
        Transition t = d.transition();
        StepShapes.applied(run, t);
        count(d, stepCompleted);
        events.publish(t.events(), run.replyTo);
        d.alerts().forEach(a -> events.alert(stamped(a, at)));
        if (t.keepLock()) {
            moveTo(run, t.status(), t.currentStep(), at);
            dispatch(run);
            return;
        }
        loop.release();
        if (t.nextAttemptAt() != null) {
            // a retry after its backoff, or a call held back until its endpoint can take it
            loop.scheduleWakeUp(t.nextAttemptAt(), at);
        }
    }

    private void count(Decision d, boolean stepCompleted) {
        if (stepCompleted) {
            metrics.stepsCompleted.increment();
        }
        if (d.isRetry()) {
            metrics.retriesScheduled.increment();
        }
        switch (d.transition().status()) {
            case PROCESSED -> metrics.tasksProcessed.increment();
            case ERROR -> metrics.errors.increment();
            case COMPENSATION_FAILED -> metrics.compensationFailed.increment();
            case COMPENSATED, CANCELLED -> metrics.compensated.increment();
            default -> { }
        }
    }

    /** The task goes on in this claim at {@code step}: a fresh attempt with its own deadline. */
    private static void moveTo(TaskRun run, TaskStatus status, int step, Instant writtenAt) {
        run.status = status;
        run.currentStep = step;
        run.attempt = 1;
        run.failureCount = 0;
        run.completeBy = writtenAt.plus(run.workflow.steps().get(step).completeWithin(status == TaskStatus.COMPENSATING));
    }

    private Snapshot snapshot(TaskRun run) {
        return Snapshot.of(run, stopping);
    }

    /** Alerts carry the instant the transition was written, which is when the task got there. */
    private static Alert stamped(Alert a, Instant at) {
        return new Alert(a.taskId(), a.businessKey(), a.workflow(), a.status(), a.stepName(), a.message(), at);
    }

    /**
     * The failure that replaces a transition the store refused: the step (or its compensation) ran,
     * so it fails for good, keeping the error the refused transition carried and the store's reason.
     */
    private static Outcome refused(TaskRun run, Transition t, String refusal) {
        String what = run.compensating() ? "compensation of step '" + run.stepName() + "'" : "step '" + run.stepName() + "'";
        String message = "the store refused to record the result of " + what + " (" + refusal + ")"
                + (t.lastError() == null ? "" : "; its error was: " + t.lastError());
        Throwable error = new UnstorableResultException(message);
        Instant startedAt = t.step() != null ? t.step().startedAt() : null;
        return run.compensating() ? new CompensationFailed(error, startedAt) : new StepFailed(error, startedAt);
    }

    private void notRecorded(Object taskId, int step, Recorder.Result result, String refusal) {
        if (result == Recorder.Result.REFUSED) {
            metrics.internalErrors.increment();
            log.error("task {} step {}: the store refused to record the step's failure too ({}); left to the"
                    + " supervisor", taskId, step, refusal);
        } else if (result == Recorder.Result.NOT_WRITTEN) {
            log.warn("task {} step {}: transition not recorded (store unavailable); the supervisor will recover it",
                    taskId, step);
        } else {
            metrics.staleRejected.increment();
            log.warn("task {} step {}: transition rejected by the store as stale (deadline passed or lease moved on)",
                    taskId, step);
        }
    }

    static Throwable unwrap(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
