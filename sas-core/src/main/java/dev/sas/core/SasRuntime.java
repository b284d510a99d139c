package dev.sas.core;

import dev.sas.core.internal.AdaptivePoll;
import dev.sas.core.internal.AgentGates;
import dev.sas.core.internal.DatabaseClock;
import dev.sas.core.internal.EventBus;
import dev.sas.core.internal.Metrics;
import dev.sas.core.internal.NamedThreadFactory;
import dev.sas.core.internal.Recorder;
import dev.sas.core.internal.Registry;
import dev.sas.core.internal.StatusPump;
import dev.sas.core.internal.RuntimeDriver;
import dev.sas.core.internal.StatusRouting;
import dev.sas.core.internal.Retention;
import dev.sas.core.internal.Scheduler;
import dev.sas.core.internal.Supervisor;
import dev.sas.core.spi.StatusOutbox;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StoreSignals;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * nothing runs in the background: {@code dev.sas.testing.Drain} (in {@code sas-testing}) drives the
 * roles by hand on the calling thread, which with a manual clock makes tests deterministic.
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
    /** Default poll interval while recently busy, on a store without wake-up hints: 20 ms. */
    public static final Duration DEFAULT_BUSY_POLL_INTERVAL = Duration.ofMillis(20);
    /** Default supervisor interval: 1 s. */
    public static final Duration DEFAULT_SUPERVISOR_INTERVAL = Duration.ofSeconds(1);
    /** Default grace period for running steps at shutdown: 10 s. */
    public static final Duration DEFAULT_SHUTDOWN_GRACE = Duration.ofSeconds(10);
    /** Default retention of final tasks: 7 days. */
    public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);
    /** Default most events and alerts waiting for listeners: 10,000 (see {@link RuntimeBuilder#eventQueueCapacity}). */
    public static final int DEFAULT_EVENT_QUEUE_CAPACITY = 10_000;
    /** Longest {@link #close()} waits for listeners to catch up: 5 s (or the shutdown grace, if shorter). */
    private static final Duration MAX_EVENT_DRAIN = Duration.ofSeconds(5);
    private static final Duration MIN_EVENT_DRAIN = Duration.ofMillis(100);
    /** Default time a task may be due while no live runtime can run it, before the supervisor parks it: 5 min. */
    public static final Duration DEFAULT_UNRUNNABLE_GRACE = Duration.ofMinutes(5);
    /** Default most final tasks deleted in one retention batch: 1,000. */
    public static final int DEFAULT_RETENTION_BATCH_SIZE = 1_000;
    /** Default most final tasks deleted per second while a backlog lasts: 5,000. */
    public static final int DEFAULT_RETENTION_MAX_DELETES_PER_SECOND = 5_000;
    /** Default time between retention checks when there is no backlog: 1 min. */
    public static final Duration DEFAULT_RETENTION_INTERVAL = Duration.ofMinutes(1);
    /** Shortest supervisor lease: 1 s (the lease is three supervisor intervals). */
    public static final Duration MIN_SUPERVISOR_LEASE = Duration.ofSeconds(1);

    private final RuntimeConfig config;
    private final StateStore store;
    private final Registry registry;
    private final DatabaseClock clock;
    private final String instanceId;
    /** The store inserts tasks already claimed: an idle scheduler starts its own client's submits without a claim. */
    private final boolean claimsAtSubmit;
    private final Metrics metrics = new Metrics();
    private final EventBus events;
    private final Recorder recorder;
    private final Scheduler scheduler;
    private final Supervisor supervisor;
    private final Retention retention;
    private final SasClient client;
    private final StoreSignals signals;
    private final Map<String, StatusPump> statusPumps = new LinkedHashMap<>();
    private final List<StoreSignals.Subscription> subscriptions = new ArrayList<>();
    private final AtomicBoolean started = new AtomicBoolean();
    /** Delivers ended child tasks to their parents; null when no workflow here has a child task step. */
    private volatile ChildRelay children;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final List<ExecutorService> owned = new ArrayList<>();
    private final Map<String, Executor> agentExecutors = new ConcurrentHashMap<>();
    private Thread claimThread;
    private ScheduledExecutorService supervisorExecutor;
    private ScheduledExecutorService timer;
    private ExecutorService eventExecutor;

    static {
        RuntimeDriver.register(runtime -> ((SasRuntime) runtime).new ManualPasses());
    }

    private SasRuntime(RuntimeConfig config) {
        this.config = config;
        this.store = config.stateStore();
        this.registry = new Registry(config.workflows());
        this.instanceId = config.instanceId();
        this.claimsAtSubmit = store.claimedSubmits().isPresent();
        this.clock = DatabaseClock.of(config.clock(), store, config.databaseClock(), "instance " + instanceId,
                metrics::clockSkew);
        this.signals = store.signals().orElse(null);
        StatusOutbox outbox = store.statusOutbox().orElse(null);
        if (outbox == null && !config.statusChannels().isEmpty()) {
            throw new IllegalStateException("status channels " + config.statusChannels().keySet() + " are registered,"
                    + " but the store " + store + " keeps no status channels; use a store that does (JdbcStateStore,"
                    + " InMemoryStateStore)");
        }
        for (StatusChannel channel : config.statusChannels().values()) {
            statusPumps.put(channel.name(), new StatusPump(channel, outbox, clock, instanceId, metrics, poll(config)));
        }
        this.events = new EventBus(config.listeners(), new StatusRouting(statusPumps, outbox, metrics),
                this::finished, config.alertSink(), metrics, config.eventQueueCapacity());
        this.recorder = new Recorder(store, clock, metrics, Math.max(config.claimBatchSize(), 64) * 2);
        this.scheduler = new Scheduler(store, registry, clock, instanceId, recorder, events, metrics,
                config.claimBatchSize(), config.maxInFlight(), config.maxPayloadBytes(), config.pollInterval(),
                poll(config), new AgentGates(store, clock, instanceId, metrics, config.workflows()));
        this.supervisor = new Supervisor(store, registry, clock, instanceId, events, metrics, config.supervisorLease(),
                500, scheduler::wakeUpAt,
                config.schedulerEnabled() ? registry.runnable() : Set.of(), config.unrunnableGrace());
        store.schedules().ifPresent(s -> supervisor.fireSchedulesWith(new dev.sas.core.internal.ScheduleFirer(s, store,
                instanceId, metrics, received -> {
                    metrics.submitted(received.size());
                    events.publish(received, null);
                    scheduler.wakeUp();
                })));
        this.retention = new Retention(store, clock, supervisor::isLeader, config.retention(),
                config.retentionBatchSize(), config.retentionMaxDeletesPerSecond(), config.retentionInterval(),
                instanceId);
        this.client = new SasClient(new SasClient.Config(store, config.clock(), config.databaseClock(),
                config.maxPayloadBytes(), config.tracing(), config.completionTokenKeys()), clock, config.workflows(),
                new RuntimeHooks(metrics, events, scheduler, statusPumps.keySet(), claimsAtSubmit, instanceId));
        scheduler.tracing(config.tracing());
        scheduler.completionTokens(CompletionTokenKeys.tokens(config.completionTokenKeys()));
        scheduler.childClient(client);
        ChildRelay relay = new ChildRelay(client, config.workflows());
        this.children = relay.needed() ? relay : null;
        supervisor.relayChildrenWith(children);
    }

    /** A task reached a terminal state here (the handles waiting for it return), or came to rest awaiting a reply. */
    private void finished(TaskEvent e) {
        if (e.type() != TaskEvent.Type.COMPLETION_AWAITED) {
            client.waiters().finished(e.taskId());
        }
        ChildRelay relay = children;
        if (relay != null) {
            relay.published(e);
        }
    }

    /** A poll for one loop: short while recently busy, unless the store pushes wake-up hints. */
    private AdaptivePoll poll(RuntimeConfig c) {
        return new AdaptivePoll(c.pollInterval(), c.busyPollInterval(), () -> signals != null && signals.connected());
    }

    /** A new builder. Not thread-safe. */
    public static RuntimeBuilder builder() {
        return new RuntimeBuilder();
    }

    /** Builds the runtime; called by {@link RuntimeBuilder#build()} only. */
    static SasRuntime create(RuntimeConfig config) {
        return new SasRuntime(config);
    }

    /** The client of this runtime's store: submit, find, await, resubmit, cancel. */
    public SasClient client() {
        return client;
    }

    /** The settings this runtime was built with. */
    public RuntimeConfig config() {
        return config;
    }

    /** This runtime's instance id, stamped on the tasks it claims. */
    public String instanceId() {
        return instanceId;
    }

    /**
     * Starts the scheduler, agent executors and supervisor (and retention) threads. Idempotent.
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
        try {
            clock.ensureFresh();
        } catch (StateStoreException e) {
            metrics.storeFailure();
            log.warn("instance {}: cannot read the store's clock yet ({}); claims and supervision wait until it can",
                    instanceId, e.getMessage());
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
        if (children != null) {
            children.startLoop(scheduler::wakeUp, instanceId);
        }
        if (config.schedulerEnabled()) {
            claimThread = new NamedThreadFactory("sas-scheduler-claim", false).newThread(scheduler::claimLoop);
            claimThread.start();
        }
        RuntimeLoops.startSignals(statusPumps, signals, config.schedulerEnabled() ? scheduler : null, clock, metrics,
                instanceId, subscriptions);
        long supervisorMs = config.supervisorInterval().toMillis();
        if (config.supervisorEnabled()) {
            supervisorExecutor = Executors.newSingleThreadScheduledExecutor(new NamedThreadFactory("sas-supervisor", false));
            supervisorExecutor.scheduleWithFixedDelay(() -> RuntimeLoops.quietly("supervisor pass", supervisor::runOnce, metrics, instanceId,
                    config.supervisorInterval()), supervisorMs, supervisorMs,
                    TimeUnit.MILLISECONDS);
            retention.start();
        } else if (config.schedulerEnabled()) {
            // the active supervisor elsewhere parks the tasks of versions no live runtime advertises
            supervisorExecutor = Executors.newSingleThreadScheduledExecutor(new NamedThreadFactory("sas-advertise", false));
            supervisorExecutor.scheduleWithFixedDelay(() -> RuntimeLoops.quietly("advertising its workflow versions",
                    supervisor::advertise, metrics, instanceId, config.supervisorInterval()), 0, supervisorMs, TimeUnit.MILLISECONDS);
        }
        log.info("SAS runtime {} started: store={}, {}, time={}", instanceId, store, config.summary(), clock);
        return this;
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
     * writes what is queued, stops retention, and stops the supervisor last. Unfinished tasks stay claimed until
     * their deadline and are then recovered by a supervisor; nothing is half-recorded. Listeners get
     * what is queued for them for up to the shutdown grace (at least 100 ms, at most 5 s); the rest
     * is discarded and counted in {@link SasMetrics#eventsDropped()}. Once {@code close()} returns, no
     * listener, status channel or alert sink is called again. Executors the host supplied are not
     * shut down. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        boolean interrupted = false;
        if (!started.get()) {
            try {
                events.close(Duration.ZERO);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
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
        interrupted |= children != null && children.stopLoop();
        if (supervisorExecutor != null) {
            try {
                retention.stop(5_000);
            } catch (InterruptedException e) {
                interrupted = true;
            }
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
        Duration drain = config.shutdownGrace().compareTo(MAX_EVENT_DRAIN) > 0 ? MAX_EVENT_DRAIN
                : config.shutdownGrace().compareTo(MIN_EVENT_DRAIN) < 0 ? MIN_EVENT_DRAIN : config.shutdownGrace();
        subscriptions.forEach(StoreSignals.Subscription::close);
        for (StatusPump pump : statusPumps.values()) {
            try {
                // what it has not delivered stays in the store: the next node consuming the channel delivers it
                pump.stop(drain);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        try {
            events.close(drain);
        } catch (InterruptedException e) {
            interrupted = true;
        }
        log.info("SAS runtime {} stopped: {}", instanceId, metrics.snapshot());
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Wakes this runtime's scheduler to claim now. Rarely needed: a submit through this runtime's
     * client wakes it, and a submit inside a host's transaction wakes it a few times over the next
     * seconds (10 ms to 5 s after the submit), since SAS cannot see the host's commit; call this
     * right after such a commit to start the task at once.
     */
    public void pollNow() {
        scheduler.wakeUp();
    }

    /** One pass of each part, for {@code Drain} in sas-testing: only on a runtime that was not started. */
    private final class ManualPasses implements RuntimeDriver.Passes {
        @Override
        public int scheduler() {
            requireManual();
            return scheduler.runOnce();
        }

        @Override
        public int supervisor() {
            requireManual();
            return supervisor.runOnce();
        }

        @Override
        public int relay() {
            requireManual();
            return children == null ? 0 : children.deliverHinted();
        }

        @Override
        public int retention() {
            requireManual();
            return retention.runOnce();
        }

        @Override
        public int statusUpdates() {
            requireManual();
            return StatusPump.runEachOnce(statusPumps.values());
        }

        private void requireManual() {
            if (started.get() || closed.get()) {
                throw new IllegalStateException("Drain drives a runtime that was not started; runtime " + instanceId
                        + " is " + (closed.get() ? "closed" : "started"));
            }
        }
    }

    /** Counters since this runtime was built. */
    public SasMetrics metrics() {
        return metrics.snapshot();
    }

    /**
     * What this runtime is doing now, for health checks: whether it runs, whether it holds the
     * supervisor lease, when its scheduler last reached the store, and its clock skew.
     */
    public RuntimeStatus status() {
        return new RuntimeStatus(instanceId, started.get() && !closed.get(), config.schedulerEnabled(),
                config.supervisorEnabled(), supervisor.isLeader(), metrics.lastClaimPoll(), scheduler.inFlight(),
                config.maxInFlight(), metrics.snapshot().clockSkewMillis());
    }

    /** Tasks this runtime holds right now. */
    public int inFlight() {
        return scheduler.inFlight();
    }

    @Override
    public String toString() {
        return "SasRuntime{" + instanceId + ", store=" + store + '}';
    }
}
