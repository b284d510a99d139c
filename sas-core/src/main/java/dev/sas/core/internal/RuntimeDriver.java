package dev.sas.core.internal;

import java.util.Objects;
import java.util.function.Function;
import java.util.function.IntSupplier;

/**
 * Not API: how {@code sas-testing}'s {@code Drain} runs one pass of a runtime that was not started
 * (its scheduler, supervisor, retention or status channels), or of a status consumer, on the
 * calling thread. The runtime and consumer classes register the access when they load; users drive
 * them through {@code Drain}.
 */
public final class RuntimeDriver {

    /** One pass of each part of a runtime, on the calling thread. */
    public interface Passes {
        /** Claims one batch and runs it; how many tasks were claimed. */
        int scheduler();

        /** One supervisor pass; how many expired claims were recovered. */
        int supervisor();

        /** Delivers what the units that ended (or came to rest) since the last call hint; how many steps it completed. */
        int relay();

        /** One retention batch; how many tasks were deleted. */
        int retention();

        /** One batch of each status channel; how many updates were delivered. */
        int statusUpdates();
    }

    private static volatile Function<Object, Passes> access;
    private static volatile Function<Object, IntSupplier> consumerAccess;

    private RuntimeDriver() {
    }

    /** Called once by the runtime class. */
    public static void register(Function<Object, Passes> runtimeAccess) {
        access = Objects.requireNonNull(runtimeAccess, "runtimeAccess must not be null");
    }

    /**
     * The passes of {@code runtime}, a {@code SasRuntime}.
     *
     * @throws NullPointerException if {@code runtime} is null
     */
    public static Passes of(Object runtime) {
        Objects.requireNonNull(runtime, "runtime must not be null");
        return access.apply(runtime);
    }

    /** Called once by the status consumer class. */
    public static void registerConsumer(Function<Object, IntSupplier> consumerPass) {
        consumerAccess = Objects.requireNonNull(consumerPass, "consumerPass must not be null");
    }

    /**
     * One delivery pass of {@code consumer}, a {@code StatusConsumer}: how many updates it delivered.
     *
     * @throws NullPointerException if {@code consumer} is null
     */
    public static int consumerOnce(Object consumer) {
        Objects.requireNonNull(consumer, "consumer must not be null");
        return consumerAccess.apply(consumer).getAsInt();
    }
}
