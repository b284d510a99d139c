package dev.sas.core;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A named status channel and what delivers its messages. Tasks submitted with
 * {@link SubmitOptions.Builder#statusChannel(String) statusChannel(name)} write their status messages (every
 * {@link TaskEvent}) to the store's outbox in the transaction of each transition, whichever node
 * makes it; the node that registered the channel ({@link RuntimeBuilder#statusChannel(StatusChannel)}
 * or {@link StatusConsumer}) reads them from the store and hands them to the channel's
 * {@link StatusHandler}, in order per task, at least once, with a delivery id. Its position is kept
 * in the store, so a node that restarts goes on where it stopped and nothing is lost while no node
 * consumes the channel.
 *
 * <p>Several nodes may register the same channel: one of them at a time consumes it (a lease in
 * the store, renewed while it runs); another takes over when it stops, or within
 * {@link #leaseTime()} when it dies. A node that wants every message for itself registers a channel
 * name of its own.
 *
 * <pre>{@code
 * StatusChannel replies = StatusChannel.builder("web-replies")
 *         .handler(messages -> messages.forEach(m -> statusBoard.update(m.event())))
 *         .build();
 * }</pre>
 *
 * <p>Immutable and thread-safe; the builder is not thread-safe.
 */
public final class StatusChannel {
    /** Default most messages handed to the handler at once: 100. */
    public static final int DEFAULT_BATCH_SIZE = 100;
    /** Default consumer lease: 10 s (a node that dies holding it is replaced within this time). */
    public static final Duration DEFAULT_LEASE_TIME = Duration.ofSeconds(10);

    private final String name;
    private final StatusHandler handler;
    private final boolean redeliverOnFailure;
    private final int batchSize;
    private final Duration leaseTime;

    private StatusChannel(Builder b) {
        this.name = b.name;
        this.handler = b.handler;
        this.redeliverOnFailure = b.redeliverOnFailure;
        this.batchSize = b.batchSize;
        this.leaseTime = b.leaseTime;
    }

    /**
     * A channel whose messages go to {@code handler}, with default settings.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is not a valid name (see {@link Workflow#NAME_PATTERN})
     */
    public static StatusChannel of(String name, StatusHandler handler) {
        return builder(name).handler(handler).build();
    }

    /**
     * A builder for the channel {@code name}. Not thread-safe.
     *
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is not a valid name (see {@link Workflow#NAME_PATTERN})
     */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** The channel's name, as tasks name it in {@code SubmitOptions.Builder.statusChannel}. */
    public String name() {
        return name;
    }

    /** What delivers the messages. */
    public StatusHandler handler() {
        return handler;
    }

    /**
     * True if a batch the handler failed on is delivered again (a {@link Builder#handler handler});
     * false for a {@link Builder#listener listener}, whose exceptions are logged and counted and
     * whose messages are not repeated.
     */
    public boolean redeliverOnFailure() {
        return redeliverOnFailure;
    }

    /** Most messages handed to the handler at once. */
    public int batchSize() {
        return batchSize;
    }

    /** How long the consuming node's lease lasts without renewal. */
    public Duration leaseTime() {
        return leaseTime;
    }

    @Override
    public String toString() {
        return "StatusChannel{" + name + ", batchSize=" + batchSize + ", leaseTime=" + leaseTime + '}';
    }

    /** Builds a {@link StatusChannel}. Not thread-safe. */
    public static final class Builder {
        private final String name;
        private StatusHandler handler;
        private boolean redeliverOnFailure = true;
        private int batchSize = DEFAULT_BATCH_SIZE;
        private Duration leaseTime = DEFAULT_LEASE_TIME;

        private Builder(String name) {
            Workflow.checkName("status channel name", name);
            this.name = name;
        }

        /**
         * Delivers the messages with {@code handler}: a batch it throws on is delivered again after a
         * backoff (1 s growing to 30 s), so nothing is lost while it fails.
         *
         * @throws NullPointerException if null
         */
        public Builder handler(StatusHandler handler) {
            this.handler = Objects.requireNonNull(handler, "handler must not be null");
            this.redeliverOnFailure = true;
            return this;
        }

        /**
         * Hands each message's event to {@code listener}. What the listener throws (also an
         * {@code Error}) is logged and counted in {@link SasMetrics#listenerFailures()}, and the
         * message counts as delivered: a listener is told, not retried.
         *
         * @throws NullPointerException if null
         */
        public Builder listener(TaskListener listener) {
            Objects.requireNonNull(listener, "listener must not be null");
            this.handler = new ListenerHandler(listener);
            this.redeliverOnFailure = false;
            return this;
        }

        /**
         * Most messages handed to the handler at once. Default {@value StatusChannel#DEFAULT_BATCH_SIZE}.
         *
         * @throws IllegalArgumentException if less than 1 or more than 1,000
         */
        public Builder batchSize(int batchSize) {
            if (batchSize < 1 || batchSize > 1_000) {
                throw new IllegalArgumentException("batchSize must be 1 to 1,000, was " + batchSize);
            }
            this.batchSize = batchSize;
            return this;
        }

        /**
         * How long the consuming node's lease lasts; it renews it at a third of this. A node that
         * dies holding the lease is replaced by another that registered the channel within this time.
         * Default 10 s.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if shorter than 1 s
         */
        public Builder leaseTime(Duration leaseTime) {
            Objects.requireNonNull(leaseTime, "leaseTime must not be null");
            if (leaseTime.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("leaseTime must be at least 1 s, was " + leaseTime);
            }
            this.leaseTime = leaseTime;
            return this;
        }

        /**
         * The channel.
         *
         * @throws IllegalStateException if neither a handler nor a listener was given
         */
        public StatusChannel build() {
            if (handler == null) {
                throw new IllegalStateException("status channel '" + name + "' needs a handler(...) or a listener(...)");
            }
            return new StatusChannel(this);
        }
    }

    /** A listener as a handler: told each event; what it throws is counted, not repeated. */
    record ListenerHandler(TaskListener listener) implements StatusHandler {
        @Override
        public void deliver(List<StatusUpdate> messages) {
            for (StatusUpdate m : messages) {
                listener.onEvent(m.event());
            }
        }
    }
}
