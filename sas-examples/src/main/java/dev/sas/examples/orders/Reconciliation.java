package dev.sas.examples.orders;

import dev.sas.core.Codec;
import dev.sas.core.MissedFires;
import dev.sas.core.Schedule;
import dev.sas.core.Workflow;
import java.time.ZoneId;
import java.util.Map;
import java.util.TreeMap;

/**
 * The shop's nightly reconciliation: a one-step workflow that counts the orders table's rows by
 * status, and the recurring schedule that runs it at 02:00 in the shop's time zone, once per night
 * across every node (see docs/schedules.md). The run registers it at start and the operator runs it
 * once at the end ({@code trigger}); a run at 02:00 Berlin time sees it fire by itself.
 */
final class Reconciliation {

    /** The schedule's name: each night's task has the business key {@code nightly-reconciliation@<fire time>}. */
    static final String SCHEDULE = "nightly-reconciliation";
    /** The shop's time zone. */
    static final ZoneId SHOP_ZONE = ZoneId.of("Europe/Berlin");

    private Reconciliation() {
    }

    /** The workflow: counts the order rows whose id starts with the input, by status. */
    static Workflow<String> workflow(OrderDatabase db) {
        return Workflow.builder("reconcile", Codec.string())
                .step("count-order-rows", s -> s.execute(ctx -> {
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
}
