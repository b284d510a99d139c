package dev.sas.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The ceiling: {@code threads} loops, each claiming up to {@link #BATCH} pending rows in one
 * transaction (PostgreSQL: {@code UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP
 * LOCKED LIMIT n) RETURNING id}; MariaDB: {@code SELECT … FOR UPDATE SKIP LOCKED} then
 * {@code UPDATE … IN (…)}; H2: {@code UPDATE … FETCH FIRST n} stamping a claim token, then a select
 * by token), running the no-op, and completing the batch with one batched {@code UPDATE} in one
 * transaction. A local submit wakes an idle loop; otherwise idle loops poll every 10 ms. No
 * retries, events, deadlines or recovery: it is what the database allows, not a scheduler.
 *
 * <p>Two table shapes: {@link Shape#TASK_TABLE} is SAS's own task table (created from SAS's schema
 * script, every column and index, claimed with the same predicate and order), so the ratio to it
 * says how close SAS gets on the same table shape; {@link Shape#MINIMAL} is a 4-column table with
 * one index, what a bare queue could do.
 */
public final class RawJdbcSystem implements BenchSystem {

    public static final int BATCH = 64;

    /** The table the loop claims from. */
    public enum Shape {
        /** SAS's task table: same columns and indexes, claimed in the same order. */
        TASK_TABLE,
        /** {@code (id, state, token, payload)} with one index. */
        MINIMAL
    }

    private static final String CLAIMABLE = "locked_by IS NULL AND state IN ('PENDING', 'COMPENSATING')"
            + " AND next_attempt_at <= ?";
    private static final String CLAIM_SET = "locked_by = ?, lease = lease + 1, attempt = attempt + 1,"
            + " complete_by = ? + step_timeout_ms, updated_at = ?, state = 'PROCESSING'";

    private final Shape shape;
    private final String owner = "raw-" + UUID.randomUUID().toString().substring(0, 8);

    private final Target.Kind kind;
    private final HikariDataSource pool;
    private final CountingDataSource counting;
    private final String table;
    private final Probe probe;
    private final int threads;
    private final Semaphore wake = new Semaphore(0);
    private final List<Thread> workers = new ArrayList<>();
    private volatile boolean running;
    private volatile Throwable failure;
    /** Rows inserted so far, and the next count at which PostgreSQL's statistics are refreshed. */
    private final java.util.concurrent.atomic.AtomicLong inserted = new java.util.concurrent.atomic.AtomicLong();
    private volatile long nextAnalyze = 500;

    public RawJdbcSystem(Target target, Probe probe, String prefix, int threads, Shape shape) {
        this.kind = target.kind();
        this.shape = shape;
        this.table = shape == Shape.TASK_TABLE ? prefix + "task" : prefix + "raw";
        this.probe = probe;
        this.threads = threads;
        this.pool = target.pool("raw");
        this.counting = new CountingDataSource(pool);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
            if (shape == Shape.TASK_TABLE) {
                for (String ddl : taskTableDdl(kind, prefix)) {
                    s.execute(ddl);
                }
                if (kind == Target.Kind.POSTGRES) {
                    s.execute("analyze " + table);
                }
            } else {
                s.execute("create table " + table + " (id bigint primary key, state smallint not null,"
                        + " token varchar(40), payload varchar(100))");
                switch (kind) {
                    case POSTGRES -> {
                        s.execute("create index " + table + "_due on " + table + " (id) where state = 0");
                        s.execute("analyze " + table);
                    }
                    case MARIADB -> s.execute("create index " + table + "_due on " + table + " (state, id)");
                    case H2 -> {
                        s.execute("create index " + table + "_due on " + table + " (state, id)");
                        s.execute("create index " + table + "_tok on " + table + " (token)");
                    }
                }
            }
        } catch (SQLException | IOException e) {
            Target.dropTables(pool, prefix);
            pool.close();
            throw new IllegalStateException("cannot create " + table + ": " + e.getMessage(), e);
        }
    }

    /**
     * The {@code CREATE TABLE} and {@code CREATE INDEX} statements of SAS's task table, taken from
     * the schema script SAS itself runs (so the shape cannot drift from the real one).
     */
    static List<String> taskTableDdl(Target.Kind kind, String prefix) throws IOException {
        String dir = switch (kind) {
            case POSTGRES -> "postgresql";
            case MARIADB -> "mariadb";
            case H2 -> "h2";
        };
        String task = prefix.toUpperCase(java.util.Locale.ROOT) + "TASK";
        List<String> out = new ArrayList<>();
        for (String resource : dev.sas.jdbc.internal.Dialects.schemaScripts(dir)) {
            String script;
            try (var in = RawJdbcSystem.class.getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IOException("SAS schema script " + resource + " not on the class path");
                }
                script = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            }
            StringBuilder sql = new StringBuilder();
            for (String line : script.split("\\R")) {
                if (!line.trim().startsWith("--")) {
                    sql.append(line).append('\n');
                }
            }
            // the task table, its columns added later and its indexes, as every version leaves them
            // (not the triggers or functions, which are SAS's signalling, not the table's shape)
            for (String stmt : sql.toString().split(";")) {
                String x = stmt.trim().replace("${prefix}", prefix);
                String head = x.toUpperCase(java.util.Locale.ROOT).replaceAll("\\s+", " ");
                boolean onTask = head.contains(" ON " + task + " ") || head.endsWith(" ON " + task)
                        || head.contains(" ON " + task + "(");
                if ((head.startsWith("CREATE TABLE") && head.contains(task + " ("))
                        || (head.startsWith("ALTER TABLE " + task + " ADD COLUMN"))
                        || (head.startsWith("CREATE INDEX") && onTask)
                        || (head.startsWith("DROP INDEX") && head.contains(task + "_"))) {
                    out.add(x);
                }
            }
        }
        if (out.isEmpty()) {
            throw new IOException("found no task table in the SAS schema scripts for " + dir);
        }
        return out;
    }

    @Override
    public String name() {
        return shape == Shape.TASK_TABLE ? Bench.RAW : Bench.RAW_MIN;
    }

    /** The task table's insert: the columns SAS writes at submit, the constant ones inline. */
    private static final String TASK_COLUMNS = " (task_id, workflow, workflow_version, business_key, state, priority,"
            + " lease, next_attempt_at, failure_count, current_step, current_step_name, attempt, step_timeout_ms,"
            + " cancel_requested, created_at, updated_at, input) values ";
    private static final String TASK_ROW = "(?, 'raw', 1, ?, 'PENDING', 0, 0, ?, 0, 0, 's0', 0, 30000, FALSE, ?, ?, 'x')";
    private static final String MINIMAL_COLUMNS = " (id, state, payload) values ";
    private static final String MINIMAL_ROW = "(?, 0, 'x')";

    /**
     * Task {@code i}'s id: random like SAS's (a random UUID: 36 characters, inserted all over the
     * primary key rather than at its end), with the task's number after the last dash.
     */
    static String taskId(int i) {
        String random = java.util.UUID.randomUUID().toString();
        String n = Integer.toString(i);
        return "t" + random.substring(0, Math.max(8, 36 - 2 - n.length())) + "-" + n;
    }

    @Override
    public void submit(int i) throws SQLException {
        insert(i, 1);
    }

    /** One multi-row {@code INSERT} of the same rows in one transaction: the ceiling for {@code submitAll}. */
    @Override
    public void submitBatch(int from, int count) throws SQLException {
        insert(from, count);
    }

    /** {@code INSERT … VALUES (…), (…), …} of tasks {@code from .. from + count - 1}, auto-committed. */
    private void insert(int from, int count) throws SQLException {
        boolean task = shape == Shape.TASK_TABLE;
        try (Connection c = counting.dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(insertSql(task ? table + TASK_COLUMNS : table + MINIMAL_COLUMNS,
                        task ? TASK_ROW : MINIMAL_ROW, count))) {
            c.setAutoCommit(true);
            long now = System.currentTimeMillis();
            int k = 1;
            for (int i = from; i < from + count; i++) {
                if (task) {
                    ps.setString(k++, taskId(i));
                    ps.setString(k++, "t" + i);
                    ps.setLong(k++, now);
                    ps.setLong(k++, now);
                    ps.setLong(k++, now);
                } else {
                    ps.setLong(k++, i);
                }
            }
            ps.executeUpdate();
        }
        analyzeAsItGrows(count);
        if (running) {
            wake.release();
        }
    }

    /**
     * As SAS's store does (PlannerStatistics): on PostgreSQL, refresh the table's statistics at 500,
     * 5,000 and 50,000 inserted rows, so that the generic plans the driver's prepared statements
     * cached while the table was nearly empty (sequential scans) are planned again. Without it this
     * loop, meant as a ceiling, scanned its whole fresh table for every claim and completion.
     */
    private void analyzeAsItGrows(int rows) throws SQLException {
        long total = inserted.addAndGet(rows);
        if (kind != Target.Kind.POSTGRES || total < nextAnalyze || nextAnalyze > 50_000) {
            return;
        }
        synchronized (inserted) {
            if (total < nextAnalyze || nextAnalyze > 50_000) {
                return;
            }
            while (nextAnalyze <= total) {
                nextAnalyze *= 10;
            }
            try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
                c.setAutoCommit(true);
                s.execute("analyze " + table);
            }
        }
    }

    /** {@code "insert into " + head} followed by {@code rows} copies of {@code row}, comma-separated. */
    static String insertSql(String head, String row, int rows) {
        if (rows < 1) {
            throw new IllegalArgumentException("rows must be at least 1, was " + rows);
        }
        StringBuilder sql = new StringBuilder(head.length() + 7 + rows * (row.length() + 2)).append("insert into ").append(head);
        for (int r = 0; r < rows; r++) {
            sql.append(r == 0 ? "" : ", ").append(row);
        }
        return sql.toString();
    }

    @Override
    public long completedInStore() throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("select count(*) from " + table + " where state = "
                        + (shape == Shape.TASK_TABLE ? "'PROCESSED'" : "2"))) {
            r.next();
            return r.getLong(1);
        }
    }

    @Override
    public void start() {
        running = true;
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(this::loop, "raw-worker-" + t);
            th.setDaemon(true);
            workers.add(th);
            th.start();
        }
    }

    private void loop() {
        while (running) {
            try {
                List<String> ids;
                try {
                    ids = shape == Shape.TASK_TABLE ? claimTasks() : claim();
                } catch (SQLException e) {
                    if (!retryable(e)) {
                        throw e;
                    }
                    continue; // the claim was rolled back: nothing is held, claim again
                }
                if (ids.isEmpty()) {
                    wake.tryAcquire(10, TimeUnit.MILLISECONDS);
                    continue;
                }
                for (String id : ids) {
                    probe.started(number(id)); // the no-op step
                }
                completeRetrying(ids);
                for (String id : ids) {
                    probe.done(number(id));
                }
                if (ids.size() == BATCH) {
                    wake.release(); // there may be more: keep a sibling busy too
                }
            } catch (InterruptedException e) {
                return;
            } catch (Throwable e) {
                failure = e;
                if (running) {
                    System.err.println("raw worker: " + e);
                }
                return;
            }
        }
    }

    /**
     * Completes a claimed batch, again if the database rolled the transaction back as a deadlock
     * or serialization failure (H2 reports one when concurrent inserts touch the same index pages):
     * the claim is committed, so nobody else would complete these tasks.
     */
    private void completeRetrying(List<String> ids) throws SQLException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                if (shape == Shape.TASK_TABLE) {
                    completeTasks(ids);
                } else {
                    complete(ids);
                }
                return;
            } catch (SQLException e) {
                if (!retryable(e) || attempt >= 100 || !running) {
                    throw e;
                }
                Thread.sleep(1);
            }
        }
    }

    /** A transaction the database rolled back to break a deadlock or a serialization conflict (SQLSTATE class 40). */
    static boolean retryable(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException x && x.getSQLState() != null && x.getSQLState().startsWith("40")) {
                return true;
            }
        }
        return false;
    }

    private static int number(String id) {
        return Integer.parseInt(id.charAt(0) == 't' ? id.substring(id.lastIndexOf('-') + 1) : id);
    }

    /** Claims from SAS's task table with SAS's predicate and order; returns task ids. */
    private List<String> claimTasks() throws SQLException {
        List<String> ids = new ArrayList<>(BATCH);
        long now = System.currentTimeMillis();
        try (Connection c = counting.dataSource().getConnection()) {
            switch (kind) {
                case POSTGRES -> {
                    c.setAutoCommit(true);
                    try (PreparedStatement ps = c.prepareStatement("update " + table + " set " + CLAIM_SET
                            + " where task_id in (select task_id from " + table + " where " + CLAIMABLE
                            + " order by priority desc, next_attempt_at limit ? for update skip locked) returning task_id")) {
                        ps.setString(1, owner);
                        ps.setLong(2, now);
                        ps.setLong(3, now);
                        ps.setLong(4, now);
                        ps.setInt(5, BATCH);
                        readIds(ps, ids);
                    }
                }
                case MARIADB, H2 -> {
                    // MariaDB: lock with SKIP LOCKED; H2 (no SKIP LOCKED): candidates, then the
                    // update re-checks they are still claimable, as SAS's H2 claim does
                    c.setAutoCommit(false);
                    List<String> candidates = new ArrayList<>(BATCH);
                    try (PreparedStatement ps = c.prepareStatement("select task_id from " + table + " where " + CLAIMABLE
                            + " order by priority desc, next_attempt_at "
                            + (kind == Target.Kind.MARIADB ? "limit ? for update skip locked" : "fetch first ? rows only"))) {
                        ps.setLong(1, now);
                        ps.setInt(2, BATCH);
                        readIds(ps, candidates);
                    }
                    if (!candidates.isEmpty()) {
                        String token = UUID.randomUUID().toString();
                        try (PreparedStatement ps = c.prepareStatement("update " + table + " set " + CLAIM_SET
                                + ", claim_token = ? where task_id in (" + String.join(", ", java.util.Collections.nCopies(
                                        candidates.size(), "?")) + ") and " + CLAIMABLE)) {
                            int k = 1;
                            ps.setString(k++, owner);
                            ps.setLong(k++, now);
                            ps.setLong(k++, now);
                            ps.setString(k++, token);
                            for (String id : candidates) {
                                ps.setString(k++, id);
                            }
                            ps.setLong(k, now);
                            int n = ps.executeUpdate();
                            if (n == candidates.size()) {
                                ids.addAll(candidates);
                            } else if (n > 0) {
                                try (PreparedStatement q = c.prepareStatement("select task_id from " + table
                                        + " where claim_token = ?")) {
                                    q.setString(1, token);
                                    readIds(q, ids);
                                }
                            }
                        }
                    }
                    c.commit();
                    c.setAutoCommit(true);
                }
            }
        }
        return ids;
    }

    private static void readIds(PreparedStatement ps, List<String> into) throws SQLException {
        try (ResultSet r = ps.executeQuery()) {
            while (r.next()) {
                into.add(r.getString(1));
            }
        }
    }

    /** Completes a batch in SAS's task table: PROCESSED, unlocked, fenced by the holder as SAS is. */
    private void completeTasks(List<String> ids) throws SQLException {
        long now = System.currentTimeMillis();
        List<String> sorted = new ArrayList<>(ids);
        java.util.Collections.sort(sorted);
        try (Connection c = counting.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("update " + table + " set state = 'PROCESSED',"
                    + " locked_by = NULL, complete_by = NULL, next_attempt_at = NULL, updated_at = ? where task_id = ? and locked_by = ?")) {
                for (String id : sorted) {
                    ps.setLong(1, now);
                    ps.setString(2, id);
                    ps.setString(3, owner);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            c.commit();
            c.setAutoCommit(true);
        }
    }

    private List<String> claim() throws SQLException {
        List<String> ids = new ArrayList<>(BATCH);
        try (Connection c = counting.dataSource().getConnection()) {
            switch (kind) {
                case POSTGRES -> {
                    c.setAutoCommit(true);
                    try (PreparedStatement ps = c.prepareStatement("update " + table + " set state = 1 where id in"
                            + " (select id from " + table + " where state = 0 order by id limit ? for update skip locked)"
                            + " returning id")) {
                        ps.setInt(1, BATCH);
                        readIds(ps, ids);
                    }
                }
                case MARIADB -> {
                    c.setAutoCommit(false);
                    try (PreparedStatement ps = c.prepareStatement("select id from " + table
                            + " where state = 0 order by id limit ? for update skip locked")) {
                        ps.setInt(1, BATCH);
                        readIds(ps, ids);
                    }
                    if (!ids.isEmpty()) {
                        StringBuilder in = new StringBuilder();
                        for (String id : ids) {
                            in.append(in.length() == 0 ? "" : ",").append(Long.parseLong(id));
                        }
                        try (Statement s = c.createStatement()) {
                            s.executeUpdate("update " + table + " set state = 1 where id in (" + in + ")");
                        }
                    }
                    c.commit();
                    c.setAutoCommit(true);
                }
                case H2 -> {
                    String token = UUID.randomUUID().toString();
                    c.setAutoCommit(false);
                    try (PreparedStatement ps = c.prepareStatement("update " + table
                            + " set state = 1, token = ? where state = 0 fetch first ? rows only")) {
                        ps.setString(1, token);
                        ps.setInt(2, BATCH);
                        ps.executeUpdate();
                    }
                    try (PreparedStatement ps = c.prepareStatement("select id from " + table + " where token = ?")) {
                        ps.setString(1, token);
                        readIds(ps, ids);
                    }
                    c.commit();
                    c.setAutoCommit(true);
                }
            }
        }
        return ids;
    }

    private void complete(List<String> ids) throws SQLException {
        try (Connection c = counting.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("update " + table + " set state = 2 where id = ?")) {
                for (String id : ids) {
                    ps.setLong(1, Long.parseLong(id));
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            c.commit();
            c.setAutoCommit(true);
        }
    }

    @Override
    public CountingDataSource.Counts counts() {
        return counting.counts();
    }

    /** The first error a worker died of, or null. */
    public Throwable failure() {
        return failure;
    }

    @Override
    public void close() {
        running = false;
        for (Thread t : workers) {
            t.interrupt();
        }
        for (Thread t : workers) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        Target.dropTables(pool, table);
        pool.close();
    }
}
