package dev.sas.examples.orders;

import dev.sas.examples.orders.services.Faults;
import dev.sas.examples.orders.services.InventoryService;
import dev.sas.examples.orders.services.PaymentService;
import dev.sas.examples.orders.services.ShippingService;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The web shop's remote services, started on free ports with the run's fault knobs, and the
 * orders its customers place. Close it to stop the services.
 */
public final class Shop implements AutoCloseable {

    /** The catalogue. */
    public static final List<String> SKUS = List.of("BOOK-1", "MUG-2", "LAMP-3", "DESK-4", "CHAIR-5");

    private final InventoryService inventory;
    private final PaymentService payment;
    private final ShippingService shipping;

    private Shop(InventoryService inventory, PaymentService payment, ShippingService shipping) {
        this.inventory = inventory;
        this.payment = payment;
        this.shipping = shipping;
    }

    /**
     * Starts the three services with the run's faults. Permanent faults take disjoint slices of
     * the orders: blocked SKUs first, then declined cards, then undeliverable addresses.
     *
     * @throws IOException if a port cannot be opened
     */
    public static Shop start(RunConfig c) throws IOException {
        Faults inv = faults("inventory", c).permanentSlice(0, on(c, c.blockedRate()));
        Faults pay = faults("payment", c).permanentSlice(on(c, c.blockedRate()),
                on(c, c.blockedRate() + c.declineRate()));
        Faults ship = faults("shipping", c).permanentSlice(on(c, c.blockedRate() + c.declineRate()),
                on(c, c.blockedRate() + c.declineRate() + c.undeliverableRate()));
        Map<String, Integer> stock = new LinkedHashMap<>();
        for (String sku : SKUS) {
            stock.put(sku, c.orders() * 3);
        }
        Shop shop = new Shop(new InventoryService(stock, inv), new PaymentService(pay), new ShippingService(ship));
        try {
            shop.inventory.start();
            shop.payment.start();
            shop.shipping.start();
        } catch (IOException | RuntimeException e) {
            shop.close();
            throw e;
        }
        return shop;
    }

    private static double on(RunConfig c, double share) {
        return c.faults() ? Math.min(1, share) : 0;
    }

    private static Faults faults(String service, RunConfig c) {
        Faults f = new Faults(service, c.seed());
        if (c.faults()) {
            f.failureRate(c.failureRate())
                    .latency(c.latency())
                    .hangs(c.hangRate(), OrderWorkflow.STEP_DEADLINE.plusSeconds(1));
        }
        return f;
    }

    /**
     * The orders of a run: {@code <prefix>-00001} onwards, contents drawn from the seed.
     *
     * @param prefix keeps runs on a shared database apart
     */
    public static List<Order> orders(String prefix, int count, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<Order> orders = new ArrayList<>(count);
        for (int i = 1; i <= count; i++) {
            String sku = SKUS.get(random.nextInt(SKUS.size()));
            int quantity = 1 + random.nextInt(3);
            long amount = quantity * (500L + random.nextInt(9500));
            orders.add(new Order(String.format("%s-%05d", prefix, i), "customer-" + (1 + random.nextInt(50)), sku,
                    quantity, amount, (1 + random.nextInt(200)) + " Main Street, Springfield"));
        }
        return orders;
    }

    /** The warehouse. */
    public InventoryService inventory() {
        return inventory;
    }

    /** The payment provider. */
    public PaymentService payment() {
        return payment;
    }

    /** The carrier. */
    public ShippingService shipping() {
        return shipping;
    }

    /** Stops the services. Idempotent. */
    @Override
    public void close() {
        inventory.close();
        payment.close();
        shipping.close();
    }
}
