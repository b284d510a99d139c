package dev.sas.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.ExpiredTask;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.jdbc.JdbcStateStore;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Phase 5, supervisor scan cost: {@code StateStore.findExpired(now, limit)} (the supervisor's scan)
 * with E expired claims (locked, {@code complete_by} in the past) among 10k, 100k and 1M terminal
 * ({@code PROCESSED}) rows. The goal is a flat cost: the scan reads only expired rows.
 *
 * <p>The rows are copies of two real rows the store wrote itself: one task run to {@code PROCESSED}
 * by a runtime, one claimed by an instance that then "died" (its deadline passes). They are
 * multiplied by {@code INSERT … SELECT} from a number generator (PostgreSQL {@code generate_series},
 * H2 {@code SYSTEM_RANGE}, MariaDB's {@code seq_1_to_n} sequence tables), so every column is as the
 * store would leave it whatever the schema holds. Only task rows are copied (the scan reads only the
 * task table). After each size the table is analysed, as autovacuum or InnoDB's automatic
 * statistics would do in production.
 */
final class ScanCost {

    /** Rows per {@code INSERT … SELECT}, so no single transaction grows too large. */
    static final int CHUNK = 50_000;

    /**
     * One size.
     *
     * @param terminalRows {@code PROCESSED} rows in the table
     * @param expiredRows expired claims in the table
     * @param limit the limit passed to {@code findExpired}
     * @param returned rows the last scan returned
     * @param scansMs every timed scan, in milliseconds
     * @param insertMs time to insert this size's new rows and analyse the table
     */
    record Result(long terminalRows, int expiredRows, int limit, int returned, List<Double> scansMs, long insertMs) {
        double medianMs() {
            return Stats.median(scansMs);
        }
    }

    private ScanCost() {
    }

    static List<Result> run(Bench.Options o, Target t, String tag) throws Exception {
        String prefix = tag + "_sc_";
        String task = prefix + "task";
        int expired = o.scanExpired;
        List<Result> out = new ArrayList<>();
        HikariDataSource pool = t.pool("scan");
        try {
            JdbcStateStore store = JdbcStateStore.builder().dataSource(pool).tablePrefix(prefix).build();
            try {
                Workflow<String> wf = Workflow.builder("scan", Codec.string())
                        .step("s0", b -> b.execute(ctx -> null).completeWithin(Duration.ofSeconds(1)))
                        .build();
                // the supervisor is off: nobody may recover the "dead" node's claim
                SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).supervisorEnabled(false).build();
                try {
                    sas.client().submit(wf, "tmpl-expired", "x").id();
                    // the database's time: the submit wrote its due time in it, which can be ahead of this JVM's
                    // clock by the measured offset's error (a claim at Instant.now() found nothing due at load 5)
                    List<ClaimedTask> claimed = store.claim("scan-dead-node", 1, store.currentTime().orElseGet(Instant::now),
                            Set.of(new WorkflowVersion(wf.name(), wf.version())));
                    if (claimed.size() != 1) {
                        throw new IllegalStateException("could not claim the expired template, got " + claimed.size());
                    }
                    sas.start();
                    sas.client().submit(wf, "tmpl-done", "x").id();
                    long until = System.nanoTime() + 30_000_000_000L;
                    while (sas.client().countByStatus().get(TaskStatus.PROCESSED) < 1) {
                        if (System.nanoTime() > until) {
                            throw new IllegalStateException("the PROCESSED template task did not complete in 30 s");
                        }
                        Thread.sleep(10);
                    }
                } finally {
                    sas.close();
                }
                String expiredId = claimed(pool, task, "tmpl-expired");
                String doneId = claimed(pool, task, "tmpl-done");
                // the other expired rows: deadlines 1..E-1 ms before the template's
                copy(pool, t, task, expiredId, 1, expired - 1, "x", true);
                long terminal = 1;
                Thread.sleep(1100); // the template claim's 1 s deadline passes
                for (long size : o.scanSizes) {
                    long i0 = System.nanoTime();
                    if (size > terminal) {
                        copy(pool, t, task, doneId, terminal, size - 1, "p", false);
                        terminal = size;
                    }
                    analyze(pool, t, task);
                    long insertMs = Bench.elapsedMs(i0);
                    for (int k = 0; k < 3; k++) {
                        store.findExpired(Instant.now(), expired); // warm-up: JIT, plan cache, buffer pool
                    }
                    List<Double> ms = new ArrayList<>();
                    int returned = 0;
                    for (int k = 0; k < o.scanRepeats; k++) {
                        // a new "now" each time, as the supervisor passes: H2 would otherwise hand back the
                        // previous result of the same query with the same parameters on an unchanged table
                        Instant now = Instant.now();
                        long s0 = System.nanoTime();
                        List<ExpiredTask> found = store.findExpired(now, expired);
                        ms.add((System.nanoTime() - s0) / 1e6);
                        returned = found.size();
                    }
                    Result r = new Result(terminal, expired, expired, returned, ms, insertMs);
                    out.add(r);
                    Bench.log(String.format("  %-30s supervisor scan: %,d terminal + %,d expired rows: findExpired(now, %d)"
                                    + " median %s ms (min %s, max %s) over %d scans, returned %d; rows inserted and analysed in %,d ms",
                            Bench.SAS, terminal, expired, expired, Stats.fmt(r.medianMs()), Stats.fmt(Stats.min(ms)),
                            Stats.fmt(Stats.max(ms)), ms.size(), returned, insertMs));
                }
            } finally {
                store.close();
            }
        } finally {
            Target.dropTables(pool, prefix);
            pool.close();
        }
        return out;
    }

    static String claimed(HikariDataSource pool, String task, String businessKey) throws SQLException {
        try (Connection c = pool.getConnection();
                var ps = c.prepareStatement("SELECT task_id FROM " + task + " WHERE business_key = ?")) {
            ps.setString(1, businessKey);
            try (ResultSet r = ps.executeQuery()) {
                if (!r.next()) {
                    throw new IllegalStateException("template task " + businessKey + " not found");
                }
                return r.getString(1);
            }
        }
    }

    /**
     * Inserts copies {@code from..to} of the row {@code templateId}: every column as stored, except
     * a new {@code task_id} and {@code business_key} (and, for expired copies, a deadline {@code n}
     * ms earlier so they have an order).
     */
    private static void copy(HikariDataSource pool, Target t, String task, String templateId, long from, long to,
            String key, boolean expired) throws SQLException {
        if (to < from) {
            return;
        }
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(true);
            List<String> columns = columns(c, task);
            boolean mysql = !c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT).contains("mariadb")
                    && t.kind() == Target.Kind.MARIADB;
            if (mysql) {
                throw new UnsupportedOperationException("the scan phase fills tables with MariaDB's seq_1_to_n tables;"
                        + " MySQL has none");
            }
            StringBuilder select = new StringBuilder();
            for (String col : columns) {
                if (select.length() > 0) {
                    select.append(", ");
                }
                switch (col.toLowerCase(Locale.ROOT)) {
                    case "task_id" -> select.append("CONCAT('").append(key).append("-").append(templateId, 0,
                            Math.min(8, templateId.length())).append("-', g.n)");
                    case "business_key" -> select.append("CONCAT('").append(key).append("', g.n)");
                    case "complete_by" -> select.append(expired ? "x.complete_by - g.n" : "x.complete_by");
                    default -> select.append("x.").append(col);
                }
            }
            String insert = "INSERT INTO " + task + " (" + String.join(", ", columns) + ") SELECT " + select + " FROM "
                    + task + " x CROSS JOIN ";
            for (long a = from; a <= to; a += CHUNK) {
                long b = Math.min(to, a + CHUNK - 1);
                String gen = switch (t.kind()) {
                    case POSTGRES -> "generate_series(" + a + ", " + b + ") AS g(n)";
                    case H2 -> "(SELECT X AS n FROM SYSTEM_RANGE(" + a + ", " + b + ")) g";
                    case MARIADB -> "(SELECT seq AS n FROM seq_" + a + "_to_" + b + ") g";
                };
                try (var ps = c.prepareStatement(insert + gen + " WHERE x.task_id = ?")) {
                    ps.setString(1, templateId);
                    int n = ps.executeUpdate();
                    if (n != b - a + 1) {
                        throw new IllegalStateException("inserted " + n + " rows, expected " + (b - a + 1));
                    }
                }
            }
        }
    }

    static List<String> columns(Connection c, String table) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT * FROM " + table + " WHERE 1 = 0")) {
            ResultSetMetaData md = r.getMetaData();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                out.add(md.getColumnName(i));
            }
        }
        return out;
    }

    static void analyze(HikariDataSource pool, Target t, String table) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            switch (t.kind()) {
                case POSTGRES -> s.execute("ANALYZE " + table);
                case H2 -> s.execute("ANALYZE TABLE " + table);
                case MARIADB -> {
                    try (ResultSet r = s.executeQuery("ANALYZE TABLE " + table)) {
                        while (r.next()) {
                            // drain the status rows
                        }
                    }
                }
            }
        }
    }
}
