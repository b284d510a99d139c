package dev.sas.jdbc.internal;

import dev.sas.core.spi.ExpiredTask;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.jdbi.v3.core.JdbiException;

/** The supervisor's expired scan and its lease. Jdbi (one small statement each). Thread-safe. */
final class SupervisorQueries {

    private final StoreContext db;

    SupervisorQueries(StoreContext db) {
        this.db = db;
    }

    /** See {@code StateStore.findExpired}. */
    List<ExpiredTask> findExpired(Instant now, int limit) {
        if (limit <= 0) {
            return List.of();
        }
        return db.run("findExpired", null, () -> db.jdbi().withHandle(h -> h.createQuery(
                        "SELECT " + RowMapper.EXPIRED_COLUMNS + " FROM " + db.t().task()
                                + " WHERE locked_by IS NOT NULL AND complete_by > ? AND complete_by < ?"
                                + " ORDER BY complete_by LIMIT ?")
                // The lower bound keeps the scan flat on H2, whose (complete_by) index also holds
                // every unlocked task under NULL: an open range starts at those and reads them all.
                .bind(0, Long.MIN_VALUE).bind(1, now.toEpochMilli()).bind(2, limit)
                .map((rs, ctx) -> RowMapper.expiredTask(rs))
                .list()));
    }

    /** See {@code StateStore.tryAcquireSupervisorLease}. */
    boolean tryAcquireSupervisorLease(String instanceId, Instant now, Duration ttl) {
        long nowMs = now.toEpochMilli();
        long until = now.plus(ttl).toEpochMilli();
        String lease = db.t().lease();
        return db.run("tryAcquireSupervisorLease by " + instanceId, null, () -> db.jdbi().withHandle(h -> {
            for (int round = 0; round < 2; round++) {
                int n = h.createUpdate("UPDATE " + lease + " SET holder = ?, expires_at = ?"
                                + " WHERE name = 'supervisor' AND (holder IS NULL OR holder = ? OR expires_at < ?)")
                        .bind(0, instanceId).bind(1, until).bind(2, instanceId).bind(3, nowMs)
                        .execute();
                if (n > 0) {
                    return true;
                }
                boolean rowExists = h.createQuery("SELECT COUNT(*) FROM " + lease + " WHERE name = 'supervisor'")
                        .mapTo(Long.class).one() > 0;
                if (rowExists) {
                    return false;
                }
                // the row belongs to the schema script; a schema managed by hand may lack it
                try {
                    h.createUpdate("INSERT INTO " + lease + " (name, holder, expires_at) VALUES ('supervisor', NULL, 0)")
                            .execute();
                } catch (JdbiException e) {
                    if (!db.dialect().isDuplicateKey(e)) {
                        throw e;
                    }
                }
            }
            return false;
        }));
    }

    /** See {@code StateStore.releaseSupervisorLease}. */
    void releaseSupervisorLease(String instanceId) {
        db.run("releaseSupervisorLease by " + instanceId, null, () -> db.jdbi().withHandle(h -> h.createUpdate(
                        "UPDATE " + db.t().lease() + " SET holder = NULL, expires_at = 0"
                                + " WHERE name = 'supervisor' AND holder = ?")
                .bind(0, instanceId).execute()));
    }
}
