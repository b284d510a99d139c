package dev.sas.micrometer;

import dev.sas.core.AgentStatus;
import dev.sas.core.CircuitBreaker;
import dev.sas.core.SasClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared flow-control state of agent endpoints ({@link dev.sas.core.OperationsClient#agents()}), read at most once
 * per refresh interval on the thread that reads a gauge. An endpoint not written yet reads as a
 * closed breaker with nothing in flight; a failed read keeps the last values and is logged.
 * Thread-safe.
 */
final class AgentGauges {
    private static final Logger log = LoggerFactory.getLogger(AgentGauges.class);

    private final SasClient client;
    private final long refreshNanos;
    private long readAtNanos;
    private boolean read;
    private Map<String, AgentStatus> byEndpoint = Map.of();

    AgentGauges(SasClient client, Duration refresh) {
        this.client = client;
        this.refreshNanos = refresh.toNanos();
    }

    /** The value {@code f} gives of the endpoint's state, or 0 when it has none yet. */
    synchronized double value(String agent, String endpoint, ToDoubleFunction<AgentStatus> f) {
        refresh();
        AgentStatus s = byEndpoint.get(agent + '\n' + endpoint);
        return s == null ? 0 : f.applyAsDouble(s);
    }

    /** 0 closed, 1 half-open, 2 open: a gauge that alerts on {@code > 0}. */
    static double breaker(AgentStatus s) {
        return s.breaker() == CircuitBreaker.State.OPEN ? 2 : s.breaker() == CircuitBreaker.State.HALF_OPEN ? 1 : 0;
    }

    private void refresh() {
        long nanos = System.nanoTime();
        if (read && nanos - readAtNanos < refreshNanos) {
            return;
        }
        read = true;
        readAtNanos = nanos;
        try {
            Map<String, AgentStatus> m = new HashMap<>();
            for (AgentStatus s : client.operations().agents()) {
                m.put(s.agent() + '\n' + s.endpoint(), s);
            }
            byEndpoint = m;
        } catch (UnsupportedOperationException e) {
            byEndpoint = Map.of();
        } catch (RuntimeException e) {
            log.warn("SAS metrics: reading the agents' flow-control state failed ({}); keeping the last values",
                    e.toString());
        }
    }
}
