package dev.sas.core;

/**
 * What a {@link Schedule} does with fire times it missed: those later than the schedule's
 * {@link Schedule.Builder#missedAfter missedAfter} (1 min unless set) when a runtime gets to them
 * (every node was down, or the store was unreachable). A fire time less late is submitted as usual.
 * Immutable and thread-safe.
 *
 * <pre>{@code
 * MissedFires.skip()       // drop them; wait for the next fire time
 * MissedFires.runOnce()    // submit one task, for the latest missed fire time (the default)
 * MissedFires.runEach(10)  // submit one task per missed fire time, the latest 10 at most
 * }</pre>
 */
public final class MissedFires {

    /** Most missed fire times {@link #runEach} may catch up: 1,000. */
    public static final int MAX_RUN_EACH = 1_000;

    private static final MissedFires SKIP = new MissedFires(0, "SKIP");
    private static final MissedFires RUN_ONCE = new MissedFires(1, "RUN_ONCE");

    private final int keep;
    private final String text;

    private MissedFires(int keep, String text) {
        this.keep = keep;
        this.text = text;
    }

    /** Missed fire times are dropped; the schedule goes on with its next fire time. */
    public static MissedFires skip() {
        return SKIP;
    }

    /** One task is submitted for the latest missed fire time, however many were missed. */
    public static MissedFires runOnce() {
        return RUN_ONCE;
    }

    /**
     * One task per missed fire time, for the latest {@code upTo} of them; older ones are dropped.
     *
     * @throws IllegalArgumentException if {@code upTo} is not between 1 and {@value #MAX_RUN_EACH}
     */
    public static MissedFires runEach(int upTo) {
        if (upTo < 1 || upTo > MAX_RUN_EACH) {
            throw new IllegalArgumentException("runEach upTo must be between 1 and " + MAX_RUN_EACH + ", was " + upTo
                    + "; use skip() to run none, runOnce() for one");
        }
        return new MissedFires(upTo, "RUN_EACH:" + upTo);
    }

    /**
     * The policy of its text form ({@link #toString()}).
     *
     * @throws IllegalArgumentException if {@code text} names no policy
     */
    public static MissedFires parse(String text) {
        if (SKIP.text.equals(text)) {
            return SKIP;
        }
        if (RUN_ONCE.text.equals(text)) {
            return RUN_ONCE;
        }
        if (text != null && text.startsWith("RUN_EACH:")) {
            return runEach(Integer.parseInt(text.substring("RUN_EACH:".length())));
        }
        throw new IllegalArgumentException("missed-fire policy '" + text + "' is not one of SKIP, RUN_ONCE,"
                + " RUN_EACH:<n>");
    }

    /** How many of the missed fire times are submitted (the latest ones): 0, 1 or the {@code upTo} of {@link #runEach}. */
    public int keep() {
        return keep;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MissedFires m && m.keep == keep && m.text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    /** {@code SKIP}, {@code RUN_ONCE} or {@code RUN_EACH:<n>}, as stored. */
    @Override
    public String toString() {
        return text;
    }
}
