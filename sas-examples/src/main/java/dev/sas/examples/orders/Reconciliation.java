package dev.sas.examples.orders;

import dev.sas.core.Codec;
import dev.sas.core.MissedFires;
import dev.sas.core.SasClient;
import dev.sas.core.Schedule;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The shop's nightly reconciliation: a one-step workflow that counts the orders table's rows by
 * status, and the recurring schedule that runs it at 02:00 in the shop's time zone, once per night
 * across every node (see docs/schedules.md). The run registers it at start and the operator runs it
 * once at the end ({@code trigger}); a run at 02:00 Berlin time sees it fire by itself. Each run
 * of the step is written to a {@link Runs} ledger, which {@link #everyFireTimeRunOnce} checks.
 */
final class Reconciliation {

    /** The schedule's name: each night's task has the business key {@code nightly-reconciliation@<fire time>}. */
    static final String SCHEDULE = "nightly-reconciliation";
    /** The shop's time zone. */
    static final ZoneId SHOP_ZONE = ZoneId.of("Europe/Berlin");

    private Reconciliation() {
    }

    /**
     * The reconciliation's ledger: how many times the step ran for each task (by business key) in
     * this JVM, the only one that registers the workflow. Thread-safe.
     */
    static final class Runs {
        private final Map<String, Integer> byKey = new ConcurrentHashMap<>();

        void ran(String businessKey) {
            byKey.merge(businessKey, 1, Integer::sum);
        }

        Map<String, Integer> byKey() {
            return new TreeMap<>(byKey);
        }
    }

    /** The workflow: counts the order rows whose id starts with the input, by status. */
    static Workflow<String> workflow(OrderDatabase db, Runs runs) {
        return Workflow.builder("reconcile", Codec.string())
                .step("count-order-rows", s -> s.execute(ctx -> {
                    runs.ran(ctx.businessKey());
                    Map<String, Integer> byStatus = new TreeMap<>();
                    db.statuses(ctx.input()).values().forEach(st -> byStatus.merge(st, 1, Integer::sum));
                    return byStatus.values().stream().mapToInt(Integer::intValue).sum() + " order rows " + byStatus;
                }))
                .build();
    }

    /** The schedule: 02:00 every night in the shop's time zone; after an outage, one run, not one per night. */
    static Schedule nightly(Workflow<String> reconcile, String orderIdPrefix) {
        return Schedule.named(SCHEDULE)
                .cron("0 2 * * *", SHOP_ZONE)
                .submits(reconcile, orderIdPrefix)
                .missedFires(MissedFires.runOnce())
                .build();
    }

    /**
     * The fire times of {@link #nightly} after {@code after} and at or before {@code until}: 02:00 in
     * the shop's zone each day, none on a day whose 02:00 falls in the spring-forward gap, the first
     * occurrence on a day that repeats it (docs/schedules.md).
     */
    static List<Instant> fireTimes(Instant after, Instant until) {
        List<Instant> times = new ArrayList<>();
        for (LocalDate day = after.atZone(SHOP_ZONE).toLocalDate(); !day.isAfter(until.atZone(SHOP_ZONE).toLocalDate());
                day = day.plusDays(1)) {
            LocalDateTime at = day.atTime(LocalTime.of(2, 0));
            if (SHOP_ZONE.getRules().getValidOffsets(at).isEmpty()) {
                continue;
            }
            Instant t = at.atZone(SHOP_ZONE).toInstant();
            if (t.isAfter(after) && !t.isAfter(until)) {
                times.add(t);
            }
        }
        return times;
    }

    /**
     * The ledger check "every fire time run once": every fire time the schedule passed during the run
     * (after {@code lastFireAtStart}, up to {@code lastFireAtEnd}) and the operator's triggered run each
     * have exactly one task, PROCESSED, whose step ran exactly once; and the step ran for no other task.
     *
     * @return null when it held, else what did not
     */
    static String everyFireTimeRunOnce(SasClient client, Runs runs, Instant lastFireAtStart, Instant lastFireAtEnd,
            String triggeredKey) {
        List<String> keys = new ArrayList<>();
        for (Instant t : fireTimes(lastFireAtStart, lastFireAtEnd)) {
            keys.add(SCHEDULE + "@" + t);
        }
        keys.add(triggeredKey);
        Map<String, Integer> ran = runs.byKey();
        List<String> wrong = new ArrayList<>();
        for (String key : keys) {
            Optional<TaskInfo> task = client.find("reconcile", key);
            int times = ran.getOrDefault(key, 0);
            if (task.isEmpty() || task.get().status() != TaskStatus.PROCESSED || times != 1) {
                wrong.add(key + ": task " + task.map(i -> i.status().name()).orElse("missing") + ", ran " + times + "x");
            }
        }
        ran.keySet().stream().filter(k -> !keys.contains(k)).forEach(k -> wrong.add(k + ": ran, but no fire time of it"));
        return wrong.isEmpty() ? null : "the nightly reconciliation did not run once per fire time: " + wrong;
    }
}
