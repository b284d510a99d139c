package dev.sas.core.internal;

import dev.sas.core.Alert;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.StateStoreException;
import dev.sas.core.StepDefinition;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Scheduler role: claims due tasks in batches, runs their steps in order, and records every
 * transition through the {@link Recorder} before acting on it. A step's result, its events and
 * the start of the next step are one transition (one commit); the task stays claimed between
 * steps. It never scans for expired work: that is the {@link Supervisor}'s job.
 */
public final class Scheduler {
    private static final Logger log = LoggerFactory.getLogger(Scheduler.class);
    private static final Duration UNKNOWN_STEP_TIMEOUT = Duration.ofSeconds(30);

    private final StateStore store;
    private final Registry registry;
    private final Clock clock;
    private final String instanceId;
    private final Recorder recorder;
    private final EventBus events;
    private final Metrics metrics;
    private final int claimBatch;
    private final int maxInFlight;
    private final int lowWater;
    private final int maxPayloadBytes;
    private final Duration pollInterval;

    private final AtomicInteger inFlight = new AtomicInteger();
    private final Object idle = new Object();
    private final Semaphore wake = new Semaphore(0);
    private volatile boolean running;
    private volatile boolean abandoning;
    private volatile boolean stopping;
    private volatile Executor stepExecutor = Runnable::run;
    private volatile Function<String, Executor> agentExecutors = name -> Runnable::run;
    private volatile ScheduledExecutorService timer;

    /** A scheduler that runs inline until {@link #start} is called. */
    public Scheduler(StateStore store, Registry registry, Clock clock, String instanceId, Recorder recorder,
            EventBus events, Metrics metrics, int claimBatch, int maxInFlight, int maxPayloadBytes,
            Duration pollInterval) {
        this.store = store;
        this.registry = registry;
        this.clock = clock;
        this.instanceId = instanceId;
        this.recorder = recorder;
        this.events = events;
        this.metrics = metrics;
        this.claimBatch = claimBatch;
        this.maxInFlight = maxInFlight;
        this.lowWater = maxInFlight - Math.max(1, Math.min(claimBatch, maxInFlight) / 2);
        this.maxPayloadBytes = maxPayloadBytes;
        this.pollInterval = pollInterval;
    }

    /** Switches to threaded mode; the caller then runs {@link #claimLoop()} on a thread of its own. */
    public void start(Executor stepExecutor, Function<String, Executor> agentExecutors, ScheduledExecutorService timer) {
        this.stepExecutor = stepExecutor;
        this.agentExecutors = agentExecutors;
        this.timer = timer;
        this.running = true;
    }

    /** Tasks claimed and not yet released. */
    public int inFlight() {
        return inFlight.get();
    }

    /** Wakes the claim loop now (a local submit, a recovery, a retry coming due). */
    public void wakeUp() {
        if (wake.availablePermits() == 0) {
            wake.release();
        }
    }

    /**
     * Wakes the claim loop now and again at {@code due} (recovered tasks come due after a backoff;
     * waking only now would find nothing and leave them to the next poll).
     */
    public void wakeUpAt(Instant due) {
        wakeUp();
        scheduleWakeUp(due, clock.instant());
    }

    /**
     * Stops claiming; running steps go on, and a task whose step finishes from now on is handed
     * back to the store (due at once) instead of starting its next step here.
     */
    public void stopClaiming() {
        running = false;
        stopping = true;
        wakeUp();
    }

    /**
     * From now on, results of running steps are not recorded: their tasks stay claimed until the
     * deadline and a supervisor recovers them. Used when the shutdown grace period is over, so an
     * interrupt at shutdown is never recorded as the step's failure.
     */
    public void abandonRunning() {
        abandoning = true;
    }

    /**
     * Waits until no task is held or the grace period ends.
     *
     * @return true if idle
     */
    public boolean awaitIdle(Duration grace) throws InterruptedException {
        long deadline = System.nanoTime() + grace.toNanos();
        synchronized (idle) {
            while (inFlight.get() > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(idle, left);
            }
        }
        return true;
    }

