package dev.sas.examples.orders;

/** Placeholder until the order-processing example lands. */
public final class OrderProcessingApp {

    private OrderProcessingApp() {
    }

    /** Entry point. */
    public static void main(String[] args) {
        System.out.println("order-processing example: not built yet");
    }
}
