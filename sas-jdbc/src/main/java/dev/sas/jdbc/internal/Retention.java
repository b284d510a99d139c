package dev.sas.jdbc.internal;

import java.time.Instant;
import java.util.List;

/** Purge of final tasks past retention, in small transactions. Jdbi. Thread-safe. */
final class Retention {

    /** Tasks per purge transaction, so a large purge never holds many locks. */
    private static final int PURGE_CHUNK = 100;

    private final StoreContext db;

    Retention(StoreContext db) {
        this.db = db;
    }

    /** See {@code StateStore.purge}. */
    int purge(Instant finishedBefore, int limit) {
        long before = finishedBefore.toEpochMilli();
        Tables t = db.t();
        return db.run("purge", null, () -> {
            int deleted = 0;
            while (deleted < limit) {
                int chunk = Math.min(PURGE_CHUNK, limit - deleted);
                int done = db.jdbi().inTransaction(h -> {
                    // No ORDER BY: over three states the (state, updated_at) index cannot give updated_at
                    // order, so PostgreSQL sorted every final row for each chunk (1M rows: ~1 s a chunk,
                    // 300 tasks/s against a 5,000/s limit; PurgeLatency in sas-bench). Unordered, the
                    // index range stops after one chunk; every row it finds is past retention anyway.
                    // created_at too: a task is created before it is last updated, and on H2 and
                    // MariaDB the (state, created_at) index serves this (schema 12 dropped their
                    // purge index, which every state change rewrote)
                    List<String> ids = h.createQuery("SELECT task_id FROM " + t.task() + " WHERE state IN " + ScanPredicates.FINAL_STATES
                                    + " AND created_at < ? AND updated_at < ? LIMIT ?")
                            .bind(0, before).bind(1, before).bind(2, chunk)
                            .mapTo(String.class).list();
                    if (ids.isEmpty()) {
                        return -1;
                    }
                    String in = " WHERE task_id IN (" + Dialect.placeholders(ids.size()) + ")";
                    Rows.bindAll(h.createUpdate("DELETE FROM " + t.event() + in), 0, ids).execute();
                    Rows.bindAll(h.createUpdate("DELETE FROM " + t.step() + in), 0, ids).execute();
                    Rows.bindAll(h.createUpdate("DELETE FROM " + t.stepReply() + in), 0, ids).execute();
                    return Rows.bindAll(h.createUpdate("DELETE FROM " + t.task() + in + " AND state IN " + ScanPredicates.FINAL_STATES),
                            0, ids).execute();
                });
                if (done < 0) {
                    break;
                }
                deleted += done;
                if (done < chunk) {
                    break;
                }
            }
            return deleted;
        });
    }
}
