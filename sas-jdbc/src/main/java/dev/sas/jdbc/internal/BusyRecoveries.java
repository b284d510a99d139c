package dev.sas.jdbc.internal;

import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The supervisor's recoveries in a batch of transitions whose rows another transaction holds. Stateless. */
final class BusyRecoveries {

    private BusyRecoveries() {
    }

    /**
     * A recovery of an expired claim must not wait for a row another transaction holds: that
     * transaction may belong to a node frozen or cut off in the middle of a write, and waiting for
     * it would hold up the recovery of every other expired claim until the server ends its session.
     * Locks the recoveries' rows without waiting and answers {@link WriteOutcome#BUSY} for the held
     * ones (a row that no longer exists is left to the update, which finds it stale).
     */
    static void mark(Connection c, StoreContext db, List<Transition> transitions, Integer[] order,
            WriteOutcome[] outcomes) throws SQLException {
        List<String> ids = new ArrayList<>();
        for (int i : order) {
            if (transitions.get(i).guard() == Transition.Guard.EXPIRED) {
                ids.add(transitions.get(i).taskId().value());
            }
        }
        ids = ids.stream().distinct().toList();
        String lockSql = ids.isEmpty() ? null : db.dialect().lockUnlessLockedSql(db.t(), ids.size());
        if (lockSql == null) {
            return;
        }
        Set<String> held = new HashSet<>(ids);
        held.removeAll(selectIds(c, lockSql, ids));
        if (held.isEmpty()) {
            return;
        }
        List<String> heldIds = List.copyOf(held);
        Set<String> existing = new HashSet<>(selectIds(c, "SELECT task_id FROM " + db.t().task()
                + " WHERE task_id IN (" + Dialect.placeholders(heldIds.size()) + ")", heldIds));
        for (int i : order) {
            Transition x = transitions.get(i);
            if (x.guard() == Transition.Guard.EXPIRED && existing.contains(x.taskId().value())) {
                outcomes[i] = WriteOutcome.BUSY;
            }
        }
    }

    private static List<String> selectIds(Connection c, String sql, List<String> ids) throws SQLException {
        List<String> found = new ArrayList<>(ids.size());
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            Rows.setStrings(ps, 1, ids);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.add(rs.getString(1));
                }
            }
        }
        return found;
    }
}
