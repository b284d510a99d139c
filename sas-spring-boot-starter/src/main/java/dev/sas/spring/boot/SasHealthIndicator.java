package dev.sas.spring.boot;

import dev.sas.core.RuntimeStatus;
import dev.sas.core.SasRuntime;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/**
 * The {@code sas} health of this node's runtime: DOWN when it is not running, or when its
 * scheduler has room for tasks and yet has not reached the store for longer than
 * {@code sas.health.max-claim-age}. Details: instance id, supervisor leadership, the last claim
 * query and its age, tasks in flight, clock skew. Reads only the runtime's memory, never the
 * database. Thread-safe.
 */
public class SasHealthIndicator implements HealthIndicator {

    private final SasRuntime runtime;
    private final Duration maxClaimAge;

    /**
     * @param runtime the runtime to report on
     * @param maxClaimAge how old the last claim query may be while the scheduler has room
     * @throws NullPointerException if an argument is null
     */
    public SasHealthIndicator(SasRuntime runtime, Duration maxClaimAge) {
        this.runtime = Objects.requireNonNull(runtime, "runtime must not be null");
        this.maxClaimAge = Objects.requireNonNull(maxClaimAge, "maxClaimAge must not be null");
    }

    @Override
    public Health health() {
        RuntimeStatus s = runtime.status();
        Instant now = runtime.config().clock().instant().plusMillis(s.clockSkewMillis());
        Health.Builder h = Health.up();
        if (!s.running()) {
            h = Health.down().withDetail("reason", "the runtime is not running");
        } else if (s.schedulerEnabled() && s.lastClaimPoll() != null && s.inFlight() < s.maxInFlight()) {
            Duration age = Duration.between(s.lastClaimPoll(), now);
            if (age.compareTo(maxClaimAge) > 0) {
                h = Health.down().withDetail("reason", "no successful claim query for " + age
                        + " (more than sas.health.max-claim-age " + maxClaimAge + "): is the database reachable?");
            }
        }
        h.withDetail("instanceId", s.instanceId())
                .withDetail("schedulerEnabled", s.schedulerEnabled())
                .withDetail("supervisorEnabled", s.supervisorEnabled())
                .withDetail("supervisorLeader", s.supervisorLeader())
                .withDetail("inFlight", s.inFlight())
                .withDetail("clockSkewMillis", s.clockSkewMillis());
        if (s.lastClaimPoll() != null) {
            h.withDetail("lastClaim", s.lastClaimPoll().toString())
                    .withDetail("lastClaimAgeMillis", Math.max(0, Duration.between(s.lastClaimPoll(), now).toMillis()));
        }
        return h.build();
    }
}
