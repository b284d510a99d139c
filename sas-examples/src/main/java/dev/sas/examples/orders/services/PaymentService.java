package dev.sas.examples.orders.services;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The payment provider: a charge ledger. {@code POST /charge} (orderId, amountCents) charges the
 * customer's card; {@code POST /refund} (orderId) refunds every open charge of the order. A
 * declined card (a permanent fault) answers {@code 402}. Thread-safe.
 */
public final class PaymentService extends RemoteService {

    /** One charge in the ledger. */
    public record Charge(String chargeId, String orderId, long amountCents, boolean refunded) {
    }

    private final Map<String, List<Charge>> byOrder = new HashMap<>();
    private int nextId;

    /** @param faults the fault knobs */
    public PaymentService(Faults faults) {
        super("payment", faults);
    }

    @Override
    protected synchronized Reply apply(String path, Map<String, String> fields) {
        String orderId = Form.required(fields, "orderId");
        switch (path) {
            case "/charge": {
                long amount = Long.parseLong(Form.required(fields, "amountCents"));
                if (faults().failsForGood(orderId)) {
                    return Reply.rejected(402, "card declined");
                }
                Charge c = new Charge("CH-" + ++nextId, orderId, amount, false);
                byOrder.computeIfAbsent(orderId, k -> new ArrayList<>()).add(c);
                return Reply.ok("chargeId", c.chargeId());
            }
            case "/refund": {
                List<Charge> cs = byOrder.getOrDefault(orderId, List.of());
                long refunded = 0;
                for (int i = 0; i < cs.size(); i++) {
                    Charge c = cs.get(i);
                    if (!c.refunded()) {
                        cs.set(i, new Charge(c.chargeId(), orderId, c.amountCents(), true));
                        refunded += c.amountCents();
                    }
                }
                return Reply.ok("refundedCents", Long.toString(refunded));
            }
            default:
                return Reply.rejected(404, "no such operation " + path);
        }
    }

    /** How many charges were made, over every order, refunded or not. */
    public synchronized int chargeCount() {
        return byOrder.values().stream().mapToInt(List::size).sum();
    }

    /** The order's charges, refunded or not. */
    public synchronized List<Charge> charges(String orderId) {
        return List.copyOf(byOrder.getOrDefault(orderId, List.of()));
    }
}
