package dev.sas.spring.boot.internal;

import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/**
 * The {@code sas} health indicator on Spring Boot 3 ({@code org.springframework.boot.actuate.health}).
 * Not API. Thread-safe.
 */
public final class Boot3HealthIndicator implements HealthIndicator {

    private final HealthCheck check;

    /** @param check what to report */
    public Boot3HealthIndicator(HealthCheck check) {
        this.check = check;
    }

    @Override
    public Health health() {
        HealthCheck.Reading r = check.read();
        return (r.up() ? Health.up() : Health.down()).withDetails(r.details()).build();
    }
}
