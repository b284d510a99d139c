package dev.sas.core.internal;

import dev.sas.core.spi.DueBacklog;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.WorkflowVersion;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rolling deploys, seen from the store: every runtime advertises the workflow versions it claims
 * ({@link #advertise}), and the active supervisor warns about tasks due longer than the grace
 * period whose version no live runtime advertises ({@link #checkIfDue}). Such tasks are left
 * {@code PENDING}: nobody claims them, so nothing parks them, and they run by themselves once a
 * runtime that registers the definition starts. Called from the supervisor's thread only; not
 * thread-safe.
 */
final class DeployWatch {
    private static final Logger log = LoggerFactory.getLogger(DeployWatch.class);
    /** Most workflow versions one check reads. */
    static final int MAX_VERSIONS = 100;
    /** Shortest time an advertisement lives; longer when the supervisor lease is longer. */
    static final Duration MIN_ADVERTISEMENT_TTL = Duration.ofSeconds(30);
    /** How often the same workflow version is warned about. */
    static final Duration WARN_EVERY = Duration.ofMinutes(15);

    private final StateStore store;
    private final String instanceId;
    private final Set<WorkflowVersion> runnable;
    private final Duration ttl;
    private final Duration grace;
    private final Duration checkEvery;
    private final Map<WorkflowVersion, Instant> warnedAt = new HashMap<>();
    private Instant nextAdvertise = Instant.MIN;
    private Instant firstAdvertised;
    private Instant nextCheck = Instant.MIN;

    /**
     * @param runnable what this runtime claims (empty when its scheduler is off)
     * @param supervisorLease the supervisor lease: advertisements live at least three of them
     * @param grace how long a task may be due with nobody to run it before a warning
     */
    DeployWatch(StateStore store, String instanceId, Set<WorkflowVersion> runnable, Duration supervisorLease,
            Duration grace) {
        this.store = store;
        this.instanceId = instanceId;
        this.runnable = Set.copyOf(runnable);
        Duration three = supervisorLease.multipliedBy(3);
        this.ttl = three.compareTo(MIN_ADVERTISEMENT_TTL) > 0 ? three : MIN_ADVERTISEMENT_TTL;
        this.grace = grace;
        this.checkEvery = grace.compareTo(Duration.ofMinutes(1)) < 0 ? grace : Duration.ofMinutes(1);
    }

    /** Renews this runtime's advertisement when half its time-to-live has passed. */
    void advertise(Instant now) {
        if (now.isBefore(nextAdvertise)) {
            return;
        }
        store.advertise(instanceId, runnable, now, ttl);
        nextAdvertise = now.plus(ttl.dividedBy(2));
        if (firstAdvertised == null) {
            firstAdvertised = now;
        }
    }

    /** Withdraws this runtime's advertisement (at shutdown), so peers stop counting on it at once. */
    void withdraw(Instant now) {
        if (firstAdvertised != null) {
            store.advertise(instanceId, Set.of(), now, Duration.ZERO);
        }
    }

    /**
     * On the active supervisor, at most every {@code min(grace, 1 min)}: finds workflow versions
     * with tasks due for longer than the grace period that no live runtime advertises, and warns
     * about each at most every {@link #WARN_EVERY}.
     *
     * @return the backlogs found unrunnable by this call (empty when the check was not due)
     */
    List<DueBacklog> checkIfDue(Instant now) {
        // peers that started with this one advertise within one time-to-live: no verdict before
        if (firstAdvertised == null || now.isBefore(nextCheck) || now.isBefore(firstAdvertised.plus(ttl))) {
            return List.of();
        }
        nextCheck = now.plus(checkEvery);
        List<DueBacklog> due = store.dueBacklog(now.minus(grace), MAX_VERSIONS);
        if (due.isEmpty()) {
            return List.of();
        }
        Set<WorkflowVersion> live = store.runnableByLiveNodes(now);
        List<DueBacklog> unrunnable = new ArrayList<>();
        for (DueBacklog b : due) {
            WorkflowVersion v = b.workflowVersion();
            if (live.contains(v)) {
                warnedAt.remove(v);
                continue;
            }
            unrunnable.add(b);
            Instant last = warnedAt.get(v);
            if (last == null || !now.isBefore(last.plus(WARN_EVERY))) {
                warnedAt.put(v, now);
                log.warn("{} task(s) of workflow '{}' version {} are due since {} and no live runtime has that"
                                + " version registered; they stay PENDING and run as soon as a runtime that registers"
                                + " it starts", b.tasks(), v.workflow(), v.version(), b.dueSince());
            }
        }
        return unrunnable;
    }
}
