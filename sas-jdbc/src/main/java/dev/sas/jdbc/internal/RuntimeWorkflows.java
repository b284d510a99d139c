package dev.sas.jdbc.internal;

import dev.sas.core.spi.DeploymentStore;
import dev.sas.core.spi.DueBacklog;
import dev.sas.core.spi.RecordedEvent;
import dev.sas.core.spi.WorkflowVersion;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jdbi.v3.core.statement.Update;

/**
 * The store's deployments: what live runtimes can run (their advertisements, table
 * {@code runtime_workflow}) and the due backlog per workflow version, for the supervisor's check
 * for tasks no live runtime claims; parking and unparking those tasks is {@link Parking}'s.
 * Thread-safe.
 */
final class RuntimeWorkflows implements DeploymentStore {

    /** Advertisements expired longer than this are deleted by the supervisor's read. */
    private static final Duration KEEP_EXPIRED = Duration.ofHours(1);

    private final StoreContext db;
    private final Parking parking;

    RuntimeWorkflows(StoreContext db, Parking parking) {
        this.db = db;
        this.parking = parking;
    }

    /** @throws dev.sas.core.StateStoreException if the database fails */
    @Override
    public List<RecordedEvent> park(WorkflowVersion version, Instant dueBefore, Instant now, String reason,
            int limit) {
        return parking.park(version, dueBefore, now, reason, limit);
    }

    /** @throws dev.sas.core.StateStoreException if the database fails */
    @Override
    public List<RecordedEvent> unpark(Set<WorkflowVersion> versions, Instant now, String message, int limit) {
        return parking.unpark(versions, now, message, limit);
    }

    /** @throws dev.sas.core.StateStoreException if the database fails */
    @Override
    public void advertise(String instanceId, Set<WorkflowVersion> runnable, Instant now, Duration ttl) {
        Objects.requireNonNull(instanceId, "instanceId must not be null");
        List<WorkflowVersion> versions = List.copyOf(runnable);
        long until = now.plus(ttl).toEpochMilli();
        String table = db.t().runtimeWorkflow();
        db.run("advertise by " + instanceId, null, () -> db.jdbi().inTransaction(h -> {
            // only this instance's rows (a primary-key range): runtimes advertising at once never
            // touch each other's rows
            h.createUpdate("DELETE FROM " + table + " WHERE instance_id = ?").bind(0, instanceId).execute();
            if (!versions.isEmpty()) {
                Update insert = h.createUpdate("INSERT INTO " + table
                        + " (instance_id, workflow, workflow_version, expires_at) VALUES "
                        + Dialect.valueRows(versions.size(), 4));
                int i = 0;
                for (WorkflowVersion v : versions) {
                    insert.bind(i++, instanceId).bind(i++, v.workflow()).bind(i++, v.version()).bind(i++, until);
                }
                insert.execute();
            }
            return null;
        }));
    }

    /** @throws dev.sas.core.StateStoreException if the database fails */
    @Override
    public Set<WorkflowVersion> runnableByLiveNodes(Instant now) {
        String table = db.t().runtimeWorkflow();
        return db.run("runnableByLiveNodes", null, () -> db.jdbi().withHandle(h -> {
            // runtimes that stopped for good leave rows behind; the (single) supervisor sweeps them
            h.createUpdate("DELETE FROM " + table + " WHERE expires_at < ?")
                    .bind(0, now.minus(KEEP_EXPIRED).toEpochMilli()).execute();
            Set<WorkflowVersion> out = new HashSet<>();
            h.createQuery("SELECT DISTINCT workflow, workflow_version FROM " + table + " WHERE expires_at > ?")
                    .bind(0, now.toEpochMilli())
                    .map((rs, ctx) -> new WorkflowVersion(rs.getString(1), rs.getInt(2)))
                    .forEach(out::add);
            return out;
        }));
    }

    /** @throws dev.sas.core.StateStoreException if the database fails */
    @Override
    public List<DueBacklog> dueBacklog(Instant dueBefore, int limit) {
        if (limit <= 0) {
            return List.of();
        }
        // the claim's predicate, so the claim index serves it (partial on PostgreSQL)
        return db.run("dueBacklog", null, () -> db.jdbi().withHandle(h -> h.createQuery(
                        "SELECT workflow, workflow_version, COUNT(*), MIN(next_attempt_at) FROM " + db.t().task()
                                + " WHERE " + ScanPredicates.DUE_PENDING
                                + " GROUP BY workflow, workflow_version ORDER BY MIN(next_attempt_at) LIMIT ?")
                .bind(0, dueBefore.toEpochMilli()).bind(1, limit)
                .map((rs, ctx) -> new DueBacklog(new WorkflowVersion(rs.getString(1), rs.getInt(2)), rs.getLong(3),
                        Instant.ofEpochMilli(rs.getLong(4))))
                .list()));
    }
}
