package dev.sas.core;

import dev.sas.core.internal.AgentFlowControls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Executor;
import org.slf4j.LoggerFactory;

/**
 * Builds a {@link SasRuntime}. Not thread-safe. Each setting is checked where it is set;
 * {@link #build()} checks the combinations and copies everything into an immutable
 * {@link RuntimeConfig}, so reusing the builder never changes a runtime already built.
 */
public final class RuntimeBuilder extends SharedSettingsBuilder<RuntimeBuilder> {
    private final List<Workflow<?>> workflows = new ArrayList<>();
    private String instanceId;
    private int schedulerThreads = SasRuntime.DEFAULT_SCHEDULER_THREADS;
    private int claimBatchSize = SasRuntime.DEFAULT_CLAIM_BATCH_SIZE;
    private int maxInFlight = SasRuntime.DEFAULT_MAX_IN_FLIGHT;
    private int agentThreads = SasRuntime.DEFAULT_AGENT_THREADS;
    private int writerThreads = SasRuntime.DEFAULT_WRITER_THREADS;
    private Duration pollInterval = SasRuntime.DEFAULT_POLL_INTERVAL;
    private Duration supervisorInterval = SasRuntime.DEFAULT_SUPERVISOR_INTERVAL;
    private Duration shutdownGrace = SasRuntime.DEFAULT_SHUTDOWN_GRACE;
    private Duration retention = SasRuntime.DEFAULT_RETENTION;
    private Duration unrunnableGrace = SasRuntime.DEFAULT_UNRUNNABLE_GRACE;
    private int retentionBatchSize = SasRuntime.DEFAULT_RETENTION_BATCH_SIZE;
    private int retentionMaxDeletesPerSecond = SasRuntime.DEFAULT_RETENTION_MAX_DELETES_PER_SECOND;
    private Duration retentionInterval = SasRuntime.DEFAULT_RETENTION_INTERVAL;
    private int eventQueueCapacity = SasRuntime.DEFAULT_EVENT_QUEUE_CAPACITY;
    private Executor stepExecutor;
    private final Map<String, Executor> agentExecutors = new HashMap<>();
    private final List<TaskListener> listeners = new ArrayList<>();
    private final Map<String, StatusChannel> statusChannels = new LinkedHashMap<>();
    private Duration busyPollInterval;
    private AlertSink alertSink = alert -> LoggerFactory.getLogger("dev.sas.alerts").error(
            "ALERT task {} ({} / {}) is {} at step {}: {}", alert.taskId(), alert.workflow(), alert.businessKey(),
            alert.status(), alert.stepName(), alert.message());
    private boolean schedulerEnabled = true;
    private boolean supervisorEnabled = true;

    RuntimeBuilder() {
    }

    /**
     * Registers a workflow this runtime can submit and run. Register every version that still
     * has unfinished tasks.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if a workflow with the same name and version is registered
     */
    public RuntimeBuilder workflow(Workflow<?> workflow) {
        Objects.requireNonNull(workflow, "workflow must not be null");
        for (Workflow<?> w : workflows) {
            if (w.name().equals(workflow.name()) && w.version() == workflow.version()) {
                throw new IllegalArgumentException("workflow '" + workflow.name() + "' version "
                        + workflow.version() + " is already registered");
            }
        }
        workflows.add(workflow);
        ChildGroup.unitWorkflows(workflow).stream().filter(u -> workflows.stream().noneMatch(w -> w.name().equals(u.name())
                && w.version() == u.version())).forEach(workflows::add); // a parallel step's branches run as these
        return this;
    }

    /**
     * This runtime's id, stamped on its claims; unique per live runtime. Default: host, pid and
     * a random suffix.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if blank or longer than 100 characters
     */
    public RuntimeBuilder instanceId(String instanceId) {
        Objects.requireNonNull(instanceId, "instanceId must not be null");
        if (instanceId.isBlank() || instanceId.length() > 100) {
            throw new IllegalArgumentException("instanceId must be 1 to 100 non-blank characters, was '"
                    + instanceId + "'");
        }
        this.instanceId = instanceId;
        return this;
    }

    /**
     * Worker threads running steps ({@code sas-scheduler-N}). Ignored when a step executor is given.
     *
     * @throws IllegalArgumentException if less than 1
     */
    public RuntimeBuilder schedulerThreads(int threads) {
        this.schedulerThreads = positive("schedulerThreads", threads);
        return this;
    }

