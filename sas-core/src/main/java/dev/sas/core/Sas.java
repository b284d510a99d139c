package dev.sas.core;

import dev.sas.core.internal.EventBus;
import dev.sas.core.internal.Metrics;
import dev.sas.core.internal.NamedThreadFactory;
import dev.sas.core.internal.Recorder;
import dev.sas.core.internal.Registry;
import dev.sas.core.internal.Scheduler;
import dev.sas.core.internal.Supervisor;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.SubmitResult;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SAS runtime: a Scheduler, the Agents' executors and a Supervisor, in-process, over one
 * {@link StateStore}. Any number of runtimes (in one process or many) may share a store; they
 * split the work and recover each other's tasks.
 *
 * <pre>{@code
 * try (Sas sas = Sas.builder().stateStore(store).workflow(orders).build()) {
 *     sas.start();
 *     TaskId id = sas.submit(orders, "order-42", order);
 * }
 * }</pre>
 *
 * <p>Thread-safe. {@link #start()} and {@link #close()} are idempotent. Without {@code start()},
 * nothing runs in the background: {@link #runSchedulerOnce()} and {@link #runSupervisorOnce()}
 * drive the roles by hand on the calling thread, which with a manual clock makes tests
 * deterministic.
 */
public final class Sas implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Sas.class);

    /** Default scheduler worker threads: 4. */
    public static final int DEFAULT_SCHEDULER_THREADS = 4;
    /** Default tasks claimed per round trip: 64. */
    public static final int DEFAULT_CLAIM_BATCH_SIZE = 64;
    /** Default most tasks held at once: 256. */
    public static final int DEFAULT_MAX_IN_FLIGHT = 256;
    /** Default threads recording step results: 2. */
    public static final int DEFAULT_WRITER_THREADS = 2;
    /** Default threads per agent: 8. */
    public static final int DEFAULT_AGENT_THREADS = 8;
    /** Default poll interval for work from other instances: 500 ms. */
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(500);
    /** Default supervisor interval: 1 s. */
    public static final Duration DEFAULT_SUPERVISOR_INTERVAL = Duration.ofSeconds(1);
    /** Default grace period for running steps at shutdown: 10 s. */
    public static final Duration DEFAULT_SHUTDOWN_GRACE = Duration.ofSeconds(10);
    /** Default retention of final tasks: 7 days. */
    public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);
    /** Default largest encoded input or step output: 1 MiB. */
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
    /** Shortest supervisor lease: 1 s (the lease is three supervisor intervals). */
    public static final Duration MIN_SUPERVISOR_LEASE = Duration.ofSeconds(1);
    /** Longest business key. */
    public static final int MAX_BUSINESS_KEY_LENGTH = 200;

    private final StateStore store;
    private final Registry registry;
    private final Clock clock;
    private final String instanceId;
    private final Builder config;
    private final Metrics metrics = new Metrics();
    private final EventBus events;
    private final Recorder recorder;
    private final Scheduler scheduler;
    private final Supervisor supervisor;
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final List<ExecutorService> owned = new ArrayList<>();
    private final Map<String, Executor> agentExecutors = new ConcurrentHashMap<>();
    private Thread claimThread;
    private ScheduledExecutorService supervisorExecutor;
    private ScheduledExecutorService timer;
    private ExecutorService eventExecutor;

    private Sas(Builder b) {
        this.config = b.copy();
        this.store = b.store;
        this.registry = new Registry(b.workflows);
        this.clock = b.clock;
        this.instanceId = b.instanceId != null ? b.instanceId : defaultInstanceId();
        this.events = new EventBus(b.listeners, b.replyChannels, b.alertSink, metrics);
        this.recorder = new Recorder(store, clock, metrics, Math.max(b.claimBatchSize, 64) * 2);
        this.scheduler = new Scheduler(store, registry, clock, instanceId, recorder, events, metrics, b.claimBatchSize,
                b.maxInFlight, b.maxPayloadBytes, b.pollInterval);
        // The active supervisor renews its lease every interval; after three missed renewals another takes over.
        Duration leaseTtl = b.supervisorInterval.multipliedBy(3).compareTo(MIN_SUPERVISOR_LEASE) < 0
                ? MIN_SUPERVISOR_LEASE : b.supervisorInterval.multipliedBy(3);
        this.supervisor = new Supervisor(store, registry, clock, instanceId, events, metrics, leaseTtl, 500,
                b.retention, scheduler::wakeUpAt);
    }

    /** A new builder. Not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    private static String defaultInstanceId() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            host = "sas";
        }
        String id = host + "-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
        return id.length() > 100 ? id.substring(id.length() - 100) : id;
    }

    /** This runtime's instance id, stamped on the tasks it claims. */
    public String instanceId() {
        return instanceId;
    }

    /**
     * Starts the scheduler, agent executors and supervisor threads. Idempotent.
     *
     * @throws IllegalStateException if the runtime was closed
     */
    public Sas start() {
        if (closed.get()) {
            throw new IllegalStateException("runtime " + instanceId + " is closed; build a new one");
        }
        if (!started.compareAndSet(false, true)) {
            return this;
        }
        Executor steps = config.stepExecutor;
        if (steps == null) {
            ExecutorService pool = Executors.newFixedThreadPool(config.schedulerThreads,
                    new NamedThreadFactory("sas-scheduler"));
            owned.add(pool);
            steps = pool;
        }
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, new NamedThreadFactory("sas-timer", false));
        t.setRemoveOnCancelPolicy(true);
        timer = t;
        eventExecutor = Executors.newSingleThreadExecutor(new NamedThreadFactory("sas-events", false));
        events.start(eventExecutor);
        recorder.start(config.writerThreads);
        scheduler.start(steps, this::agentExecutor, timer);
        if (config.schedulerEnabled) {
            claimThread = new NamedThreadFactory("sas-scheduler-claim", false).newThread(scheduler::claimLoop);
            claimThread.start();
        }
        if (config.supervisorEnabled) {
            supervisorExecutor = Executors.newSingleThreadScheduledExecutor(new NamedThreadFactory("sas-supervisor", false));
            long ms = config.supervisorInterval.toMillis();
            supervisorExecutor.scheduleWithFixedDelay(this::superviseQuietly, ms, ms, TimeUnit.MILLISECONDS);
        }
        log.info("SAS runtime {} started: store={}, workflows={}, schedulerEnabled={}, schedulerThreads={}, "
                        + "claimBatchSize={}, maxInFlight={}, writerThreads={}, pollInterval={}, supervisorEnabled={}, supervisorInterval={}, "
                        + "agentThreads={}, maxPayloadBytes={}, retention={}, shutdownGrace={}, clock={}",
                instanceId, store, registry.all().stream().map(w -> w.name() + " v" + w.version()).toList(),
                config.schedulerEnabled, config.stepExecutor != null ? "host executor" : config.schedulerThreads,
                config.claimBatchSize, config.maxInFlight, config.writerThreads, config.pollInterval,
                config.supervisorEnabled,
                config.supervisorInterval, config.agentThreads, config.maxPayloadBytes, config.retention,
                config.shutdownGrace, clock);
        return this;
    }

    private void superviseQuietly() {
        try {
            supervisor.runOnce();
        } catch (RuntimeException e) {
            metrics.storeFailure();
            log.warn("instance {}: supervisor pass failed ({}); trying again in {}", instanceId, e.getMessage(),
                    config.supervisorInterval);
        }
    }

    private Executor agentExecutor(String agentName) {
        Executor configured = config.agentExecutors.get(agentName);
        if (configured != null) {
            return configured;
        }
        return agentExecutors.computeIfAbsent(agentName, name -> {
            ThreadPoolExecutor pool = new ThreadPoolExecutor(config.agentThreads, config.agentThreads, 60,
                    TimeUnit.SECONDS, new LinkedBlockingQueue<>(), new NamedThreadFactory("sas-agent-" + name));
            pool.allowCoreThreadTimeOut(true);
            synchronized (owned) {
                owned.add(pool);
            }
            return pool;
        });
    }

    /**
     * Stops claiming, lets running steps finish for up to the grace period, then interrupts them,
     * writes what is queued, and stops the supervisor last. Unfinished tasks stay claimed until
     * their deadline and are then recovered by a supervisor; nothing is half-recorded. Executors
     * the host supplied are not shut down. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (!started.get()) {
            return;
        }
        boolean interrupted = false;
        try {
            scheduler.stopClaiming();
            if (claimThread != null) {
                claimThread.join(5_000);
            }
            if (!scheduler.awaitIdle(config.shutdownGrace)) {
                scheduler.abandonRunning();
                log.warn("instance {}: {} tasks still running after the {} grace period; interrupting them, "
                        + "the supervisor will recover them", instanceId, scheduler.inFlight(), config.shutdownGrace);
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        synchronized (owned) {
            for (ExecutorService pool : owned) {
                pool.shutdownNow();
            }
        }
        try {
            recorder.stop(5_000);
        } catch (InterruptedException e) {
            interrupted = true;
        }
        timer.shutdownNow();
        if (supervisorExecutor != null) {
            supervisorExecutor.shutdownNow();
            try {
                supervisorExecutor.awaitTermination(5, TimeUnit.SECONDS);
                supervisor.releaseLease();
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (RuntimeException e) {
                log.warn("instance {}: could not release the supervisor lease ({})", instanceId, e.getMessage());
            }
        }
        eventExecutor.shutdown();
        try {
            eventExecutor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            interrupted = true;
        }
        log.info("SAS runtime {} stopped: {}", instanceId, metrics.snapshot());
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    // ------------------------------------------------------------------ submission

    /**
     * Submits a task with default options. See {@link #submit(Workflow, String, Object, SubmitOptions)}.
     */
    public <I> TaskId submit(Workflow<I> workflow, String businessKey, I input) {
        return submit(workflow, businessKey, input, SubmitOptions.defaults());
    }

    /**
     * Submits a task: one run of {@code workflow} for {@code input}. A second submit with the same
     * business key for the same workflow returns the first task's id and changes nothing.
     *
     * @return the task's id
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the business key is blank or too long, or the encoded
     *     input is blank, cannot be encoded, or is larger than {@code maxPayloadBytes}
     * @throws WorkflowNotFoundException if the workflow is not registered with this runtime
     * @throws IllegalStateException if the runtime is closed
     * @throws StateStoreException if the store failed; the task may then not exist
     */
    public <I> TaskId submit(Workflow<I> workflow, String businessKey, I input, SubmitOptions options) {
        Objects.requireNonNull(workflow, "workflow must not be null");
        Objects.requireNonNull(businessKey, "businessKey must not be null");
        Objects.requireNonNull(input, "input must not be null");
        Objects.requireNonNull(options, "options must not be null");
        if (closed.get()) {
            throw new IllegalStateException("runtime " + instanceId + " is closed");
        }
        registry.require(workflow);
        if (businessKey.isBlank()) {
            throw new IllegalArgumentException("businessKey must not be blank (workflow '" + workflow.name() + "')");
        }
        if (businessKey.length() > MAX_BUSINESS_KEY_LENGTH) {
            throw new IllegalArgumentException("businessKey must be at most " + MAX_BUSINESS_KEY_LENGTH
                    + " characters, was " + businessKey.length() + " (workflow '" + workflow.name() + "')");
        }
        String encoded;
        try {
            encoded = workflow.inputCodec().encode(input);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("input for workflow '" + workflow.name() + "' business key '"
                    + businessKey + "' cannot be encoded: " + e.getMessage(), e);
        }
        if (encoded == null || encoded.isBlank()) {
            throw new IllegalArgumentException("input for workflow '" + workflow.name() + "' business key '"
                    + businessKey + "' encodes to a blank string; pass a real input");
        }
        if (encoded.length() > config.maxPayloadBytes / 3) {
            int bytes = encoded.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > config.maxPayloadBytes) {
                throw new IllegalArgumentException("input for workflow '" + workflow.name() + "' business key '"
                        + businessKey + "' is " + bytes + " bytes, over the limit of " + config.maxPayloadBytes
                        + " (maxPayloadBytes); store large data elsewhere and pass a reference");
            }
        }
        Instant now = clock.instant();
        TaskId id = TaskId.random();
        StepDefinition<I> first = workflow.steps().get(0);
        NewTask task = new NewTask(id, workflow.name(), workflow.version(), businessKey, options.priority(), encoded,
                options.replyTo(), first.name(), first.completeWithin(), now, now.plus(options.delay()));
        TaskEvent received = new TaskEvent(id, businessKey, workflow.name(), TaskEvent.Type.RECEIVED, -1, null, 0, now,
                null);
        SubmitResult result = store.submit(task, received, options.transaction());
        if (result.created()) {
            log.debug("task {} submitted: workflow {} v{}, business key {}", id, workflow.name(), workflow.version(),
                    businessKey);
            if (options.transaction() == null) {
                // Inside a host transaction the task may still roll back: its RECEIVED event is in
                // the event log once committed, but listeners hear first of it at its claim.
                events.publish(List.of(received), options.replyTo());
            }
            if (options.delay().isZero()) {
                scheduler.wakeUp();
            }
        } else {
            log.debug("task {}: duplicate submission for business key {} ignored", result.taskId(), businessKey);
        }
        return result.taskId();
    }

    /**
     * Wakes this runtime's scheduler to claim now, e.g. after the host committed a transaction in
     * which it submitted tasks (otherwise they are found by the next poll).
     */
    public void pollNow() {
        scheduler.wakeUp();
    }

    // ------------------------------------------------------------------ status and operations

    /**
     * The task with all its steps: recorded ones as stored, the others as {@code PENDING} (or
     * {@code PROCESSING} for the one running).
     *
     * @throws NullPointerException if {@code taskId} is null
     */
    public Optional<TaskInfo> status(TaskId taskId) {
        Objects.requireNonNull(taskId, "taskId must not be null");
        return store.find(taskId).map(this::withAllSteps);
    }

    private TaskInfo withAllSteps(TaskInfo info) {
        Workflow<?> wf = registry.find(info.workflow(), info.workflowVersion());
        if (wf == null) {
            return info;
        }
        Map<Integer, TaskInfo.StepInfo> recorded = new HashMap<>();
        for (TaskInfo.StepInfo s : info.steps()) {
            recorded.put(s.index(), s);
        }
        List<TaskInfo.StepInfo> steps = new ArrayList<>();
        for (StepDefinition<?> def : wf.steps()) {
            TaskInfo.StepInfo s = recorded.get(def.index());
            boolean running = info.status() == TaskStatus.PROCESSING && info.currentStep() == def.index();
            if (s == null) {
                s = new TaskInfo.StepInfo(def.index(), def.name(), running ? StepStatus.PROCESSING : StepStatus.PENDING,
                        0, null, null, null, null, null);
            } else if (running && s.status() != StepStatus.COMPLETED) {
                s = new TaskInfo.StepInfo(s.index(), s.name(), StepStatus.PROCESSING, s.attempts(), s.output(),
                        s.error(), s.startedAt(), s.finishedAt(), s.compensationStatus());
            }
            steps.add(s);
        }
        return new TaskInfo(info.taskId(), info.workflow(), info.workflowVersion(), info.businessKey(), info.status(),
                info.priority(), info.currentStep(), info.failureCount(), info.lockedBy(), info.lease(),
                info.completeBy(), info.nextAttemptAt(), info.createdAt(), info.updatedAt(), info.lastError(),
                info.cancelRequested(), steps);
    }

    /**
     * The task's recorded events, oldest first.
     *
     * @throws NullPointerException if {@code taskId} is null
     */
    public List<TaskEvent> events(TaskId taskId) {
        Objects.requireNonNull(taskId, "taskId must not be null");
        return store.events(taskId);
    }

    /**
     * Up to {@code limit} tasks in this state, oldest first, without their steps.
     *
     * @throws NullPointerException if {@code status} is null
     * @throws IllegalArgumentException if {@code limit} is not positive
     */
    public List<TaskInfo> list(TaskStatus status, int limit) {
        Objects.requireNonNull(status, "status must not be null");
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive, was " + limit);
        }
        return store.list(status, limit);
    }

    /** Task counts per state across the whole store, every state present. */
    public Map<TaskStatus, Long> countByStatus() {
        Map<TaskStatus, Long> counts = new LinkedHashMap<>();
        Map<TaskStatus, Long> stored = store.countByStatus();
        for (TaskStatus s : TaskStatus.values()) {
            counts.put(s, stored.getOrDefault(s, 0L));
        }
        return counts;
    }

    /**
     * Resubmits an {@code ERROR} task from its failed step (or continues compensating a
     * {@code COMPENSATION_FAILED} one), with its failure count reset.
     *
     * @throws NullPointerException if {@code taskId} is null
     * @throws TaskNotFoundException if there is no such task
     * @throws IllegalStateException if the task is in another state
     */
    public void resubmit(TaskId taskId) {
        Objects.requireNonNull(taskId, "taskId must not be null");
        TaskInfo info = store.find(taskId).orElseThrow(() -> new TaskNotFoundException(taskId));
        Instant now = clock.instant();
        TaskEvent event = operatorEvent(info, TaskEvent.Type.RESUBMITTED, now);
        if (!store.resubmit(taskId, now, event)) {
            throw new IllegalStateException("task " + taskId + " is " + store.find(taskId).map(TaskInfo::status)
                    .orElse(null) + "; only ERROR or COMPENSATION_FAILED tasks can be resubmitted");
        }
        log.info("task {} step {}: resubmitted by an operator", taskId, info.currentStep());
        events.publish(List.of(event), null);
        scheduler.wakeUp();
    }

    /**
     * Cancels a task that has not finished: a scheduler compensates its completed steps in reverse
     * order, then it ends {@code CANCELLED} (or {@code COMPENSATION_FAILED}). A running step is
     * allowed to finish first.
     *
     * @return false if the task had already finished or a cancel was already requested
     * @throws NullPointerException if {@code taskId} is null
     * @throws TaskNotFoundException if there is no such task
     */
    public boolean cancel(TaskId taskId) {
        Objects.requireNonNull(taskId, "taskId must not be null");
        TaskInfo info = store.find(taskId).orElseThrow(() -> new TaskNotFoundException(taskId));
        Instant now = clock.instant();
        TaskEvent event = operatorEvent(info, TaskEvent.Type.CANCEL_REQUESTED, now);
        boolean requested = store.requestCancel(taskId, now, event);
        if (requested) {
            log.info("task {} step {}: cancel requested by an operator", taskId, info.currentStep());
            events.publish(List.of(event), null);
            scheduler.wakeUp();
        }
        return requested;
    }

    private static TaskEvent operatorEvent(TaskInfo info, TaskEvent.Type type, Instant at) {
        return new TaskEvent(info.taskId(), info.businessKey(), info.workflow(), type, info.currentStep(), null, 0, at,
                null);
    }

    /**
     * Claims one batch of due tasks and runs them on the calling thread, each as far as it goes
     * (agent replies that are not ready continue on the thread that completes them). For tests and
     * manual driving; the store and clock decide what is due.
     *
     * @return how many tasks were claimed
     * @throws IllegalStateException if the runtime was started or closed
     */
    public int runSchedulerOnce() {
        requireManual();
        return scheduler.runOnce();
    }

    /**
     * Runs one supervisor pass on the calling thread. For tests and manual driving.
     *
     * @return how many expired claims were recovered (0 if another instance holds the supervisor lease)
     * @throws IllegalStateException if the runtime was started or closed
     */
    public int runSupervisorOnce() {
        requireManual();
        return supervisor.runOnce();
    }

    private void requireManual() {
        if (started.get() || closed.get()) {
            throw new IllegalStateException("runSchedulerOnce/runSupervisorOnce drive a runtime that was not started;"
                    + " runtime " + instanceId + " is " + (closed.get() ? "closed" : "started"));
        }
    }

    /** Counters since this runtime was built. */
    public SasMetrics metrics() {
        return metrics.snapshot();
    }

    /** Tasks this runtime holds right now. */
    public int inFlight() {
        return scheduler.inFlight();
    }

    @Override
    public String toString() {
        return "Sas{" + instanceId + ", store=" + store + '}';
    }

    /**
     * Builds a {@link Sas} runtime. Not thread-safe. Each setting is checked where it is set;
     * {@link #build()} checks that a store and at least one workflow were given.
     */
    public static final class Builder {
        private StateStore store;
        private final List<Workflow<?>> workflows = new ArrayList<>();
        private String instanceId;
        private int schedulerThreads = DEFAULT_SCHEDULER_THREADS;
        private int claimBatchSize = DEFAULT_CLAIM_BATCH_SIZE;
        private int maxInFlight = DEFAULT_MAX_IN_FLIGHT;
        private int agentThreads = DEFAULT_AGENT_THREADS;
        private int writerThreads = DEFAULT_WRITER_THREADS;
        private Duration pollInterval = DEFAULT_POLL_INTERVAL;
        private Duration supervisorInterval = DEFAULT_SUPERVISOR_INTERVAL;
        private Duration shutdownGrace = DEFAULT_SHUTDOWN_GRACE;
        private Duration retention = DEFAULT_RETENTION;
        private int maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;
        private Clock clock = Clock.systemUTC();
        private Executor stepExecutor;
        private final Map<String, Executor> agentExecutors = new HashMap<>();
        private final List<TaskListener> listeners = new ArrayList<>();
        private final Map<String, TaskListener> replyChannels = new HashMap<>();
        private AlertSink alertSink = alert -> LoggerFactory.getLogger("dev.sas.alerts").error(
                "ALERT task {} ({} / {}) is {} at step {}: {}", alert.taskId(), alert.workflow(), alert.businessKey(),
                alert.status(), alert.stepName(), alert.message());
        private boolean schedulerEnabled = true;
        private boolean supervisorEnabled = true;

        private Builder() {
        }

        private Builder copy() {
            Builder b = new Builder();
            b.store = store;
            b.workflows.addAll(workflows);
            b.instanceId = instanceId;
            b.schedulerThreads = schedulerThreads;
            b.claimBatchSize = claimBatchSize;
            b.maxInFlight = maxInFlight;
            b.agentThreads = agentThreads;
            b.writerThreads = writerThreads;
            b.pollInterval = pollInterval;
            b.supervisorInterval = supervisorInterval;
            b.shutdownGrace = shutdownGrace;
            b.retention = retention;
            b.maxPayloadBytes = maxPayloadBytes;
            b.clock = clock;
            b.stepExecutor = stepExecutor;
            b.agentExecutors.putAll(agentExecutors);
            b.listeners.addAll(listeners);
            b.replyChannels.putAll(replyChannels);
            b.alertSink = alertSink;
            b.schedulerEnabled = schedulerEnabled;
            b.supervisorEnabled = supervisorEnabled;
            return b;
        }

        /**
         * Where tasks live. Required.
         *
         * @throws NullPointerException if null
         */
        public Builder stateStore(StateStore store) {
            this.store = Objects.requireNonNull(store, "stateStore must not be null");
            return this;
        }

        /**
         * Registers a workflow this runtime can submit and run. Register every version that still
         * has unfinished tasks.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if a workflow with the same name and version is registered
         */
        public Builder workflow(Workflow<?> workflow) {
            Objects.requireNonNull(workflow, "workflow must not be null");
            for (Workflow<?> w : workflows) {
                if (w.name().equals(workflow.name()) && w.version() == workflow.version()) {
                    throw new IllegalArgumentException("workflow '" + workflow.name() + "' version "
                            + workflow.version() + " is already registered");
                }
            }
            workflows.add(workflow);
            return this;
        }

        /**
         * This runtime's id, stamped on its claims; unique per live runtime. Default: host, pid and
         * a random suffix.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if blank or longer than 100 characters
         */
        public Builder instanceId(String instanceId) {
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
        public Builder schedulerThreads(int threads) {
            this.schedulerThreads = positive("schedulerThreads", threads);
            return this;
        }

        /**
         * Most tasks claimed in one round trip.
         *
         * @throws IllegalArgumentException if less than 1
         */
        public Builder claimBatchSize(int size) {
            this.claimBatchSize = positive("claimBatchSize", size);
            return this;
        }

        /**
         * Most tasks this runtime holds at once (running, waiting for an agent, or being recorded).
         *
         * @throws IllegalArgumentException if less than 1
         */
        public Builder maxInFlight(int max) {
            this.maxInFlight = positive("maxInFlight", max);
            return this;
        }

        /**
         * Threads that record step results ({@code sas-scheduler-recorder-N}); each commits a batch
         * of whatever results are waiting, so more writers means more commits in parallel.
         *
         * @throws IllegalArgumentException if less than 1
         */
        public Builder writerThreads(int threads) {
            this.writerThreads = positive("writerThreads", threads);
            return this;
        }

        /**
         * Threads per agent ({@code sas-agent-<name>-N}) for agents without their own executor.
         *
         * @throws IllegalArgumentException if less than 1
         */
        public Builder agentThreads(int threads) {
            this.agentThreads = positive("agentThreads", threads);
            return this;
        }

        /**
         * How often the scheduler looks for work submitted by other instances or coming due.
         * Local submissions wake it at once.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder pollInterval(Duration interval) {
            this.pollInterval = positive("pollInterval", interval);
            return this;
        }

        /**
         * How often the supervisor scans for expired claims.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder supervisorInterval(Duration interval) {
            this.supervisorInterval = positive("supervisorInterval", interval);
            return this;
        }

        /**
         * How long {@link Sas#close()} lets running steps finish before interrupting them.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if negative
         */
        public Builder shutdownGrace(Duration grace) {
            Objects.requireNonNull(grace, "shutdownGrace must not be null");
            if (grace.isNegative()) {
                throw new IllegalArgumentException("shutdownGrace must not be negative, was " + grace);
            }
            this.shutdownGrace = grace;
            return this;
        }

        /**
         * How long final tasks (PROCESSED, COMPENSATED, CANCELLED) are kept before the supervisor
         * purges them.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder retention(Duration retention) {
            this.retention = positive("retention", retention);
            return this;
        }

        /**
         * Largest encoded input or step output, in UTF-8 bytes.
         *
         * @throws IllegalArgumentException if less than 1
         */
        public Builder maxPayloadBytes(int bytes) {
            this.maxPayloadBytes = positive("maxPayloadBytes", bytes);
            return this;
        }

        /**
         * The source of all time (deadlines, backoff, events). Default: the system UTC clock.
         *
         * @throws NullPointerException if null
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * Runs steps on the host's executor (e.g. virtual threads on Java 21) instead of
         * {@code sas-scheduler-N} threads. Never shut down by SAS.
         *
         * @throws NullPointerException if null
         */
        public Builder stepExecutor(Executor executor) {
            this.stepExecutor = Objects.requireNonNull(executor, "stepExecutor must not be null");
            return this;
        }

        /**
         * Runs calls to the named agent on the host's executor. Never shut down by SAS.
         *
         * @throws NullPointerException if an argument is null
         */
        public Builder agentExecutor(String agentName, Executor executor) {
            Objects.requireNonNull(agentName, "agentName must not be null");
            agentExecutors.put(agentName, Objects.requireNonNull(executor, "agent executor must not be null"));
            return this;
        }

        /**
         * Adds a listener for every event this runtime records.
         *
         * @throws NullPointerException if null
         */
        public Builder onEvent(TaskListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
            return this;
        }

        /**
         * Registers a reply channel: tasks submitted with {@code SubmitOptions.replyTo(name)}
         * deliver their events here.
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the name is invalid or already registered
         */
        public Builder replyChannel(String name, TaskListener listener) {
            Workflow.checkName("reply channel name", name);
            Objects.requireNonNull(listener, "reply channel listener must not be null");
            if (replyChannels.putIfAbsent(name, listener) != null) {
                throw new IllegalArgumentException("reply channel '" + name + "' is already registered");
            }
            return this;
        }

        /**
         * Where alerts go. Default: an ERROR log line on logger {@code dev.sas.alerts}.
         *
         * @throws NullPointerException if null
         */
        public Builder alertSink(AlertSink sink) {
            this.alertSink = Objects.requireNonNull(sink, "alertSink must not be null");
            return this;
        }

        /** Whether this runtime claims and runs tasks (default true); false for a submit-only node. */
        public Builder schedulerEnabled(boolean enabled) {
            this.schedulerEnabled = enabled;
            return this;
        }

        /** Whether this runtime takes part in supervisor election (default true). */
        public Builder supervisorEnabled(boolean enabled) {
            this.supervisorEnabled = enabled;
            return this;
        }

        /**
         * The runtime, not yet started.
         *
         * @throws IllegalStateException if no state store or no workflow was given, or if
         *     claimBatchSize is larger than maxInFlight
         */
        public Sas build() {
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
            return new Sas(this);
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
    }
}