    /** The claim loop of threaded mode: claim while there is room and work, else wait for a wake-up or the poll interval. */
    public void claimLoop() {
        long backoffMs = 100;
        while (running) {
            try {
                int held = inFlight.get();
                if (held <= lowWater || held == 0) {
                    int want = Math.min(claimBatch, maxInFlight - held);
                    int got;
                    try {
                        got = claim(want);
                        backoffMs = 100;
                    } catch (StateStoreException e) {
                        metrics.storeFailures.increment();
                        log.warn("instance {}: claim failed ({}); retrying in {} ms", instanceId, e.getMessage(), backoffMs);
                        wake.tryAcquire(backoffMs, TimeUnit.MILLISECONDS);
                        backoffMs = Math.min(backoffMs * 2, 10_000);
                        continue;
                    }
                    if (got == want) {
                        continue;
                    }
                }
                wake.tryAcquire(pollInterval.toMillis(), TimeUnit.MILLISECONDS);
                wake.drainPermits();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                log.error("instance {}: unexpected error in the claim loop", instanceId, e);
            }
        }
    }

    /**
     * Claims up to one batch and starts it; used by tests and manual driving when not started.
     *
     * @return how many tasks were claimed
     */
    public int runOnce() {
        return claim(Math.min(claimBatch, maxInFlight - inFlight.get()));
    }

    private int claim(int want) {
        if (want <= 0) {
            return 0;
        }
        List<ClaimedTask> claimed = store.claim(instanceId, want, clock.instant());
        if (claimed.isEmpty()) {
            return 0;
        }
        inFlight.addAndGet(claimed.size());
        metrics.claimed.add(claimed.size());
        for (ClaimedTask c : claimed) {
            try {
                onClaimed(c);
            } catch (RuntimeException e) {
                log.error("task {} step {}: could not start; the supervisor will recover it", c.taskId(),
                        c.currentStep(), e);
                release();
            }
        }
        return claimed.size();
    }

    // ------------------------------------------------------------------ claim

    private void onClaimed(ClaimedTask c) {
        Workflow<?> wf = registry.find(c.workflow(), c.workflowVersion());
        if (wf == null) {
            park(c, "workflow '" + c.workflow() + "' version " + c.workflowVersion() + " is not registered on instance "
                    + instanceId + "; deploy it, then resubmit the task (its input and progress are kept)");
            return;
        }
        if (c.currentStep() >= wf.steps().size()) {
            park(c, "task is at step " + c.currentStep() + " but workflow '" + wf.name() + "' version " + wf.version()
                    + " has " + wf.steps().size() + " steps; register the version the task was submitted with");
            return;
        }
        Object input;
        try {
            input = wf.inputCodec().decode(c.input());
        } catch (RuntimeException e) {
            park(c, "input cannot be decoded by workflow '" + wf.name() + "': " + describe(e));
            return;
        }
        TaskRun run = new TaskRun(c, wf, input);
        events.publish(List.of(event(run, run.compensating() ? TaskEvent.Type.COMPENSATION_STARTED
                : TaskEvent.Type.STEP_STARTED, run.currentStep, run.attempt, clock.instant(), null)), run.replyTo);
        if (run.cancelRequested && !run.compensating()) {
            // Earlier attempts at the current step (attempt > 1) may have applied its effect.
            int from = run.attempt > 1 ? run.currentStep : run.currentStep - 1;
            beginCompensation(run, from, null, List.of(), "cancelled by an operator", true);
        } else {
            dispatch(run);
        }
    }

    /** Moves a task this runtime cannot run to ERROR, keeping everything, and alerts. */
    private void park(ClaimedTask c, String reason) {
        Instant now = clock.instant();
        log.error("task {} step {}: {}", c.taskId(), c.currentStep(), reason);
        TaskEvent error = new TaskEvent(c.taskId(), c.businessKey(), c.workflow(), TaskEvent.Type.ERROR,
                c.currentStep(), null, c.attempt(), now, reason);
        Transition t = new Transition(c.taskId(), c.lease(), c.currentStep(), Transition.Guard.HOLDER, false, TaskStatus.ERROR, false,
                c.currentStep(), null, c.attempt(), c.failureCount(), UNKNOWN_STEP_TIMEOUT, null, reason, null,
                List.of(error));
        recorder.write(t, c.completeBy(), (outcome, at) -> {
            try {
                if (outcome == WriteOutcome.APPLIED) {
                    metrics.errors.increment();
                    events.publish(t.events(), c.replyTo());
                    events.alert(new Alert(c.taskId(), c.businessKey(), c.workflow(), TaskStatus.ERROR, null, reason, at));
                } else {
                    stale(c.taskId(), c.currentStep(), outcome);
                }
            } finally {
                release();
            }
        });
    }

    // ------------------------------------------------------------------ run a step

