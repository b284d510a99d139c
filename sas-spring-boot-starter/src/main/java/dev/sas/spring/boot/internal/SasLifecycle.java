package dev.sas.spring.boot.internal;

import dev.sas.core.SasRuntime;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the runtime when the application context has started and closes it (draining running
 * steps for the shutdown grace period, then giving up the supervisor lease) when the context
 * stops. A closed runtime does not start again. Not API. Thread-safe.
 */
public final class SasLifecycle implements SmartLifecycle {

    /**
     * Before the web server's lifecycle (which stops first and starts last): SAS starts before
     * requests arrive and stops after they are drained.
     */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

    private final SasRuntime runtime;

    /** @param runtime the runtime to start and stop */
    public SasLifecycle(SasRuntime runtime) {
        this.runtime = runtime;
    }

    @Override
    public void start() {
        runtime.start();
    }

    @Override
    public void stop() {
        runtime.close();
    }

    @Override
    public boolean isRunning() {
        return runtime.status().running();
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
