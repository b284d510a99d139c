package dev.sas.spring.boot;

import dev.sas.core.SasRuntime;
import dev.sas.micrometer.SasMicrometer;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * With {@code sas-micrometer} on the class path and a {@link MeterRegistry} bean (Actuator makes
 * one), SAS's meters ({@link SasMicrometer}) for this node's runtime; off with
 * {@code sas.metrics.enabled=false}. Runs before {@link SasAutoConfiguration}, so the runtime is
 * built with the meters' listener. Ordered after the registry auto-configurations of Spring Boot 4
 * ({@code spring-boot-micrometer-metrics}) and Spring Boot 3 ({@code spring-boot-actuator-autoconfigure}).
 */
@AutoConfiguration(before = SasAutoConfiguration.class, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnClass({SasMicrometer.class, MeterRegistry.class, SasRuntime.class})
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnProperty(prefix = "sas.metrics", name = "enabled", matchIfMissing = true)
public class SasMetricsAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public SasMetricsAutoConfiguration() {
    }

    /**
     * The binder.
     *
     * @param registry the application's registry
     * @param properties the {@code sas.*} properties
     * @return the binder
     */
    @Bean
    @ConditionalOnMissingBean
    SasMicrometer sasMicrometer(MeterRegistry registry, SasProperties properties) {
        return SasMicrometer.builder(registry).storeRefresh(properties.getMetrics().getStoreRefresh()).build();
    }

    /**
     * Adds the binder's listener to the runtime.
     *
     * @param micrometer the binder
     * @return the customizer
     */
    @Bean
    SasRuntimeCustomizer sasMicrometerListener(SasMicrometer micrometer) {
        return b -> b.onEvent(micrometer.listener());
    }

    /**
     * Binds the runtime's counters and gauges once every singleton exists.
     *
     * @param micrometer the binder
     * @param runtime the runtime, if any
     * @return the binding
     */
    @Bean
    SmartInitializingSingleton sasMicrometerBinding(SasMicrometer micrometer, ObjectProvider<SasRuntime> runtime) {
        return () -> runtime.ifUnique(micrometer::bind);
    }
}
