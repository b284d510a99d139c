package dev.sas.examples.orders.services;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The carrier: a shipment ledger. {@code POST /shipments} (orderId, address, optional parcel)
 * books a shipment; {@code POST /cancel} (orderId, optional parcel) cancels every booked shipment
 * of the order, or of that parcel of it. An undeliverable
 * address (a permanent fault) answers {@code 422}. Thread-safe.
 */
public final class ShippingService extends RemoteService {

    /** One shipment in the ledger. */
    public record Shipment(String shipmentId, String orderId, String parcel, String address, boolean cancelled) {
    }

    private final Map<String, List<Shipment>> byOrder = new HashMap<>();
    private int nextId;

    /** @param faults the fault knobs */
    public ShippingService(Faults faults) {
        super("shipping", faults);
    }

    @Override
    protected synchronized Reply apply(String path, Map<String, String> fields) {
        String orderId = Form.required(fields, "orderId");
        switch (path) {
            case "/shipments": {
                String address = Form.required(fields, "address");
                if (faults().failsForGood(orderId)) {
                    return Reply.rejected(422, "address is undeliverable");
                }
                Shipment s = new Shipment("SHP-" + ++nextId, orderId, fields.getOrDefault("parcel", ""), address, false);
                byOrder.computeIfAbsent(orderId, k -> new ArrayList<>()).add(s);
                return Reply.ok("shipmentId", s.shipmentId());
            }
            case "/cancel": {
                List<Shipment> ss = byOrder.getOrDefault(orderId, List.of());
                String parcel = fields.get("parcel");
                int cancelled = 0;
                for (int i = 0; i < ss.size(); i++) {
                    Shipment s = ss.get(i);
                    if (!s.cancelled() && (parcel == null || parcel.equals(s.parcel()))) {
                        ss.set(i, new Shipment(s.shipmentId(), orderId, s.parcel(), s.address(), true));
                        cancelled++;
                    }
                }
                return Reply.ok("cancelled", Integer.toString(cancelled));
            }
            default:
                return Reply.rejected(404, "no such operation " + path);
        }
    }

    /** The order's shipments, cancelled or not. */
    public synchronized List<Shipment> shipments(String orderId) {
        return List.copyOf(byOrder.getOrDefault(orderId, List.of()));
    }
}
