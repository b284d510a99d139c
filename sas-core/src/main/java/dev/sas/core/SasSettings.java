package dev.sas.core;

import dev.sas.core.spi.StateStore;
import java.time.Clock;
import java.util.Objects;

/**
 * The settings a client, a runtime and a status consumer share, given once: the store, the
 * node's clock and whether the store's clock is the authority, the largest payload, tracing and
 * the completion token keys. Hand the same settings to each builder instead of repeating them.
 *
 * <pre>{@code
 * SasSettings settings = SasSettings.builder().stateStore(store).completionTokenKeys(keys).build();
 * SasClient client = SasClient.builder().settings(settings).build();
 * SasRuntime runtime = SasRuntime.builder().settings(settings).workflow(orders).build();
 * StatusConsumer updates = StatusConsumer.builder().settings(settings).channel(board).build();
 * }</pre>
 *
 * <p>A builder's own setters called after {@code settings(...)} override one setting for that
 * builder only. {@link SasClient#settings()} gives back the settings a client was built with.
 * Immutable and thread-safe; the builder is not thread-safe.
 *
 * @param stateStore where tasks live
 * @param clock this node's clock (see {@link RuntimeBuilder#clock(Clock)})
 * @param databaseClock whether times compared across nodes follow the store's clock (false after
 *     {@link Builder#trustLocalClock()})
 * @param maxPayloadBytes largest encoded input or step output, in UTF-8 bytes
 * @param tracing carries a submitter's trace context to the steps
 * @param completionTokenKeys the keys that sign and check completion tokens, or null if none
 */
public record SasSettings(StateStore stateStore, Clock clock, boolean databaseClock, int maxPayloadBytes,
        Tracing tracing, CompletionTokenKeys completionTokenKeys) {

    /**
     * Checks the settings.
     *
     * @throws NullPointerException if the store, clock or tracing is null
     * @throws IllegalArgumentException if {@code maxPayloadBytes} is less than 1
     */
    public SasSettings {
        Objects.requireNonNull(stateStore, "stateStore must not be null");
        Objects.requireNonNull(clock, "clock must not be null");
        Objects.requireNonNull(tracing, "tracing must not be null");
        if (maxPayloadBytes < 1) {
            throw new IllegalArgumentException("maxPayloadBytes must be at least 1, was " + maxPayloadBytes);
        }
    }

    /** A new builder. Not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Builds {@link SasSettings}. Not thread-safe; reusing it never changes settings already built.
     */
    public static final class Builder extends SharedSettingsBuilder<Builder> {

        private Builder() {
        }

        /**
         * The settings.
         *
         * @throws IllegalStateException if no state store was given
         */
        public SasSettings build() {
            if (store == null) {
                throw new IllegalStateException("stateStore is required: call stateStore(...) before build()");
            }
            return new SasSettings(store, clock, databaseClock, maxPayloadBytes, tracing, completionTokenKeys);
        }
    }
}
