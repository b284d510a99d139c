package dev.sas.core.internal;

import dev.sas.core.spi.DueBacklog;
import dev.sas.core.spi.RecordedEvent;
import dev.sas.core.spi.DeploymentStore;
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
 * ({@link #advertise}); the active supervisor parks tasks due longer than the grace period whose
 * version no live runtime advertises, and makes parked tasks {@code PENDING} again as soon as some
 * live runtime advertises their version ({@link #checkIfDue}). Each check parks and unparks at most
 * one batch each, so a large backlog is worked off over several supervisor passes. Called from the
 * supervisor's thread only; not thread-safe.
 */
final class DeployWatch {
    private static final Logger log = LoggerFactory.getLogger(DeployWatch.class);
    /** Most workflow versions one check reads. */
    static final int MAX_VERSIONS = 100;
    /** Shortest time an advertisement lives; longer when the supervisor lease is longer. */
    static final Duration MIN_ADVERTISEMENT_TTL = Duration.ofSeconds(30);
    /** How often parking the same workflow version is logged at WARN (DEBUG in between). */
    static final Duration WARN_EVERY = Duration.ofMinutes(15);
    static final String UNPARKED_MESSAGE = "a runtime that registers this workflow version is live again; due now";

    /**
     * What one check did.
     *
     * @param unrunnable the backlogs of due tasks no live runtime can run, past the grace period
     * @param parked the PARKED events recorded
     * @param unparked the UNPARKED events recorded
     */
    record Check(List<DueBacklog> unrunnable, List<RecordedEvent> parked, List<RecordedEvent> unparked) {
        static final Check NONE = new Check(List.of(), List.of(), List.of());
    }

    /** Null if the store keeps no deployments: then nothing is advertised, parked or unparked. */
    private final DeploymentStore store;
    private final String instanceId;
    private final Set<WorkflowVersion> runnable;
    private final Duration ttl;
    private final Duration grace;
    private final Duration checkEvery;
    private final int batch;
    private final Map<WorkflowVersion, Instant> warnedAt = new HashMap<>();
    private Instant nextAdvertise = Instant.MIN;
    private Instant firstAdvertised;
    private Instant nextCheck = Instant.MIN;

    /**
     * @param runnable what this runtime claims (empty when its scheduler is off)
     * @param supervisorLease the supervisor lease: advertisements live at least three of them
     * @param grace how long a task may be due with nobody to run it before it is parked
     * @param batch most tasks one check parks, and most it unparks
     */
    DeployWatch(DeploymentStore store, String instanceId, Set<WorkflowVersion> runnable, Duration supervisorLease,
            Duration grace, int batch) {
        this.store = store;
        this.instanceId = instanceId;
        this.runnable = Set.copyOf(runnable);
        Duration three = supervisorLease.multipliedBy(3);
        this.ttl = three.compareTo(MIN_ADVERTISEMENT_TTL) > 0 ? three : MIN_ADVERTISEMENT_TTL;
        this.grace = grace;
        this.checkEvery = grace.compareTo(Duration.ofMinutes(1)) < 0 ? grace : Duration.ofMinutes(1);
        this.batch = batch;
    }

    /** Renews this runtime's advertisement when half its time-to-live has passed. */
    void advertise(Instant now) {
        if (store == null || now.isBefore(nextAdvertise)) {
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
     * On the active supervisor, at most every {@code min(grace, 1 min)} (at once again while a
     * batch came back full): makes parked tasks of versions some live runtime advertises due again,
     * then parks tasks due for longer than the grace period whose version no live runtime
     * advertises. Parks nothing until peers that started with this runtime had one advertisement
     * time-to-live to advertise.
     */
    Check checkIfDue(Instant now) {
        if (store == null || firstAdvertised == null || now.isBefore(nextCheck)) {
            return Check.NONE;
        }
        nextCheck = now.plus(checkEvery);
        Set<WorkflowVersion> live = store.runnableByLiveNodes(now);
        List<RecordedEvent> unparked = live.isEmpty() ? List.of() : store.unpark(live, now, UNPARKED_MESSAGE, batch);
        if (!unparked.isEmpty()) {
            log.info("{} parked task(s) made due again: a runtime that registers their workflow version is live",
                    unparked.size());
        }
        boolean more = unparked.size() >= batch;
        if (now.isBefore(firstAdvertised.plus(ttl))) {
            // peers that started with this one advertise within one time-to-live: no verdict before
            Instant verdict = firstAdvertised.plus(ttl);
            if (verdict.isBefore(nextCheck)) {
                nextCheck = verdict;
            }
            return done(new Check(List.of(), List.of(), unparked), more, now);
        }
        List<DueBacklog> due = store.dueBacklog(now.minus(grace), MAX_VERSIONS);
        List<DueBacklog> unrunnable = new ArrayList<>();
        List<RecordedEvent> parked = new ArrayList<>();
        for (DueBacklog b : due) {
            WorkflowVersion v = b.workflowVersion();
            if (live.contains(v)) {
                warnedAt.remove(v);
                continue;
            }
            unrunnable.add(b);
            int budget = batch - parked.size();
            if (budget <= 0) {
                more = true;
                continue;
            }
            List<RecordedEvent> batchParked = store.park(v, now.minus(grace), now, reason(v, b), budget);
            parked.addAll(batchParked);
            more |= batchParked.size() >= budget;
            logParked(v, b, batchParked.size(), now);
        }
        return done(new Check(unrunnable, parked, unparked), more, now);
    }

    private Check done(Check check, boolean more, Instant now) {
        if (more) {
            nextCheck = now;
        }
        return check;
    }

    private String reason(WorkflowVersion v, DueBacklog b) {
        return "no live runtime has registered workflow '" + v.workflow() + "' version " + v.version() + " for "
                + grace + " (due since " + b.dueSince() + "); parked until a runtime that registers it is live,"
                + " then it runs by itself";
    }

    private void logParked(WorkflowVersion v, DueBacklog b, int parked, Instant now) {
        if (parked == 0) {
            return;
        }
        Instant last = warnedAt.get(v);
        if (last == null || !now.isBefore(last.plus(WARN_EVERY))) {
            warnedAt.put(v, now);
            log.warn("parked {} task(s) of workflow '{}' version {} (of {} due since {}): no live runtime has that"
                    + " version registered for {}; they resume by themselves once a runtime that registers it is"
                    + " live", parked, v.workflow(), v.version(), b.tasks(), b.dueSince(), grace);
        } else {
            log.debug("parked {} more task(s) of workflow '{}' version {}", parked, v.workflow(), v.version());
        }
    }
}
