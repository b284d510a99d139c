package dev.sas.spring.boot;

import dev.sas.core.Tracing;
import dev.sas.opentelemetry.OpenTelemetryTracing;
import io.opentelemetry.api.OpenTelemetry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * With {@code sas-opentelemetry} on the class path and an {@link OpenTelemetry} bean (Actuator with
 * an OpenTelemetry tracing bridge makes one), tasks carry the submitter's trace to their steps
 * ({@link OpenTelemetryTracing}); off with {@code sas.tracing.enabled=false}. Runs before
 * {@link SasAutoConfiguration}, which hands the {@link Tracing} bean to the runtime and client.
 * Ordered after the OpenTelemetry auto-configuration of Spring Boot 4 ({@code spring-boot-opentelemetry})
 * and Spring Boot 3 ({@code spring-boot-actuator-autoconfigure}).
 */
@AutoConfiguration(before = SasAutoConfiguration.class, afterName = {
        "org.springframework.boot.opentelemetry.autoconfigure.OpenTelemetrySdkAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.opentelemetry.OpenTelemetryAutoConfiguration"})
@ConditionalOnClass({OpenTelemetryTracing.class, OpenTelemetry.class})
@ConditionalOnBean(OpenTelemetry.class)
@ConditionalOnProperty(prefix = "sas.tracing", name = "enabled", matchIfMissing = true)
public class SasTracingAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public SasTracingAutoConfiguration() {
    }

    /**
     * Tracing through the application's OpenTelemetry.
     *
     * @param openTelemetry the application's OpenTelemetry
     * @return the tracing
     */
    @Bean
    @ConditionalOnMissingBean(Tracing.class)
    Tracing sasTracing(OpenTelemetry openTelemetry) {
        return OpenTelemetryTracing.create(openTelemetry);
    }
}
