package dev.sas.spring.boot;

import dev.sas.core.SasRuntime;
import dev.sas.spring.boot.internal.Boot3HealthIndicator;
import dev.sas.spring.boot.internal.Boot4HealthIndicator;
import dev.sas.spring.boot.internal.HealthCheck;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * With Spring Boot Actuator, the {@code sas} health indicator of this node's runtime (bean
 * {@code sasHealthIndicator}); off with {@code management.health.sas.enabled=false}. DOWN when the
 * runtime is not running, or when its scheduler has room for tasks and yet has not reached the
 * store for longer than {@code sas.health.max-claim-age}; details: instance id, supervisor
 * leadership, the last claim query and its age, tasks in flight, clock skew. On Spring Boot 4 the
 * indicator implements {@code org.springframework.boot.health.contributor.HealthIndicator}
 * ({@code spring-boot-health}), on Spring Boot 3 {@code org.springframework.boot.actuate.health.HealthIndicator}.
 */
@AutoConfiguration(after = SasAutoConfiguration.class)
@ConditionalOnClass(SasRuntime.class)
@ConditionalOnBean(SasRuntime.class)
@ConditionalOnProperty(prefix = "management.health.sas", name = "enabled", matchIfMissing = true)
public class SasHealthAutoConfiguration {

    static final String BOOT4_INDICATOR = "org.springframework.boot.health.contributor.HealthIndicator";
    static final String BOOT3_INDICATOR = "org.springframework.boot.actuate.health.HealthIndicator";

    /** Creates the auto-configuration; Spring calls it. */
    public SasHealthAutoConfiguration() {
    }

    /** Spring Boot 4: the indicator type lives in {@code spring-boot-health}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = BOOT4_INDICATOR)
    static class Boot4 {
        @Bean
        @ConditionalOnMissingBean(name = "sasHealthIndicator")
        Boot4HealthIndicator sasHealthIndicator(SasRuntime runtime, SasProperties properties) {
            return new Boot4HealthIndicator(new HealthCheck(runtime, properties.getHealth().getMaxClaimAge()));
        }
    }

    /** Spring Boot 3: the indicator type lives in {@code spring-boot-actuator}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = BOOT3_INDICATOR)
    @ConditionalOnMissingClass(BOOT4_INDICATOR)
    static class Boot3 {
        @Bean
        @ConditionalOnMissingBean(name = "sasHealthIndicator")
        Boot3HealthIndicator sasHealthIndicator(SasRuntime runtime, SasProperties properties) {
            return new Boot3HealthIndicator(new HealthCheck(runtime, properties.getHealth().getMaxClaimAge()));
        }
    }
}
