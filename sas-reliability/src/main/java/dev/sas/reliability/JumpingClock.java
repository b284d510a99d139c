package dev.sas.reliability;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A node's clock that can jump mid-run: the system clock plus an offset that {@link #jumpTo}
 * changes at once (an NTP step, a VM resumed from a snapshot). Thread-safe.
 */
final class JumpingClock extends Clock {
    private static final Clock SYSTEM = Clock.systemUTC();
    private volatile Duration offset;

    JumpingClock(Duration offset) {
        this.offset = offset;
    }

    /** From now on, the clock reads the system clock plus {@code offset}. */
    void jumpTo(Duration offset) {
        this.offset = offset;
    }

    Duration offset() {
        return offset;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        if (zone.equals(ZoneOffset.UTC)) {
            return this;
        }
        throw new UnsupportedOperationException("a jumping clock is in UTC");
    }

    @Override
    public long millis() {
        return SYSTEM.millis() + offset.toMillis();
    }

    @Override
    public Instant instant() {
        return SYSTEM.instant().plus(offset);
    }
}
