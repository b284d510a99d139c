package dev.sas.core.internal;

import dev.sas.core.Agent;
import dev.sas.core.FlowControl;
import dev.sas.core.SasClient;
import dev.sas.core.StepDefinition;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.Tracing;
import dev.sas.core.Workflow;
import dev.sas.core.internal.TaskStateMachine.CancelRequested;
import dev.sas.core.internal.TaskStateMachine.Decision;
import dev.sas.core.internal.TaskStateMachine.HeldBack;
import dev.sas.core.internal.TaskStateMachine.NotRunnable;
import dev.sas.core.internal.TaskStateMachine.Outcome;
import dev.sas.core.internal.TaskStateMachine.Snapshot;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.Transition;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler's running half: runs each claimed task's current step (or compensation) on a step
 * thread, enforces its deadline, asks the {@link TaskStateMachine} what the result means, records
 * that through the {@link Recorder}, and only then acts on it: runs the next step in the same claim,
 * or hands the task back to the {@link ClaimLoop}. Decides no policy itself. This class starts
 * attempts; {@link AttemptEnds} ends them (deadline or result), {@link AwaitingSteps} sends the
 * request of a step that awaits its completion, and {@link DecisionWriter} records each decision
 * and acts on it. Thread-safe; a task is touched by one thread at a time.
 */
final class AttemptRunner {
    private static final Logger log = LoggerFactory.getLogger(AttemptRunner.class);

    private final Registry registry;
    private final Clock clock;
    private final String instanceId;
    private final Recorder recorder;
    private final EventBus events;
    private final Metrics metrics;
    private final ClaimLoop loop;
    private final AgentGates gates;
    private final Admission admission;
    private final DecisionWriter writer;
    private final AttemptEnds ends;
    private final AwaitingSteps awaiting;

    private volatile boolean abandoning;
    private volatile Executor stepExecutor = Runnable::run;
    private volatile Function<String, Executor> agentExecutors = name -> Runnable::run;
    private volatile Tracing tracing = Tracing.none();
    private volatile dev.sas.core.SasClient childClient;

    AttemptRunner(Registry registry, Clock clock, String instanceId, Recorder recorder, EventBus events,
            Metrics metrics, int maxPayloadBytes, ClaimLoop loop, AgentGates gates, Admission admission) {
        this.registry = registry;
        this.clock = clock;
        this.instanceId = instanceId;
        this.recorder = recorder;
        this.events = events;
        this.metrics = metrics;
        this.loop = loop;
        this.gates = gates;
        this.admission = admission;
        this.writer = new DecisionWriter(clock, recorder, events, metrics, loop, this::dispatch);
        this.ends = new AttemptEnds(clock, metrics, maxPayloadBytes, loop, gates, admission, writer, () -> abandoning);
        this.awaiting = new AwaitingSteps(clock, recorder, events, metrics, loop, writer, ends, () -> abandoning);
        gates.onWake(loop::wakeUp);
    }

    void tracing(Tracing tracing) {
        this.tracing = tracing;
    }

    void completionTokens(CompletionTokens tokens) {
        awaiting.completionTokens(tokens);
    }

    void childClient(dev.sas.core.SasClient client) {
        this.childClient = client;
        awaiting.childClient(client);
    }

    /** A task as the store has it, for a unit step reading its parent's outputs before the fork. */
    private Optional<TaskInfo> readTask(TaskId id) {
        SasClient client = childClient;
        if (client == null) {
            throw new IllegalStateException("no client to read task " + id + " with; the runtime has not started");
        }
        return client.find(id);
    }

    void start(Executor stepExecutor, Function<String, Executor> agentExecutors, ScheduledExecutorService timer) {
        this.stepExecutor = stepExecutor;
        this.agentExecutors = agentExecutors;
        ends.start(timer);
        gates.start(timer, stepExecutor);
    }

