package dev.sas.examples.orders.services;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The warehouse: stock per SKU and a reservation ledger. {@code POST /reserve} (orderId, sku,
 * quantity) takes stock; {@code POST /release} (orderId) gives back every reservation of the
 * order. A blocked SKU (a permanent fault) answers {@code 409}. Thread-safe.
 */
public final class InventoryService extends RemoteService {

    /** One reservation in the ledger. */
    public record Reservation(String reservationId, String orderId, String sku, int quantity, boolean released) {
    }

    private final Map<String, Integer> initialStock;
    private final Map<String, Integer> stock;
    private final Map<String, List<Reservation>> byOrder = new HashMap<>();
    private int nextId;

    /**
     * @param initialStock units on hand per SKU
     * @param faults the fault knobs
     */
    public InventoryService(Map<String, Integer> initialStock, Faults faults) {
        super("inventory", faults);
        this.initialStock = Map.copyOf(initialStock);
        this.stock = new LinkedHashMap<>(initialStock);
    }

    @Override
    protected synchronized Reply apply(String path, Map<String, String> fields) {
        String orderId = Form.required(fields, "orderId");
        switch (path) {
            case "/reserve": {
                String sku = Form.required(fields, "sku");
                int quantity = Integer.parseInt(Form.required(fields, "quantity"));
                if (faults().failsForGood(orderId)) {
                    return Reply.rejected(409, "SKU " + sku + " is blocked by the warehouse");
                }
                Integer onHand = stock.get(sku);
                if (onHand == null) {
                    return Reply.rejected(404, "unknown SKU " + sku);
                }
                if (onHand < quantity) {
                    return Reply.rejected(409, "SKU " + sku + " is out of stock");
                }
                stock.put(sku, onHand - quantity);
                Reservation r = new Reservation("RSV-" + ++nextId, orderId, sku, quantity, false);
                byOrder.computeIfAbsent(orderId, k -> new ArrayList<>()).add(r);
                return Reply.ok("reservationId", r.reservationId());
            }
            case "/release": {
                List<Reservation> rs = byOrder.getOrDefault(orderId, List.of());
                int released = 0;
                for (int i = 0; i < rs.size(); i++) {
                    Reservation r = rs.get(i);
                    if (!r.released()) {
                        stock.merge(r.sku(), r.quantity(), Integer::sum);
                        rs.set(i, new Reservation(r.reservationId(), orderId, r.sku(), r.quantity(), true));
                        released++;
                    }
                }
                return Reply.ok("released", Integer.toString(released));
            }
            default:
                return Reply.rejected(404, "no such operation " + path);
        }
    }

    /** The order's reservations, released or not. */
    public synchronized List<Reservation> reservations(String orderId) {
        return List.copyOf(byOrder.getOrDefault(orderId, List.of()));
    }

    /** Every reservation in the ledger. */
    public synchronized List<Reservation> allReservations() {
        List<Reservation> all = new ArrayList<>();
        byOrder.values().forEach(all::addAll);
        return all;
    }

    /** Units on hand now, per SKU. */
    public synchronized Map<String, Integer> stock() {
        return Map.copyOf(stock);
    }

    /** Units on hand at the start, per SKU. */
    public Map<String, Integer> initialStock() {
        return initialStock;
    }
}
