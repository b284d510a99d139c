package dev.sas.reliability;

import dev.sas.core.NonRetryableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The "remote service" the chaos workflow's steps call, and the record of every call it served.
 *
 * <p>Each call is an <em>execution</em>: a {@code <prefix>ledger_exec} row written when the
 * call arrives (start) and updated when the service has decided (end, outcome), both stamped
 * with the database's clock, never a node's. The effect is a {@code <prefix>ledger_effect} row.
 * Like many real services it is idempotent by key only for calls that do not overlap: it looks
 * the key up when the call arrives, works (latency), and applies the effect later if the lookup
 * found nothing. Nothing unique refuses a second effect row, so two executions of one step that
 * run at the same time both apply it, and the report shows the key applied twice.
 *
 * <p>By default it does <em>not</em> look at the deadline it was given (SAS is measured against a
 * service that does not cooperate): the effect is applied, however late, unless its key was
 * applied by then (checked again in the applying statement, so a late call and its retry do not
 * both apply it). With {@code enforcesDeadline} it cooperates: the effect is applied in one
 * statement that also checks, on the database clock, that the call's remaining time has not run
 * out (a node frozen past its deadline, or one whose clock is off, is refused: outcome
 * {@code late}). Thread-safe.
 */
final class Ledger {
    static final String APPLIED = "applied";
    static final String DUPLICATE = "duplicate";
    static final String LATE = "late";
    static final String DECLINED = "declined";
    static final String ERROR = "error";
    /** A start statement slower than this gets its window shortened (one more statement). */
    static final long SLOW_BEGIN_MS = 20;

    /** What the service does between the key lookup and the effect (latency, declining). */
    @FunctionalInterface
    interface Work {
        void run() throws Exception;
    }

    private final DataSource dataSource;
    private final String node;
    private final String begin;
    private final String lookup;
    private final String apply;
    private final String end;
    private final String shorten;
    private final String endUnknown;
    private final boolean enforcesDeadline;

    Ledger(DataSource dataSource, ChaosDb db, String prefix, String node, boolean enforcesDeadline) {
        this.dataSource = dataSource;
        this.node = node;
        this.enforcesDeadline = enforcesDeadline;
        String now = db.nowMillis();
        this.begin = "INSERT INTO " + prefix + "ledger_exec (idem_key, task_id, step, kind, attempt, node, started_at,"
                + " window_ms) VALUES (?, ?, ?, ?, ?, ?, " + now + ", ?)";
        this.lookup = "SELECT COUNT(*) FROM " + prefix + "ledger_effect WHERE idem_key = ?";
        this.apply = "INSERT INTO " + prefix + "ledger_effect (idem_key, task_id, step, kind, exec_id, at)"
                + " SELECT idem_key, task_id, step, kind, id, " + now + " FROM " + prefix + "ledger_exec"
                + " WHERE id = ? AND " + (enforcesDeadline ? now + " <= started_at + window_ms"
                        : "NOT EXISTS (SELECT 1 FROM " + prefix + "ledger_effect e WHERE e.idem_key = ?)");
        this.end = "UPDATE " + prefix + "ledger_exec SET ended_at = " + now + ", outcome = ? WHERE id = ?";
        this.shorten = "UPDATE " + prefix + "ledger_exec SET window_ms = ? WHERE id = ?";
        this.endUnknown = "UPDATE " + prefix + "ledger_exec SET ended_at = " + now + ", outcome = ?"
                + " WHERE idem_key = ? AND node = ? AND attempt = ? AND ended_at IS NULL";
    }

    /**
     * Serves one call: records its start, looks the key up, runs {@code work}, applies the effect
     * if the key was not applied and the deadline has not passed, records the end.
     *
     * @param deadlineNanos {@link System#nanoTime()} at the call's deadline, from the remaining
     *     time the runtime gave (a local duration, so a node's clock offset does not enter)
     * @return {@link #APPLIED}, {@link #DUPLICATE} (already applied) or {@link #LATE} (refused; only
     *     when the ledger enforces deadlines)
     * @throws NonRetryableException if {@code work} declines the call (outcome {@code declined})
     * @throws SQLException when the database fails; the effect may then be applied or not
     */
    String execute(String key, String taskId, String step, String kind, int attempt, long deadlineNanos, Work work)
            throws Exception {
        long id;
        try {
            id = begin(key, taskId, step, kind, attempt, deadlineNanos);
        } catch (SQLException e) {
            // The row may have committed although begin failed (a connection killed after the
            // insert): the call fails now, so close that row, found by key, node and attempt.
            end(endUnknown, ps -> {
                ps.setString(1, ERROR);
                ps.setString(2, key);
                ps.setString(3, node);
                ps.setInt(4, attempt);
            }, deadlineNanos);
            throw e;
        }
        String outcome = ERROR;
        try {
            boolean seen;
            try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(lookup)) {
                ps.setString(1, key);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    seen = rs.getLong(1) > 0;
                }
            }
            try {
                work.run();
            } catch (NonRetryableException e) {
                outcome = DECLINED;
                throw e;
            }
            if (seen) {
                outcome = DUPLICATE;
            } else {
                try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(apply)) {
                    ps.setLong(1, id);
                    if (!enforcesDeadline) {
                        ps.setString(2, key);
                    }
                    outcome = ps.executeUpdate() == 1 ? APPLIED : enforcesDeadline ? LATE : DUPLICATE;
                }
            }
            return outcome;
        } finally {
            String recorded = outcome;
            end(end, ps -> {
                ps.setString(1, recorded);
                ps.setLong(2, id);
            }, deadlineNanos);
        }
    }

    /**
     * Records the end before the reply leaves, so a retry never starts before it: while the
     * database is down, tries again until the deadline (after it, the open execution counts
     * until its deadline anyway).
     */
    private void end(String sql, Binder binder, long deadlineNanos) throws InterruptedException {
        while (true) {
            try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
                binder.bind(ps);
                ps.executeUpdate();
                return;
            } catch (SQLException e) {
                if (System.nanoTime() - deadlineNanos > 0) {
                    return;
                }
                Thread.sleep(50);
            }
        }
    }

    /** Binds the parameters of one statement. */
    private interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }

    /**
     * Records the start. The window is the time left when the statement is sent; if the statement
     * took long (a pause, a freeze), the database clock may have stamped the start late, so the
     * window is shortened by the statement's duration: start + window passes the deadline by at
     * most {@link #SLOW_BEGIN_MS}.
     */
    private long begin(String key, String taskId, String step, String kind, int attempt, long deadlineNanos)
            throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement(begin, new String[] {"id"})) {
            ps.setString(1, key);
            ps.setString(2, taskId);
            ps.setString(3, step);
            ps.setString(4, kind);
            ps.setInt(5, attempt);
            ps.setString(6, node);
            long sent = System.nanoTime();
            long windowMs = (deadlineNanos - sent) / 1_000_000;
            ps.setLong(7, windowMs);
            ps.executeUpdate();
            long id;
            try (ResultSet rs = ps.getGeneratedKeys()) {
                rs.next();
                id = rs.getLong(1);
            }
            long tookMs = (System.nanoTime() - sent) / 1_000_000;
            if (tookMs > SLOW_BEGIN_MS) {
                try (PreparedStatement fix = c.prepareStatement(shorten)) {
                    fix.setLong(1, windowMs - tookMs);
                    fix.setLong(2, id);
                    fix.executeUpdate();
                }
            }
            return id;
        }
    }
}
