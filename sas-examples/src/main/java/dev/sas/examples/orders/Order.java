package dev.sas.examples.orders;

import dev.sas.core.Codec;
import dev.sas.jackson.JsonCodec;
import java.util.Objects;

/**
 * An order placed in the web shop; the input of the order-processing workflow.
 *
 * @param orderId the order's id, also the task's business key
 * @param customer who ordered
 * @param sku what
 * @param quantity how many
 * @param amountCents what it costs
 * @param address where it goes
 */
public record Order(String orderId, String customer, String sku, int quantity, long amountCents, String address) {

    /** Stores an order as JSON. */
    public static final Codec<Order> CODEC = JsonCodec.of(Order.class);

    /**
     * @throws NullPointerException if a string is null
     * @throws IllegalArgumentException if the quantity or amount is not positive
     */
    public Order {
        Objects.requireNonNull(orderId, "orderId must not be null");
        Objects.requireNonNull(customer, "customer must not be null");
        Objects.requireNonNull(sku, "sku must not be null");
        Objects.requireNonNull(address, "address must not be null");
        if (quantity < 1 || amountCents < 1) {
            throw new IllegalArgumentException("order " + orderId + ": quantity and amount must be positive, were "
                    + quantity + " and " + amountCents);
        }
    }
}