    /**
     * Most tasks claimed in one round trip: a limit, not a target. A claim takes at most what this
     * runtime's threads can start soon, and none while a task of an earlier claim still waits to
     * start, so a task's deadline never runs while it waits for a thread.
     *
     * @throws IllegalArgumentException if less than 1
     */
    public RuntimeBuilder claimBatchSize(int size) {
        this.claimBatchSize = positive("claimBatchSize", size);
        return this;
    }

    /**
     * Most tasks this runtime holds at once (running, waiting for an agent, or being recorded): a
     * limit, not a target (see {@link #claimBatchSize(int)}).
     *
     * @throws IllegalArgumentException if less than 1
     */
    public RuntimeBuilder maxInFlight(int max) {
        this.maxInFlight = positive("maxInFlight", max);
        return this;
    }

    /**
     * Threads that record step results ({@code sas-scheduler-recorder-N}); each commits a batch
     * of whatever results are waiting, so more writers means more commits in parallel.
     *
     * @throws IllegalArgumentException if less than 1
     */
    public RuntimeBuilder writerThreads(int threads) {
        this.writerThreads = positive("writerThreads", threads);
        return this;
    }

    /**
     * Threads per agent ({@code sas-agent-<name>-N}) for agents without their own executor.
     *
     * @throws IllegalArgumentException if less than 1
     */
    public RuntimeBuilder agentThreads(int threads) {
        this.agentThreads = positive("agentThreads", threads);
        return this;
    }

    /**
     * How often the scheduler looks for work submitted by other instances or coming due, when idle
     * (see {@link #busyPollInterval(Duration)} for when it is busy). Local submissions wake it at
     * once; on PostgreSQL so do other instances' submits (a {@code NOTIFY} in their transaction), and
     * this interval is only the fallback. Default 500 ms.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if not positive
     */
    public RuntimeBuilder pollInterval(Duration interval) {
        this.pollInterval = positive("pollInterval", interval);
        return this;
    }

    /**
     * How often the supervisor scans for expired claims.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if not positive
     */
    public RuntimeBuilder supervisorInterval(Duration interval) {
        this.supervisorInterval = positive("supervisorInterval", interval);
        return this;
    }

    /**
     * How long {@link SasRuntime#close()} lets running steps finish before interrupting them.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if negative
     */
    public RuntimeBuilder shutdownGrace(Duration grace) {
        Objects.requireNonNull(grace, "shutdownGrace must not be null");
        if (grace.isNegative()) {
            throw new IllegalArgumentException("shutdownGrace must not be negative, was " + grace);
        }
        this.shutdownGrace = grace;
        return this;
    }

    /**
     * How long final tasks (PROCESSED, COMPENSATED, CANCELLED) are kept before retention
     * deletes them (on the node that holds the supervisor lease, thread {@code sas-retention}).
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if not positive
     */
    public RuntimeBuilder retention(Duration retention) {
        this.retention = positive("retention", retention);
        return this;
    }

    /**
     * How long a task may stay due while no live runtime has registered its workflow version (a
     * definition removed from every node, a deploy rolled back) before the active supervisor parks
     * it: the task becomes {@link TaskStatus#PARKED} with an error naming the workflow version and
     * since when it is due, a {@link TaskEvent.Type#PARKED} event, and a WARN per workflow version.
     * Parked tasks become {@code PENDING} again by themselves (no resubmit) within about a minute of
     * a runtime that registers the version starting; until then nobody could claim them anyway.
     * Default 5 minutes. Every runtime that claims advertises its versions on the supervisor
     * interval, also when its supervisor is disabled.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if not positive
     */
    public RuntimeBuilder unrunnableGrace(Duration grace) {
        this.unrunnableGrace = positive("unrunnableGrace", grace);
        return this;
    }

    /**
     * Most final tasks retention deletes in one batch (one store call). Default 1,000.
     *
     * @throws IllegalArgumentException if less than 1
     */
    public RuntimeBuilder retentionBatchSize(int size) {
        this.retentionBatchSize = positive("retentionBatchSize", size);
        return this;
    }

    /**
     * Most final tasks retention deletes per second while a backlog lasts: full batches follow
     * each other no faster than this allows. Default 5,000.
     *
     * @throws IllegalArgumentException if less than 1
     */
    public RuntimeBuilder retentionMaxDeletesPerSecond(int max) {
        this.retentionMaxDeletesPerSecond = positive("retentionMaxDeletesPerSecond", max);
        return this;
    }

