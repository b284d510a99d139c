package dev.sas.core;

import dev.sas.core.internal.FireTimes;
import dev.sas.core.internal.StoredMissedFires;
import dev.sas.core.spi.ScheduleSpec;
import dev.sas.core.spi.StorableText;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A recurring schedule: a cron expression in a time zone, or a fixed interval, that submits one task
 * of a workflow per fire time, exactly once across every runtime on the store. Register it from any
 * node ({@link SasSchedules#register}, or as a Spring {@code @Bean}); registering it again, from the
 * same or another node, changes nothing. The active supervisor fires it on the database's clock;
 * each fire time's task has the business key {@code <name>@<fire time>}
 * (e.g. {@code nightly-reconciliation@2026-11-28T01:00:00Z}), which the store keeps unique per
 * workflow, so a fire time is never submitted twice, also when nodes restart or two of them fire at once.
 *
 * <pre>{@code
 * Schedule nightly = Schedule.named("nightly-reconciliation")
 *         .cron("0 2 * * *", ZoneId.of("Europe/Berlin"))
 *         .submits(reconcile, "all-warehouses")
 *         .missedFires(MissedFires.runOnce())
 *         .build();
 * }</pre>
 *
 * <p>Immutable and thread-safe; see docs/schedules.md for fire times, daylight-saving time and
 * missed fires.
 */
public final class Schedule {

    /** What a schedule name may look like: it is the start of every task's business key. */
    public static final Pattern NAME_PATTERN = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,99}");
    /** The missed-fire policy unless set: {@link MissedFires#runOnce()}. */
    public static final MissedFires DEFAULT_MISSED_FIRES = MissedFires.runOnce();
    /** How late a fire time may be submitted before it counts as missed, unless set: 1 min. */
    public static final Duration DEFAULT_MISSED_AFTER = StoredMissedFires.DEFAULT_MISSED_AFTER;
    /** The shortest {@link Builder#missedAfter}: 1 s (a leader change alone takes a few). */
    public static final Duration MIN_MISSED_AFTER = Duration.ofSeconds(1);
    /** The longest {@link Builder#missedAfter}: 24 h. */
    public static final Duration MAX_MISSED_AFTER = Duration.ofHours(24);

    private final ScheduleSpec spec;
    private final MissedFires missedFires;
    private final Duration missedAfter;

    private Schedule(ScheduleSpec spec, MissedFires missedFires, Duration missedAfter) {
        this.spec = spec;
        this.missedFires = missedFires;
        this.missedAfter = missedAfter;
    }

    /**
     * A builder for the schedule of this name, unique on the store. Not thread-safe.
     *
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} does not match {@link #NAME_PATTERN}
     */
    public static Builder named(String name) {
        return new Builder(name);
    }

    /** The schedule's name. */
    public String name() {
        return spec.name();
    }

    /** The workflow its tasks run. */
    public String workflow() {
        return spec.workflow();
    }

    /** The workflow version its tasks run. */
    public int workflowVersion() {
        return spec.workflowVersion();
    }

    /** When it fires, as text: {@code cron:<expression>} or {@code every:<ISO-8601 duration>}. */
    public String trigger() {
        return spec.trigger();
    }

    /** The time zone of its cron expression, or null for an interval. */
    public ZoneId zone() {
        return spec.zone() == null ? null : ZoneId.of(spec.zone());
    }

    /** What it does with missed fire times. */
    public MissedFires missedFires() {
        return missedFires;
    }

    /** How late a fire time may be submitted before it counts as missed. */
    public Duration missedAfter() {
        return missedAfter;
    }

    /** The definition as a store keeps it. */
    public ScheduleSpec spec() {
        return spec;
    }

    @Override
    public String toString() {
        return "Schedule{" + spec.name() + ", " + spec.trigger() + (spec.zone() == null ? "" : " " + spec.zone())
                + " -> " + spec.workflow() + " v" + spec.workflowVersion() + ", missed " + missedFires + " after "
                + missedAfter + '}';
    }

    /** Builds a {@link Schedule}. Not thread-safe; {@link #build()} may be called again. */
    public static final class Builder {
        private final String name;
        private String cron;
        private String every;
        private String zone;
        private String workflow;
        private int version;
        private String input;
        private String firstStep;
        private Duration firstStepTimeout;
        private int priority;
        private MissedFires missedFires = DEFAULT_MISSED_FIRES;
        private Duration missedAfter = DEFAULT_MISSED_AFTER;

        private Builder(String name) {
            Objects.requireNonNull(name, "schedule name must not be null");
            if (!NAME_PATTERN.matcher(name).matches()) {
                throw new IllegalArgumentException("schedule name '" + name + "' must match " + NAME_PATTERN.pattern()
                        + " (letters, digits, '.', '_', ':', '-'; at most 100 characters): it starts every task's"
                        + " business key");
            }
            this.name = name;
        }

        /**
         * Fires at the times of a cron expression, read in {@code zone}: 5 fields (minute hour
         * day-of-month month day-of-week, as in crontab) or 6 with seconds first (as Spring's
         * {@code @Scheduled}). Parsed by cron-utils now.
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the expression is not valid, saying what is wrong
         */
        public Builder cron(String expression, ZoneId zone) {
            Objects.requireNonNull(expression, "schedule '" + name + "': cron expression must not be null");
            Objects.requireNonNull(zone, "schedule '" + name + "': zone must not be null (e.g. ZoneId.of(\"UTC\"))");
            try {
                FireTimes.parseCron(expression);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("schedule '" + name + "': " + e.getMessage(), e);
            }
            this.cron = "cron:" + expression.strip();
            this.zone = zone.getId();
            return this;
        }

        /**
         * Fires every {@code interval}, counted from the schedule's first registration on the store
         * (the first fire time is one interval after it).
         *
         * @throws NullPointerException if {@code interval} is null
         * @throws IllegalArgumentException if it is shorter than 1 s or not whole milliseconds
         */
        public Builder every(Duration interval) {
            Objects.requireNonNull(interval, "schedule '" + name + "': interval must not be null");
            if (interval.compareTo(FireTimes.MIN_INTERVAL) < 0 || interval.getNano() % 1_000_000 != 0) {
                throw new IllegalArgumentException("schedule '" + name + "': interval must be at least "
                        + FireTimes.MIN_INTERVAL + " in whole milliseconds, was " + interval);
            }
            this.every = "every:" + interval;
            return this;
        }

        /**
         * The task each fire time submits: {@code workflow} with {@code input}, encoded now with the
         * workflow's codec (every fire time submits this same input).
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the input cannot be encoded, encodes to a blank string or to
         *     text no database can store
         */
        public <I> Builder submits(Workflow<I> workflow, I input) {
            Objects.requireNonNull(workflow, "schedule '" + name + "': workflow must not be null");
            Objects.requireNonNull(input, "schedule '" + name + "': input must not be null");
            String what = "schedule '" + name + "': input for workflow '" + workflow.name() + "'";
            String encoded;
            try {
                encoded = workflow.inputCodec().encode(input);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(what + " cannot be encoded: " + e.getMessage(), e);
            }
            if (encoded == null || encoded.isBlank()) {
                throw new IllegalArgumentException(what + " encodes to a blank string; pass a real input");
            }
            String problem = StorableText.problem(what + " (encoded)", encoded);
            if (problem != null) {
                throw new IllegalArgumentException(problem + "; have the workflow's codec escape it");
            }
            StepDefinition<I> first = workflow.steps().get(0);
            this.workflow = workflow.name();
            this.version = workflow.version();
            this.input = encoded;
            this.firstStep = first.name();
            this.firstStepTimeout = first.completeWithin();
            return this;
        }

        /** The priority of the tasks it submits (higher is claimed first); 0 unless set. */
        public Builder priority(int priority) {
            this.priority = priority;
            return this;
        }

        /**
         * What to do with missed fire times (later than {@link #missedAfter}); {@link #DEFAULT_MISSED_FIRES}
         * unless set.
         *
         * @throws NullPointerException if {@code policy} is null
         */
        public Builder missedFires(MissedFires policy) {
            this.missedFires = Objects.requireNonNull(policy, "schedule '" + name + "': missedFires must not be null");
            return this;
        }

        /**
         * How late a fire time may still be submitted as usual; a later one is missed and the
         * {@link #missedFires} policy decides. {@link #DEFAULT_MISSED_AFTER} unless set. Longer suits a
         * daily job that should still run after a deploy that took ten minutes; shorter suits a
         * frequent one whose late runs are worthless.
         *
         * @throws NullPointerException if {@code lateness} is null
         * @throws IllegalArgumentException if it is not whole seconds between {@link #MIN_MISSED_AFTER}
         *     and {@link #MAX_MISSED_AFTER}
         */
        public Builder missedAfter(Duration lateness) {
            Objects.requireNonNull(lateness, "schedule '" + name + "': missedAfter must not be null");
            if (lateness.compareTo(MIN_MISSED_AFTER) < 0 || lateness.compareTo(MAX_MISSED_AFTER) > 0
                    || lateness.getNano() != 0) {
                throw new IllegalArgumentException("schedule '" + name + "': missedAfter must be whole seconds between "
                        + MIN_MISSED_AFTER + " and " + MAX_MISSED_AFTER + ", was " + lateness);
            }
            this.missedAfter = lateness;
            return this;
        }

        /**
         * The schedule.
         *
         * @throws IllegalStateException if neither or both of {@link #cron} and {@link #every} were set,
         *     or {@link #submits} was not
         */
        public Schedule build() {
            if (cron != null && every != null) {
                throw new IllegalStateException("schedule '" + name + "' has both cron (" + cron.substring(5)
                        + ") and every (" + every.substring(6) + "): set one of them");
            }
            String trigger = cron != null ? cron : every;
            if (trigger == null) {
                throw new IllegalStateException("schedule '" + name + "' has no fire times: call cron(expression, zone)"
                        + " or every(interval)");
            }
            if (workflow == null) {
                throw new IllegalStateException("schedule '" + name + "' submits nothing: call submits(workflow, input)");
            }
            return new Schedule(new ScheduleSpec(name, workflow, version, input, priority, firstStep, firstStepTimeout,
                    trigger, cron != null ? zone : null, new StoredMissedFires(missedFires, missedAfter).text()),
                    missedFires, missedAfter);
        }
    }
}
