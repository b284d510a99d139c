package dev.sas.spring.boot;

import dev.sas.core.RuntimeBuilder;

/**
 * A bean that changes the {@link RuntimeBuilder} before the starter builds the runtime, for what
 * properties do not cover: agent executors, status channels, a clock, event queue capacity. Applied
 * in bean order, after the {@code sas.*} properties, workflows, listeners and alert sink.
 */
@FunctionalInterface
public interface SasRuntimeCustomizer {

    /** Changes {@code builder}; called once, on the thread creating the runtime bean. */
    void customize(RuntimeBuilder builder);
}
