package dev.sas.core.internal;

import dev.sas.core.MissedFires;
import java.time.Duration;
import java.time.format.DateTimeParseException;

/**
 * A schedule's missed-fire policy and how late a fire time may be before it counts as missed, in the
 * one text a store keeps for both ({@code missed_fires}, at most 32 characters): the policy's text
 * alone when the lateness is the default ({@code RUN_ONCE}, as every schedule stored before the
 * setting), else with {@code ;after=<ISO-8601 duration>} appended ({@code RUN_EACH:5;after=PT10M}).
 * Not API.
 *
 * @param policy what happens to missed fire times
 * @param missedAfter how late a fire time may be submitted before it is missed
 */
public record StoredMissedFires(MissedFires policy, Duration missedAfter) {

    /** How late a fire time may be submitted before it counts as missed, unless a schedule says: 1 min. */
    public static final Duration DEFAULT_MISSED_AFTER = Duration.ofMinutes(1);

    private static final String AFTER = ";after=";

    /**
     * The policy and lateness of a stored text.
     *
     * @throws IllegalArgumentException if {@code text} is not such a text
     */
    public static StoredMissedFires parse(String text) {
        int at = text == null ? -1 : text.indexOf(AFTER);
        if (at < 0) {
            return new StoredMissedFires(MissedFires.parse(text), DEFAULT_MISSED_AFTER);
        }
        try {
            return new StoredMissedFires(MissedFires.parse(text.substring(0, at)),
                    Duration.parse(text.substring(at + AFTER.length())));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("missed-fire text '" + text + "' has no ISO-8601 duration after '"
                    + AFTER + "'", e);
        }
    }

    /** The text a store keeps. */
    public String text() {
        return missedAfter.equals(DEFAULT_MISSED_AFTER) ? policy.toString() : policy + AFTER + missedAfter;
    }
}
