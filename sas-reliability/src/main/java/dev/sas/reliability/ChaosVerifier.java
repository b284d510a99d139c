package dev.sas.reliability;

import dev.sas.core.SasClient;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The end of a chaos run: reads the task and event tables, the ledger, the operator's actions,
 * the faults and the workers' metrics, runs {@link ChaosChecks} and the {@link HistoryChecker}
 * over them, and fills the {@link ChaosReport} (with evidence for whatever broke). Not thread-safe.
 */
final class ChaosVerifier {
    private final ChaosSettings s;
    private final ChaosDb db;
    private final String prefix;
    private final String harnessUrl;
    /** The database clock minus the coordinator's. */
    private final long dbOffsetMs;
    /** When the run started, on the coordinator's clock. */
    private final long startedAt;
    private final SasClient client;

    ChaosVerifier(ChaosSettings s, String prefix, String harnessUrl, long dbOffsetMs, long startedAt, SasClient client) {
        this.s = s;
        this.db = s.db();
        this.prefix = prefix;
        this.harnessUrl = harnessUrl;
        this.dbOffsetMs = dbOffsetMs;
        this.startedAt = startedAt;
        this.client = client;
    }

    /**
     * Checks every invariant against the task table, the ledger and the workers' metrics, into
     * {@code r} (whose counters of the chaos itself the run has filled in).
     *
     * @param ids the submitted tasks
     * @param downtime when each worker could not run steps
     * @param held the database outages (restarts, failovers)
     * @param supervisorLosses from each fault of the supervisor lease's holder, one lease later
     * @param failovers the failovers of the HA cluster
     */
    ChaosReport verify(ChaosReport r, List<TaskId> ids, NodeDowntime downtime, List<ChaosChecks.Outage> held,
            List<ChaosChecks.Outage> supervisorLosses, List<DbDisruption.FailoverRecord> failovers)
            throws SQLException {
        r.database = db + " (" + s.url.replaceAll("password=[^&]*", "password=***") + ")";
        r.settings = s.toString();
        r.total = s.tasks;
        r.submitted = ids.size();
        r.expectedFailures = s.expectedFailures();
        r.poisonTasks = s.count(Fault.POISON);
        r.cancelTasks = s.count(Fault.CANCEL);
        try (Connection c = DriverManager.getConnection(s.url); Connection h = DriverManager.getConnection(harnessUrl)) {
            Map<String, int[]> eventCounts = new HashMap<>();
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT task_id, type, COUNT(*) FROM"
                    // an event may share its row with the one before it (then_type, schema 8)
                    + " (SELECT task_id, type FROM " + prefix + "event UNION ALL SELECT task_id, then_type FROM "
                    + prefix + "event WHERE then_type IS NOT NULL) x"
                    + " WHERE type IN ('ERROR', 'RESUBMITTED') GROUP BY task_id, type")) {
                while (rs.next()) {
                    eventCounts.computeIfAbsent(rs.getString(1), x -> new int[2])[rs.getString(2).equals("ERROR") ? 0
                            : 1] = rs.getInt(3);
                }
            }
            Map<String, ChaosChecks.Task> tasks = new HashMap<>();
            List<Long> durations = new ArrayList<>();
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT task_id, business_key,"
                    + " state, created_at, updated_at, last_error FROM " + prefix + "task")) {
                while (rs.next()) {
                    String id = rs.getString(1);
                    int[] n = eventCounts.getOrDefault(id, new int[2]);
                    tasks.put(id, new ChaosChecks.Task(id, Integer.parseInt(rs.getString(2).substring(2)),
                            rs.getString(3), rs.getLong(4) + dbOffsetMs, rs.getString(6), n[0], n[1]));
                    durations.add(rs.getLong(5) - rs.getLong(4));
                }
            }
            Set<String> lost = new HashSet<>();
            for (TaskId id : ids) {
                if (tasks.containsKey(id.value())) {
                    r.rowsFound++;
                } else {
                    r.lost++;
                    lost.add(id.value());
                }
            }
            Collections.sort(durations);
            if (!durations.isEmpty()) {
                r.p50CreatedToFinalMs = durations.get(durations.size() / 2);
                r.p99CreatedToFinalMs = durations.get(Math.min(durations.size() - 1, (int) (durations.size() * 0.99)));
                r.maxCreatedToFinalMs = durations.get(durations.size() - 1);
            }
            List<ChaosChecks.Exec> execs = new ArrayList<>();
            try (Statement st = h.createStatement(); ResultSet rs = st.executeQuery("SELECT id, task_id, step, kind,"
                    + " attempt, node, idem_key, started_at, window_ms, ended_at, outcome FROM " + prefix + "ledger_exec")) {
                while (rs.next()) {
                    long ended = rs.getLong(10);
                    Long end = rs.wasNull() ? null : ended;
                    execs.add(new ChaosChecks.Exec(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4),
                            rs.getInt(5), rs.getString(6), rs.getString(7), rs.getLong(8), rs.getLong(9), end,
                            rs.getString(11)));
                }
            }
            List<ChaosChecks.Effect> effects = new ArrayList<>();
            try (Statement st = h.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT f.exec_id, f.idem_key, f.task_id, f.step, f.kind,"
                            + " CASE WHEN f.at > x.started_at + x.window_ms THEN 1 ELSE 0 END FROM " + prefix
                            + "ledger_effect f JOIN " + prefix + "ledger_exec x ON x.id = f.exec_id")) {
                while (rs.next()) {
                    effects.add(new ChaosChecks.Effect(rs.getLong(1), rs.getString(2), rs.getString(3),
                            rs.getString(4), rs.getString(5), rs.getInt(6) == 1));
                }
            }
            List<ChaosChecks.Action> actions = new ArrayList<>();
            try (Statement st = h.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT task_id, action, result, at FROM " + prefix + "chaos_action")) {
                while (rs.next()) {
                    actions.add(new ChaosChecks.Action(rs.getString(1), rs.getString(2), rs.getInt(3) == 1,
                            rs.getLong(4)));
                }
            }
            FaultLog faults = FaultLog.read(h, prefix, s.supervisorLeaseMs());
            r.faults.putAll(faults.counts);
            List<ChaosChecks.Outage> supervisorLost = new ArrayList<>(supervisorLosses);
            supervisorLost.addAll(faults.supervisorLosses);
            faults.freezes.forEach(f -> downtime.downFor((int) f[0], f[1], f[2]));
            List<ChaosChecks.Outage> noNode = downtime.allDown(System.currentTimeMillis() + dbOffsetMs);
            r.noNodeWindows = noNode.size();
            r.noNodeMs = noNode.stream().mapToLong(ChaosChecks.Outage::length).sum();
            List<ChaosChecks.Outage> outages = new ArrayList<>(held);
            outages.addAll(noNode);
            ChaosChecks checks = new ChaosChecks(s, List.copyOf(tasks.values()), execs, effects, actions,
                    List.copyOf(outages)).supervisorLost(supervisorLost).releases(releases(c));
            checks.check(r);
            r.history = HistoryInput.check(c, h, prefix, s.steps(), ids.stream().map(TaskId::value).toList(), s.stallBoundMs());
            Set<String> suspects = new TreeSet<>(checks.suspects);
            suspects.addAll(lost);
            // worker metrics and events
            try (Statement st = h.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT COALESCE(SUM(timeouts_recovered), 0), COALESCE(SUM(stale_rejected), 0),"
                            + " COALESCE(SUM(deadlines_missed), 0), COALESCE(SUM(retries), 0),"
                            + " COALESCE(SUM(store_failures), 0), COALESCE(SUM(steps_completed), 0),"
                            + " COALESCE(SUM(tasks_processed), 0) FROM " + prefix + "chaos_worker")) {
                rs.next();
                r.takeoversMetric = rs.getLong(1);
                r.staleRejected = rs.getLong(2);
                r.deadlinesMissed = rs.getLong(3);
                r.retries = rs.getLong(4);
                r.storeFailures = rs.getLong(5);
                r.stepsCompletedMetric = rs.getLong(6);
                r.tasksProcessedMetric = rs.getLong(7);
            }
            r.stepsCompletedEvents = countEvents(c, "STEP_COMPLETED");
            r.processedEvents = countEvents(c, "PROCESSED");
            for (DbDisruption.FailoverRecord f : failovers) {
                r.failovers.add(describe(c, f));
            }
            eventGaps(c, r);
            if (r.maxStallTask != null) {
                r.longestStall = describe(h, r.maxStallTask, tasks.get(r.maxStallTask));
            }
            // evidence for whatever broke an invariant
            if (!r.history.passed()) {
                r.evidence.add("history checker: " + r.history.summary());
            }
            int shown = 0;
            for (String id : suspects) {
                if (shown++ >= 10) {
                    r.evidence.add("... and " + (suspects.size() - 10) + " more suspect tasks");
                    break;
                }
                r.evidence.add(describe(h, id, tasks.get(id)));
            }
        }
        return r;
    }

    private long countEvents(Connection c, String type) throws SQLException {
        // an event may be kept in another's row (then_type: a PROCESSED after the last STEP_COMPLETED;
        // before_type: a claim's start written with the attempt's outcome, schema 14)
        try (PreparedStatement ps = c.prepareStatement("SELECT COALESCE(SUM(CASE WHEN type = ? THEN 1 ELSE 0 END"
                + " + CASE WHEN then_type = ? THEN 1 ELSE 0 END + CASE WHEN before_type = ? THEN 1 ELSE 0 END), 0)"
                + " FROM " + prefix + "event")) {
            ps.setString(1, type);
            ps.setString(2, type);
            ps.setString(3, type);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * One failover in the report: what moved, how long until a primary accepted writes, and the
     * time from the primary's death (or the switchover's start) to the first step completion
     * recorded after it, that is on the new primary (event times are the recording runtimes'
     * database-clock estimates).
     */
    private String describe(Connection c, DbDisruption.FailoverRecord f) throws SQLException {
        long from = f.startedAt() + dbOffsetMs;
        long writable = f.writableAt() + dbOffsetMs;
        Long first = null;
        List<Long> completions = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT at FROM " + prefix
                + "event WHERE type = 'STEP_COMPLETED' AND at >= ? AND at <= ? ORDER BY at")) {
            ps.setLong(1, from - 5_000);
            ps.setLong(2, f.healthyAt() + dbOffsetMs + 5_000);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long at = rs.getLong(1);
                    completions.add(at);
                    if (first == null && at > from) {
                        first = at;
                    }
                }
            }
        }
        // the longest pause in step completions that spans part of the outage
        long pause = 0;
        long pauseEnd = 0;
        for (int i = 0; i + 1 < completions.size(); i++) {
            long a = completions.get(i);
            long b = completions.get(i + 1);
            if (a <= writable && b >= from && b - a > pause) {
                pause = b - a;
                pauseEnd = b;
            }
        }
        String what = f.output().lines().filter(l -> l.startsWith("killed") || l.startsWith("switchover"))
                .findFirst().orElse(f.kind().toString());
        return f.kind() + " at +" + String.format(Locale.ROOT, "%.1f", (f.startedAt() - startedAt) / 1000.0) + " s ("
                + what.replaceAll(" at \\d+$", "") + "): writable primary after " + (f.writableAt() - f.startedAt())
                + " ms" + (f.writable() ? "" : " (NEVER)") + ", first step completed after "
                + (first == null ? "NONE" : (first - from) + " ms") + ", longest pause in step completions "
                + pause + " ms (ending " + (pauseEnd - from) + " ms after the start), cluster whole again after "
                + (f.healthyAt() - f.startedAt()) + " ms";
    }

    /**
     * Per task, when the store released it to be claimed again: its {@code STEP_RETRYING} (a retry
     * scheduled after a failure) and {@code STEP_TIMED_OUT} (a claim recovered) events, wherever the
     * store keeps them (an event's own row, or packed as {@code then_type} / {@code before_type}).
     */
    private Map<String, List<Long>> releases(Connection c) throws SQLException {
        Map<String, List<Long>> out = new HashMap<>();
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT task_id, at FROM " + prefix + "event WHERE type IN ('STEP_RETRYING', 'STEP_TIMED_OUT')"
                        + " UNION ALL SELECT task_id, at FROM " + prefix
                        + "event WHERE then_type IN ('STEP_RETRYING', 'STEP_TIMED_OUT')"
                        + " UNION ALL SELECT task_id, before_at FROM " + prefix
                        + "event WHERE before_type IN ('STEP_RETRYING', 'STEP_TIMED_OUT')")) {
            while (rs.next()) {
                out.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getLong(2));
            }
        }
        return out;
    }

    /** The longest gaps between consecutive events of one task (event times are the recording nodes' clocks). */
    private void eventGaps(Connection c, ChaosReport r) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                // the store writes a task's RECEIVED event into the task row, may keep two events of one
                // instant in one row (then_type), a claim's start with the attempt's outcome (before_type)
                // and a running attempt's start in the task row (pending_start_at): read them back as it does
                "SELECT task_id, type, at FROM (SELECT task_id, 'RECEIVED' AS type, created_at AS at, -1 AS ord,"
                        + " 0 AS sub FROM " + prefix + "task UNION ALL SELECT task_id, before_type, before_at, id, -1"
                        + " FROM " + prefix + "event WHERE before_type IS NOT NULL"
                        + " UNION ALL SELECT task_id, type, at, id, 0 FROM " + prefix
                        + "event WHERE type <> 'RECEIVED' UNION ALL SELECT task_id, then_type, at, id, 1 FROM " + prefix
                        + "event WHERE then_type IS NOT NULL UNION ALL SELECT task_id, 'STEP_STARTED', pending_start_at,"
                        + " 9223372036854775807, 0 FROM " + prefix + "task WHERE pending_start_at IS NOT NULL) x"
                        + " ORDER BY task_id, ord, sub")) {
            String prevTask = null;
            String prevType = null;
            long prevAt = 0;
            while (rs.next()) {
                String task = rs.getString(1);
                String type = rs.getString(2);
                long at = rs.getLong(3);
                if (type.equals("STEP_TIMED_OUT")) {
                    r.takeoverEvents++;
                }
                if (task.equals(prevTask)) {
                    long gap = at - prevAt;
                    if (gap > r.maxEventGapMs) {
                        r.maxEventGapMs = gap;
                        r.maxEventGapTask = task;
                    }
                    if (!"RECEIVED".equals(prevType) && gap > r.maxStallAfterStartMs) {
                        r.maxStallAfterStartMs = gap;
                        r.maxStallTask = task;
                    }
                }
                prevTask = task;
                prevType = type;
                prevAt = at;
            }
        }
    }

    private String describe(Connection c, String id, ChaosChecks.Task task) throws SQLException {
        StringBuilder sb = new StringBuilder("task " + id + (task == null ? " (no task row)" : " index " + task.index()
                + " fault " + s.fault(task.index()) + " state " + task.state() + " submitted at " + task.createdAt()
                + " (database clock)") + "\n");
        try {
            for (TaskEvent e : client.events(TaskId.of(id))) {
                String m = e.message() == null ? null
                        : e.message().length() > 300 ? e.message().substring(0, 300) + "..." : e.message();
                sb.append("  event ").append(e.at()).append(' ').append(e.type()).append(" step ")
                        .append(e.stepName()).append(" attempt ").append(e.attempt()).append(": ").append(m)
                        .append('\n');
            }
        } catch (RuntimeException e) {
            sb.append("  (events unavailable: ").append(e).append(")\n");
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT x.kind, x.step, x.attempt, x.node, x.started_at,"
                + " x.window_ms, x.ended_at, x.outcome, (SELECT COUNT(*) FROM " + prefix + "ledger_effect f"
                + " WHERE f.exec_id = x.id) FROM " + prefix + "ledger_exec x WHERE x.task_id = ? ORDER BY x.started_at")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    sb.append("  ledger ").append(rs.getString(1)).append(':').append(rs.getString(2))
                            .append(" attempt ").append(rs.getInt(3)).append(" on ").append(rs.getString(4))
                            .append(" [").append(rs.getLong(5)).append(", ").append(rs.getObject(7))
                            .append("] window ").append(rs.getLong(6)).append(" ms: ").append(rs.getString(8))
                            .append(rs.getInt(9) > 0 ? " (effect applied)" : "").append('\n');
                }
            }
        }
        return sb.toString();
    }

}
