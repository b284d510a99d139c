package dev.sas.spring.boot;

import dev.sas.core.SasRuntime;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * With Spring Boot Actuator, the {@code sas} health indicator of this node's runtime
 * ({@link SasHealthIndicator}); off with {@code management.health.sas.enabled=false}.
 */
@AutoConfiguration(after = SasAutoConfiguration.class)
@ConditionalOnClass({HealthIndicator.class, SasRuntime.class})
@ConditionalOnBean(SasRuntime.class)
@ConditionalOnProperty(prefix = "management.health.sas", name = "enabled", matchIfMissing = true)
public class SasHealthAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public SasHealthAutoConfiguration() {
    }

    /**
     * The indicator, named {@code sas} in the health endpoint.
     *
     * @param runtime the runtime
     * @param properties the {@code sas.*} properties
     * @return the indicator
     */
    @Bean
    @ConditionalOnMissingBean(name = "sasHealthIndicator")
    SasHealthIndicator sasHealthIndicator(SasRuntime runtime, SasProperties properties) {
        return new SasHealthIndicator(runtime, properties.getHealth().getMaxClaimAge());
    }
}
