package dev.sas.micrometer;

import dev.sas.core.Agent;
import dev.sas.core.AgentStatus;
import dev.sas.core.FlowControl;
import dev.sas.core.SasMetrics;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskListener;
import dev.sas.core.StepDefinition;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Binds SAS to a Micrometer {@link MeterRegistry}. Two parts, because a runtime's listeners are
 * fixed when it is built: {@link #listener()} goes to {@code RuntimeBuilder.onEvent} and times
 * steps and counts outcomes per workflow and step; {@link #bind(SasRuntime)} then registers the
 * runtime's counters and gauges, and gauges of its store (tasks by state, age of the oldest due
 * task), which are read at most once per {@link Builder#storeRefresh store refresh}.
 *
 * <pre>{@code
 * SasMicrometer metrics = SasMicrometer.builder(registry).build();
 * SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders)
 *         .onEvent(metrics.listener())
 *         .build();
 * metrics.bind(runtime);
 * }</pre>
 *
 * <p>Meter names are listed in {@code docs/observability.md}; all start with {@value #PREFIX}.
 * Bind one runtime per registry, or give each its own {@linkplain Builder#tags tags}: meters of
 * the same name and tags are registered once. Thread-safe.
 */
public final class SasMicrometer {

    /** Prefix of every meter name. */
    public static final String PREFIX = "sas";
    /** How often, at most, the store's gauges query the store when none is set: 30 s. */
    public static final Duration DEFAULT_STORE_REFRESH = Duration.ofSeconds(30);

    private final MeterRegistry registry;
    private final Tags tags;
    private final Duration storeRefresh;
    private final StepTimings timings;

    private SasMicrometer(Builder b) {
        this.registry = b.registry;
        this.tags = b.tags;
        this.storeRefresh = b.storeRefresh;
        this.timings = new StepTimings(registry, tags);
    }

    /**
     * A new builder for {@code registry}. Not thread-safe.
     *
     * @throws NullPointerException if {@code registry} is null
     */
    public static Builder builder(MeterRegistry registry) {
        return new Builder(registry);
    }

    /**
     * The listener to register with {@code RuntimeBuilder.onEvent}: counts steps and tasks by
     * workflow, step and outcome, and times each step attempt run on this runtime from its start
     * to its result. The same listener may serve several runtimes.
     */
    public TaskListener listener() {
        return timings;
    }

    /**
     * Registers {@code runtime}'s counters ({@link SasMetrics}), its gauges (tasks in flight, clock
     * skew, supervisor leadership) and its store's gauges. The meters hold the runtime weakly and
     * report nothing once it is garbage (the store's gauges keep the store); they are not removed
     * when it closes.
     *
     * @return {@code runtime}
     * @throws NullPointerException if {@code runtime} is null
     */
    public SasRuntime bind(SasRuntime runtime) {
        Objects.requireNonNull(runtime, "runtime must not be null");
        counter("tasks.submitted", "tasks submitted through this runtime's client", runtime, SasMetrics::submitted);
        counter("tasks.claimed", "tasks claimed by this runtime", runtime, SasMetrics::claimed);
        counter("steps.completed", "step results recorded by this runtime", runtime, SasMetrics::stepsCompleted);
        counter("steps.retries", "failed attempts released for a later retry", runtime, SasMetrics::retriesScheduled);
        counter("steps.timeouts.recovered", "expired claims this runtime's supervisor recovered", runtime,
                SasMetrics::timeoutsRecovered);
        counter("results.stale", "results rejected because the deadline passed or the lease moved on", runtime,
                SasMetrics::staleRejected);
        counter("step.completions.late", "replies to awaiting steps rejected because they came after the step's deadline",
                runtime, SasMetrics::lateCompletions);
        counter("step.completions.stale", "replies to awaiting steps rejected because the task no longer awaited that attempt",
                runtime, SasMetrics::staleCompletions);
        counter("step.completions.invalid.token", "replies to awaiting steps refused because their token was forged, altered,"
                + " malformed or signed with a key no longer accepted", runtime, SasMetrics::invalidCompletionTokens);
        counter("agents.permits.lapsed", "agent permits a renewal found lapsed (the node was held up past a lease)",
                runtime, SasMetrics::permitsLapsed);
        counter("schedules.fires", "tasks submitted for the fire times of recurring schedules", runtime,
                SasMetrics::scheduleFires);
        counter("schedules.fires.skipped", "missed fire times of recurring schedules dropped by their missed-fire policy",
                runtime, SasMetrics::scheduleFiresSkipped);
        counter("supervisor.passes.stopped", "supervisor passes stopped because they were held up past the lease",
                runtime, SasMetrics::supervisorPassesStopped);
        counter("deadlines.missed", "attempts the scheduler stopped waiting for at their deadline", runtime,
                SasMetrics::deadlinesMissed);
        counter("store.failures", "state store operations that failed", runtime, SasMetrics::storeFailures);
        counter("listener.failures", "exceptions thrown by listeners and alert sinks", runtime,
                SasMetrics::listenerFailures);
        counter("events.dropped", "events not delivered to listeners because the queue was full", runtime,
                SasMetrics::eventsDropped);
        counter("internal.errors", "unexpected errors a long-lived thread contained", runtime,
                SasMetrics::internalErrors);
        Gauge.builder(PREFIX + ".tasks.in.flight", runtime, r -> r.inFlight())
                .description("tasks this runtime holds now").tags(tags).register(registry);
        TimeGauge.builder(PREFIX + ".clock.skew", runtime, TimeUnit.MILLISECONDS,
                        r -> r.metrics().clockSkewMillis())
                .description("the store's clock minus this node's (positive: this node is behind)")
                .tags(tags).register(registry);
        Gauge.builder(PREFIX + ".supervisor.leader", runtime, r -> r.status().supervisorLeader() ? 1 : 0)
                .description("1 while this runtime holds the supervisor lease").tags(tags).register(registry);

        Clock clock = runtime.config().clock();
        // held by its gauges (strong references): nothing else keeps it
        java.lang.ref.WeakReference<SasRuntime> weak = new java.lang.ref.WeakReference<>(runtime);
        StoreGauges store = new StoreGauges(runtime.config().stateStore(), clock, () -> {
            SasRuntime r = weak.get();
            return r == null ? 0 : r.metrics().clockSkewMillis();
        }, storeRefresh);
        for (TaskStatus status : TaskStatus.values()) {
            Gauge.builder(PREFIX + ".tasks", store, s -> s.count(status))
                    .description("tasks in the store by state (all nodes), read at most once per store refresh")
                    .tags(tags).tag("state", status.name().toLowerCase(java.util.Locale.ROOT))
                    .strongReference(true).register(registry);
        }
        TimeGauge.builder(PREFIX + ".tasks.oldest.due.age", store, TimeUnit.MILLISECONDS, StoreGauges::oldestDueAgeMillis)
                .description("how long the oldest due, unclaimed task has waited (0 when none), all nodes")
                .tags(tags).strongReference(true).register(registry);
        bindAgents(runtime);
        return runtime;
    }

    /**
     * Flow control of the agents this runtime's workflows call with a limit or a circuit breaker:
     * calls held back and breakers opened by this runtime, and per endpoint, as all nodes share it,
     * the breaker's state, the calls in flight and the failures in the breaker's window.
     */
    private void bindAgents(SasRuntime runtime) {
        counter("agent.calls.held.back", "agent calls this runtime held back (their tasks waited) for a limit or an"
                + " open breaker", runtime, SasMetrics::heldBack);
        counter("agent.breakers.opened", "times one of this runtime's calls opened an endpoint's circuit breaker",
                runtime, SasMetrics::breakersOpened);
        Map<String, FlowControl> agents = new TreeMap<>();
        for (Workflow<?> w : runtime.config().workflows()) {
            for (StepDefinition<?> step : w.steps()) {
                for (Optional<Agent<?, ?>> a : List.of(step.agent(), step.compensationAgent())) {
                    a.filter(agent -> agent.flowControl().isLimited())
                            .ifPresent(agent -> agents.putIfAbsent(agent.name(), agent.flowControl()));
                }
            }
        }
        if (agents.isEmpty()) {
            return;
        }
        AgentGauges gauges = new AgentGauges(runtime.client(), storeRefresh);
        agents.forEach((agent, flow) -> {
            for (String endpoint : flow.endpoints()) {
                Tags t = tags.and("agent", agent, "endpoint", endpoint);
                Gauge.builder(PREFIX + ".agent.breaker.state", gauges,
                                g -> g.value(agent, endpoint, AgentGauges::breaker))
                        .description("the endpoint's circuit breaker, all nodes: 0 closed, 1 half-open, 2 open")
                        .tags(t).strongReference(true).register(registry);
                Gauge.builder(PREFIX + ".agent.calls.in.flight", gauges,
                                g -> g.value(agent, endpoint, AgentStatus::callsInFlight))
                        .description("calls to the endpoint holding a permit now, all nodes")
                        .tags(t).strongReference(true).register(registry);
                Gauge.builder(PREFIX + ".agent.failures.in.window", gauges,
                                g -> g.value(agent, endpoint, AgentStatus::failuresInWindow))
                        .description("failed calls in the endpoint's circuit-breaker window, all nodes")
                        .tags(t).strongReference(true).register(registry);
            }
        });
    }

    private void counter(String name, String description, SasRuntime runtime, ToDoubleFunction<SasMetrics> value) {
        FunctionCounter.builder(PREFIX + "." + name, runtime, r -> value.applyAsDouble(r.metrics()))
                .description(description).tags(tags).register(registry);
    }

    /** Builds a {@link SasMicrometer}. Not thread-safe. */
    public static final class Builder {
        private final MeterRegistry registry;
        private Tags tags = Tags.empty();
        private Duration storeRefresh = DEFAULT_STORE_REFRESH;

        private Builder(MeterRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry must not be null");
        }

        /**
         * Tags added to every meter, e.g. to tell two runtimes in one registry apart.
         *
         * @throws NullPointerException if {@code tags} is null
         */
        public Builder tags(Iterable<Tag> tags) {
            Objects.requireNonNull(tags, "tags must not be null");
            this.tags = this.tags.and(tags);
            return this;
        }

        /**
         * How often, at most, the store's gauges (tasks by state, oldest due task) query the store;
         * default {@link SasMicrometer#DEFAULT_STORE_REFRESH}. Counting tasks by state reads the
         * whole task table, so keep this well above the scrape interval on a large table.
         *
         * @throws NullPointerException if {@code storeRefresh} is null
         * @throws IllegalArgumentException if it is not positive
         */
        public Builder storeRefresh(Duration storeRefresh) {
            Objects.requireNonNull(storeRefresh, "storeRefresh must not be null");
            if (storeRefresh.isNegative() || storeRefresh.isZero()) {
                throw new IllegalArgumentException("storeRefresh must be positive, was " + storeRefresh);
            }
            this.storeRefresh = storeRefresh;
            return this;
        }

        /** The binder. */
        public SasMicrometer build() {
            return new SasMicrometer(this);
        }
    }
}