    /** From now on, a task whose step finishes is handed back to the store instead of going on here. */
    void stopping() {
        writer.stopping();
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
            // its claim started nothing (the store recorded no start): cancel, or compensate once nothing
            // sent before may still be applied
            Snapshot s = writer.snapshot(run);
            writer.carryOut(run, TaskStateMachine.decide(s, CancelRequested.atClaim(s, awaitedUntil(run, now)), now), false);
            return;
        }
        events.publish(List.of(new TaskEvent(run.taskId, run.businessKey, wf.name(), run.compensating()
                ? TaskEvent.Type.COMPENSATION_STARTED : TaskEvent.Type.STEP_STARTED, run.currentStep, run.stepName(),
                run.attempt, now, null)), run.statusChannel);
        dispatch(run);
    }

    /**
     * For a cancelled task whose step sent its request: when the request may no longer be applied
     * ({@link InDoubt#until}, from the task's events; read only on this rare path). If they
     * cannot be read, as late as any request sent until now could be applied.
     */
    private Instant awaitedUntil(TaskRun run, Instant now) {
        StepDefinition<Object> def = run.workflow.steps().get(run.currentStep);
        if (run.attempt <= 1 || !InDoubt.sendsRequest(def) || !def.hasCompensation()) {
            return null;
        }
        SasClient client = childClient;
        try {
            if (client != null) {
                return InDoubt.until(def, run.currentStep, client.events(run.taskId));
            }
        } catch (RuntimeException e) {
            log.warn("task {} step {}: its events could not be read ({}); its compensation waits for the step's whole"
                    + " deadline", run.taskId, run.stepName(), TaskStateMachine.describe(e));
        }
        return InDoubt.sentAt(def, now);
    }

    /** Moves a task this runtime cannot run to ERROR, keeping everything, and alerts. */
    private void park(ClaimedTask c, Workflow<?> wf, String reason) {
        log.error("task {} step {}: {}", c.taskId(), c.currentStep(), reason);
        Snapshot s = new Snapshot(c.taskId(), c.businessKey(), c.workflow(), wf, c.lease(), c.status(),
                c.currentStep(), c.attempt(), c.failureCount(), c.cancelRequested(), false, Set.copyOf(c.skippedSteps()));
        Decision d = TaskStateMachine.decide(s, new NotRunnable(reason), clock.instant());
        Transition t = d.transition().withStatusChannel(c.statusChannel());
        recorder.write(t, c.completeBy(), (result, refusal, at) -> {
            try {
                if (result == Recorder.Result.APPLIED) {
                    metrics.errors.increment();
                    events.publish(t.events(), c.statusChannel());
                    d.alerts().forEach(a -> events.alert(DecisionWriter.stamped(a, at)));
                } else {
                    writer.notRecorded(c.taskId(), c.currentStep(), result, refusal);
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
        Attempt a = new Attempt(run, clock, this::readTask);
        Outcome instead = StepShapes.instead(a, def, a.startedAt);
        if (instead != null) {
            // skipped, a timer, or a skipped step passed over: decided without running anything
            admission.abandon(ticket);
            a.finish();
            try {
                writer.carryOut(run, TaskStateMachine.decide(writer.snapshot(run), instead, clock.instant()), false);
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
        ends.scheduleDeadline(a, Duration.between(a.startedAt, a.completeBy));
        a.trace = startTrace(a);
        if (!a.compensating && def.awaitsCompletion()) {
            awaiting.sendRequest(a, def);
            return;
        }
        AtomicReference<CompletionStage<String>> invoked = new AtomicReference<>();
        CompletionStage<String> stage;
        a.thread = Thread.currentThread();
        try {
            Function<String, Executor> agents = startingOnAgentThread(a, withTaskLog(agentExecutors, a.trace));
            String to = endpoint;
            a.trace.run(() -> invoked.set(a.compensating
                    ? compensate(def, a, agents, to).thenApply(done -> null)
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
        stage.whenComplete((out, err) -> ends.onResult(a, out, err));
    }

    /** A child task step's compensation cancels its child first (if it has not ended), then runs the step's own. */
    private CompletionStage<Void> compensate(StepDefinition<Object> def, Attempt a, Function<String, Executor> agents,
            String endpoint) {
        try {
            def.cancelChild(a, childClient);
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
        return def.compensate(a, agents, endpoint);
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
                            ends.notStarted(a);
                        }
                    });
                } catch (RuntimeException rejected) {
                    admission.abandon(ticket);
                    throw rejected;
                }
            };
        };
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

    /** The agent's flow control held the call back: the call is not made and the task waits. */
    private void holdBack(Attempt a, AgentGates.Held held) {
        a.finish();
        metrics.heldBack.increment();
        log.debug("{}: held back ({})", a, held.message());
        try {
            writer.carryOut(a.run, TaskStateMachine.decide(writer.snapshot(a.run),
                    new HeldBack(held.message(), held.retryAt()), clock.instant()), false);
        } catch (Throwable e) {
            metrics.internalErrors.increment();
            log.error("{}: internal error while holding it back; the supervisor will recover it", a, e);
            loop.release();
        }
    }
}
