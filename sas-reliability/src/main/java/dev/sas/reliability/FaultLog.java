package dev.sas.reliability;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What {@code <prefix>chaos_fault} holds at the end of a run: the faults fired at chosen points,
 * the clock jumps, the partitions and the completions the store refused ({@code reply-refused:late},
 * {@code reply-refused:stale}), counted by {@code point:action}, and the windows in which a
 * node that held the supervisor lease was frozen, dead or cut off (the stall check allows for them).
 */
final class FaultLog {
    /** Counts by {@code point:action}, e.g. {@code after-effect:freeze} or {@code partition:from-db}. */
    final Map<String, Integer> counts = new TreeMap<>();
    /** From each fault of the supervisor lease's holder to when another node must have taken over. */
    final List<ChaosChecks.Outage> supervisorLosses = new ArrayList<>();
    /** Freezes a worker made itself at a fault point: {@code [slot, from, to]}. */
    final List<long[]> freezes = new ArrayList<>();

    private FaultLog() {
    }

    /**
     * Reads the log. A supervisor holder frozen or cut off for {@code ms} is lost from the fault
     * to {@code ms} plus two leases later (a renewal sent just before a one-way cut may still land);
     * a killed one for two leases.
     */
    static FaultLog read(Connection harness, String prefix, long leaseMs) throws SQLException {
        FaultLog log = new FaultLog();
        try (Statement st = harness.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT point, action, supervisor, ms, at, node FROM " + prefix + "chaos_fault")) {
            while (rs.next()) {
                String point = rs.getString(1);
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("^w(\\d+)-").matcher(rs.getString(6));
                if (rs.getString(2).equals("freeze") && m.find()) {
                    freezes(log, Integer.parseInt(m.group(1)), rs.getLong(5), rs.getLong(4));
                }
                log.counts.merge(point + ":" + rs.getString(2), 1, Integer::sum);
                if (rs.getInt(3) == 1 && !point.equals("clock-jump") && !point.equals("reply-refused")) {
                    long at = rs.getLong(5);
                    log.supervisorLosses.add(new ChaosChecks.Outage(at, at + rs.getLong(4) + 2 * leaseMs));
                }
            }
        }
        return log;
    }

    private static void freezes(FaultLog log, int slot, long at, long ms) {
        log.freezes.add(new long[] {slot, at, at + ms});
    }

    /** How many faults of {@code point} fired, whatever their action. */
    int fired(String point) {
        return counts.entrySet().stream().filter(e -> e.getKey().startsWith(point + ":"))
                .mapToInt(Map.Entry::getValue).sum();
    }

    /** Records a fault the coordinator made (a partition), stamped with the database clock. */
    static void record(Connection harness, ChaosDb db, String prefix, String node, String point, String action,
            boolean supervisor, long ms) throws SQLException {
        try (PreparedStatement ps = harness.prepareStatement("INSERT INTO " + prefix + "chaos_fault (node, point,"
                + " action, supervisor, ms, at) VALUES (?, ?, ?, ?, ?, " + db.nowMillis() + ")")) {
            ps.setString(1, node);
            ps.setString(2, point);
            ps.setString(3, action);
            ps.setInt(4, supervisor ? 1 : 0);
            ps.setLong(5, ms);
            ps.executeUpdate();
        }
    }
}
