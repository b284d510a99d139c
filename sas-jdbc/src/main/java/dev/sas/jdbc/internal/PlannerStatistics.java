package dev.sas.jdbc.internal;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refreshes the planner's statistics while the task table is young (PostgreSQL). A server-side
 * prepared statement switches to a cached generic plan after its fifth run on a connection, and
 * that plan keeps the table size it saw then: on a table created a moment ago it is a sequential
 * scan, and it stays one for every lookup by key, claim and transition on that connection until
 * autovacuum analyses the table, a minute or more later (a benchmark run on fresh tables spent most
 * of its database time in such scans). {@code ANALYZE} invalidates the cached plans, so each is
 * planned again at the table's new size. It runs when the tasks this store has inserted first
 * reach each of {@link #MILESTONES}, on a thread of its own, one at a time; afterwards, and where
 * the dialect names no statements, this does nothing. A failure (no privilege) is logged once and
 * ends the refreshes. Thread-safe.
 */
final class PlannerStatistics {
    private static final Logger log = LoggerFactory.getLogger(PlannerStatistics.class);
    /** Task rows inserted by this store at which statistics are refreshed. */
    static final long[] MILESTONES = {500, 5_000, 50_000};

    private final StoreContext db;
    private final List<String> statements;
    private final AtomicLong inserted = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean();
    private volatile int next;

    PlannerStatistics(StoreContext db) {
        this.db = db;
        this.statements = db.dialect().refreshStatisticsSql(db.t());
        this.next = statements.isEmpty() ? MILESTONES.length : 0;
    }

    /** Counts {@code rows} task rows this store has just inserted (committed or about to be). */
    void inserted(int rows) {
        if (next >= MILESTONES.length) {
            return;
        }
        long total = inserted.addAndGet(rows);
        if (total < MILESTONES[next] || !running.compareAndSet(false, true)) {
            return;
        }
        int reached = next;
        while (reached < MILESTONES.length && total >= MILESTONES[reached]) {
            reached++;
        }
        next = reached;
        Thread t = new Thread(this::refresh, "sas-planner-statistics");
        t.setDaemon(true);
        t.start();
    }

    private void refresh() {
        try {
            db.jdbi().useHandle(h -> {
                for (String sql : statements) {
                    h.execute(sql);
                }
            });
            log.debug("refreshed planner statistics of {} after {} task rows", db.t().task(), inserted.get());
        } catch (RuntimeException e) {
            next = MILESTONES.length;
            log.info("could not refresh planner statistics of {} ({}); cached plans catch up when autovacuum"
                    + " analyses the table", db.t().task(), StoreContext.rootMessage(e));
        } finally {
            running.set(false);
        }
    }
}
