package dev.sas.core.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Which fire times of a schedule one pass submits: those after its last decided fire time and at or
 * before now. A fire time more than {@code missedAfter} old is missed (nodes were down, or the
 * schedule could not be fired); of the missed ones the policy keeps the latest {@code keepMissed}
 * (0 skips them all, 1 runs once, n runs each up to n). Pure; not API.
 *
 * @param fire the fire times to submit, oldest first
 * @param lastDecided the latest fire time at or before now (submitted or skipped), or null if none passed
 * @param skipped how many missed fire times the policy dropped (counted one by one up to {@link #MAX_COUNTED}, a
 *     lower bound beyond)
 */
public record FirePlan(List<Instant> fire, Instant lastDecided, long skipped) {

    /** Most fire times one pass submits for one schedule; the rest wait for the next pass. */
    static final int MAX_PER_PASS = 1_000;

    /**
     * The plan for fire times after {@code last} and at or before {@code now}.
     *
     * @param keepMissed how many of the missed fire times to submit, the latest ones
     * @param missedAfter how late a fire time may be before it is missed
     */
    public static FirePlan of(FireTimes times, Instant last, Instant now, int keepMissed, Duration missedAfter) {
        Instant cutoff = now.minus(missedAfter);
        List<Instant> fire = new ArrayList<>();
        long skipped = 0;
        Instant lastDecided = null;
        Instant from = last;
        if (last.isBefore(cutoff)) {
            // Missed fire times: find where the kept ones start by walking back from the cutoff, then
            // walk forward from there. Only the forward walk (cron-utils' nextExecution, each step from
            // the fire time before) defines fire times; it goes on into the on-time ones below.
            Instant start = last;
            int back = 0;
            for (Instant p = times.previous(cutoff); p != null && p.isAfter(last); p = times.previous(p)) {
                start = p;
                if (++back > keepMissed) {
                    skipped = 1 + countBetween(times, last, start); // 'start' and the older ones
                    lastDecided = start;
                    break;
                }
            }
            from = back > keepMissed ? start : last;
            List<Instant> missed = new ArrayList<>();
            for (Instant f = times.next(from); f != null && f.isBefore(cutoff); f = times.next(f)) {
                missed.add(f);
                lastDecided = f;
                from = f;
            }
            int drop = Math.max(0, missed.size() - keepMissed);
            skipped += drop;
            fire.addAll(missed.subList(drop, missed.size()));
        }
        for (Instant f = times.next(from); f != null && !f.isAfter(now) && fire.size() < MAX_PER_PASS;
                f = times.next(f)) {
            fire.add(f);
            lastDecided = f;
        }
        return new FirePlan(List.copyOf(fire), lastDecided, skipped);
    }

    /** Most fire times {@link #countBetween} walks: beyond it a long outage's skipped count is a lower bound. */
    static final int MAX_COUNTED = 10_000;

    /** The fire times after {@code after} and before {@code before}, counted up to {@link #MAX_COUNTED}. */
    private static long countBetween(FireTimes times, Instant after, Instant before) {
        long n = 0;
        for (Instant p = times.previous(before); p != null && p.isAfter(after) && n < MAX_COUNTED; p = times.previous(p)) {
            n++;
        }
        return n;
    }
}
