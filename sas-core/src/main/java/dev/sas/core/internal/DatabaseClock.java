package dev.sas.core.internal;

import dev.sas.core.StateStoreException;
import dev.sas.core.spi.StateStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The time every node agrees on: the store's clock ({@link StateStore#currentTime()}), read
 * through an offset to the node's own clock. Every due time, deadline, lease and retry time the
 * runtime and client compute comes from here, so a node whose clock runs minutes off neither
 * steals leases and claims nor starts delayed tasks early. The node's clock only measures local
 * durations between measurements.
 *
 * <p>The offset is measured with a few round trips, keeping the one with the shortest round trip
 * (its error is at most half of it). It is re-measured when it is older than {@link #REFRESH_EVERY}
 * by the node's clock, and at once when the node's clock steps: {@link #instant()} compares how far
 * the node's clock moved since the measurement with a monotonic timer ({@code System.nanoTime()}),
 * and a difference of more than {@link #STEP_TOLERANCE} (an NTP step, a suspended VM, an operator
 * setting the date) makes it measure again, or, until it can, answer from the monotonic timer, so
 * no deadline, due time or lease is computed from a clock that just jumped. Bounds the node refuses to exceed: a measurement whose
 * round trip exceeds {@link #MAX_ROUND_TRIP} is discarded, and an offset older than {@link #MAX_AGE}
 * that cannot be re-measured makes {@link #ensureFresh()} throw, so the node stops claiming and
 * supervising instead of acting on a time it cannot vouch for.
 *
 * <p>An offset of one second or more is logged at WARN (again when it moves by another second)
 * and reported through the skew listener. A store without a clock of its own (in-process) and a
 * runtime told to trust its local clock use the local clock unchanged. Thread-safe.
 */
public final class DatabaseClock extends Clock {
    private static final Logger log = LoggerFactory.getLogger(DatabaseClock.class);
    /** How long a measured offset is used before it is measured again. */
    public static final Duration REFRESH_EVERY = Duration.ofSeconds(5);
    /** How old an offset may grow, while the store cannot be reached to re-measure it, before the node stops acting on it. */
    public static final Duration MAX_AGE = Duration.ofSeconds(30);
    /** Longest round trip a measurement may take (its error is at most half of it). */
    public static final Duration MAX_ROUND_TRIP = Duration.ofSeconds(1);
    /** Offsets from this size up are logged at WARN. */
    public static final Duration WARN_ABOVE = Duration.ofSeconds(1);
    /** A step of the node's clock, against its monotonic timer, from which the offset is measured again at once. */
    public static final Duration STEP_TOLERANCE = Duration.ofMillis(250);
    /** Round trips per measurement at most; fewer when one is fast. */
    static final int SAMPLES = 3;
    private static final long GOOD_ROUND_TRIP_NANOS = Duration.ofMillis(5).toNanos();

    private final Clock local;
    private final StateStore store;
    private final String owner;
    private final LongConsumer skewMillis;
    private final LongSupplier monotonicNanos;
    private final ReentrantLock measuring = new ReentrantLock();
    private volatile long offsetNanos;
    private volatile Instant measuredAt;
    /** {@link #monotonicNanos} at {@link #measuredAt}. */
    private volatile long measuredAtNanos;
    /** {@link #monotonicNanos} at the last failed re-measurement from {@link #instant()}, to space the next one. */
    private volatile long failedAtNanos;
    private volatile boolean failed;
    private volatile boolean localOnly;
    private Long warnedAtNanos;

    private DatabaseClock(Clock local, StateStore store, String owner, LongConsumer skewMillis, boolean localOnly,
            LongSupplier monotonicNanos) {
        this.local = local;
        this.monotonicNanos = monotonicNanos;
        this.store = store;
        this.owner = owner;
        this.skewMillis = skewMillis;
        this.localOnly = localOnly;
    }

    /**
     * A clock that follows {@code store}'s time, or {@code local} unchanged when
     * {@code useDatabase} is false.
     *
     * @param owner who uses it, for logs ("instance node-a", "client")
     * @param skewMillis told every accepted offset (database minus local, in ms)
     */
    public static DatabaseClock of(Clock local, StateStore store, boolean useDatabase, String owner,
            LongConsumer skewMillis) {
        return new DatabaseClock(local, store, owner, skewMillis, !useDatabase, System::nanoTime);
    }

    /** As {@link #of}, with a monotonic timer of the test's choosing (nanoseconds, as {@code System.nanoTime()}). */
    static DatabaseClock of(Clock local, StateStore store, String owner, LongConsumer skewMillis,
            LongSupplier monotonicNanos) {
        return new DatabaseClock(local, store, owner, skewMillis, false, monotonicNanos);
    }

    /**
     * The local clock moved by the measured offset: the store's time, as far as this node can tell.
     * An offset that is due for a new measurement is measured again here by one caller at a time
     * (the others go on). When the local clock stepped since the last measurement and no new one
     * can be had at once (another thread is measuring, or the store does not answer), the answer is
     * the store's time at the last measurement plus the monotonic time since, so no caller computes
     * a deadline or due time from a clock that just jumped, and none waits on the store for it.
     */
    @Override
    public Instant instant() {
        Instant now = local.instant();
        if (localOnly || measuredAt == null || isFresh(now, true)) {
            return plusOffset(now);
        }
        boolean stepped = !isFresh(now, false);
        if (tryRemeasure()) {
            return plusOffset(local.instant());
        }
        if (stepped) {
            Instant at = measuredAt;
            long since = monotonicNanos.getAsLong() - measuredAtNanos;
            return at.plusNanos(offsetNanos + since);
        }
        return plusOffset(now);
    }

    private Instant plusOffset(Instant localNow) {
        long o = offsetNanos;
        return o == 0 ? localNow : localNow.plusNanos(o);
    }

    /**
     * Measures again if no other thread is measuring and the last failure is more than
     * {@link #STEP_TOLERANCE} ago. A failure keeps the old offset ({@link #ensureFresh()} enforces
     * {@link #MAX_AGE}).
     *
     * @return true if the offset is fresh now
     */
    private boolean tryRemeasure() {
        if (failed && monotonicNanos.getAsLong() - failedAtNanos < STEP_TOLERANCE.toNanos()) {
            return false;
        }
        if (!measuring.tryLock()) {
            return false;
        }
        try {
            if (!isFresh(local.instant(), true)) {
                measure();
            }
            failed = false;
            return !localOnly;
        } catch (RuntimeException e) {
            failed = true;
            failedAtNanos = monotonicNanos.getAsLong();
            log.debug("{}: clock offset to the store not re-measured ({}); using the one from {}", owner,
                    e.getMessage(), measuredAt);
            return false;
        } finally {
            measuring.unlock();
        }
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    /** A fixed-offset snapshot in {@code zone}: later measurements do not move it. */
    @Override
    public Clock withZone(ZoneId zone) {
        return Clock.offset(local.withZone(zone), Duration.ofNanos(offsetNanos));
    }

    /** The store's clock minus the local one at the last measurement; zero when the local clock is used. */
    public Duration offset() {
        return Duration.ofNanos(offsetNanos);
    }

    /** True if this clock follows a store's clock (false: the local clock is the authority). */
    public boolean followsStore() {
        return !localOnly;
    }

    /**
     * Measures the offset if it is older than {@link #REFRESH_EVERY}, was never measured, or the
     * node's clock stepped since. When another thread is measuring, returns at once with the offset
     * as it is, unless there is none yet or the clock stepped (then it waits for that measurement).
     *
     * @throws StateStoreException if the store cannot be read and there is no offset younger than
     *     {@link #MAX_AGE} to go on with
     */
    public void ensureFresh() {
        if (localOnly || isFresh(local.instant(), true)) {
            return;
        }
        boolean mustWait = measuredAt == null || !isFresh(local.instant(), false);
        if (mustWait) {
            measuring.lock();
        } else if (!measuring.tryLock()) {
            return;
        }
        try {
            if (localOnly || isFresh(local.instant(), true)) {
                return;
            }
            measure();
        } catch (RuntimeException e) {
            if (isFresh(MAX_AGE)) {
                log.debug("{}: clock offset to the store not re-measured ({}); using the one from {}", owner,
                        e.getMessage(), measuredAt);
                return;
            }
            throw new StateStoreException("cannot read the store's clock (" + e.getMessage() + "): " + owner
                    + " does not claim, submit or supervise until it can", e);
        } finally {
            measuring.unlock();
        }
    }

    /** True if the offset was measured less than {@code maxAge} ago by the local clock (never true after a step back). */
    private boolean isFresh(Duration maxAge) {
        Instant at = measuredAt;
        if (at == null) {
            return false;
        }
        Duration age = Duration.between(at, local.instant());
        return !age.isNegative() && age.compareTo(maxAge) < 0;
    }

    /** True if the offset is younger than {@link #REFRESH_EVERY} (when {@code checkAge}) and the local clock has not stepped since. */
    private boolean isFresh(Instant localNow, boolean checkAge) {
        Instant at = measuredAt;
        if (at == null) {
            return false;
        }
        // on longs, no Duration: every instant() asks, several times per step
        long age = nanosBetween(at, localNow);
        return age >= 0 && (!checkAge || age < REFRESH_EVERY_NANOS) && !stepped(age);
    }

    /**
     * True if the local clock moved more than {@link #STEP_TOLERANCE} apart from the monotonic timer
     * since the measurement, {@code localElapsed} ago by the local clock.
     */
    private boolean stepped(long localElapsed) {
        long monotonicElapsed = monotonicNanos.getAsLong() - measuredAtNanos;
        return Math.abs(localElapsed - monotonicElapsed) > STEP_TOLERANCE_NANOS;
    }

    /** Nanoseconds from {@code a} to {@code b}, saturated at about ±146 years (a step by more is a step). */
    private static long nanosBetween(Instant a, Instant b) {
        long seconds = b.getEpochSecond() - a.getEpochSecond();
        if (Math.abs(seconds) >= SATURATE_SECONDS) {
            return seconds > 0 ? Long.MAX_VALUE / 2 : Long.MIN_VALUE / 2;
        }
        return seconds * 1_000_000_000L + (b.getNano() - a.getNano());
    }

    private static final long SATURATE_SECONDS = Long.MAX_VALUE / 2 / 1_000_000_000L;
    private static final long REFRESH_EVERY_NANOS = REFRESH_EVERY.toNanos();
    private static final long STEP_TOLERANCE_NANOS = STEP_TOLERANCE.toNanos();

    private void measure() {
        long bestRoundTrip = Long.MAX_VALUE;
        long bestOffset = 0;
        Instant bestAt = null;
        long bestAtNanos = 0;
        for (int i = 0; i < SAMPLES; i++) {
            Instant before = local.instant();
            Optional<Instant> storeNow = store.currentTime();
            Instant after = local.instant();
            long afterNanos = monotonicNanos.getAsLong();
            if (storeNow.isEmpty()) {
                log.debug("{}: the store has no clock of its own; the local clock is the authority", owner);
                localOnly = true;
                offsetNanos = 0;
                return;
            }
            long roundTrip = Duration.between(before, after).toNanos();
            if (roundTrip < 0) {
                continue; // the local clock stepped back during the round trip
            }
            if (roundTrip < bestRoundTrip) {
                bestRoundTrip = roundTrip;
                bestOffset = Duration.between(before.plusNanos(roundTrip / 2), storeNow.get()).toNanos();
                bestAt = after;
                bestAtNanos = afterNanos;
            }
            if (roundTrip <= GOOD_ROUND_TRIP_NANOS) {
                break;
            }
        }
        if (bestAt == null || bestRoundTrip > MAX_ROUND_TRIP.toNanos()) {
            throw new StateStoreException("cannot measure the offset to the store's clock: the fastest of " + SAMPLES
                    + " round trips took " + (bestAt == null ? "an unknown time" : Duration.ofNanos(bestRoundTrip))
                    + ", more than " + MAX_ROUND_TRIP);
        }
        offsetNanos = bestOffset;
        measuredAtNanos = bestAtNanos;
        measuredAt = bestAt;
        skewMillis.accept(Math.round(bestOffset / 1e6));
        report(bestOffset, bestRoundTrip);
    }

    /** WARN on an offset of a second or more, again when it moves by another second; INFO when it is back. */
    private void report(long offset, long roundTrip) {
        long warnAbove = WARN_ABOVE.toNanos();
        if (Math.abs(offset) >= warnAbove) {
            if (warnedAtNanos == null || Math.abs(offset - warnedAtNanos) >= warnAbove) {
                warnedAtNanos = offset;
                log.warn("{}: this node's clock is {} the store's clock by {} (measured to within {}). SAS uses the"
                        + " store's time for due times, deadlines and leases, so this is corrected, but fix the"
                        + " node's clock (NTP): local logs and timers are off by as much", owner,
                        offset > 0 ? "behind" : "ahead of", Duration.ofNanos(Math.abs(offset)),
                        Duration.ofNanos(roundTrip / 2));
            }
        } else if (warnedAtNanos != null) {
            warnedAtNanos = null;
            log.info("{}: this node's clock is back within {} of the store's (offset {})", owner, WARN_ABOVE,
                    Duration.ofNanos(offset));
        }
    }

    @Override
    public String toString() {
        return localOnly ? "DatabaseClock[local " + local + "]"
                : "DatabaseClock[" + local + " + " + Duration.ofNanos(offsetNanos) + "]";
    }
}
