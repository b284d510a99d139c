package dev.sas.core;

import java.time.Duration;
import java.util.Objects;

/**
 * Optional settings for {@link SasClient#submit}: priority, delay, status channel, and a host
 * transaction to join. Immutable and thread-safe; built with {@link #builder()}.
 */
public final class SubmitOptions {

    private static final SubmitOptions DEFAULTS = builder().build();

    private final int priority;
    private final Duration delay;
    private final String statusChannel;
    private final Object transaction;

    private SubmitOptions(Builder b) {
        this.priority = b.priority;
        this.delay = b.delay;
        this.statusChannel = b.statusChannel;
        this.transaction = b.transaction;
    }

    /** No priority, no delay, no status channel, own transaction. */
    public static SubmitOptions defaults() {
        return DEFAULTS;
    }

    /** A new builder. Not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    /** Higher runs first; default 0. */
    public int priority() {
        return priority;
    }

    /** How long after submission the task becomes due; default zero. */
    public Duration delay() {
        return delay;
    }

    /** The status channel that receives this task's events, or null. */
    public String statusChannel() {
        return statusChannel;
    }

    /** The host transaction to join, or null. */
    public Object transaction() {
        return transaction;
    }

    /** Builds {@link SubmitOptions}. Not thread-safe. */
    public static final class Builder {
        private int priority;
        private Duration delay = Duration.ZERO;
        private String statusChannel;
        private Object transaction;

        private Builder() {
        }

        /** Higher runs first; any int, default 0. */
        public Builder priority(int priority) {
            this.priority = priority;
            return this;
        }

        /**
         * Run no earlier than this long after submission.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if negative
         */
        public Builder delay(Duration delay) {
            Objects.requireNonNull(delay, "delay must not be null");
            if (delay.isNegative()) {
                throw new IllegalArgumentException("delay must not be negative, was " + delay);
            }
            this.delay = delay;
            return this;
        }

        /**
         * Deliver this task's events to the status channel registered under this name with
         * {@code RuntimeBuilder.statusChannel}.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not a valid name (see {@link Workflow#NAME_PATTERN})
         */
        public Builder statusChannel(String channel) {
            Workflow.checkName("statusChannel", channel);
            this.statusChannel = channel;
            return this;
        }

        /**
         * Insert the task in the host's open transaction, so it commits or rolls back with the
         * host's own rows. The type depends on the store (for the JDBC store: a
         * {@code java.sql.Connection} or a Jdbi {@code Handle}).
         *
         * @throws NullPointerException if null
         */
        public Builder transaction(Object transaction) {
            this.transaction = Objects.requireNonNull(transaction, "transaction must not be null");
            return this;
        }

        /** The immutable options. */
        public SubmitOptions build() {
            return new SubmitOptions(this);
        }
    }
}
