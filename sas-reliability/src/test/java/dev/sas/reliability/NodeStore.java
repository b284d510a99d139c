package dev.sas.reliability;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.DeadlineRenewal;
import dev.sas.core.spi.DeploymentStore;
import dev.sas.core.spi.DueBacklog;
import dev.sas.core.spi.ExpiredTask;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.RecordedEvent;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.SubmitResult;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.core.spi.WriteOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One node's connection to the {@link MutantStore}: every call goes to the shared store, and the
 * node's claims and writes can be frozen for a while, as if its process were paused (SIGSTOP)
 * after the service applied an effect and before SAS recorded it. Thread-safe.
 */
final class NodeStore implements StateStore {
    private final MutantStore db;
    private final String node;
    private volatile long frozenUntilNanos;

    NodeStore(MutantStore db, String node) {
        this.db = db;
        this.node = node;
    }

    /** Holds this node's claims and writes for {@code d} from now. */
    void freeze(Duration d) {
        frozenUntilNanos = System.nanoTime() + d.toNanos();
    }

    private void waitIfFrozen() {
        long left;
        while ((left = frozenUntilNanos - System.nanoTime()) > 0) {
            try {
                // the fault itself: a paused process, not a test waiting for something
                Thread.sleep(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public Optional<Instant> currentTime() {
        return Optional.of(db.now());
    }

    @Override
    public SubmitResult submit(NewTask task, TaskEvent received, Object transaction) {
        return submitAll(List.of(task), List.of(received), transaction).get(0);
    }

    @Override
    public List<SubmitResult> submitAll(List<NewTask> tasks, List<TaskEvent> received, Object transaction) {
        if (transaction != null) {
            throw new IllegalArgumentException("the mutant store cannot join a host transaction");
        }
        return db.submitAll(tasks, received);
    }

    @Override
    public List<ClaimedTask> claim(String instanceId, int limit, Instant now, Set<WorkflowVersion> runnable) {
        waitIfFrozen();
        return db.claim(instanceId, limit, runnable);
    }

    @Override
    public List<WriteOutcome> write(List<Transition> transitions, Instant now) {
        waitIfFrozen();
        return db.write(transitions);
    }

    @Override
    public List<DeadlineRenewal.Outcome> renewDeadlines(List<DeadlineRenewal> renewals, Instant now) {
        waitIfFrozen();
        return db.renewDeadlines(renewals);
    }

    @Override
    public List<ExpiredTask> findExpired(Instant now, int limit) {
        return db.findExpired(limit);
    }

    @Override
    public boolean tryAcquireSupervisorLease(String instanceId, Instant now, Duration ttl) {
        return db.tryAcquireSupervisorLease(instanceId, ttl);
    }

    @Override
    public void releaseSupervisorLease(String instanceId) {
        db.releaseSupervisorLease(instanceId);
    }

    /** The deployments role, on this node's calls below. */
    @Override
    public Optional<DeploymentStore> deployments() {
        return Optional.of(new DeploymentStore() {
            @Override
            public void advertise(String instanceId, Set<WorkflowVersion> runnable, Instant now, Duration ttl) {
                NodeStore.this.advertise(instanceId, runnable, now, ttl);
            }

            @Override
            public Set<WorkflowVersion> runnableByLiveNodes(Instant now) {
                return NodeStore.this.runnableByLiveNodes(now);
            }

            @Override
            public List<DueBacklog> dueBacklog(Instant dueBefore, int limit) {
                return NodeStore.this.dueBacklog(dueBefore, limit);
            }

            @Override
            public List<RecordedEvent> park(WorkflowVersion version, Instant dueBefore, Instant now, String reason,
                    int limit) {
                return NodeStore.this.park(version, dueBefore, now, reason, limit);
            }

            @Override
            public List<RecordedEvent> unpark(Set<WorkflowVersion> versions, Instant now, String message, int limit) {
                return NodeStore.this.unpark(versions, now, message, limit);
            }
        });
    }

    public void advertise(String instanceId, Set<WorkflowVersion> runnable, Instant now, Duration ttl) {
        db.advertise(instanceId, runnable, ttl);
    }

    public Set<WorkflowVersion> runnableByLiveNodes(Instant now) {
        return db.runnableByLiveNodes();
    }

    public List<DueBacklog> dueBacklog(Instant dueBefore, int limit) {
        return db.dueBacklog(limit);
    }

    public List<RecordedEvent> park(WorkflowVersion version, Instant dueBefore, Instant now, String reason, int limit) {
        return db.park();
    }

    public List<RecordedEvent> unpark(Set<WorkflowVersion> versions, Instant now, String message, int limit) {
        return List.of();
    }

    @Override
    public Optional<TaskInfo> find(TaskId taskId) {
        return db.find(taskId);
    }

    @Override
    public Optional<TaskId> findByBusinessKey(String workflow, String businessKey) {
        return db.findByBusinessKey(workflow, businessKey);
    }

    @Override
    public List<TaskInfo> list(TaskQuery query) {
        return db.list(query);
    }

    @Override
    public Map<TaskStatus, Long> countByStatus() {
        return db.countByStatus();
    }

    @Override
    public List<TaskEvent> events(TaskId taskId) {
        return db.events(taskId);
    }

    @Override
    public boolean resubmit(TaskId taskId, Instant now, TaskEvent event) {
        return false;
    }

    @Override
    public boolean requestCancel(TaskId taskId, Instant now, TaskEvent event) {
        return db.requestCancel(taskId, event);
    }

    @Override
    public int purge(Instant finishedBefore, int limit) {
        return 0;
    }

    @Override
    public String toString() {
        return "MutantStore[" + node + "]";
    }
}
