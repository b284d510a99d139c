package dev.sas.core;

import java.time.Duration;
import java.util.Objects;

/**
 * When an agent's endpoint is taken to be down, shared by every runtime on the store. The breaker
 * of each endpoint is {@link State#CLOSED} while calls go through; it opens after
 * {@link #consecutiveFailures()} failed calls in a row, or when at least {@link #minimumCalls()}
 * calls within one {@link #window()} failed at a rate of {@link #failureRatePercent()} or more.
 * While {@link State#OPEN} (for {@link #openFor()}) no call goes to the endpoint: the tasks that
 * would call it wait ({@link TaskStatus#WAITING}) without spending an attempt. Then it is
 * {@link State#HALF_OPEN}: up to {@link #halfOpenProbes()} calls go through as probes; when that
 * many succeed it closes, when one fails it opens again.
 *
 * <p>What counts as a failure: an error from the agent (or no reply by the step's deadline), except
 * a refusal — a {@link NonRetryableException} or an error the step's retry policy aborts on — which
 * is an answer from a healthy service.
 *
 * <p>Build one with {@link #builder()} (or take {@link #defaults()}). Immutable and thread-safe;
 * the builder is not thread-safe.
 *
 * @param consecutiveFailures failed calls in a row that open the breaker; 0 when only the failure
 *     rate counts
 * @param failureRatePercent share of failed calls (1 to 100) within a window that opens the
 *     breaker once the window has {@code minimumCalls}; 0 when only consecutive failures count
 * @param minimumCalls calls a window needs before its failure rate counts
 * @param window how long calls are counted together for the failure rate (a fixed window that
 *     starts again when it is over)
 * @param openFor how long the breaker stays open before it lets probes through
 * @param halfOpenProbes probe calls at once while half-open, and successful probes that close it
 */
