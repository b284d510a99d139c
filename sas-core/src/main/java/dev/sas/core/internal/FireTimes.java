package dev.sas.core.internal;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;

/**
 * When a schedule fires: a cron expression in a time zone (parsed and evaluated by cron-utils), or
 * a fixed interval counted from an anchor. Pure; immutable and thread-safe. Not API.
 *
 * <p>Cron expressions have 5 fields (minute hour day-of-month month day-of-week, as in Unix
 * crontab) or 6 (a seconds field first, as in Spring's {@code @Scheduled}); fire times are whole
 * seconds. Daylight-saving time follows cron-utils' {@code nextExecution}: a wall-clock time that a
 * gap skips (02:30 on the night clocks go forward) does not fire that day, and at a repeated hour
 * (clocks going back) a schedule naming that hour fires once per matching wall-clock time as
 * cron-utils walks forward (docs/schedules.md states the cases, tests pin them).
 */
public abstract sealed class FireTimes {
    private static final CronParser UNIX = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
    private static final CronParser SPRING = new CronParser(
            CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING53));

    /** Shortest interval: 1 s. */
    public static final Duration MIN_INTERVAL = Duration.ofSeconds(1);

    /** The first fire time strictly after {@code after}, or null if there is none. */
    public abstract Instant next(Instant after);

    /** The last fire time strictly before {@code before}, or null if there is none. */
    public abstract Instant previous(Instant before);

    /**
     * The cron expression parsed with the dialect its field count names.
     *
     * @throws IllegalArgumentException saying what is wrong with it and what is expected
     */
    public static Cron parseCron(String expression) {
        Objects.requireNonNull(expression, "cron expression must not be null");
        String trimmed = expression.strip();
        int fields = trimmed.isEmpty() ? 0 : trimmed.split("\\s+").length;
        if (fields != 5 && fields != 6) {
            throw new IllegalArgumentException("cron expression '" + expression + "' has " + fields + " fields;"
                    + " use 5 (minute hour day-of-month month day-of-week, e.g. '0 2 * * *') or 6 with seconds"
                    + " first (e.g. '0 0 2 * * *')");
        }
        try {
            Cron cron = (fields == 5 ? UNIX : SPRING).parse(trimmed);
            cron.validate();
            return cron;
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("cron expression '" + expression + "' is not valid: " + e.getMessage()
                    + "; use 5 fields (minute hour day-of-month month day-of-week, e.g. '0 2 * * *') or 6 with"
                    + " seconds first (e.g. '*/10 * * * * *')", e);
        }
    }

    /** The fire times of a stored trigger ({@code cron:<expression>} or {@code every:<duration>}). */
    public static FireTimes of(String trigger, String zone, Instant anchor) {
        if (trigger.startsWith("cron:")) {
            return cron(trigger.substring(5), ZoneId.of(zone));
        }
        if (trigger.startsWith("every:")) {
            return every(Duration.parse(trigger.substring(6)), anchor);
        }
        throw new IllegalArgumentException("unknown schedule trigger '" + trigger + "'");
    }

    /** Fire times of a cron expression in {@code zone}. */
    public static FireTimes cron(String expression, ZoneId zone) {
        return new CronTimes(ExecutionTime.forCron(parseCron(expression)), zone);
    }

    /** Fire times {@code anchor + k * interval}, {@code k >= 1}. */
    public static FireTimes every(Duration interval, Instant anchor) {
        return new IntervalTimes(interval.toMillis(), anchor.truncatedTo(ChronoUnit.MILLIS).toEpochMilli());
    }

    private static final class CronTimes extends FireTimes {
        private final ExecutionTime times;
        private final ZoneId zone;

        CronTimes(ExecutionTime times, ZoneId zone) {
            this.times = times;
            this.zone = zone;
        }

        @Override
        public Instant next(Instant after) {
            // cron-utils keeps sub-second parts; fire times are whole seconds
            Optional<ZonedDateTime> n = times.nextExecution(after.truncatedTo(ChronoUnit.SECONDS).atZone(zone));
            return n.map(z -> z.toInstant().truncatedTo(ChronoUnit.SECONDS)).orElse(null);
        }

        @Override
        public Instant previous(Instant before) {
            Instant ceil = before.truncatedTo(ChronoUnit.SECONDS);
            if (ceil.isBefore(before)) {
                ceil = ceil.plusSeconds(1);
            }
            Optional<ZonedDateTime> p = times.lastExecution(ceil.atZone(zone));
            return p.map(z -> z.toInstant().truncatedTo(ChronoUnit.SECONDS)).orElse(null);
        }
    }

    private static final class IntervalTimes extends FireTimes {
        private final long intervalMs;
        private final long anchorMs;

        IntervalTimes(long intervalMs, long anchorMs) {
            this.intervalMs = intervalMs;
            this.anchorMs = anchorMs;
        }

        @Override
        public Instant next(Instant after) {
            long a = after.toEpochMilli();
            if (a < anchorMs) {
                return Instant.ofEpochMilli(anchorMs + intervalMs);
            }
            long k = Math.floorDiv(a - anchorMs, intervalMs) + 1;
            return Instant.ofEpochMilli(anchorMs + k * intervalMs);
        }

        @Override
        public Instant previous(Instant before) {
            // strictly before: a fire time at 'before' itself, even with sub-millisecond parts, is excluded
            long b = before.toEpochMilli() + (before.getNano() % 1_000_000 == 0 ? 0 : 1);
            long k = Math.floorDiv(b - anchorMs - 1, intervalMs);
            return k < 1 ? null : Instant.ofEpochMilli(anchorMs + k * intervalMs);
        }
    }
}