    /**
     * How often retention looks for final tasks past retention once a batch came back not full.
     * Default 1 minute.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if not positive
     */
    public RuntimeBuilder retentionInterval(Duration interval) {
        this.retentionInterval = positive("retentionInterval", interval);
        return this;
    }

    /**
     * Most events and alerts waiting for listeners, status channels and the alert sink. When a slow
     * listener lets this many pile up, newer ones are dropped for listeners (counted in
     * {@link SasMetrics#eventsDropped()}, logged at WARN at most every 10 s) instead of blocking
     * the scheduler; the event log in the store still has them. Default
     * {@link SasRuntime#DEFAULT_EVENT_QUEUE_CAPACITY}.
     *
     * @throws IllegalArgumentException if less than 1
     */
    public RuntimeBuilder eventQueueCapacity(int capacity) {
        this.eventQueueCapacity = positive("eventQueueCapacity", capacity);
        return this;
    }

    /**
     * Runs steps on the host's executor (e.g. virtual threads on Java 21) instead of
     * {@code sas-scheduler-N} threads. Never shut down by SAS.
     *
     * @throws NullPointerException if null
     */
    public RuntimeBuilder stepExecutor(Executor executor) {
        this.stepExecutor = Objects.requireNonNull(executor, "stepExecutor must not be null");
        return this;
    }

    /**
     * Runs calls to the named agent on the host's executor. Never shut down by SAS.
     *
     * @throws NullPointerException if an argument is null
     */
    public RuntimeBuilder agentExecutor(String agentName, Executor executor) {
        Objects.requireNonNull(agentName, "agentName must not be null");
        agentExecutors.put(agentName, Objects.requireNonNull(executor, "agent executor must not be null"));
        return this;
    }

    /**
     * Adds a listener for every event this runtime records. Listeners are called on one thread
     * ({@code sas-events}), in order, after the event's transition committed; what they throw
     * (also an {@code Error}) is logged, counted in {@link SasMetrics#listenerFailures()} and does
     * not affect the task.
     *
     * <p>Events are a notification, not the record: the event log in the store keeps every event
     * ({@link SasClient#events}). When listeners fall behind by more than
     * {@link #eventQueueCapacity(int)} events, newer events are dropped for listeners rather than
     * slowing the scheduler down, and counted in {@link SasMetrics#eventsDropped()}; after
     * {@link SasRuntime#close()} returns no listener is called again.
     *
     * @throws NullPointerException if null
     */
    public RuntimeBuilder onEvent(TaskListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
        return this;
    }

    /**
     * Registers a status channel whose messages go to {@code listener}, one event at a time; see
     * {@link #statusChannel(StatusChannel)}. What the listener throws is logged and counted in
     * {@link SasMetrics#listenerFailures()} and not repeated; use a {@link StatusHandler} to have
     * failed messages delivered again.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the name is invalid or already registered
     */
    public RuntimeBuilder statusChannel(String name, TaskListener listener) {
        return statusChannel(StatusChannel.builder(name).listener(listener).build());
    }

    /**
     * Registers a status channel this runtime consumes: the status messages of every task submitted
     * with {@code SubmitOptions.Builder.statusChannel(channel.name())}, recorded by any node, reach the channel's
     * handler from the store's outbox, in order per task, at least once, with a delivery id, on the
     * thread {@code sas-status-<name>}. The channel is registered in the store when the runtime starts
     * (submits naming it are accepted by every node from then on, and by this runtime's own client at
     * once); its messages wait in the store while no node consumes it. Of several nodes registering
     * the same channel one consumes it at a time (see {@link StatusChannel}).
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if a channel of the same name is already registered
     */
    public RuntimeBuilder statusChannel(StatusChannel channel) {
        Objects.requireNonNull(channel, "status channel must not be null");
        if (statusChannels.putIfAbsent(channel.name(), channel) != null) {
            throw new IllegalArgumentException("status channel '" + channel.name() + "' is already registered");
        }
        return this;
    }

    /**
     * How often the scheduler and status channels look at the store while recently busy (they found
     * work within the last 2 s), on a store that pushes no wake-up hints (MariaDB, H2): they then
     * look twice as seldom after each empty look, up to {@link #pollInterval(Duration)}. On PostgreSQL
     * a hint from the committing node wakes them and they poll at {@code pollInterval} only as the
     * fallback. Default 20 ms, or {@code pollInterval} if that is shorter.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if not positive
     */
    public RuntimeBuilder busyPollInterval(Duration interval) {
        this.busyPollInterval = positive("busyPollInterval", interval);
        return this;
    }

