package dev.sas.reliability;

import dev.sas.reliability.HistoryChecker.Call;
import dev.sas.reliability.HistoryChecker.Cancel;
import dev.sas.reliability.HistoryChecker.Write;
import dev.sas.reliability.HistoryChecker.WriteKind;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a JDBC chaos run's history for the {@link HistoryChecker}: the ledger's calls (with the
 * time each effect was applied), the operator's cancels, the tasks' final states, and when each
 * task's last step started. The JDBC store keeps no lease per event, so this history has no
 * claims: the lease, deadline and stall checks of the checker need the in-process run's write
 * log ({@code MutationRun}); over a JDBC run it checks calls, compensations, cancels and losses.
 */
final class HistoryInput {
    private HistoryInput() {
    }

    /**
     * @param steps the workflow's forward steps, in order ({@link ChaosSettings#steps()})
     */
    static HistoryChecker.Result check(Connection store, Connection harness, String prefix, List<String> steps,
            List<String> submitted, long stallBoundMs) throws SQLException {
        List<Call> calls = new ArrayList<>();
        try (Statement st = harness.createStatement(); ResultSet rs = st.executeQuery("SELECT x.id, x.task_id, x.step,"
                + " x.kind, x.idem_key, x.attempt, x.node, x.started_at, x.ended_at, x.window_ms,"
                + " (SELECT MIN(f.at) FROM " + prefix + "ledger_effect f WHERE f.exec_id = x.id) FROM " + prefix
                + "ledger_exec x")) {
            while (rs.next()) {
                long ended = rs.getLong(9);
                Long end = rs.wasNull() ? null : ended;
                long applied = rs.getLong(11);
                Long appliedAt = rs.wasNull() ? null : applied;
                calls.add(new Call(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
                        rs.getInt(6), rs.getString(7), rs.getLong(8), end, rs.getLong(10), appliedAt));
            }
        }
        List<Cancel> cancels = new ArrayList<>();
        try (Statement st = harness.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT task_id, result, at FROM " + prefix + "chaos_action WHERE action = 'cancel'")) {
            while (rs.next()) {
                // stamped after the answer arrived: no earlier than the store recorded the cancel
                cancels.add(new Cancel(rs.getString(1), rs.getLong(3), rs.getInt(2) == 1));
            }
        }
        Map<String, String> states = new HashMap<>();
        try (Statement st = store.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT task_id, state FROM " + prefix + "task")) {
            while (rs.next()) {
                states.put(rs.getString(1), rs.getString(2));
            }
        }
        int last = steps.size() - 1;
        List<Write> starts = new ArrayList<>();
        // a start is kept in an event row of its own, next to another event (then_, before_), or,
        // while it runs, in the task row (pending_start_at): read them back as the store writes them
        try (Statement st = store.createStatement(); ResultSet rs = st.executeQuery("SELECT task_id, MIN(at) FROM ("
                + "SELECT task_id, at FROM " + prefix + "event WHERE type = 'STEP_STARTED' AND step_index = " + last
                + " UNION ALL SELECT task_id, at FROM " + prefix + "event WHERE then_type = 'STEP_STARTED'"
                + " AND then_step_index = " + last
                + " UNION ALL SELECT task_id, before_at FROM " + prefix + "event WHERE before_type = 'STEP_STARTED'"
                + " AND before_step_index = " + last
                + " UNION ALL SELECT task_id, pending_start_at FROM " + prefix + "task WHERE pending_start_at IS NOT NULL"
                + " AND current_step = " + last + ") x GROUP BY task_id")) {
            while (rs.next()) {
                starts.add(new Write(rs.getString(1), rs.getLong(2), WriteKind.OTHER, 0, last, -1, false, -1,
                        "STEP_STARTED " + steps.get(last)));
            }
        }
        return new HistoryChecker(steps, stallBoundMs, stallBoundMs)
                .check(submitted, states, starts, calls, cancels, List.of());
    }
}
