package dev.sas.core;

import dev.sas.core.internal.DatabaseClock;
import dev.sas.core.internal.PayloadLimit;
import dev.sas.core.internal.Waiters;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StorableText;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What {@link SasClient}, {@link OperationsClient} and {@link StepCompletionClient} share: the
 * store, the clock, the payload limit, the workflows known, the runtime's hooks and the waiting
 * threads. Thread-safe.
 */
final class ClientCore {
    final SasClient.Config config;
    final StateStore store;
    final PayloadLimit payloadLimit;
    final ClientHooks hooks;
    final Waiters waiters;
    private final DatabaseClock clock;
    private final Map<String, Workflow<?>> known = new ConcurrentHashMap<>();

    ClientCore(SasClient.Config config, DatabaseClock clock, List<Workflow<?>> workflows, ClientHooks hooks) {
        this.config = config;
        this.store = config.stateStore();
        this.clock = clock;
        this.payloadLimit = new PayloadLimit(config.maxPayloadBytes());
        this.hooks = hooks;
        this.waiters = new Waiters(store.signals().orElse(null));
        workflows.forEach(this::remember);
    }

    void remember(Workflow<?> w) {
        known.putIfAbsent(w.name() + '#' + w.version(), w);
    }

    /** The workflow of that name and version this client knows, or null. */
    Workflow<?> workflow(String name, int version) {
        return known.get(name + '#' + version);
    }

    /** The clock that follows the store's. */
    DatabaseClock clock() {
        return clock;
    }

    /** The store's time, by the local clock and its offset (measured again when old). */
    Instant now() {
        clock.ensureFresh();
        return clock.instant();
    }

    /** Whether no database can hold {@code text} (so no stored row has it). */
    static boolean unstorable(String text) {
        return StorableText.unstorableAt(text) >= 0;
    }
}
