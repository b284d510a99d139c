package dev.sas.examples.orders;

import dev.sas.core.TaskStatus;
import dev.sas.examples.orders.services.ShippingService;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The ledger checks of the per-parcel fan-out, run by {@link LedgerCheck}: no parcel shipped twice
 * (each parcel is its own fan-out element with its own idempotency key), and every parcel of a
 * processed order shipped and not cancelled. Stateless.
 */
final class ParcelLedgerCheck {

    private ParcelLedgerCheck() {
    }

    /** Adds the checks' outcome to {@code passed} or {@code failures}. */
    static void verify(List<Order> orders, Map<String, TaskStatus> status, ShippingService shipping,
            List<String> passed, List<String> failures) {
        int before = failures.size();
        long parcels = 0;
        for (Order o : orders) {
            Map<String, Long> perParcel = shipping.shipments(o.orderId()).stream()
                    .collect(Collectors.groupingBy(ShippingService.Shipment::parcel, TreeMap::new, Collectors.counting()));
            parcels += perParcel.size();
            perParcel.forEach((parcel, count) -> {
                if (count > 1 || parcel.isEmpty()) {
                    failures.add("order " + o.orderId() + ": parcel '" + parcel + "' was shipped " + count + " times");
                }
            });
        }
        if (failures.size() == before) {
            passed.add("no parcel shipped twice (" + parcels + " parcels booked)");
        }

        before = failures.size();
        for (Order o : orders) {
            if (status.get(o.orderId()) != TaskStatus.PROCESSED) {
                continue;
            }
            Set<String> expected = Parcel.of(o).stream().map(Parcel::id).collect(Collectors.toCollection(TreeSet::new));
            Set<String> live = shipping.shipments(o.orderId()).stream().filter(s -> !s.cancelled())
                    .map(ShippingService.Shipment::parcel).collect(Collectors.toCollection(TreeSet::new));
            if (!live.equals(expected)) {
                failures.add("processed order " + o.orderId() + " has live shipments for parcels " + live + ", expected "
                        + expected);
            }
        }
        if (failures.size() == before) {
            passed.add("every parcel of a PROCESSED order shipped, none cancelled");
        }
    }
}
