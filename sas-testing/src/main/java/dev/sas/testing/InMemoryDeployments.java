package dev.sas.testing;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.DeploymentStore;
import dev.sas.core.spi.DueBacklog;
import dev.sas.core.spi.RecordedEvent;
import dev.sas.core.spi.TaskDecisions;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.testing.InMemoryTasks.Row;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The deployments of {@link InMemoryStateStore} ({@link InMemoryStateStore#deployments()}): which
 * workflow versions live runtimes can run, and the tasks of
 * versions none can run: their backlog, parking and unparking, under the store's lock. Thread-safe.
 */
final class InMemoryDeployments implements DeploymentStore {

    private record Advertisement(Set<WorkflowVersion> runnable, Instant expiresAt) {
    }

    private final InMemoryTasks tasks;
    private final Map<String, Advertisement> advertisements = new HashMap<>();

    InMemoryDeployments(InMemoryTasks tasks) {
        this.tasks = tasks;
    }

    @Override
    public void advertise(String instanceId, Set<WorkflowVersion> runnable, Instant now, Duration ttl) {
        Objects.requireNonNull(instanceId, "instanceId must not be null");
        Advertisement ad = new Advertisement(Set.copyOf(runnable), now.plus(ttl));
        synchronized (tasks.lock) {
            advertisements.put(instanceId, ad);
        }
    }

    @Override
    public Set<WorkflowVersion> runnableByLiveNodes(Instant now) {
        Set<WorkflowVersion> out = new HashSet<>();
        synchronized (tasks.lock) {
            for (Advertisement ad : advertisements.values()) {
                if (ad.expiresAt().isAfter(now)) {
                    out.addAll(ad.runnable());
                }
            }
        }
        return out;
    }

    @Override
    public List<DueBacklog> dueBacklog(Instant dueBefore, int limit) {
        Map<WorkflowVersion, long[]> counts = new HashMap<>();
        Map<WorkflowVersion, Instant> since = new HashMap<>();
        synchronized (tasks.lock) {
            for (Row r : tasks.rows.values()) {
                if (r.lockedBy == null && r.status == TaskStatus.PENDING && !r.nextAttemptAt.isAfter(dueBefore)) {
                    WorkflowVersion v = new WorkflowVersion(r.workflow, r.version);
                    counts.computeIfAbsent(v, k -> new long[1])[0]++;
                    since.merge(v, r.nextAttemptAt, (x, y) -> x.isBefore(y) ? x : y);
                }
            }
        }
        return counts.entrySet().stream()
                .map(e -> new DueBacklog(e.getKey(), e.getValue()[0], since.get(e.getKey())))
                .sorted(Comparator.comparing(DueBacklog::dueSince))
                .limit(Math.max(0, limit))
                .toList();
    }

    @Override
    public List<RecordedEvent> park(WorkflowVersion version, Instant dueBefore, Instant now, String reason, int limit) {
        Objects.requireNonNull(version, "version must not be null");
        Objects.requireNonNull(dueBefore, "dueBefore must not be null");
        Objects.requireNonNull(now, "now must not be null");
        Objects.requireNonNull(reason, "reason must not be null");
        synchronized (tasks.lock) {
            if (runnableByLiveNodes(now).contains(version)) {
                return List.of();
            }
            List<RecordedEvent> out = new ArrayList<>();
            for (Row r : tasks.rows.values()) {
                if (out.size() >= limit) {
                    break;
                }
                if (r.workflow.equals(version.workflow()) && r.version == version.version()
                        && r.nextAttemptAt != null && !r.nextAttemptAt.isAfter(dueBefore)
                        && InMemoryTasks.apply(r, TaskDecisions.park(InMemoryTasks.snapshot(r), reason), now)) {
                    out.add(tasks.record(r, TaskEvent.Type.PARKED, now, reason));
                }
            }
            return out;
        }
    }

    @Override
    public List<RecordedEvent> unpark(Set<WorkflowVersion> versions, Instant now, String message, int limit) {
        Objects.requireNonNull(versions, "versions must not be null");
        Objects.requireNonNull(now, "now must not be null");
        Objects.requireNonNull(message, "message must not be null");
        synchronized (tasks.lock) {
            List<RecordedEvent> out = new ArrayList<>();
            for (Row r : tasks.rows.values()) {
                if (out.size() >= limit) {
                    break;
                }
                if (versions.contains(new WorkflowVersion(r.workflow, r.version))
                        && InMemoryTasks.apply(r, TaskDecisions.unpark(InMemoryTasks.snapshot(r), now), now)) {
                    out.add(tasks.record(r, TaskEvent.Type.UNPARKED, now, message));
                }
            }
            return out;
        }
    }
}
