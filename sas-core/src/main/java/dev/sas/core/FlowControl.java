package dev.sas.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * How hard the whole cluster may use one {@link Agent}, and how it tells a healthy endpoint from a
 * failing one. Every runtime sharing the store enforces the same limits together, through the
 * store: at most {@link #maxConcurrentCalls()} calls in flight and at most
 * {@link #maxCallsPerSecond()} calls started per second, per endpoint, across all nodes; a
 * {@link CircuitBreaker} per endpoint, shared by all nodes; and several {@link #endpoints()} (two
 * regions, two providers), each call going to the first healthy one with capacity
 * ({@link AgentRequest#endpoint()} names it).
 *
 * <p>A call that a limit or an open breaker holds back is not made: its task waits in
 * {@link TaskStatus#WAITING} (a compensation stays {@link TaskStatus#COMPENSATING}) with the reason
 * as its last error and a {@link TaskEvent.Type#WAITING} event, spends no attempt and no time-out,
 * and comes back when the endpoint is likely to take it. Capacity is held as a permit that counts
 * until {@link #permitLease()} past its call's deadline, so a node that is starved or dies never
 * lets the cluster exceed the limit while its call may still run; it gives its permits back a lease
 * after its calls' deadlines.
 *
 * <pre>{@code
 * Agent<Charge, Receipt> payments = Agent.builder("payments")
 *         .flowControl(FlowControl.builder()
 *                 .maxConcurrentCalls(5)
 *                 .maxCallsPerSecond(50)
 *                 .circuitBreaker(CircuitBreaker.defaults())
 *                 .endpoints("eu-west", "us-east")
 *                 .build())
 *         .call(request -> paymentsApi(request.endpoint()).charge(request.payload()));
 * }</pre>
 *
 * <p>Immutable and thread-safe; the builder is not thread-safe.
 */
public final class FlowControl {

    /** The endpoint of an agent that names none. */
    public static final String DEFAULT_ENDPOINT = "default";
    /** Default permit lease: 10 s past the call's deadline (renewed every third of it while a call overruns it). */
    public static final Duration DEFAULT_PERMIT_LEASE = Duration.ofSeconds(10);
    /** Shortest permit lease: 1 s. */
    public static final Duration MIN_PERMIT_LEASE = Duration.ofSeconds(1);

    private static final FlowControl NONE = new FlowControl(0, 0, 1, null, List.of(DEFAULT_ENDPOINT),
            DEFAULT_PERMIT_LEASE);

    private final int maxConcurrentCalls;
    private final double maxCallsPerSecond;
    private final int burst;
    private final CircuitBreaker circuitBreaker;
    private final List<String> endpoints;
    private final Duration permitLease;

    private FlowControl(int maxConcurrentCalls, double maxCallsPerSecond, int burst, CircuitBreaker circuitBreaker,
            List<String> endpoints, Duration permitLease) {
        this.maxConcurrentCalls = maxConcurrentCalls;
        this.maxCallsPerSecond = maxCallsPerSecond;
        this.burst = burst;
        this.circuitBreaker = circuitBreaker;
        this.endpoints = List.copyOf(endpoints);
        this.permitLease = permitLease;
    }

    /** No limits, no breaker, one endpoint: every call goes through at once (the default of an agent). */
    public static FlowControl none() {
        return NONE;
    }

    /** A new builder: no limits, no breaker, one endpoint until set. Not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    /** Most calls in flight per endpoint across the cluster; 0 for no limit. */
    public int maxConcurrentCalls() {
        return maxConcurrentCalls;
    }

    /** Most calls started per second per endpoint across the cluster; 0 for no limit. */
    public double maxCallsPerSecond() {
        return maxCallsPerSecond;
    }

    /**
     * Calls that may start at once after a quiet spell, within {@link #maxCallsPerSecond()}: in any
     * interval of length {@code t}, at most {@code burst + t × maxCallsPerSecond} calls start.
     */
    public int burst() {
        return burst;
    }

    /** The breaker each endpoint has, if any. */
    public Optional<CircuitBreaker> circuitBreaker() {
        return Optional.ofNullable(circuitBreaker);
    }

    /** The endpoints in order of preference; {@link #DEFAULT_ENDPOINT} alone when none were named. */
    public List<String> endpoints() {
        return endpoints;
    }

    /**
     * How long past its call's deadline a permit counts without renewal; a node that dies gives
     * its permits back that long after its calls' deadlines.
     */
    public Duration permitLease() {
        return permitLease;
    }

    /** True when calls go through the store's gates: a limit or a breaker is set. */
    public boolean isLimited() {
        return maxConcurrentCalls > 0 || maxCallsPerSecond > 0 || circuitBreaker != null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FlowControl f && f.maxConcurrentCalls == maxConcurrentCalls
                && Double.compare(f.maxCallsPerSecond, maxCallsPerSecond) == 0 && f.burst == burst
                && Objects.equals(f.circuitBreaker, circuitBreaker) && f.endpoints.equals(endpoints)
                && f.permitLease.equals(permitLease);
    }

    @Override
    public int hashCode() {
        return Objects.hash(maxConcurrentCalls, maxCallsPerSecond, burst, circuitBreaker, endpoints, permitLease);
    }

    @Override
    public String toString() {
        if (!isLimited()) {
            return "FlowControl{none}";
        }
        return "FlowControl{" + (maxConcurrentCalls > 0 ? "maxConcurrentCalls=" + maxConcurrentCalls + ", " : "")
                + (maxCallsPerSecond > 0 ? "maxCallsPerSecond=" + maxCallsPerSecond + ", burst=" + burst + ", " : "")
                + (circuitBreaker != null ? circuitBreaker + ", " : "") + "endpoints=" + endpoints + ", permitLease="
                + permitLease + '}';
    }

    /**
     * Builds a {@link FlowControl}. Each setting is checked where it is set, the combinations at
     * {@link #build()}. Not thread-safe; {@code build()} copies, so reusing the builder never changes
     * what was built.
     */
    public static final class Builder {
        private int maxConcurrentCalls;
        private double maxCallsPerSecond;
        private Integer burst;
        private CircuitBreaker circuitBreaker;
        private final List<String> endpoints = new ArrayList<>();
        private Duration permitLease = DEFAULT_PERMIT_LEASE;

        private Builder() {
        }

        /**
         * Most calls in flight per endpoint, counted across every runtime on the store.
         *
         * @throws IllegalArgumentException if less than 1
         */
        public Builder maxConcurrentCalls(int calls) {
            if (calls < 1) {
                throw new IllegalArgumentException("maxConcurrentCalls must be at least 1, was " + calls);
            }
            this.maxConcurrentCalls = calls;
            return this;
        }

        /**
         * Most calls started per second per endpoint, counted across every runtime on the store
         * (on the store's clock). Bursts are limited by {@link #burst(int)}.
         *
         * @throws IllegalArgumentException if not a positive, finite number
         */
        public Builder maxCallsPerSecond(double calls) {
            if (!(calls > 0) || Double.isInfinite(calls)) {
                throw new IllegalArgumentException("maxCallsPerSecond must be a positive number, was " + calls);
            }
            this.maxCallsPerSecond = calls;
            return this;
        }

        /**
         * Calls that may start at once after a quiet spell (see {@link FlowControl#burst()}).
         * Default: a tenth of a second's worth of {@code maxCallsPerSecond}, at least 1.
         *
         * @throws IllegalArgumentException if less than 1
         */
        public Builder burst(int calls) {
            if (calls < 1) {
                throw new IllegalArgumentException("burst must be at least 1, was " + calls);
            }
            this.burst = calls;
            return this;
        }

        /**
         * A breaker per endpoint, shared by every runtime on the store.
         *
         * @throws NullPointerException if null
         */
        public Builder circuitBreaker(CircuitBreaker breaker) {
            this.circuitBreaker = Objects.requireNonNull(breaker, "circuitBreaker must not be null");
            return this;
        }

        /**
         * The endpoints, in order of preference: each call goes to the first one whose breaker lets
         * it through and that has capacity. Limits and breaker apply to each endpoint on its own.
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if none is given, a name does not match
         *     {@link Workflow#NAME_PATTERN}, or a name appears twice
         */
        public Builder endpoints(String... names) {
            Objects.requireNonNull(names, "endpoints must not be null");
            if (names.length == 0) {
                throw new IllegalArgumentException("endpoints must name at least one endpoint");
            }
            Set<String> seen = new LinkedHashSet<>();
            for (String n : names) {
                Workflow.checkName("endpoint name", n);
                if (!seen.add(n)) {
                    throw new IllegalArgumentException("endpoints must be distinct, '" + n + "' appears twice");
                }
            }
            endpoints.clear();
            endpoints.addAll(seen);
            return this;
        }

        /**
         * How long past its call's deadline a permit counts without renewal. A call within its
         * deadline needs no renewal; the runtime renews the permit of a call that overruns its
         * deadline every third of the lease, up to a lease past the deadline. A node that is starved
         * or dies keeps its calls' capacity until then, never less. Default 10 s.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if shorter than {@link FlowControl#MIN_PERMIT_LEASE}
         */
        public Builder permitLease(Duration lease) {
            Objects.requireNonNull(lease, "permitLease must not be null");
            if (lease.compareTo(MIN_PERMIT_LEASE) < 0) {
                throw new IllegalArgumentException("permitLease must be at least " + MIN_PERMIT_LEASE + ", was " + lease);
            }
            this.permitLease = lease;
            return this;
        }

        /**
         * The flow control.
         *
         * @throws IllegalStateException if {@code burst} is set without {@code maxCallsPerSecond}, or
         *     several endpoints are named without a limit or a breaker to choose between them
         */
        public FlowControl build() {
            if (burst != null && maxCallsPerSecond == 0) {
                throw new IllegalStateException("burst (" + burst + ") needs maxCallsPerSecond; set it or drop burst");
            }
            int b = burst != null ? burst : Math.max(1, (int) Math.ceil(maxCallsPerSecond / 10));
            boolean limited = maxConcurrentCalls > 0 || maxCallsPerSecond > 0 || circuitBreaker != null;
            if (endpoints.size() > 1 && !limited) {
                throw new IllegalStateException("endpoints " + endpoints + " need a circuitBreaker, maxConcurrentCalls"
                        + " or maxCallsPerSecond to choose between them; without one every call goes to '"
                        + endpoints.get(0) + "'");
            }
            return new FlowControl(maxConcurrentCalls, maxCallsPerSecond, b, circuitBreaker,
                    endpoints.isEmpty() ? List.of(DEFAULT_ENDPOINT) : endpoints, permitLease);
        }
    }
}
