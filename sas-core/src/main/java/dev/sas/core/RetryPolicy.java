package dev.sas.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;

/**
 * How often a failed step (or compensation) is tried again and how long to wait in between:
 * at most {@link #maxAttempts()} attempts (errors and time-outs alike), exponential backoff from
 * {@link #initialBackoff()} capped at {@link #maxBackoff()}, each delay spread by
 * ±{@link #jitter()}. Errors that are {@link NonRetryableException}s, or that the policy marks with
 * {@link Builder#abortOn}, fail the step at once. Every retry is recorded: the task goes back to
 * {@code PENDING} until its next attempt is due, so a retry survives a crash. Immutable and
 * thread-safe.
 */
public final class RetryPolicy {

    /** Default attempts: 3. */
    public static final int DEFAULT_MAX_ATTEMPTS = 3;
    /** Default first delay: 100 ms. */
    public static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofMillis(100);
    /** Default longest delay: 30 s. */
    public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(30);
    /** Default growth per attempt: 2. */
    public static final double DEFAULT_MULTIPLIER = 2.0;
    /** Default spread: ±20 %. */
    public static final double DEFAULT_JITTER = 0.2;

    private static final RetryPolicy DEFAULTS = builder().build();
    private static final RetryPolicy NONE = builder().maxAttempts(1).build();

    private final int maxAttempts;
    private final Duration initialBackoff;
    private final Duration maxBackoff;
    private final double multiplier;
    private final double jitter;
    private final List<Class<? extends Throwable>> abortOn;
    private final Predicate<Throwable> abortIf;

    private RetryPolicy(Builder b) {
        this.maxAttempts = b.maxAttempts;
        this.initialBackoff = b.initialBackoff;
        this.maxBackoff = b.maxBackoff;
        this.multiplier = b.multiplier;
        this.jitter = b.jitter;
        this.abortOn = List.copyOf(b.abortOn);
        this.abortIf = b.abortIf;
    }

    /** The default policy: 3 attempts, 100 ms doubling to at most 30 s, ±20 % jitter. */
    public static RetryPolicy defaults() {
        return DEFAULTS;
    }

    /**
     * A policy with a single attempt: a step with it is never called twice, so neither an error
     * nor a time-out (a hung step, a node that died) is retried.
     */
    public static RetryPolicy none() {
        return NONE;
    }

    /** A new builder, starting from the defaults. Builders are not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Attempts in all, including the first, however each ended: an error thrown or returned, or a
     * time-out (the supervisor finding the attempt past its deadline). A step's
     * {@code maxTimeouts} further bounds how many of them may time out.
     */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** Delay before the second attempt. */
    public Duration initialBackoff() {
        return initialBackoff;
    }

    /** Longest delay between attempts. */
    public Duration maxBackoff() {
        return maxBackoff;
    }

    /** Growth of the delay per attempt. */
    public double multiplier() {
        return multiplier;
    }

    /** Spread of each delay, as a fraction in [0, 1). */
    public double jitter() {
        return jitter;
    }

    /** True when {@code error} must not be retried. */
    public boolean isNonRetryable(Throwable error) {
        if (error instanceof NonRetryableException) {
            return true;
        }
        for (Class<? extends Throwable> type : abortOn) {
            if (type.isInstance(error)) {
                return true;
            }
        }
        return abortIf.test(error);
    }

    /**
     * The delay before the attempt after {@code failedAttempts} failures, with jitter applied.
     *
     * @throws IllegalArgumentException if {@code failedAttempts} is less than 1
     */
    public Duration backoff(int failedAttempts) {
        if (failedAttempts < 1) {
            throw new IllegalArgumentException("failedAttempts must be at least 1, was " + failedAttempts);
        }
        double base = initialBackoff.toMillis() * Math.pow(multiplier, failedAttempts - 1);
        double capped = Math.min(base, (double) maxBackoff.toMillis());
        double spread = jitter == 0 ? 0 : capped * jitter * (ThreadLocalRandom.current().nextDouble() * 2 - 1);
        return Duration.ofMillis(Math.max(0, Math.round(capped + spread)));
    }