public record CircuitBreaker(int consecutiveFailures, int failureRatePercent, int minimumCalls, Duration window,
        Duration openFor, int halfOpenProbes) {

    /** Default failed calls in a row that open the breaker: 5. */
    public static final int DEFAULT_CONSECUTIVE_FAILURES = 5;
    /** Default failure rate that opens the breaker: 50 %. */
    public static final int DEFAULT_FAILURE_RATE_PERCENT = 50;
    /** Default calls a window needs before its failure rate counts: 10. */
    public static final int DEFAULT_MINIMUM_CALLS = 10;
    /** Default window for the failure rate: 30 s. */
    public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(30);
    /** Default time the breaker stays open: 30 s. */
    public static final Duration DEFAULT_OPEN_FOR = Duration.ofSeconds(30);
    /** Default probe calls while half-open: 1. */
    public static final int DEFAULT_HALF_OPEN_PROBES = 1;

    private static final CircuitBreaker DEFAULTS = builder().build();

    /** The states of a breaker. */
    public enum State {
        /** Calls go through; failures are counted. */
        CLOSED,
        /** No call goes through until the cool-down ({@code openFor}) is over. */
        OPEN,
        /** Up to {@code halfOpenProbes} calls go through as probes; the others wait. */
        HALF_OPEN
    }

    /**
     * @throws NullPointerException if a duration is null
     * @throws IllegalArgumentException if a value is out of range, naming it, or neither
     *     {@code consecutiveFailures} nor {@code failureRatePercent} is set
     */
    public CircuitBreaker {
        if (consecutiveFailures < 0) {
            throw new IllegalArgumentException("consecutiveFailures must not be negative, was " + consecutiveFailures);
        }
        if (failureRatePercent < 0 || failureRatePercent > 100) {
            throw new IllegalArgumentException("failureRatePercent must be 0 to 100, was " + failureRatePercent);
        }
        if (minimumCalls < 1) {
            throw new IllegalArgumentException("minimumCalls must be at least 1, was " + minimumCalls);
        }
        positive("window", window);
        positive("openFor", openFor);
        if (halfOpenProbes < 1) {
            throw new IllegalArgumentException("halfOpenProbes must be at least 1, was " + halfOpenProbes);
        }
        if (consecutiveFailures == 0 && failureRatePercent == 0) {
            throw new IllegalArgumentException("a circuit breaker needs consecutiveFailures or failureRatePercent;"
                    + " both are 0, so it could never open");
        }
    }

    /**
     * The defaults: opens after 5 failures in a row or at 50 % failures over at least 10 calls in
     * 30 s, stays open 30 s, then lets 1 probe through.
     */
    public static CircuitBreaker defaults() {
        return DEFAULTS;
    }

    /** A new builder, starting from the defaults. Not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    private static Duration positive(String name, Duration value) {
        Objects.requireNonNull(value, name + " must not be null");
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(name + " must be positive, was " + value);
        }
        return value;
    }

    /**
     * Builds a {@link CircuitBreaker}. Each setting is checked where it is set; {@link #build()}
     * checks that the breaker can open at all. Not thread-safe; {@code build()} copies.
     */
    public static final class Builder {
        private int consecutiveFailures = DEFAULT_CONSECUTIVE_FAILURES;
        private int failureRatePercent = DEFAULT_FAILURE_RATE_PERCENT;
        private int minimumCalls = DEFAULT_MINIMUM_CALLS;
        private Duration window = DEFAULT_WINDOW;
        private Duration openFor = DEFAULT_OPEN_FOR;
        private int halfOpenProbes = DEFAULT_HALF_OPEN_PROBES;

        private Builder() {
        }

        /**
         * Failed calls in a row that open the breaker. Default 5.
         *
         * @throws IllegalArgumentException if less than 1 (use {@link #noConsecutiveFailures()} to turn it off)
         */
        public Builder consecutiveFailures(int failures) {
            if (failures < 1) {
                throw new IllegalArgumentException("consecutiveFailures must be at least 1, was " + failures
                        + "; call noConsecutiveFailures() to open on the failure rate only");
            }
            this.consecutiveFailures = failures;
            return this;
        }

        /** Only the failure rate opens the breaker. */
        public Builder noConsecutiveFailures() {
            this.consecutiveFailures = 0;
            return this;
        }

        /**
         * The breaker opens when at least {@code minimumCalls} calls in one {@link #window} failed
         * at {@code percent} % or more. Default 50 % of at least 10.
         *
         * @throws IllegalArgumentException if {@code percent} is not 1 to 100 or {@code minimumCalls} is less than 1
         */
        public Builder failureRate(int percent, int minimumCalls) {
            if (percent < 1 || percent > 100) {
                throw new IllegalArgumentException("failureRate percent must be 1 to 100, was " + percent
                        + "; call noFailureRate() to open on consecutive failures only");
            }
            if (minimumCalls < 1) {
                throw new IllegalArgumentException("failureRate minimumCalls must be at least 1, was " + minimumCalls);
            }
            this.failureRatePercent = percent;
            this.minimumCalls = minimumCalls;
            return this;
        }

        /** Only consecutive failures open the breaker. */
        public Builder noFailureRate() {
            this.failureRatePercent = 0;
            return this;
        }

        /**
         * How long calls are counted together for the failure rate. Default 30 s.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder window(Duration window) {
            this.window = positive("window", window);
            return this;
        }

        /**
         * How long the breaker stays open before it lets probes through (the cool-down). Default 30 s.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder openFor(Duration openFor) {
            this.openFor = positive("openFor", openFor);
            return this;
        }

        /**
         * Probe calls at once while half-open; this many successful probes close the breaker. Default 1.
         *
         * @throws IllegalArgumentException if less than 1
         */
        public Builder halfOpenProbes(int probes) {
            if (probes < 1) {
                throw new IllegalArgumentException("halfOpenProbes must be at least 1, was " + probes);
            }
            this.halfOpenProbes = probes;
            return this;
        }

        /**
         * The breaker.
         *
         * @throws IllegalStateException if both {@code noConsecutiveFailures()} and {@code noFailureRate()}
         *     were called: the breaker could never open
         */
        public CircuitBreaker build() {
            if (consecutiveFailures == 0 && failureRatePercent == 0) {
                throw new IllegalStateException("noConsecutiveFailures() and noFailureRate() together leave the"
                        + " circuit breaker nothing to open on; keep one of consecutiveFailures or failureRate");
            }
            return new CircuitBreaker(consecutiveFailures, failureRatePercent, minimumCalls, window, openFor,
                    halfOpenProbes);
        }
    }
}
