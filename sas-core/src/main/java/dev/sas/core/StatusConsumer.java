package dev.sas.core;

import dev.sas.core.internal.AdaptivePoll;
import dev.sas.core.internal.DatabaseClock;
import dev.sas.core.internal.Metrics;
import dev.sas.core.internal.StatusPump;
import dev.sas.core.internal.RuntimeDriver;
import dev.sas.core.spi.StatusOutbox;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StoreSignals;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes status channels on a node that runs no {@link SasRuntime}: a web tier that submits with a
 * {@link SasClient} and wants its tasks' status messages, whichever node runs them. Each channel gets
 * a thread ({@code sas-status-<name>}) that delivers its messages from the store's outbox, in order
 * per task, at least once, with delivery ids (see {@link StatusChannel}).
 *
 * <pre>{@code
 * try (StatusConsumer replies = StatusConsumer.builder().stateStore(store)
 *         .channel(StatusChannel.of("web-replies", messages -> board.update(messages)))
 *         .consumerId("web-1")
 *         .build().start()) {
 *     client.submit(orders, "order-42", order, SubmitOptions.builder().statusChannel("web-replies").build());
 * }
 * }</pre>
 *
 * <p>{@link #start()} registers the channels in the store, so every node accepts submits naming them
 * from then on. A consumer restarted with the same {@link Builder#consumerId consumerId} takes its
 * channels back at once; with another id it waits until the old lease expires. Thread-safe;
 * {@link #start()} and {@link #close()} are idempotent.
 */
public final class StatusConsumer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StatusConsumer.class);

    private final String consumerId;
    private final StoreSignals signals;
    private final Metrics metrics = new Metrics();
    private final Map<String, StatusPump> pumps = new LinkedHashMap<>();
    private final List<StoreSignals.Subscription> subscriptions = new ArrayList<>();
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Duration closeWait;

    static {
        RuntimeDriver.registerConsumer(consumer -> ((StatusConsumer) consumer)::runOnce);
    }

    private StatusConsumer(Builder b, StatusOutbox outbox) {
        this.consumerId = b.consumerId != null ? b.consumerId : defaultConsumerId();
        this.signals = b.store.signals().orElse(null);
        this.closeWait = b.closeWait;
        DatabaseClock clock = DatabaseClock.of(b.clock, b.store, b.databaseClock, "status consumer " + consumerId,
                metrics::clockSkew);
        for (StatusChannel c : b.channels.values()) {
            AdaptivePoll poll = new AdaptivePoll(b.pollInterval, b.busyPollInterval,
                    () -> signals != null && signals.connected());
            pumps.put(c.name(), new StatusPump(c, outbox, clock, consumerId, metrics, poll));
        }
    }

    /** A new builder. Not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    /** The id this consumer holds its channels' leases under. */
    public String consumerId() {
        return consumerId;
    }

    /** The names of the channels it consumes. */
    public Set<String> channels() {
        return Set.copyOf(pumps.keySet());
    }

    /**
     * Registers the channels in the store and starts delivering. A channel that cannot be registered
     * now (the store is down) is registered by its thread as soon as the store answers.
     *
     * @throws IllegalStateException if the consumer was closed
     */
    public StatusConsumer start() {
        if (closed.get()) {
            throw new IllegalStateException("status consumer " + consumerId + " is closed; build a new one");
        }
        if (!started.compareAndSet(false, true)) {
            return this;
        }
        for (StatusPump pump : pumps.values()) {
            try {
                pump.register();
            } catch (RuntimeException e) {
                metrics.storeFailure();
                log.warn("status consumer {}: cannot register channel {} yet ({})", consumerId, pump.channel(),
                        e.getMessage());
            }
            pump.start();
        }
        if (signals != null) {
            subscriptions.add(signals.subscribe(StoreSignals.Topic.STATUS_UPDATES, channel -> {
                if (channel == null) {
                    pumps.values().forEach(StatusPump::wake);
                } else {
                    StatusPump pump = pumps.get(channel);
                    if (pump != null) {
                        pump.wake();
                    }
                }
            }));
        }
        log.info("SAS status consumer {} started: channels {}", consumerId, pumps.keySet());
        return this;
    }

    /** One batch of each channel on the calling thread, for {@code Drain} in sas-testing: only when not started. */
    private int runOnce() {
        if (started.get() || closed.get()) {
            throw new IllegalStateException("Drain drives a status consumer that was not started; " + consumerId
                    + " is " + (closed.get() ? "closed" : "started"));
        }
        return StatusPump.runEachOnce(pumps.values());
    }

    /** Counters since this consumer was built (the reply counters and store failures). */
    public SasMetrics metrics() {
        return metrics.snapshot();
    }

    /**
     * Stops delivering (a delivery in progress may finish for up to the close wait, default 5 s) and
     * gives up the channels' leases, so another node consuming them takes over at once. Messages not
     * delivered stay in the store. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        subscriptions.forEach(StoreSignals.Subscription::close);
        boolean interrupted = false;
        for (StatusPump pump : pumps.values()) {
            try {
                pump.stop(closeWait);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        log.info("SAS status consumer {} stopped: {} messages delivered", consumerId, metrics.snapshot().statusUpdatesDelivered());
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "StatusConsumer{" + consumerId + ", channels=" + pumps.keySet() + '}';
    }

    private static String defaultConsumerId() {
        String host = System.getenv("HOSTNAME");
        return (host == null || host.isBlank() ? "sas" : host) + "-" + ProcessHandle.current().pid() + "-replies-"
                + UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * Builds a {@link StatusConsumer}. Not thread-safe; {@link #build()} copies, so reusing the builder
     * never changes a consumer already built.
     */
    public static final class Builder {
        private StateStore store;
        private final Map<String, StatusChannel> channels = new LinkedHashMap<>();
        private String consumerId;
        private Clock clock = Clock.systemUTC();
        private boolean databaseClock = true;
        private Duration pollInterval = SasRuntime.DEFAULT_POLL_INTERVAL;
        private Duration busyPollInterval = SasRuntime.DEFAULT_BUSY_POLL_INTERVAL;
        private Duration closeWait = Duration.ofSeconds(5);

        private Builder() {
        }

        /**
         * Takes the store and the clock settings from {@code settings}, the same a client and a
         * runtime can be given ({@code client.settings()} gives a client's).
         *
         * @throws NullPointerException if null
         */
        public Builder settings(SasSettings settings) {
            Objects.requireNonNull(settings, "settings must not be null");
            this.store = settings.stateStore();
            this.clock = settings.clock();
            this.databaseClock = settings.databaseClock();
            return this;
        }

        /**
         * Where the outbox lives. Required.
         *
         * @throws NullPointerException if null
         */
        public Builder stateStore(StateStore store) {
            this.store = Objects.requireNonNull(store, "stateStore must not be null");
            return this;
        }

        /**
         * A channel to consume.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if a channel of the same name was added
         */
        public Builder channel(StatusChannel channel) {
            Objects.requireNonNull(channel, "channel must not be null");
            if (channels.putIfAbsent(channel.name(), channel) != null) {
                throw new IllegalArgumentException("status channel '" + channel.name() + "' is already added");
            }
            return this;
        }

        /**
         * A channel whose messages go to {@code listener}, one event at a time (see
         * {@link StatusChannel.Builder#listener}).
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the name is invalid or was added
         */
        public Builder channel(String name, TaskListener listener) {
            return channel(StatusChannel.builder(name).listener(listener).build());
        }

        /**
         * The id this consumer holds its channels' leases under: give a node the same id across
         * restarts and it takes its channels back at once. Two live consumers must never share one.
         * Default: host, pid and a random suffix.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if blank or longer than 100 characters
         */
        public Builder consumerId(String consumerId) {
            Objects.requireNonNull(consumerId, "consumerId must not be null");
            if (consumerId.isBlank() || consumerId.length() > 100) {
                throw new IllegalArgumentException("consumerId must be 1 to 100 non-blank characters, was '"
                        + consumerId + "'");
            }
            this.consumerId = consumerId;
            return this;
        }

        /**
         * This node's clock (see {@link RuntimeBuilder#clock(Clock)}). Default: the system UTC clock.
         *
         * @throws NullPointerException if null
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /** Makes {@link #clock(Clock)} the authority (see {@link RuntimeBuilder#trustLocalClock()}). */
        public Builder trustLocalClock() {
            this.databaseClock = false;
            return this;
        }

        /**
         * The longest wait between two looks at the outbox (see {@link RuntimeBuilder#pollInterval}).
         * Default 500 ms.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder pollInterval(Duration interval) {
            this.pollInterval = positive("pollInterval", interval);
            return this;
        }

        /**
         * The wait between looks while recently busy, on a store without wake-up hints (see
         * {@link RuntimeBuilder#busyPollInterval}). Default 20 ms.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder busyPollInterval(Duration interval) {
            this.busyPollInterval = positive("busyPollInterval", interval);
            return this;
        }

        /**
         * How long {@link StatusConsumer#close()} waits for a delivery in progress. Default 5 s.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if negative
         */
        public Builder closeWait(Duration wait) {
            Objects.requireNonNull(wait, "closeWait must not be null");
            if (wait.isNegative()) {
                throw new IllegalArgumentException("closeWait must not be negative, was " + wait);
            }
            this.closeWait = wait;
            return this;
        }

        private static Duration positive(String name, Duration value) {
            Objects.requireNonNull(value, name + " must not be null");
            if (value.isZero() || value.isNegative()) {
                throw new IllegalArgumentException(name + " must be positive, was " + value);
            }
            return value;
        }

        /**
         * The consumer, not yet started.
         *
         * @throws IllegalStateException if no store or no channel was given, the store keeps no reply
         *     channels, or busyPollInterval exceeds pollInterval
         */
        public StatusConsumer build() {
            if (store == null) {
                throw new IllegalStateException("stateStore is required: call stateStore(...) before build()");
            }
            if (channels.isEmpty()) {
                throw new IllegalStateException("at least one channel is required: call channel(...) before build()");
            }
            if (busyPollInterval.compareTo(pollInterval) > 0) {
                throw new IllegalStateException("busyPollInterval (" + busyPollInterval + ") must not exceed"
                        + " pollInterval (" + pollInterval + ")");
            }
            StatusOutbox outbox = store.statusOutbox().orElseThrow(() -> new IllegalStateException("the store " + store
                    + " keeps no status channels; use a store that does (JdbcStateStore, InMemoryStateStore)"));
            return new StatusConsumer(this, outbox);
        }
    }
}
