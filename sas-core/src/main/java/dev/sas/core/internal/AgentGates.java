package dev.sas.core.internal;

import dev.sas.core.FlowControl;
import dev.sas.core.RetryPolicy;
import dev.sas.core.StepDefinition;
import dev.sas.core.Workflow;
import dev.sas.core.spi.FlowControlStore;
import dev.sas.core.spi.Permit;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StepKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A runtime's side of agent flow control: asks the store's gates whether a call may go (and to
 * which endpoint), counts each call's outcome and gives its permit back, and renews the permits of
 * calls that overrun their deadline. What the gates' numbers mean is {@link FlowPolicy}'s decision;
 * what a held-back call means for its task is the {@link TaskStateMachine}'s. Agents without
 * limits never reach the store here. Thread-safe.
 *
 * <p>Starvation: a permit is taken to count until a lease past its call's deadline
 * ({@link FlowPolicy#permitExpiry}), so a node that cannot renew in time (a starved JVM, a long
 * pause, a lost connection) never lets another node take its share while its call may still run.
 * A call starts only if its permit, as granted, still holds a lease past the moment of starting
 * (in database time); renewal matters only for a call overrunning its deadline, and a renewal
 * that finds a permit lapsed is logged and counted ({@code SasMetrics.permitsLapsed}).
 */
public final class AgentGates {
    private static final Logger log = LoggerFactory.getLogger(AgentGates.class);
    /** How long a call held back because the gates could not be read waits before it is tried again. */
    static final Duration STORE_UNAVAILABLE_WAIT = Duration.ofSeconds(1);

    /** The store's flow control; null if it keeps none (then no agent has limits: the runtime checked). */
    private final FlowControlStore store;
    private final java.time.Clock clock;
    private final String instanceId;
    private final Metrics metrics;
    private final Map<String, FlowControl> limited;
    /** Per agent with limits, the steps whose tasks wait for it (as WAITING). */
    private final Map<String, Set<StepKey>> waitingAt;
    private final Map<String, Call> live = new ConcurrentHashMap<>();
    private volatile Executor worker = Runnable::run;
    private volatile Runnable onWake = () -> { };

    /**
     * Gates for the agents of {@code workflows} that have limits.
     *
     * @param clock the store's time, as the runtime measures it
     * @throws IllegalStateException if two agents of one name have different flow controls
     */
    public AgentGates(StateStore store, java.time.Clock clock, String instanceId, Metrics metrics,
            List<Workflow<?>> workflows) {
        this.store = store.flowControl().orElse(null);
        this.clock = clock;
        this.instanceId = instanceId;
        this.metrics = metrics;
        Map<String, FlowControl> map = new HashMap<>();
        AgentFlowControls.of(workflows).forEach((agent, fc) -> {
            if (fc.isLimited()) {
                map.put(agent, fc);
            }
        });
        this.limited = Map.copyOf(map);
        Map<String, Set<StepKey>> steps = new HashMap<>();
        for (Workflow<?> w : workflows) {
            for (StepDefinition<?> step : w.steps()) {
                step.agent().filter(a -> limited.containsKey(a.name())).ifPresent(a -> steps
                        .computeIfAbsent(a.name(), k -> new java.util.HashSet<>())
                        .add(new StepKey(w.name(), w.version(), step.index())));
            }
        }
        steps.replaceAll((agent, keys) -> Set.copyOf(keys));
        this.waitingAt = Map.copyOf(steps);
    }

    /** What to run when waiting tasks were made due (the claim loop's wake-up). */
    void onWake(Runnable wakeUp) {
        this.onWake = wakeUp;
    }

    /** True when some agent has limits (the store must then support flow control). */
    public boolean any() {
        return !limited.isEmpty();
    }

    /** The agents with limits, by name. */
    public Map<String, FlowControl> limited() {
        return limited;
    }

    /** Where store calls that must not run on the timer thread run (renewals, time-outs). */
    void start(ScheduledExecutorService timer, Executor worker) {
        this.worker = worker;
        Duration every = limited.values().stream().map(FlowControl::permitLease).min(Duration::compareTo)
                .orElse(null);
        if (every == null) {
            return;
        }
        log.info("agent flow control through the store: {}", limited);
        long ms = Math.max(100, every.toMillis() / 3);
        try {
            timer.scheduleWithFixedDelay(() -> runOnWorker(this::renew), ms, ms, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException shuttingDown) {
            // the runtime is closing
        }
    }

    /** True when calls to {@code agent} go through the gates. */
    boolean gated(String agent) {
        return limited.containsKey(agent);
    }

    // ------------------------------------------------------------------ admission

    /** The answer to a call asking to go. */
    sealed interface Admission {
    }

    /** The call may go, to {@code call.endpoint()}. */
    record Granted(Call call) implements Admission {
    }

    /** The call must not go now; its task waits until {@code retryAt}. */
    record Held(String message, Instant retryAt) implements Admission {
    }

    /**
     * Asks the gates of {@code agent}'s endpoints, in order, for a call due by {@code completeBy}.
     * Never throws: when the store cannot be asked, the call is held back for a moment.
     */
    Admission admit(String agent, Instant completeBy) {
        FlowControl fc = limited.get(agent);
        try {
            Instant now = clock.instant();
            List<String> endpoints = fc.endpoints();
            boolean single = endpoints.size() == 1;
            List<FlowPolicy.Held> held = new ArrayList<>(endpoints.size());
            for (String endpoint : endpoints) {
                String gate = FlowPolicy.gate(agent, endpoint);
                String permitId = UUID.randomUUID().toString();
                FlowPolicy.Admission a = store.changeGate(gate, now,
                        v -> FlowPolicy.admit(v, fc, now, permitId, instanceId, single, completeBy));
                if (a instanceof FlowPolicy.Granted g) {
                    if (g.halfOpened()) {
                        log.info("{}: cool-down over, probing with this call", FlowPolicy.describe(gate));
                    }
                    Call call = new Call(agent, endpoint, fc, g.permit(), completeBy);
                    Held late = startable(call);
                    if (late != null) {
                        return late;
                    }
                    live.put(g.permit().id(), call);
                    return new Granted(call);
                }
                held.add((FlowPolicy.Held) a);
            }
            if (single) {
                return new Held(held.get(0).message(), held.get(0).retryAt());
            }
            int best = 0;
            for (int i = 1; i < held.size(); i++) {
                if (held.get(i).retryAt().isBefore(held.get(best).retryAt())) {
                    best = i;
                }
            }
            FlowPolicy.Held chosen = held.get(best);
            Instant retryAt = store.changeGate(FlowPolicy.gate(agent, endpoints.get(best)), now,
                    v -> FlowPolicy.enqueue(v, fc, chosen, now));
            StringBuilder message = new StringBuilder("no endpoint of agent '" + agent + "' can take the call");
            for (FlowPolicy.Held h : held) {
                message.append("; ").append(h.message().replaceFirst("; comes again at .*$", ""));
            }
            return new Held(message.append("; comes again at ").append(retryAt).toString(), retryAt);
        } catch (Throwable e) {
            metrics.storeFailure();
            Instant retryAt = clock.instant().plus(STORE_UNAVAILABLE_WAIT);
            log.warn("agent '{}': could not read its gates ({}); the call waits until {}", agent,
                    TaskStateMachine.describe(e), retryAt);
            return new Held("waiting for agent flow control: agent '" + agent + "': the store's gates could not be"
                    + " read (" + TaskStateMachine.describe(e) + "); comes again at " + retryAt, retryAt);
        }
    }

    /**
     * Null when {@code call} may start now: its permit, as granted, holds for at least a lease more
     * (in database time). Otherwise this node was held up between asking and starting (a starved
     * thread, a slow store) past its call's deadline: the permit is given back unused and the call
     * held back for a moment, so it never starts on a permit that may lapse while it runs.
     */
    private Held startable(Call call) {
        Instant now = clock.instant();
        Duration lease = call.flowControl.permitLease();
        if (now.isBefore(call.expiresAt.minus(lease))) {
            return null;
        }
        count(call, FlowPolicy.Outcome.NONE, null, true);
        Instant retryAt = clock.instant();
        log.warn("{}: a permit was granted too late to start the call (its deadline {} has passed); given back"
                + " unused", FlowPolicy.describe(call.gate), call.completeBy);
        return new Held("waiting for agent capacity: agent '" + call.agent + "': its permit came after the step's"
                + " deadline " + call.completeBy + " and was given back unused; comes again at " + retryAt, retryAt);
    }

    // ------------------------------------------------------------------ outcome

    /**
     * Counts the outcome of a finished call and gives its permit back. Never throws: when the store
     * cannot be written, the permit lapses with its lease and the outcome is not counted.
     *
     * @param error the call's failure, or null
     * @param policy the step's retry policy: an error it does not retry is a refusal, counted as an answer
     * @return what the outcome did to the breaker ({@link FlowPolicy.Completion#UNKNOWN} if the store failed)
     */
    FlowPolicy.Completion complete(Call call, Throwable error, RetryPolicy policy) {
        live.remove(call.permit.id());
        FlowPolicy.Outcome outcome = call.counted.compareAndSet(false, true) ? classify(error, policy)
                : FlowPolicy.Outcome.NONE;
        String failure = outcome == FlowPolicy.Outcome.FAILURE ? TaskStateMachine.describe(error) : null;
        FlowPolicy.Completion c = count(call, outcome, failure, true);
        if (c.wake() > 0) {
            wake(call.agent, c.wake());
        }
        if (c.holdsBack() && call.flowControl.endpoints().size() > 1) {
            // another endpoint may take the call now: come again at once, the admission routes it
            c = new FlowPolicy.Completion(c.breaker(), c.opened(), c.closed(), clock.instant(),
                    c.message().replaceFirst("; comes again at .*$", "") + "; the call is tried again at once on"
                            + " another endpoint of agent '" + call.agent + "'", c.wake());
        }
        return c;
    }

    /** Makes up to {@code n} tasks waiting for {@code agent} due now, and wakes the claim loop if there were any. */
    private void wake(String agent, int n) {
        Set<StepKey> steps = waitingAt.get(agent);
        if (steps == null || steps.isEmpty()) {
            return;
        }
        try {
            if (store.wakeWaiting(steps, clock.instant(), n) > 0) {
                onWake.run();
            }
        } catch (Throwable e) {
            metrics.storeFailure();
            log.warn("agent '{}': could not wake waiting tasks ({}); they come again by themselves", agent,
                    TaskStateMachine.describe(e));
        }
    }

    /** The call was never made (its task was lost before it started): gives its permit back, counts nothing. */
    void notMade(Call call) {
        call.counted.set(true);
        complete(call, null, null);
    }

    /** The call got no reply by its deadline: counts a failure now, keeps the permit until the call ends. */
    void timedOut(Call call) {
        if (call.counted.compareAndSet(false, true)) {
            runOnWorker(() -> count(call, FlowPolicy.Outcome.FAILURE, "no reply by the step's deadline "
                    + call.completeBy, false));
        }
    }

    private FlowPolicy.Completion count(Call call, FlowPolicy.Outcome outcome, String failure, boolean giveBack) {
        try {
            Instant now = clock.instant();
            FlowPolicy.Completion c = store.changeGate(call.gate, now,
                    v -> FlowPolicy.complete(v, call.flowControl, now, call.permit, outcome, failure, giveBack));
            if (c.opened()) {
                metrics.breakersOpened.increment();
                log.warn("{} opened its circuit breaker until {} ({}): calls to it wait instead of failing",
                        FlowPolicy.describe(call.gate), c.retryAt(), failure);
            } else if (c.closed()) {
                metrics.breakersClosed.increment();
                log.info("{}: probe succeeded, circuit breaker closed; calls go through again",
                        FlowPolicy.describe(call.gate));
            }
            return c;
        } catch (Throwable e) {
            metrics.storeFailure();
            log.warn("{}: could not record a call's outcome ({}); its permit lapses at {}",
                    FlowPolicy.describe(call.gate), TaskStateMachine.describe(e), call.expiresAt);
            return FlowPolicy.Completion.UNKNOWN;
        }
    }

    private static FlowPolicy.Outcome classify(Throwable error, RetryPolicy policy) {
        if (error == null || policy.isNonRetryable(error)) {
            return FlowPolicy.Outcome.SUCCESS;
        }
        return FlowPolicy.Outcome.FAILURE;
    }

    // ------------------------------------------------------------------ permit renewal

    /**
     * Renews the permits of calls overrunning their deadline (a permit holds until a lease past the
     * deadline without renewal, so calls within it need none); gives up on calls a lease past
     * their deadline. A permit found lapsed is counted and logged: this node was held up (starved,
     * paused, cut off from the store) for longer than a lease while its call overran its deadline.
     */
    void renew() {
        if (live.isEmpty()) {
            return;
        }
        Instant now = clock.instant();
        Map<Duration, List<Call>> byLease = new HashMap<>();
        for (Call call : live.values()) {
            Duration lease = call.flowControl.permitLease();
            if (now.isAfter(call.completeBy.plus(lease))) {
                if (live.remove(call.permit.id()) != null) {
                    log.warn("{}: a call is still running a lease past its deadline {}; its permit lapses",
                            FlowPolicy.describe(call.gate), call.completeBy);
                }
                continue;
            }
            // renewed once it has less than two thirds of a lease left (renewals come every third of one)
            if (now.plus(lease).minus(lease.dividedBy(3)).isAfter(call.expiresAt)) {
                byLease.computeIfAbsent(lease, k -> new ArrayList<>()).add(call);
            }
        }
        byLease.forEach((lease, calls) -> renew(calls, now, now.plus(lease)));
    }

    private void renew(List<Call> calls, Instant now, Instant until) {
        try {
            List<String> ids = calls.stream().map(c -> c.permit.id()).toList();
            if (store.renewPermits(ids, now, until) == ids.size()) {
                calls.forEach(c -> c.expiresAt = until);
                return;
            }
            // some lapsed: find which, one by one (rare), and stop renewing those
            for (Call call : calls) {
                if (store.renewPermits(List.of(call.permit.id()), now, until) == 1) {
                    call.expiresAt = until;
                } else if (live.remove(call.permit.id()) != null) {
                    metrics.permitsLapsed.increment();
                    log.warn("{}: the permit of a call overrunning its deadline {} lapsed before this node renewed"
                            + " it (held up past its lease); the call's share may be taken by another call",
                            FlowPolicy.describe(call.gate), call.completeBy);
                }
            }
        } catch (Throwable e) {
            metrics.storeFailure();
            log.warn("could not renew {} agent permits ({}); trying again", calls.size(), TaskStateMachine.describe(e));
        }
    }


    /** Calls holding a permit of this runtime. */
    int liveCalls() {
        return live.size();
    }

    private void runOnWorker(Runnable task) {
        Runnable contained = () -> {
            try {
                task.run();
            } catch (Throwable e) {
                metrics.internalError();
                log.error("agent flow control: internal error; it goes on", e);
            }
        };
        try {
            worker.execute(contained);
        } catch (RejectedExecutionException shuttingDown) {
            // closing: the permits lapse with their lease
        }
    }

    /** One call through a gate, from admission until its permit is given back. */
    static final class Call {
        final String agent;
        final String endpoint;
        final String gate;
        final FlowControl flowControl;
        final Permit permit;
        final Instant completeBy;
        /** Until when its permit counts, as last granted or renewed. */
        volatile Instant expiresAt;
        /** Its outcome was counted (at the deadline, or when it finished). */
        final AtomicBoolean counted = new AtomicBoolean();

        Call(String agent, String endpoint, FlowControl flowControl, Permit permit, Instant completeBy) {
            this.agent = agent;
            this.endpoint = endpoint;
            this.gate = FlowPolicy.gate(agent, endpoint);
            this.flowControl = flowControl;
            this.permit = permit;
            this.completeBy = completeBy;
            this.expiresAt = permit.expiresAt();
        }

        String endpoint() {
            return endpoint;
        }

        boolean probe() {
            return permit.probe();
        }
    }
}
