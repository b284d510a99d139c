package dev.sas.core.internal;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * How long a polling loop waits before it looks again: {@code busy} while it found work within the
 * last {@link #BUSY_WINDOW}, then twice as long after each empty look, up to {@code idle}. Where the
 * store pushes wake-up hints ({@code pushed} is true), always {@code idle}: a hint wakes the loop
 * and the poll is only the fallback. Used by one thread at a time.
 */
public final class AdaptivePoll {
    /** How long after it last found work a loop keeps polling at the busy interval: 2 s. */
    public static final Duration BUSY_WINDOW = Duration.ofSeconds(2);

    private final long idleNanos;
    private final long busyNanos;
    private final BooleanSupplier pushed;
    private final LongSupplier nanoTime;
    private long lastWorkNanos;
    private long currentNanos;

    /**
     * @param idle the longest wait, when idle (or pushed)
     * @param busy the wait while recently busy; at most {@code idle}
     * @param pushed whether wake-up hints arrive now
     */
    public AdaptivePoll(Duration idle, Duration busy, BooleanSupplier pushed) {
        this(idle, busy, pushed, System::nanoTime);
    }

    /** As above, reading time from {@code nanoTime} (tests). */
    AdaptivePoll(Duration idle, Duration busy, BooleanSupplier pushed, LongSupplier nanoTime) {
        this.idleNanos = idle.toNanos();
        this.busyNanos = Math.min(busy.toNanos(), idleNanos);
        this.pushed = pushed;
        this.nanoTime = nanoTime;
        this.currentNanos = idleNanos;
        this.lastWorkNanos = nanoTime.getAsLong() - BUSY_WINDOW.toNanos() - 1;
    }

    /** The wait before the next look, in milliseconds (at least 1), after a look that found work or not. */
    public long nextWaitMillis(boolean foundWork) {
        long now = nanoTime.getAsLong();
        if (foundWork) {
            lastWorkNanos = now;
        }
        if (pushed.getAsBoolean()) {
            currentNanos = idleNanos;
        } else if (now - lastWorkNanos < BUSY_WINDOW.toNanos()) {
            currentNanos = busyNanos;
        } else {
            currentNanos = Math.min(idleNanos, Math.max(busyNanos, currentNanos) * 2);
        }
        return Math.max(1, currentNanos / 1_000_000);
    }
}
