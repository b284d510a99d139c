package dev.sas.spring.boot.internal;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The {@code sas} health indicator on Spring Boot 4 ({@code org.springframework.boot.health.contributor},
 * module {@code spring-boot-health}). Not API. Thread-safe.
 */
public final class Boot4HealthIndicator implements HealthIndicator {

    private final HealthCheck check;

    /** @param check what to report */
    public Boot4HealthIndicator(HealthCheck check) {
        this.check = check;
    }

    @Override
    public Health health() {
        HealthCheck.Reading r = check.read();
        return (r.up() ? Health.up() : Health.down()).withDetails(r.details()).build();
    }
}
