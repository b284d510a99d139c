package dev.sas.spring.boot.internal;

import dev.sas.core.RuntimeStatus;
import dev.sas.core.SasRuntime;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The {@code sas} health of this node's runtime, free of Spring Boot's health types so that one
 * computation serves Boot 3's and Boot 4's indicator ({@link Boot3HealthIndicator},
 * {@link Boot4HealthIndicator}): DOWN when the runtime is not running, or when its scheduler has
 * room for tasks and yet has not reached the store for longer than {@code sas.health.max-claim-age}.
 * Reads only the runtime's memory, never the database. Not API. Thread-safe.
 */
public final class HealthCheck {

    /**
     * One reading.
     *
     * @param up whether the runtime is healthy
     * @param details what the health endpoint shows, in a stable order
     */
    public record Reading(boolean up, Map<String, Object> details) {
    }

    private final SasRuntime runtime;
    private final Duration maxClaimAge;

    /**
     * @param runtime the runtime to report on
     * @param maxClaimAge how old the last claim query may be while the scheduler has room
     * @throws NullPointerException if an argument is null
     */
    public HealthCheck(SasRuntime runtime, Duration maxClaimAge) {
        this.runtime = Objects.requireNonNull(runtime, "runtime must not be null");
        this.maxClaimAge = Objects.requireNonNull(maxClaimAge, "maxClaimAge must not be null");
    }

    /** @return the runtime's health now */
    public Reading read() {
        RuntimeStatus s = runtime.status();
        Instant now = runtime.config().clock().instant().plusMillis(s.clockSkewMillis());
        Map<String, Object> details = new LinkedHashMap<>();
        boolean up = true;
        if (!s.running()) {
            up = false;
            details.put("reason", "the runtime is not running");
        } else if (s.schedulerEnabled() && s.lastClaimPoll() != null && s.inFlight() < s.maxInFlight()) {
            Duration age = Duration.between(s.lastClaimPoll(), now);
            if (age.compareTo(maxClaimAge) > 0) {
                up = false;
                details.put("reason", "no successful claim query for " + age
                        + " (more than sas.health.max-claim-age " + maxClaimAge + "): is the database reachable?");
            }
        }
        details.put("instanceId", s.instanceId());
        details.put("schedulerEnabled", s.schedulerEnabled());
        details.put("supervisorEnabled", s.supervisorEnabled());
        details.put("supervisorLeader", s.supervisorLeader());
        details.put("inFlight", s.inFlight());
        details.put("clockSkewMillis", s.clockSkewMillis());
        if (s.lastClaimPoll() != null) {
            details.put("lastClaim", s.lastClaimPoll().toString());
            details.put("lastClaimAgeMillis", Math.max(0, Duration.between(s.lastClaimPoll(), now).toMillis()));
        }
        return new Reading(up, details);
    }
}
