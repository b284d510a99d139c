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
 * The worker side of SAS: a Scheduler, the Agents' executors and a Supervisor, in-process, over
 * one {@link StateStore}, plus the {@link SasClient} they share. Any number of runtimes (in one
 * process or many) may share a store; they split the work and recover each other's tasks. A tier
 * that only submits and reads tasks holds a {@link SasClient} instead.
 *
 * <pre>{@code
 * try (SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders).build().start()) {
 *     TaskHandle order = runtime.client().submit(orders, "order-42", order);
 * }
 * }</pre>
 *
 * <p>Thread-safe. {@link #start()} and {@link #close()} are idempotent. Until {@code start()},
 * nothing runs in the background: {@link #runSchedulerOnce()} and {@link #runSupervisorOnce()}
 * drive the roles by hand on the calling thread, which with a manual clock makes tests
 * deterministic (see {@code dev.sas.testing.Drain} in {@code sas-testing}).
 */
public final class SasRuntime implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SasRuntime.class);

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
    /** Shortest supervisor lease: 1 s (the lease is three supervisor intervals). */
    public static final Duration MIN_SUPERVISOR_LEASE = Duration.ofSeconds(1);

    private final RuntimeConfig config;
    private final StateStore store;
    private final Registry registry;
    private final Clock clock;
    private final String instanceId;
    private final Metrics metrics = new Metrics();
    private final EventBus events;
    private final Recorder recorder;
    private final Scheduler scheduler;
    private final Supervisor supervisor;
    private final SasClient client;
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final List<ExecutorService> owned = new ArrayList<>();
    private final Map<String, Executor> agentExecutors = new ConcurrentHashMap<>();
    private Thread claimThread;
    private ScheduledExecutorService supervisorExecutor;
    private ScheduledExecutorService timer;
    private ExecutorService eventExecutor;

    private SasRuntime(RuntimeConfig config) {
        this.config = config;
        this.store = config.stateStore();
        this.registry = new Registry(config.workflows());
        this.clock = config.clock();
        this.instanceId = config.instanceId();
        this.events = new EventBus(config.listeners(), config.replyChannels(), config.alertSink(), metrics);
        this.recorder = new Recorder(store, clock, metrics, Math.max(config.claimBatchSize(), 64) * 2);
        this.scheduler = new Scheduler(store, registry, clock, instanceId, recorder, events, metrics,
                config.claimBatchSize(), config.maxInFlight(), config.maxPayloadBytes(), config.pollInterval());
        this.supervisor = new Supervisor(store, registry, clock, instanceId, events, metrics, config.supervisorLease(),
                500, config.retention(), scheduler::wakeUpAt);
        this.client = new SasClient(new SasClient.Config(store, clock, config.maxPayloadBytes()), config.workflows(),
                new Hooks());
    }

    /** Hands what this runtime's own client does to its listeners and its scheduler. */
    private final class Hooks implements ClientHooks {
        @Override
        public void submitted(List<TaskEvent> received, String replyTo, boolean dueNow, boolean inHostTransaction) {
            if (!inHostTransaction) {
                // Inside a host transaction the task may still roll back: its RECEIVED event is in
                // the event log once committed, but listeners hear first of it at its claim.
                events.publish(received, replyTo);
            }
            if (dueNow) {
                scheduler.wakeUp();
            }
        }

        @Override
        public void operatorAction(TaskEvent event) {
            events.publish(List.of(event), null);
            scheduler.wakeUp();
        }
    }

    /** A new builder. Not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    /** The client of this runtime's store: submit, find, await, resubmit, cancel. */
    public SasClient client() {
        return client;
    }

    /** The settings this runtime was built with. */
    public RuntimeConfig config() {
        return config;
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
    public SasRuntime start() {
        if (closed.get()) {
            throw new IllegalStateException("runtime " + instanceId + " is closed; build a new one");
        }
        if (!started.compareAndSet(false, true)) {
            return this;
        }
        Executor steps = config.stepExecutor();
        if (steps == null) {
            ExecutorService pool = Executors.newFixedThreadPool(config.schedulerThreads(),
                    new NamedThreadFactory("sas-scheduler"));
            owned.add(pool);
            steps = pool;
        }
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, new NamedThreadFactory("sas-timer", false));
        t.setRemoveOnCancelPolicy(true);
        timer = t;
        eventExecutor = Executors.newSingleThreadExecutor(new NamedThreadFactory("sas-events", false));
        events.start(eventExecutor);
        recorder.start(config.writerThreads());
        scheduler.start(steps, this::agentExecutor, timer);
        if (config.schedulerEnabled()) {
            claimThread = new NamedThreadFactory("sas-scheduler-claim", false).newThread(scheduler::claimLoop);
            claimThread.start();
        }
        if (config.supervisorEnabled()) {
            supervisorExecutor = Executors.newSingleThreadScheduledExecutor(new NamedThreadFactory("sas-supervisor", false));
            long ms = config.supervisorInterval().toMillis();
            supervisorExecutor.scheduleWithFixedDelay(this::superviseQuietly, ms, ms, TimeUnit.MILLISECONDS);
        }
        log.info("SAS runtime {} started: store={}, {}", instanceId, store, config.summary());
        return this;
    }

    private void superviseQuietly() {
        try {
            supervisor.runOnce();
        } catch (RuntimeException e) {
            metrics.storeFailure();
            log.warn("instance {}: supervisor pass failed ({}); trying again in {}", instanceId, e.getMessage(),
                    config.supervisorInterval());
        }
    }

    private Executor agentExecutor(String agentName) {
        Executor configured = config.agentExecutors().get(agentName);
        if (configured != null) {
            return configured;
        }
        return agentExecutors.computeIfAbsent(agentName, name -> {
            ThreadPoolExecutor pool = new ThreadPoolExecutor(config.agentThreads(), config.agentThreads(), 60,
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
            if (!scheduler.awaitIdle(config.shutdownGrace())) {
                scheduler.abandonRunning();
                log.warn("instance {}: {} tasks still running after the {} grace period; interrupting them, "
                        + "the supervisor will recover them", instanceId, scheduler.inFlight(), config.shutdownGrace());
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

    /**
     * Wakes this runtime's scheduler to claim now, e.g. after the host committed a transaction in
     * which it submitted tasks (otherwise they are found by the next poll).
     */
    public void pollNow() {
        scheduler.wakeUp();
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
        return "SasRuntime{" + instanceId + ", store=" + store + '}';
    }

    /**
     * Builds a {@link SasRuntime}. Not thread-safe. Each setting is checked where it is set;
     * {@link #build()} checks the combinations and copies everything into an immutable
     * {@link RuntimeConfig}, so reusing the builder never changes a runtime already built.
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
        private int maxPayloadBytes = SasClient.DEFAULT_MAX_PAYLOAD_BYTES;
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
         * How long {@link SasRuntime#close()} lets running steps finish before interrupting them.
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
            return new SasRuntime(new RuntimeConfig(store, workflows, instanceId != null ? instanceId
                    : defaultInstanceId(), clock, maxPayloadBytes, schedulerEnabled, schedulerThreads, claimBatchSize,
                    maxInFlight, writerThreads, pollInterval, agentThreads, supervisorEnabled, supervisorInterval,
                    shutdownGrace, retention, stepExecutor, agentExecutors, listeners, replyChannels, alertSink));
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