    @Override
    public String toString() {
        return "RetryPolicy{maxAttempts=" + maxAttempts + ", initialBackoff=" + initialBackoff
                + ", maxBackoff=" + maxBackoff + ", multiplier=" + multiplier + ", jitter=" + jitter
                + ", abortOn=" + abortOn + '}';
    }

    /** Builds a {@link RetryPolicy}. Not thread-safe; {@link #build()} may be called repeatedly. */
    public static final class Builder {
        private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
        private Duration initialBackoff = DEFAULT_INITIAL_BACKOFF;
        private Duration maxBackoff = DEFAULT_MAX_BACKOFF;
        private double multiplier = DEFAULT_MULTIPLIER;
        private double jitter = DEFAULT_JITTER;
        private final List<Class<? extends Throwable>> abortOn = new ArrayList<>();
        private Predicate<Throwable> abortIf = e -> false;

        private Builder() {
        }

        /**
         * Attempts in all, including the first, whether they fail with an error or time out
         * (see {@link RetryPolicy#maxAttempts()}).
         *
         * @throws IllegalArgumentException if less than 1
         */
        public Builder maxAttempts(int maxAttempts) {
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * Exponential backoff: {@code initial}, then times {@code multiplier} per attempt, at most {@code max}.
         *
         * @throws NullPointerException if a duration is null
         * @throws IllegalArgumentException if a duration is negative, {@code max < initial}, or
         *     {@code multiplier < 1}
         */
        public Builder backoff(Duration initial, Duration max, double multiplier) {
            Objects.requireNonNull(initial, "initial backoff must not be null");
            Objects.requireNonNull(max, "max backoff must not be null");
            if (initial.isNegative()) {
                throw new IllegalArgumentException("initial backoff must not be negative, was " + initial);
            }
            if (max.compareTo(initial) < 0) {
                throw new IllegalArgumentException(
                        "max backoff must be at least the initial backoff " + initial + ", was " + max);
            }
            if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
                throw new IllegalArgumentException("backoff multiplier must be at least 1, was " + multiplier);
            }
            this.initialBackoff = initial;
            this.maxBackoff = max;
            this.multiplier = multiplier;
            return this;
        }

        /**
         * A fixed delay between attempts.
         *
         * @throws NullPointerException if {@code delay} is null
         * @throws IllegalArgumentException if {@code delay} is negative
         */
        public Builder fixedBackoff(Duration delay) {
            return backoff(delay, delay, 1.0);
        }

        /**
         * Spread of each delay, as a fraction: 0.2 means ±20 %.
         *
         * @throws IllegalArgumentException if not in [0, 1)
         */
        public Builder jitter(double jitter) {
            if (!(jitter >= 0.0 && jitter < 1.0)) {
                throw new IllegalArgumentException("jitter must be in [0, 1), was " + jitter);
            }
            this.jitter = jitter;
            return this;
        }

        /**
         * Errors of these types (or subtypes) fail the step without retry.
         *
         * @throws NullPointerException if a type is null
         */
        @SafeVarargs
        public final Builder abortOn(Class<? extends Throwable>... types) {
            for (Class<? extends Throwable> type : types) {
                abortOn.add(Objects.requireNonNull(type, "abortOn type must not be null"));
            }
            return this;
        }

        /**
         * Errors matching this predicate fail the step without retry.
         *
         * @throws NullPointerException if {@code predicate} is null
         */
        public Builder abortIf(Predicate<Throwable> predicate) {
            this.abortIf = Objects.requireNonNull(predicate, "abortIf predicate must not be null");
            return this;
        }

        /** The immutable policy. */
        public RetryPolicy build() {
            return new RetryPolicy(this);
        }
    }
}
