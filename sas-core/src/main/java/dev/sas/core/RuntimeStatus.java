package dev.sas.core;

import java.time.Instant;

/**
 * What a {@link SasRuntime} is doing at one moment, for health checks and dashboards
 * ({@link SasRuntime#status()}). A snapshot; immutable.
 *
 * @param instanceId the runtime's instance id
 * @param running started and not closed
 * @param schedulerEnabled whether this runtime claims and runs tasks
 * @param supervisorEnabled whether this runtime competes for the supervisor lease
 * @param supervisorLeader whether this runtime holds the supervisor lease now (at most one runtime
 *     per store does while its lease is fresh)
 * @param lastClaimPoll when the scheduler's claim query last succeeded (found tasks or not), on
 *     this node's clock corrected to the store's; null if it has not yet
 * @param inFlight tasks this runtime holds now
 * @param maxInFlight the most it holds at once; while it holds that many it does not claim, so an old
 *     {@code lastClaimPoll} is then no sign of trouble
 * @param clockSkewMillis the store's clock minus this node's at the last measurement, as in
 *     {@link SasMetrics#clockSkewMillis()}
 */
public record RuntimeStatus(
        String instanceId,
        boolean running,
        boolean schedulerEnabled,
        boolean supervisorEnabled,
        boolean supervisorLeader,
        Instant lastClaimPoll,
        int inFlight,
        int maxInFlight,
        long clockSkewMillis) {
}