    private void dispatch(TaskRun run) {
        try {
            stepExecutor.execute(() -> startAttempt(run));
        } catch (RejectedExecutionException e) {
            log.warn("task {} step {}: not started, the runtime is shutting down; the supervisor will recover it",
                    run.taskId, run.stepName());
            release();
        }
    }

    private void startAttempt(TaskRun run) {
        if (abandoning || clock.instant().isAfter(run.completeBy)) {
            // Waited too long for a worker (all busy, or stuck in steps that ignore interrupts).
            log.warn("task {} step {}: not started before its deadline {}; left to the supervisor", run.taskId,
                    run.stepName(), run.completeBy);
            metrics.deadlinesMissed.increment();
            release();
            return;
        }
        Attempt a = new Attempt(run, clock);
        StepDefinition<Object> def = run.workflow.steps().get(a.step);
        scheduleDeadline(a, Duration.between(a.startedAt, a.completeBy));
        CompletionStage<String> stage;
        a.thread = Thread.currentThread();
        try {
            if (a.compensating) {
                stage = def.compensate(a, agentExecutors).thenApply(done -> null);
            } else {
                stage = def.invoke(a, agentExecutors);
            }
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

    private void scheduleDeadline(Attempt a, Duration delay) {
        ScheduledExecutorService t = timer;
        if (t == null) {
            return;
        }
        try {
            a.timer = t.schedule(() -> onDeadline(a), Math.max(1, delay.toMillis()), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException shuttingDown) {
            // no deadline enforcement during shutdown; the store still rejects a late result
        }
    }

    private void onDeadline(Attempt a) {
        Duration left = Duration.between(clock.instant(), a.completeBy);
        if (!left.isNegative() && !left.isZero()) {
            scheduleDeadline(a, left);
            return;
        }
        if (!a.finish()) {
            return;
        }
        metrics.deadlinesMissed.increment();
        log.warn("{}: no result by its deadline {}; left to the supervisor", a, a.completeBy);
        // The agent's future is not cancelled: its late reply must still arrive, to be rejected and counted.
        synchronized (a) {
            Thread th = a.thread;
            if (th != null) {
                th.interrupt();
            }
        }
        release();
    }

    private void onResult(Attempt a, String output, Throwable error) {
        if (!a.finish()) {
            metrics.staleRejected.increment();
            log.warn("{}: {} arrived after its deadline {} and was rejected", a,
                    error == null ? "a reply" : "a failure (" + describe(unwrap(error)) + ")", a.completeBy);
            return;
        }
        if (a.timer != null) {
            a.timer.cancel(false);
        }
        if (abandoning) {
            log.info("{}: finished during shutdown after the grace period; not recorded, left to the supervisor", a);
            release();
            return;
        }
        Instant now = clock.instant();
        if (now.isAfter(a.completeBy)) {
            metrics.staleRejected.increment();
            log.warn("{}: result arrived at {}, after its deadline {}, and was rejected; the supervisor will recover it",
                    a, now, a.completeBy);
            release();
            return;
        }
        try {
            if (error != null) {
                onFailure(a, unwrap(error), now);
            } else if (output != null && output.length() * 3 > maxPayloadBytes
                    && output.getBytes(StandardCharsets.UTF_8).length > maxPayloadBytes) {
                onFailure(a, new NonRetryableException("output of step '" + a.stepName + "' is "
                        + output.getBytes(StandardCharsets.UTF_8).length + " bytes, over the limit of "
                        + maxPayloadBytes + " (maxPayloadBytes)"), now);
            } else if (a.compensating) {
                onCompensated(a, now);
            } else {
                onCompleted(a, output, now);
            }
        } catch (RuntimeException e) {
            log.error("{}: internal error while recording its result; the supervisor will recover it", a, e);
            release();
        }
    }

    // ------------------------------------------------------------------ outcomes

    private void onCompleted(Attempt a, String output, Instant now) {
        TaskRun run = a.run;
        int i = a.step;
        StepUpdate done = new StepUpdate(i, a.stepName, StepStatus.COMPLETED, a.attemptNo, output, null, a.startedAt,
                now, false, null);
        List<StepDefinition<Object>> steps = run.workflow.steps();
        if (i + 1 < steps.size()) {
            boolean keep = !stopping;
            TaskEvent completed = event(run, TaskEvent.Type.STEP_COMPLETED, i, a.attemptNo, now, null);
            Transition t = keep
                    ? transition(run, !run.cancelRequested, TaskStatus.PROCESSING, true, i + 1, 1, 0, null, null, done,
                            List.of(completed, event(run, TaskEvent.Type.STEP_STARTED, i + 1, 1, now, null)))
                    : transition(run, !run.cancelRequested, TaskStatus.PENDING, false, i + 1, 0, 0, now, null, done,
                            List.of(completed));
            write(t, run, (outcome, at) -> {
                if (outcome == WriteOutcome.APPLIED) {
                    metrics.stepsCompleted.increment();
                    events.publish(t.events(), run.replyTo);
                    if (!keep) {
                        release();
                        return;
                    }
                    run.setOutput(i, output);
                    moveTo(run, TaskStatus.PROCESSING, i + 1, at);
                    dispatch(run);
                } else if (outcome == WriteOutcome.CANCEL_REQUESTED) {
                    run.cancelRequested = true;
                    run.setOutput(i, output);
                    beginCompensation(run, i, done, List.of(event(run, TaskEvent.Type.STEP_COMPLETED, i, a.attemptNo,
                            now, null)), "cancelled by an operator", true);
                } else {
                    stale(run, outcome);
                }
            });
        } else {
            Transition t = transition(run, false, TaskStatus.PROCESSED, false, i, a.attemptNo, run.failureCount, null,
                    null, done, List.of(event(run, TaskEvent.Type.STEP_COMPLETED, i, a.attemptNo, now, null),
                            event(run, TaskEvent.Type.PROCESSED, -1, 0, now, null)));
            write(t, run, (outcome, at) -> {
                if (outcome == WriteOutcome.APPLIED) {
                    metrics.stepsCompleted.increment();
                    metrics.tasksProcessed.increment();
                    events.publish(t.events(), run.replyTo);
                    release();
                } else {
                    stale(run, outcome);
                }
            });
        }
    }

    private void onCompensated(Attempt a, Instant now) {
        TaskRun run = a.run;
        int i = a.step;
        StepUpdate undone = new StepUpdate(i, a.stepName, null, a.attemptNo, null, null, a.startedAt, now, true,
                StepStatus.COMPENSATED);
        int next = TaskRun.lastCompensable(run.workflow, i - 1);
        TaskEvent completed = event(run, TaskEvent.Type.COMPENSATION_COMPLETED, i, a.attemptNo, now, null);
        if (next >= 0) {
            boolean keep = !stopping;
            Transition t = keep
                    ? transition(run, false, TaskStatus.COMPENSATING, true, next, 1, 0, null, null, undone,
                            List.of(completed, event(run, TaskEvent.Type.COMPENSATION_STARTED, next, 1, now, null)))
                    : transition(run, false, TaskStatus.COMPENSATING, false, next, 0, 0, now, null, undone,
                            List.of(completed));
            write(t, run, (outcome, at) -> {
                if (outcome == WriteOutcome.APPLIED) {
                    events.publish(t.events(), run.replyTo);
                    if (!keep) {
                        release();
                        return;
                    }
                    moveTo(run, TaskStatus.COMPENSATING, next, at);
                    dispatch(run);
                } else {
                    stale(run, outcome);
                }
            });
        } else {
            TaskStatus end = run.cancelRequested ? TaskStatus.CANCELLED : TaskStatus.COMPENSATED;
            Transition t = transition(run, false, end, false, i, a.attemptNo, 0, null, null, undone,
                    List.of(completed, event(run, end == TaskStatus.CANCELLED ? TaskEvent.Type.CANCELLED
                            : TaskEvent.Type.COMPENSATED, -1, 0, now, null)));
            write(t, run, (outcome, at) -> {
                if (outcome == WriteOutcome.APPLIED) {
                    metrics.compensated.increment();
                    events.publish(t.events(), run.replyTo);
                    release();
                } else {
                    stale(run, outcome);
                }
            });
        }
    }

    private void onFailure(Attempt a, Throwable error, Instant now) {
        TaskRun run = a.run;
        int i = a.step;
        StepDefinition<Object> def = run.workflow.steps().get(i);
        RetryPolicy policy = def.retryPolicy(a.compensating);
        String message = describe(error);
        boolean retry = !policy.isNonRetryable(error) && a.attemptNo < policy.maxAttempts();
        if (retry) {
            Instant next = now.plus(policy.backoff(a.attemptNo));
            TaskStatus released = a.compensating ? TaskStatus.COMPENSATING : TaskStatus.PENDING;
            StepUpdate failed = a.compensating ? null : new StepUpdate(i, a.stepName, StepStatus.PENDING, a.attemptNo,
                    null, message, a.startedAt, now, false, null);
            Transition t = transition(run, !a.compensating && !run.cancelRequested, released, false, i, a.attemptNo,
                    run.failureCount, next, message, failed, List.of(event(run, TaskEvent.Type.STEP_RETRYING, i,
                            a.attemptNo, now, (a.compensating ? "compensation failed: " : "") + message)));
            log.info("{} failed ({}); retry at {}", a, message, next);
            write(t, run, (outcome, at) -> {
                if (outcome == WriteOutcome.APPLIED) {
                    metrics.retriesScheduled.increment();
                    events.publish(t.events(), run.replyTo);
                    release();
                    scheduleWakeUp(next, at);
                } else if (outcome == WriteOutcome.CANCEL_REQUESTED) {
                    run.cancelRequested = true;
                    beginCompensation(run, i, failed, List.of(), message, true); // outcome of step i unknown
                } else {
                    stale(run, outcome);
                }
            });
            return;
        }
        log.warn("{} failed for good ({})", a, message);
        if (a.compensating) {
            StepUpdate failed = new StepUpdate(i, a.stepName, null, a.attemptNo, null, message, a.startedAt, now, true,
                    StepStatus.COMPENSATION_FAILED);
            Transition t = transition(run, false, TaskStatus.COMPENSATION_FAILED, false, i, a.attemptNo,
                    run.failureCount, null, message, failed, List.of(event(run, TaskEvent.Type.COMPENSATION_FAILED, i,
                            a.attemptNo, now, message)));
            write(t, run, (outcome, at) -> {
                if (outcome == WriteOutcome.APPLIED) {
                    metrics.compensationFailed.increment();
                    events.publish(t.events(), run.replyTo);
                    events.alert(new Alert(run.taskId, run.businessKey, run.workflow.name(),
                            TaskStatus.COMPENSATION_FAILED, a.stepName, message, at));
                    release();
                } else {
                    stale(run, outcome);
                }
            });
            return;
        }
        StepUpdate failed = new StepUpdate(i, a.stepName, StepStatus.FAILED, a.attemptNo, null, message, a.startedAt,
                now, false, null);
        beginCompensation(run, lastPossiblyApplied(policy, error, i), failed, List.of(event(run,
                TaskEvent.Type.STEP_FAILED, i, a.attemptNo, now, message)), message, run.cancelRequested);
    }

    /**
     * The highest step whose effect may have happened: a step that failed definitely (non-retryable)
     * did not apply; one that ran out of retries on errors that may be transient (a lost reply, a
     * time-out) may have, so it is compensated too. Compensations must therefore tolerate nothing
     * to undo, which the idempotency key makes easy.
     */
    private static int lastPossiblyApplied(RetryPolicy policy, Throwable error, int failedStep) {
        return policy.isNonRetryable(error) ? failedStep - 1 : failedStep;
    }

    /**
     * Fails or cancels the task: compensates completed steps up to {@code from} (continuing in this
     * claim), or, with nothing to compensate, ends it CANCELLED or in ERROR.
     */
    private void beginCompensation(TaskRun run, int from, StepUpdate step, List<TaskEvent> lead, String reason,
            boolean forCancel) {
        Instant now = clock.instant();
        int j = forCancel || run.workflow.compensateOnFailure() ? TaskRun.lastCompensable(run.workflow, from) : -1;
        List<TaskEvent> evs = new ArrayList<>(lead);
        if (j >= 0) {
            evs.add(event(run, TaskEvent.Type.COMPENSATING, -1, 0, now, reason));
            evs.add(event(run, TaskEvent.Type.COMPENSATION_STARTED, j, 1, now, null));
            Transition t = transition(run, !forCancel, TaskStatus.COMPENSATING, true, j, 1, 0, null, reason, step, evs);
            write(t, run, (outcome, at) -> {
                if (outcome == WriteOutcome.APPLIED) {
                    moveTo(run, TaskStatus.COMPENSATING, j, at);
                    events.publish(t.events(), run.replyTo);
                    dispatch(run);
                } else if (outcome == WriteOutcome.CANCEL_REQUESTED) {
                    run.cancelRequested = true;
                    beginCompensation(run, from, step, lead, reason, true);
                } else {
                    stale(run, outcome);
                }
            });
            return;
        }
        TaskStatus end = forCancel ? TaskStatus.CANCELLED : TaskStatus.ERROR;
        evs.add(event(run, forCancel ? TaskEvent.Type.CANCELLED : TaskEvent.Type.ERROR, -1, 0, now, reason));
        int stepIndex = step != null ? step.index() : run.currentStep;
        Transition t = transition(run, !forCancel, end, false, stepIndex, run.attempt, run.failureCount, null, reason,
                step, evs);
        write(t, run, (outcome, at) -> {
            if (outcome == WriteOutcome.APPLIED) {
                events.publish(t.events(), run.replyTo);
                if (end == TaskStatus.ERROR) {
                    metrics.errors.increment();
                    events.alert(new Alert(run.taskId, run.businessKey, run.workflow.name(), TaskStatus.ERROR,
                            run.workflow.steps().get(stepIndex).name(), reason, at));
                } else {
                    metrics.compensated.increment();
                }
                release();
            } else if (outcome == WriteOutcome.CANCEL_REQUESTED) {
                run.cancelRequested = true;
                beginCompensation(run, from, step, lead, reason, true);
            } else {
                stale(run, outcome);
            }
        });
    }

    // ------------------------------------------------------------------ helpers

    private void moveTo(TaskRun run, TaskStatus status, int step, Instant writtenAt) {
        run.status = status;
        run.currentStep = step;
        run.attempt = 1;
        run.failureCount = 0;
        run.completeBy = writtenAt.plus(run.workflow.steps().get(step).completeWithin(status == TaskStatus.COMPENSATING));
    }

    private Transition transition(TaskRun run, boolean unlessCancelRequested, TaskStatus status, boolean keepLock,
            int step, int attempt, int failureCount, Instant nextAttemptAt, String lastError, StepUpdate stepUpdate,
            List<TaskEvent> evs) {
        StepDefinition<Object> def = run.workflow.steps().get(step);
        return new Transition(run.taskId, run.lease, run.currentStep, Transition.Guard.HOLDER, unlessCancelRequested, status, keepLock,
                step, def.name(), attempt, failureCount, def.completeWithin(status == TaskStatus.COMPENSATING), nextAttemptAt, lastError, stepUpdate, evs);
    }

    private TaskEvent event(TaskRun run, TaskEvent.Type type, int step, int attempt, Instant at, String message) {
        String name = step >= 0 ? run.workflow.steps().get(step).name() : null;
        return new TaskEvent(run.taskId, run.businessKey, run.workflow.name(), type, step, name, attempt, at, message);
    }

    private void write(Transition t, TaskRun run, Recorder.Callback then) {
        recorder.write(t, run.completeBy, (outcome, at) -> {
            try {
                then.done(outcome, at);
            } catch (RuntimeException e) {
                log.error("task {} step {}: internal error after recording; the supervisor will recover it",
                        run.taskId, run.currentStep, e);
                release();
            }
        });
    }

    private void stale(TaskRun run, WriteOutcome outcome) {
        stale(run.taskId, run.currentStep, outcome);
        release();
    }

    private void stale(Object taskId, int step, WriteOutcome outcome) {
        if (outcome == null) {
            log.warn("task {} step {}: transition not recorded (store unavailable); the supervisor will recover it",
                    taskId, step);
        } else {
            metrics.staleRejected.increment();
            log.warn("task {} step {}: transition rejected by the store as stale (deadline passed or lease moved on)",
                    taskId, step);
        }
    }

    private void release() {
        int left = inFlight.decrementAndGet();
        if (left == 0) {
            synchronized (idle) {
                idle.notifyAll();
            }
        }
        if (left == lowWater && running) {
            wakeUp();
        }
    }

    private void scheduleWakeUp(Instant due, Instant now) {
        ScheduledExecutorService t = timer;
        if (t == null || !running) {
            return;
        }
        // nanoseconds plus a millisecond: a wake-up even slightly before the due time claims nothing
        // and leaves the task to the next poll
        long delay = Duration.between(now, due).toNanos() + 1_000_000;
        if (delay < pollInterval.toNanos()) {
            try {
                t.schedule(this::wakeUp, Math.max(0, delay), TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException shuttingDown) {
                // the next start polls anyway
            }
        }
    }

    static Throwable unwrap(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    static String describe(Throwable e) {
        String m = e.getMessage();
        String text = e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
        return text.length() > 2000 ? text.substring(0, 2000) + "…" : text;
    }
}
