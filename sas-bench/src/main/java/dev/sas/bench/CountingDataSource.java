package dev.sas.bench;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * Wraps a {@link DataSource} in {@link Proxy} objects that count what reaches the database:
 * statement executions ({@code execute*} and {@code executeBatch} calls, one per call) and commits
 * ({@code Connection.commit()}, a {@code setAutoCommit(true)} that ends a transaction with work in
 * it, and every execution while auto-commit is on). Pool-internal resets (HikariCP rolling back a
 * dirty connection) are not seen. Thread-safe.
 */
public final class CountingDataSource {

    private final DataSource delegate;
    private final DataSource proxy;
    private final LongAdder statements = new LongAdder();
    private final LongAdder batchedRows = new LongAdder();
    private final LongAdder commits = new LongAdder();

    public CountingDataSource(DataSource delegate) {
        this.delegate = delegate;
        this.proxy = (DataSource) Proxy.newProxyInstance(CountingDataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, this::onDataSource);
    }

    /** The counting data source to hand to the system under test. */
    public DataSource dataSource() {
        return proxy;
    }

    /** Snapshot of the counters. */
    public Counts counts() {
        return new Counts(statements.sum(), commits.sum(), batchedRows.sum());
    }

    /** Counter values; subtract two snapshots for a phase. */
    public record Counts(long statements, long commits, long batchedRows) {
        public Counts minus(Counts o) {
            return new Counts(statements - o.statements, commits - o.commits, batchedRows - o.batchedRows);
        }
    }

    private Object onDataSource(Object p, Method m, Object[] args) throws Throwable {
        if (m.getName().equals("getConnection")) {
            Connection c = (Connection) invoke(delegate, m, args);
            return wrap(c);
        }
        if (m.getName().equals("unwrap") || m.getName().equals("isWrapperFor")) {
            return invoke(delegate, m, args);
        }
        return invoke(delegate, m, args);
    }

    private Connection wrap(Connection c) throws java.sql.SQLException {
        ConnState st = new ConnState(c, c.getAutoCommit());
        return (Connection) Proxy.newProxyInstance(CountingDataSource.class.getClassLoader(),
                new Class<?>[] {Connection.class}, st);
    }

    private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private final class ConnState implements InvocationHandler {
        final Connection c;
        volatile boolean autoCommit;
        volatile boolean dirty;

        ConnState(Connection c, boolean autoCommit) {
            this.c = c;
            this.autoCommit = autoCommit;
        }

        @Override
        public Object invoke(Object p, Method m, Object[] args) throws Throwable {
            String n = m.getName();
            switch (n) {
                case "setAutoCommit" -> {
                    boolean on = (Boolean) args[0];
                    Object r = CountingDataSource.invoke(c, m, args);
                    if (on && !autoCommit && dirty) {
                        commits.increment();
                    }
                    if (on != autoCommit) {
                        dirty = false;
                    }
                    autoCommit = on;
                    return r;
                }
                case "commit" -> {
                    Object r = CountingDataSource.invoke(c, m, args);
                    commits.increment();
                    dirty = false;
                    return r;
                }
                case "rollback" -> {
                    Object r = CountingDataSource.invoke(c, m, args);
                    if (args == null || args.length == 0) {
                        dirty = false;
                    }
                    return r;
                }
                case "close" -> {
                    // HikariCP resets auto-commit itself; re-read it from the next borrow
                    return CountingDataSource.invoke(c, m, args);
                }
                default -> {
                }
            }
            Object r = CountingDataSource.invoke(c, m, args);
            if (r instanceof Statement s && (n.equals("createStatement") || n.equals("prepareStatement")
                    || n.equals("prepareCall"))) {
                Class<?> type = s instanceof CallableStatement ? CallableStatement.class
                        : s instanceof PreparedStatement ? PreparedStatement.class : Statement.class;
                return Proxy.newProxyInstance(CountingDataSource.class.getClassLoader(), new Class<?>[] {type},
                        (sp, sm, sargs) -> onStatement(this, sp, s, sm, sargs));
            }
            return r;
        }
    }

    private Object onStatement(ConnState cs, Object sp, Statement s, Method m, Object[] args) throws Throwable {
        String n = m.getName();
        if (n.equals("getConnection")) {
            return invoke(s, m, args);
        }
        Object r = invoke(s, m, args);
        if (n.startsWith("execute")) {
            statements.increment();
            if (n.equals("executeBatch") || n.equals("executeLargeBatch")) {
                batchedRows.add(r instanceof int[] a ? a.length : r instanceof long[] l ? l.length : 0);
            }
            if (cs.autoCommit) {
                commits.increment();
            } else {
                cs.dirty = true;
            }
        }
        return r;
    }
}
