package dev.sas.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A {@link Clock} that moves only when told to, for deterministic tests of deadlines, backoff
 * and supervisor recovery. Thread-safe. Always in UTC.
 */
public final class ManualClock extends Clock {

    private final AtomicReference<Instant> now;

    /**
     * A clock standing at {@code start}.
     *
     * @throws NullPointerException if {@code start} is null
     */
    public ManualClock(Instant start) {
        this.now = new AtomicReference<>(Objects.requireNonNull(start, "start must not be null"));
    }

    /** A clock standing at 2030-01-01T00:00:00Z. */
    public ManualClock() {
        this(Instant.parse("2030-01-01T00:00:00Z"));
    }

    /**
     * Moves the clock forward.
     *
     * @return the new time
     * @throws NullPointerException if {@code amount} is null
     * @throws IllegalArgumentException if {@code amount} is negative
     */
    public Instant tick(Duration amount) {
        Objects.requireNonNull(amount, "amount must not be null");
        if (amount.isNegative()) {
            throw new IllegalArgumentException("a manual clock only moves forward; amount was " + amount);
        }
        return now.updateAndGet(t -> t.plus(amount));
    }

    /**
     * Sets the time (backwards too, to model a node whose clock is behind).
     *
     * @throws NullPointerException if {@code instant} is null
     */
    public void set(Instant instant) {
        now.set(Objects.requireNonNull(instant, "instant must not be null"));
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("ManualClock is always UTC");
    }
}
