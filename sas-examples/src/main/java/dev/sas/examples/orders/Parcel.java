package dev.sas.examples.orders;

import dev.sas.core.Codec;
import dev.sas.jackson.JsonCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One parcel of an order: the warehouse packs one parcel per unit ordered, and each is shipped on
 * its own, as one element of the workflow's {@link OrderWorkflow#SHIP_PARCELS} fan-out.
 *
 * @param orderId the order
 * @param number the parcel's number within the order, from 1
 * @param of how many parcels the order has
 * @param address where it goes
 */
public record Parcel(String orderId, int number, int of, String address) {

    /** Stores a parcel (a fan-out element) as JSON. */
    public static final Codec<Parcel> CODEC = JsonCodec.of(Parcel.class);

    /** @throws NullPointerException if a string is null */
    public Parcel {
        Objects.requireNonNull(orderId, "orderId must not be null");
        Objects.requireNonNull(address, "address must not be null");
    }

    /** The parcel's id at the carrier: {@code <orderId>/<number>}. */
    public String id() {
        return orderId + "/" + number;
    }

    /** The order's parcels, one per unit ordered, in order; the same list every time. */
    public static List<Parcel> of(Order order) {
        List<Parcel> parcels = new ArrayList<>(order.quantity());
        for (int n = 1; n <= order.quantity(); n++) {
            parcels.add(new Parcel(order.orderId(), n, order.quantity(), order.address()));
        }
        return List.copyOf(parcels);
    }
}
