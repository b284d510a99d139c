package dev.sas.core.internal;

import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.WorkflowVersion;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;

/**
 * The Scheduler role: claims due tasks in batches ({@link ClaimLoop}), runs their steps in order
 * and records every transition through the {@link Recorder} before acting on it
 * ({@link AttemptRunner}); what a result means is the {@link TaskStateMachine}'s decision. A step's
 * result, its events and the start of the next step are one transition (one commit); the task
 * stays claimed between steps. It never scans for expired work: that is the {@link Supervisor}'s
 * job. Thread-safe.
 */
public final class Scheduler {
    private final ClaimLoop loop;
    private final AttemptRunner runner;
    private final Admission admission;

    /** A scheduler that runs inline until {@link #start} is called, for workflows whose agents have no flow control. */
    public Scheduler(StateStore store, Registry registry, DatabaseClock clock, String instanceId, Recorder recorder,
            EventBus events, Metrics metrics, int claimBatch, int maxInFlight, int maxPayloadBytes,
            Duration pollInterval, AdaptivePoll poll) {
        this(store, registry, clock, instanceId, recorder, events, metrics, claimBatch, maxInFlight, maxPayloadBytes,
                pollInterval, poll, new AgentGates(store, clock, instanceId, metrics, List.of()));
    }

    /**
     * A scheduler that runs inline until {@link #start} is called.
     *
     * @param gates the flow control of the agents its steps call
     */
    public Scheduler(StateStore store, Registry registry, DatabaseClock clock, String instanceId, Recorder recorder,
            EventBus events, Metrics metrics, int claimBatch, int maxInFlight, int maxPayloadBytes,
            Duration pollInterval, AdaptivePoll poll, AgentGates gates) {
        this.loop = new ClaimLoop(store, clock, instanceId, registry.runnable(), metrics, claimBatch, maxInFlight,
                pollInterval, poll, this::run);
        this.admission = new Admission(store, clock, instanceId, claimBatch);
        this.runner = new AttemptRunner(registry, clock, instanceId, recorder, events, metrics, maxPayloadBytes, loop,
                gates, admission);
    }

    private void run(ClaimedTask claimed) {
        runner.onClaimed(claimed);
    }

    /** Traces every step attempt with {@code tracing}; call before the first claim. */
    public void tracing(dev.sas.core.Tracing tracing) {
        runner.tracing(tracing);
    }

    /** Signs the tokens of requests that await a reply with {@code tokens}; call before the first claim. */
    public void completionTokens(CompletionTokens tokens) {
        runner.completionTokens(tokens);
    }

    /** The client through which steps start and cancel child tasks (the runtime's own). */
    public void childClient(dev.sas.core.SasClient client) {
        runner.childClient(client);
    }

    /** Switches to threaded mode; the caller then runs {@link #claimLoop()} on a thread of its own. */
    public void start(Executor stepExecutor, Function<String, Executor> agentExecutors, ScheduledExecutorService timer) {
        runner.start(stepExecutor, agentExecutors, timer);
        admission.start(threads(stepExecutor), loop::noneWaiting);
        loop.admission(admission);
        loop.start(timer);
    }

    /** The threads of a step executor, or 0 when it does not tell (claims are then not sized to them). */
    private static int threads(Executor executor) {
        if (executor instanceof java.util.concurrent.ThreadPoolExecutor pool) {
            return pool.getMaximumPoolSize();
        }
        if (executor instanceof java.util.concurrent.ForkJoinPool pool) {
            return pool.getParallelism();
        }
        return 0;
    }

    /** Tasks claimed and not yet released. */
    public int inFlight() {
        return loop.inFlight();
    }

    /**
     * Takes room for a task of {@code workflow} this node's client is about to insert already
     * claimed, if this scheduler is idle enough to start it at once; then {@link #startReserved}
     * or {@link #cancelReservation} must follow.
     */
    public boolean reserve(WorkflowVersion workflow) {
        return loop.reserve(workflow);
    }

    /** Starts a task {@link #reserve reserved} for and inserted claimed by this node. */
    public void startReserved(ClaimedTask claimed) {
        loop.startReserved(claimed);
    }

    /** Gives back the room of a {@link #reserve reservation} whose task was not inserted claimed. */
    public void cancelReservation() {
        loop.release();
    }

    /** Wakes the claim loop now (a local submit, a recovery, a retry coming due). */
    public void wakeUp() {
        loop.wakeUp();
    }

    /** Wakes the claim loop shortly after a submit in a host's transaction (when the host has likely committed). */
    public void wakeUpAfterHostCommit() {
        loop.wakeUpAfterHostCommit();
    }

    /**
     * Wakes the claim loop now and again at {@code due} (recovered tasks come due after a backoff;
     * waking only now would find nothing and leave them to the next poll).
     */
    public void wakeUpAt(Instant due) {
        loop.wakeUpAt(due);
    }

    /**
     * Stops claiming; running steps go on, and a task whose step finishes from now on is handed
     * back to the store (due at once) instead of starting its next step here.
     */
    public void stopClaiming() {
        runner.stopping();
        loop.stop();
    }

    /**
     * From now on, results of running steps are not recorded: their tasks stay claimed until the
     * deadline and a supervisor recovers them. Used when the shutdown grace period is over, so an
     * interrupt at shutdown is never recorded as the step's failure.
     */
    public void abandonRunning() {
        runner.abandon();
    }

    /**
     * Waits until no task is held or the grace period ends.
     *
     * @return true if idle
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean awaitIdle(Duration grace) throws InterruptedException {
        return loop.awaitIdle(grace);
    }

    /** The claim loop of threaded mode: claim while there is room and work, else wait for a wake-up or the poll interval. */
    public void claimLoop() {
        loop.run();
    }

    /**
     * Claims up to one batch and starts it; used by tests and manual driving when not started.
     *
     * @return how many tasks were claimed
     */
    public int runOnce() {
        return loop.runOnce();
    }
}
