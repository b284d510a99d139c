package dev.sas.core;

import dev.sas.core.spi.StateStore;
import java.time.Clock;
import java.util.Objects;

/**
 * The settings a client, a runtime and {@link SasSettings} are built with alike, set one way in
 * each builder: the store, the clock, the payload limit, tracing and the completion token keys.
 * Not thread-safe.
 *
 * @param <B> the builder
 */
abstract class SharedSettingsBuilder<B extends SharedSettingsBuilder<B>> {
    StateStore store;
    Clock clock = Clock.systemUTC();
    boolean databaseClock = true;
    int maxPayloadBytes = SasClient.DEFAULT_MAX_PAYLOAD_BYTES;
    Tracing tracing = Tracing.none();
    CompletionTokenKeys completionTokenKeys;

    SharedSettingsBuilder() {
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * Takes the store, clock, payload limit, tracing and completion token keys from
     * {@code settings}, the same a client, a runtime and a status consumer can be given
     * ({@link SasClient#settings()} gives a client's). Setters called after it override one of them.
     *
     * @throws NullPointerException if null
     */
    public B settings(SasSettings settings) {
        Objects.requireNonNull(settings, "settings must not be null");
        this.store = settings.stateStore();
        this.clock = settings.clock();
        this.databaseClock = settings.databaseClock();
        this.maxPayloadBytes = settings.maxPayloadBytes();
        this.tracing = settings.tracing();
        this.completionTokenKeys = settings.completionTokenKeys();
        return self();
    }

    /**
     * Where tasks live. Required.
     *
     * @throws NullPointerException if null
     */
    public B stateStore(StateStore store) {
        this.store = Objects.requireNonNull(store, "stateStore must not be null");
        return self();
    }

    /**
     * This node's clock. Default: the system UTC clock. It measures local durations; every time
     * compared across nodes (due times, deadlines, leases, retry and delayed-submit times) is this
     * clock moved by its measured offset to the store's clock ({@code StateStore.currentTime()}),
     * so a node whose clock runs off neither steals claims nor starts tasks early. An offset of a
     * second or more is logged at WARN and reported as {@link SasMetrics#clockSkewMillis()}. Stores
     * without a clock of their own (in-process ones) leave this clock the authority.
     *
     * @throws NullPointerException if null
     */
    public B clock(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
        return self();
    }

    /**
     * Makes {@link #clock(Clock)} the authority: the store's clock is never read and times are
     * compared as this node sees them. For tests that drive a manual clock against a database, and
     * for deployments with exactly one node; with several nodes, a node whose clock runs ahead
     * steals the others' claims and leases.
     */
    public B trustLocalClock() {
        this.databaseClock = false;
        return self();
    }

    /**
     * Largest encoded input or step output, in UTF-8 bytes. Default
     * {@value SasClient#DEFAULT_MAX_PAYLOAD_BYTES}.
     *
     * @throws IllegalArgumentException if less than 1
     */
    public B maxPayloadBytes(int bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("maxPayloadBytes must be at least 1, was " + bytes);
        }
        this.maxPayloadBytes = bytes;
        return self();
    }

    /**
     * Carries each task's trace from its submission to its steps and agent calls (e.g.
     * {@code OpenTelemetryTracing} from {@code sas-opentelemetry}): a client stores the submitter's
     * trace context with each task, a runtime continues it around every step attempt. Default
     * {@link Tracing#none()}.
     *
     * @throws NullPointerException if null
     */
    public B tracing(Tracing tracing) {
        this.tracing = Objects.requireNonNull(tracing, "tracing must not be null");
        return self();
    }

    /**
     * The keys that sign the completion tokens of steps that await completion and check the tokens
     * handed to {@link StepCompletionClient}. Required on a runtime with such a step, and on a
     * client that completes steps; give the same keys to every runtime and client of the cluster.
     *
     * @throws NullPointerException if null
     */
    public B completionTokenKeys(CompletionTokenKeys keys) {
        this.completionTokenKeys = Objects.requireNonNull(keys, "completionTokenKeys must not be null");
        return self();
    }
}
