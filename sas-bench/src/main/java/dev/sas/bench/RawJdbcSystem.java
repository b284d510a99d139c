package dev.sas.bench;

import com.zaxxer.hikari.HikariDataSource;
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
 * The ceiling: {@code threads} loops, each claiming up to {@link #BATCH} pending rows of a minimal
 * table in one transaction (PostgreSQL: {@code UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP
 * LOCKED LIMIT n) RETURNING id}; MariaDB: {@code SELECT … FOR UPDATE SKIP LOCKED} then
 * {@code UPDATE … IN (…)}; H2: {@code UPDATE … FETCH FIRST n} stamping a claim token, then a select
 * by token), running the no-op, and completing the batch with one batched {@code UPDATE} in one
 * transaction. A local submit wakes an idle loop; otherwise idle loops poll every 10 ms. No
 * retries, events, deadlines or recovery: it is what the database allows, not a scheduler.
 */
public final class RawJdbcSystem implements BenchSystem {

    public static final int BATCH = 64;

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

    public RawJdbcSystem(Target target, Probe probe, String prefix, int threads) {
        this.kind = target.kind();
        this.table = prefix + "raw";
        this.probe = probe;
        this.threads = threads;
        this.pool = target.pool("raw");
        this.counting = new CountingDataSource(pool);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(true);
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
        } catch (SQLException e) {
            Target.dropTables(pool, table);
            pool.close();
            throw new IllegalStateException("cannot create " + table + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String name() {
        return "raw JDBC";
    }

    @Override
    public void submit(int i) throws SQLException {
        try (Connection c = counting.dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("insert into " + table + " (id, state, payload) values (?, 0, 'x')")) {
            c.setAutoCommit(true);
            ps.setLong(1, i);
            ps.executeUpdate();
        }
        if (running) {
            wake.release();
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
                List<Long> ids = claim();
                if (ids.isEmpty()) {
                    wake.tryAcquire(10, TimeUnit.MILLISECONDS);
                    continue;
                }
                for (long id : ids) {
                    probe.started((int) id); // the no-op step
                }
                complete(ids);
                for (long id : ids) {
                    probe.done((int) id);
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

    private List<Long> claim() throws SQLException {
        List<Long> ids = new ArrayList<>(BATCH);
        try (Connection c = counting.dataSource().getConnection()) {
            switch (kind) {
                case POSTGRES -> {
                    c.setAutoCommit(true);
                    try (PreparedStatement ps = c.prepareStatement("update " + table + " set state = 1 where id in"
                            + " (select id from " + table + " where state = 0 order by id limit ? for update skip locked)"
                            + " returning id")) {
                        ps.setInt(1, BATCH);
                        try (ResultSet r = ps.executeQuery()) {
                            while (r.next()) {
                                ids.add(r.getLong(1));
                            }
                        }
                    }
                }
                case MARIADB -> {
                    c.setAutoCommit(false);
                    try (PreparedStatement ps = c.prepareStatement("select id from " + table
                            + " where state = 0 order by id limit ? for update skip locked")) {
                        ps.setInt(1, BATCH);
                        try (ResultSet r = ps.executeQuery()) {
                            while (r.next()) {
                                ids.add(r.getLong(1));
                            }
                        }
                    }
                    if (!ids.isEmpty()) {
                        StringBuilder in = new StringBuilder();
                        for (long id : ids) {
                            in.append(in.length() == 0 ? "" : ",").append(id);
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
                        try (ResultSet r = ps.executeQuery()) {
                            while (r.next()) {
                                ids.add(r.getLong(1));
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

    private void complete(List<Long> ids) throws SQLException {
        try (Connection c = counting.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("update " + table + " set state = 2 where id = ?")) {
                for (long id : ids) {
                    ps.setLong(1, id);
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
