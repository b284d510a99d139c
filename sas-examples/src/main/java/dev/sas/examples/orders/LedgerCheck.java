package dev.sas.examples.orders;

import dev.sas.core.TaskStatus;
import dev.sas.examples.orders.services.InventoryService;
import dev.sas.examples.orders.services.PaymentService;
import dev.sas.examples.orders.services.ShippingService;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks, after a run, that the services' ledgers agree with how each order ended: nothing done
 * twice, every compensated order fully undone, every processed order fully done, and the stock
 * counts consistent with the reservations. Reserve and charge run as parallel branches, so a
 * failed order may have been charged (and then refunded) without ever holding stock, or the
 * reverse. Stateless.
 */
public final class LedgerCheck {

    /**
     * The outcome of the checks.
     *
     * @param passed what was checked and held
     * @param failures what did not hold, one line each; empty when all held
     */
    public record Result(List<String> passed, List<String> failures) {
        /** True when every check held. */
        public boolean ok() {
            return failures.isEmpty();
        }
    }

    private LedgerCheck() {
    }

    /**
     * Runs the checks.
     *
     * @param orders the run's orders
     * @param status each order's final task status, by order id
     * @param rows each order's row status in the orders table, by order id
     * @param shop the services and their ledgers
     */
    public static Result verify(List<Order> orders, Map<String, TaskStatus> status, Map<String, String> rows, Shop shop) {
        List<String> failures = new ArrayList<>();
        List<String> passed = new ArrayList<>();
        InventoryService inventory = shop.inventory();
        PaymentService payment = shop.payment();
        ShippingService shipping = shop.shipping();

        int before = failures.size();
        for (Order o : orders) {
            TaskStatus s = status.get(o.orderId());
            if (s == null || !(s == TaskStatus.PROCESSED || s == TaskStatus.COMPENSATED || s == TaskStatus.ERROR)) {
                failures.add("order " + o.orderId() + " did not end PROCESSED, COMPENSATED or ERROR: " + s);
            }
        }
        note(passed, failures, before, "every order is terminal (PROCESSED, COMPENSATED or ERROR)");

        before = failures.size();
        for (Order o : orders) {
            int charges = payment.charges(o.orderId()).size();
            int reservations = inventory.reservations(o.orderId()).size();
            if (charges > 1 || reservations > 1) {
                failures.add("order " + o.orderId() + " was done more than once: " + charges + " charges, "
                        + reservations + " reservations");
            }
        }
        note(passed, failures, before, "no order charged or reserved twice");
        ParcelLedgerCheck.verify(orders, status, shipping, passed, failures);

        before = failures.size();
        for (Order o : orders) {
            TaskStatus s = status.get(o.orderId());
            List<PaymentService.Charge> charges = payment.charges(o.orderId());
            List<InventoryService.Reservation> reservations = inventory.reservations(o.orderId());
            List<ShippingService.Shipment> shipments = shipping.shipments(o.orderId());
            long heldStock = reservations.stream().filter(r -> !r.released()).count();
            long openCharges = charges.stream().filter(c -> !c.refunded()).count();
            long liveShipments = shipments.stream().filter(x -> !x.cancelled()).count();
            if (s == TaskStatus.PROCESSED) {
                boolean charged = openCharges == 1 && charges.get(0).amountCents() == o.amountCents();
                if (heldStock != 1 || !charged || liveShipments != Parcel.of(o).size()
                        || !OrderDatabase.CONFIRMED.equals(rows.get(o.orderId()))) {
                    failures.add("processed order " + o.orderId() + " is incomplete: reserved " + heldStock
                            + ", charged " + openCharges + ", shipped " + liveShipments + ", row " + rows.get(o.orderId()));
                }
            } else if (s == TaskStatus.COMPENSATED) {
                if (heldStock != 0 || openCharges != 0 || liveShipments != 0
                        || OrderDatabase.CONFIRMED.equals(rows.get(o.orderId()))) {
                    failures.add("compensated order " + o.orderId() + " is not fully undone: " + reservations.size()
                            + " reservations (" + heldStock + " held), " + charges.size() + " charges (" + openCharges
                            + " not refunded), " + liveShipments + " live shipments, row " + rows.get(o.orderId()));
                }
            } else if (s == TaskStatus.ERROR) {
                if (heldStock != 0 || openCharges != 0 || liveShipments != 0) {
                    failures.add("order " + o.orderId() + " in ERROR holds resources: " + heldStock + " reserved, "
                            + openCharges + " charged, " + liveShipments + " shipped");
                }
            }
        }
        note(passed, failures, before, "processed orders reserved+charged+confirmed once, every parcel shipped; compensated orders"
                + " released+refunded+cancelled; ERROR orders hold nothing");

        before = failures.size();
        int failedCharged = 0;
        int failedReserved = 0;
        for (Order o : orders) {
            TaskStatus s = status.get(o.orderId());
            if (s != TaskStatus.COMPENSATED && s != TaskStatus.ERROR) {
                continue;
            }
            List<PaymentService.Charge> charges = payment.charges(o.orderId());
            List<InventoryService.Reservation> reservations = inventory.reservations(o.orderId());
            failedCharged += charges.isEmpty() ? 0 : 1;
            failedReserved += reservations.isEmpty() ? 0 : 1;
            if (charges.size() > 1 || charges.stream().anyMatch(c -> !c.refunded())
                    || reservations.stream().anyMatch(r -> !r.released())) {
                failures.add("failed order " + o.orderId() + " (" + s + ") was not undone across its parallel branches: "
                        + charges + ", " + reservations);
            }
        }
        note(passed, failures, before, "every charge of a failed order refunded once and no reservation left held,"
                + " whichever parallel branch failed (" + failedCharged + " failed orders were charged, "
                + failedReserved + " reserved, before the other branch failed)");

        before = failures.size();
        Map<String, Integer> held = new HashMap<>();
        for (InventoryService.Reservation r : inventory.allReservations()) {
            if (!r.released()) {
                held.merge(r.sku(), r.quantity(), Integer::sum);
            }
        }
        Map<String, Integer> stock = inventory.stock();
        for (Map.Entry<String, Integer> e : inventory.initialStock().entrySet()) {
            int expected = e.getValue() - held.getOrDefault(e.getKey(), 0);
            int actual = stock.getOrDefault(e.getKey(), 0);
            if (actual != expected || actual < 0) {
                failures.add("stock of " + e.getKey() + " is " + actual + ", expected " + e.getValue() + " - "
                        + held.getOrDefault(e.getKey(), 0) + " held = " + expected);
            }
        }
        note(passed, failures, before, "stock on hand = initial stock - units held by open reservations, per SKU");

        before = failures.size();
        for (Order o : orders) {
            TaskStatus s = status.get(o.orderId());
            boolean permanent = inventory.faults().meetsPermanentFault(o.orderId())
                    || payment.faults().meetsPermanentFault(o.orderId())
                    || shipping.faults().meetsPermanentFault(o.orderId());
            if ((s == TaskStatus.COMPENSATED || s == TaskStatus.ERROR) && !permanent) {
                failures.add("order " + o.orderId() + " ended " + s + " without a permanent fault: a 503, a hang or"
                        + " the payment outage failed it");
            }
        }
        note(passed, failures, before, "no order failed for a passing reason (503s, hangs, the payment outage): every"
                + " COMPENSATED or ERROR order met a permanent fault");
        return new Result(List.copyOf(passed), List.copyOf(failures));
    }

    private static void note(List<String> passed, List<String> failures, int before, String check) {
        if (failures.size() == before) {
            passed.add(check);
        }
    }
}
