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
 * <p>It honours the deadline it was given: the effect is applied in one statement that also
 * checks, on the database clock, that the call's remaining time has not run out (a node frozen
 * past its deadline, or one whose clock is off, is refused: outcome {@code late}). Thread-safe.
 */
final class Ledger {
    static final String APPLIED = "applied";
    static final String DUPLICATE = "duplicate";
    static final String LATE = "late";
    static final String DECLINED = "declined";
    static final String ERROR = "error";

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

    Ledger(DataSource dataSource, ChaosDb db, String prefix, String node) {
        this.dataSource = dataSource;
        this.node = node;
        String now = db.nowMillis();
        this.begin = "INSERT INTO " + prefix + "ledger_exec (idem_key, task_id, step, kind, attempt, node, started_at,"
                + " window_ms) VALUES (?, ?, ?, ?, ?, ?, " + now + ", ?)";
        this.lookup = "SELECT COUNT(*) FROM " + prefix + "ledger_effect WHERE idem_key = ?";
        this.apply = "INSERT INTO " + prefix + "ledger_effect (idem_key, task_id, step, kind, exec_id, at)"
                + " SELECT idem_key, task_id, step, kind, id, " + now + " FROM " + prefix + "ledger_exec"
                + " WHERE id = ? AND " + now + " <= started_at + window_ms";
        this.end = "UPDATE " + prefix + "ledger_exec SET ended_at = " + now + ", outcome = ? WHERE id = ?";
    }

    /**
     * Serves one call: records its start, looks the key up, runs {@code work}, applies the effect
     * if the key was not applied and the deadline has not passed, records the end.
     *
     * @param deadlineNanos {@link System#nanoTime()} at the call's deadline, from the remaining
     *     time the runtime gave (a local duration, so a node's clock offset does not enter)
     * @return {@link #APPLIED}, {@link #DUPLICATE} (already applied) or {@link #LATE} (refused)
     * @throws NonRetryableException if {@code work} declines the call (outcome {@code declined})
     * @throws SQLException when the database fails; the effect may then be applied or not
     */
    String execute(String key, String taskId, String step, String kind, int attempt, long deadlineNanos, Work work)
            throws Exception {
        long id = begin(key, taskId, step, kind, attempt, (deadlineNanos - System.nanoTime()) / 1_000_000);
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
                    outcome = ps.executeUpdate() == 1 ? APPLIED : LATE;
                }
            }
            return outcome;
        } finally {
            try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(end)) {
                ps.setString(1, outcome);
                ps.setLong(2, id);
                ps.executeUpdate();
            } catch (SQLException e) {
                // the database is down: the execution stays open-ended; the check bounds it by its window
            }
        }
    }

    private long begin(String key, String taskId, String step, String kind, int attempt, long windowMs)
            throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement(begin, new String[] {"id"})) {
            ps.setString(1, key);
            ps.setString(2, taskId);
            ps.setString(3, step);
            ps.setString(4, kind);
            ps.setInt(5, attempt);
            ps.setString(6, node);
            ps.setLong(7, windowMs);
            ps.executeUpdate();
            try (ResultSet rs = ps.getGeneratedKeys()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
