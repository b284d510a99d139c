package dev.sas.examples.orders;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The run's payment outage: once a third of the orders are charged (while the rest still are to
 * be), the payment service goes down for the configured time, then comes back. Triggered by the
 * charges rather than by finished orders because the charge runs in parallel with the stock
 * reservation, early in an order's life: by the time a third of the orders have finished, most
 * charges may already be made. Thread-safe.
 */
final class PaymentOutage {

    private final Duration length;
    private final Shop shop;
    private final int threshold;
    private final ScheduledExecutorService ticker;
    private final PrintStream out;
    private volatile boolean started;

    private PaymentOutage(Duration length, Shop shop, int orders, ScheduledExecutorService ticker, PrintStream out) {
        this.length = length;
        this.shop = shop;
        this.threshold = Math.max(1, orders / 3);
        this.ticker = ticker;
        this.out = out;
    }

    /**
     * Watches the payment ledger on {@code ticker} and starts the outage when its time comes; a
     * zero {@code length} means no outage.
     */
    static PaymentOutage schedule(Duration length, Shop shop, int orders, ScheduledExecutorService ticker,
            PrintStream out) {
        PaymentOutage outage = new PaymentOutage(length, shop, orders, ticker, out);
        if (!length.isZero()) {
            ticker.scheduleWithFixedDelay(outage::check, 10, 10, TimeUnit.MILLISECONDS);
        }
        return outage;
    }

    /** Whether the outage began (it may have ended since). */
    boolean started() {
        return started;
    }

    private void check() {
        if (started || shop.payment().chargeCount() < threshold) {
            return;
        }
        started = true;
        shop.payment().faults().down(true);
        out.printf(Locale.ROOT, "  OUTAGE: the payment service is down for %.1f s; its circuit breaker will stop the calls"
                + " and the orders will wait instead of failing%n", length.toMillis() / 1000.0);
        ticker.schedule(() -> {
            shop.payment().faults().down(false);
            out.println("  the payment service is back");
        }, length.toMillis(), TimeUnit.MILLISECONDS);
    }
}