    /**
     * Where alerts go. Default: an ERROR log line on logger {@code dev.sas.alerts}.
     *
     * @throws NullPointerException if null
     */
    public RuntimeBuilder alertSink(AlertSink sink) {
        this.alertSink = Objects.requireNonNull(sink, "alertSink must not be null");
        return this;
    }

    /** Whether this runtime claims and runs tasks (default true); false for a submit-only node. */
    public RuntimeBuilder schedulerEnabled(boolean enabled) {
        this.schedulerEnabled = enabled;
        return this;
    }

    /** Whether this runtime takes part in supervisor election (default true). */
    public RuntimeBuilder supervisorEnabled(boolean enabled) {
        this.supervisorEnabled = enabled;
        return this;
    }

    /**
     * The runtime, not yet started.
     *
     * @throws IllegalStateException if no state store or no workflow was given, if
     *     claimBatchSize is larger than maxInFlight, if busyPollInterval is longer than pollInterval,
     *     if two agents of one name have different {@link FlowControl}s, or if an agent has flow
     *     control and the store does not support it, or if a workflow has a step that awaits a reply
     *     and no {@link #completionTokenKeys} were given
     */
    public SasRuntime build() {
        if (store == null) {
            throw new IllegalStateException("stateStore is required: call stateStore(...) before build()");
        }
        if (workflows.isEmpty()) {
            throw new IllegalStateException("at least one workflow is required: call workflow(...) before build()");
        }
        if (claimBatchSize > maxInFlight) {
            throw new IllegalStateException("claimBatchSize (" + claimBatchSize + ") must not exceed maxInFlight ("
                    + maxInFlight + ")");
        }
        if (busyPollInterval != null && busyPollInterval.compareTo(pollInterval) > 0) {
            throw new IllegalStateException("busyPollInterval (" + busyPollInterval + ") must not exceed pollInterval ("
                    + pollInterval + ")");
        }
        Duration busy = busyPollInterval != null ? busyPollInterval
                : SasRuntime.DEFAULT_BUSY_POLL_INTERVAL.compareTo(pollInterval) < 0 ? SasRuntime.DEFAULT_BUSY_POLL_INTERVAL
                : pollInterval;
        for (Map.Entry<String, FlowControl> e : AgentFlowControls.of(workflows).entrySet()) {
            if (e.getValue().isLimited() && store.flowControl().isEmpty()) {
                throw new IllegalStateException("agent '" + e.getKey() + "' has flow control (" + e.getValue()
                        + "), which needs a stateStore that keeps it; " + store + " does not");
            }
        }
        if (completionTokenKeys == null) {
            for (Workflow<?> w : workflows) {
                for (StepDefinition<?> s : w.steps()) {
                    if (s.awaitsCompletion() && !s.startsChildTask()) {
                        throw new IllegalStateException("step '" + s.name() + "' of workflow '" + w.name()
                                + "' awaits a reply, whose token must be signed: set completionTokenKeys(CompletionTokenKeys"
                                + ".builder().currentKey(id, secret).build()), the same keys on every node and client");
                    }
                }
            }
        }
        return SasRuntime.create(new RuntimeConfig(store, workflows, instanceId != null ? instanceId
                : defaultInstanceId(), clock, databaseClock, maxPayloadBytes, schedulerEnabled, schedulerThreads, claimBatchSize,
                maxInFlight, writerThreads, pollInterval, agentThreads, supervisorEnabled, supervisorInterval,
                shutdownGrace, retention, retentionBatchSize, retentionMaxDeletesPerSecond, retentionInterval,
                stepExecutor, agentExecutors, listeners, statusChannels, alertSink, eventQueueCapacity, unrunnableGrace,
                tracing, busy, completionTokenKeys));
    }

    private static int positive(String name, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + " must be at least 1, was " + value);
        }
        return value;
    }

    private static Duration positive(String name, Duration value) {
        Objects.requireNonNull(value, name + " must not be null");
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(name + " must be positive, was " + value);
        }
        return value;
    }

    private static String defaultInstanceId() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            host = "sas";
        }
        String id = host + "-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
        return id.length() > 100 ? id.substring(id.length() - 100) : id;
    }
}
