package dev.sas.examples.orders;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskListener;
import java.io.PrintStream;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The listener on the {@code orders} status channel: the shop's view of its orders' progress,
 * whichever runtime ran them. Counts events by type and remembers each order's latest event; with
 * {@code echo} on it prints every order's outcome. The channel is consumed by one registered runtime
 * at a time: in crash mode the worker consumes it while it lives, and the shop's runtime takes over
 * from where it stopped once the worker's lease on the channel expired. Thread-safe.
 */
public final class OrderStatusBoard implements TaskListener {

    /** The status channel's name. */
    public static final String CHANNEL = "orders";

    private final Map<TaskEvent.Type, LongAdder> counts = new EnumMap<>(TaskEvent.Type.class);
    private final Map<String, TaskEvent.Type> latest = new ConcurrentHashMap<>();
    private final PrintStream echo;

    /** @param echo where to print each order's outcome, or null to stay quiet */
    public OrderStatusBoard(PrintStream echo) {
        this.echo = echo;
        for (TaskEvent.Type t : TaskEvent.Type.values()) {
            counts.put(t, new LongAdder());
        }
    }

    @Override
    public void onEvent(TaskEvent event) {
        counts.get(event.type()).increment();
        latest.put(event.businessKey(), event.type());
        if (echo != null) {
            switch (event.type()) {
                case PROCESSED, COMPENSATED, ERROR, COMPENSATION_FAILED, RESUBMITTED ->
                        echo.println("  order " + event.businessKey() + ": " + event.type()
                                + (event.message() != null ? " (" + event.message() + ")" : ""));
                default -> {
                }
            }
        }
    }

    /** Events of this type seen so far. */
    public long count(TaskEvent.Type type) {
        return counts.get(type).sum();
    }

    /** Every event seen so far. */
    public long total() {
        return counts.values().stream().mapToLong(LongAdder::sum).sum();
    }

    /** The latest event seen for an order, or null. */
    public TaskEvent.Type latest(String orderId) {
        return latest.get(orderId);
    }
}
