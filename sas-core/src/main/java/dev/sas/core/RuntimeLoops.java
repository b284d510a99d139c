package dev.sas.core;

import dev.sas.core.internal.DatabaseClock;
import dev.sas.core.internal.Metrics;
import dev.sas.core.internal.StatusPump;
import dev.sas.core.internal.Scheduler;
import dev.sas.core.spi.StoreSignals;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What a started {@link SasRuntime} runs besides its parts: status channels, wake-up hints, contained passes. */
final class RuntimeLoops {
    private static final Logger log = LoggerFactory.getLogger(SasRuntime.class);
    /**
     * After a "work is due" hint without a due time, when the claim loop looks again: a store may
     * send one hint for the submits of a short interval (PostgreSQL: one per 2 ms per store).
     */
    private static final List<Duration> HINT_FOLLOW_UPS = List.of(Duration.ofMillis(5), Duration.ofMillis(25));

    private RuntimeLoops() {
    }

    /**
     * Registers and starts the status channels, and listens for the store's wake-up hints
     * ({@code scheduler} null: this runtime claims nothing).
     */
    static void startSignals(Map<String, StatusPump> pumps, StoreSignals signals, Scheduler scheduler,
            DatabaseClock clock, Metrics metrics, String instanceId, List<StoreSignals.Subscription> subscriptions) {
        for (StatusPump pump : pumps.values()) {
            try {
                pump.register();
            } catch (RuntimeException e) {
                metrics.storeFailure();
                log.warn("instance {}: cannot register status channel {} yet ({}); it registers when it can reach"
                        + " the store", instanceId, pump.channel(), e.getMessage());
            }
            pump.start();
        }
        if (signals == null) {
            return;
        }
        if (scheduler != null) {
            subscriptions.add(signals.subscribe(StoreSignals.Topic.TASKS_DUE, due -> {
                if (due == null || due.isEmpty()) {
                    // A store may send one hint for several submits close together (PostgreSQL:
                    // one per 2 ms): look again shortly, for those committed just after this one.
                    Instant now = clock.instant();
                    for (Duration again : HINT_FOLLOW_UPS) {
                        scheduler.wakeUpAt(now.plus(again));
                    }
                } else {
                    scheduler.wakeUpAt(Instant.ofEpochMilli(Long.parseLong(due)));
                }
            }));
        }
        if (!pumps.isEmpty()) {
            subscriptions.add(signals.subscribe(StoreSignals.Topic.STATUS_UPDATES, channel -> {
                if (channel == null) {
                    pumps.values().forEach(StatusPump::wake);
                } else {
                    StatusPump pump = pumps.get(channel);
                    if (pump != null) {
                        pump.wake();
                    }
                }
            }));
        }
    }

    /**
     * Runs one scheduled pass, containing what it throws: a scheduled task that throws is never run
     * again, which would end supervision on this node for good.
     */
    static void quietly(String what, Runnable pass, Metrics metrics, String instanceId, Duration interval) {
        try {
            pass.run();
        } catch (StateStoreException e) {
            metrics.storeFailure();
            log.warn("instance {}: {} failed ({}); trying again in {}", instanceId, what, e.getMessage(), interval);
        } catch (Throwable e) {
            metrics.internalError();
            log.error("instance {}: {} failed; trying again in {}", instanceId, what, interval, e);
        }
    }
}
