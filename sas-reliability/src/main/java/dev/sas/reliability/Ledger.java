package dev.sas.reliability;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * The "remote service" the chaos workflow's steps call: a ledger in the same database that
 * applies an effect at most once per idempotency key. Every call bumps {@code calls}; an
 * application (the key's first call) also appends a row to {@code ledger_apply} in the same
 * transaction, so an effect applied twice would show as two application rows for one key, and a
 * runtime that changed the key between attempts would show as two keys for one (task, step, kind).
 */
final class Ledger {
    private final DataSource dataSource;
    private final ChaosDb db;
    private final String prefix;
    private final String worker;
    private final String upsert;

    Ledger(DataSource dataSource, ChaosDb db, String prefix, String worker) {
        this.dataSource = dataSource;
        this.db = db;
        this.prefix = prefix;
        this.worker = worker;
        this.upsert = db.ledgerUpsert(prefix);
    }

    /**
     * One call with an idempotency key.
     *
     * @return true when this call applied the effect, false when the key was already applied
     * @throws SQLException when the database fails; nothing is then applied
     */
    boolean apply(String idempotencyKey, String taskId, String step, String kind) throws SQLException {
        long now = System.currentTimeMillis();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                boolean inserted;
                try (PreparedStatement ps = c.prepareStatement(upsert)) {
                    ps.setString(1, idempotencyKey);
                    ps.setString(2, taskId);
                    ps.setString(3, step);
                    ps.setString(4, kind);
                    ps.setString(5, kind + " " + step + " of " + taskId);
                    ps.setLong(6, now);
                    ps.setLong(7, now);
                    if (db == ChaosDb.POSTGRES) {
                        try (ResultSet rs = ps.executeQuery()) {
                            rs.next();
                            inserted = rs.getBoolean(1);
                        }
                    } else {
                        inserted = ps.executeUpdate() == 1;
                    }
                }
                if (inserted) {
                    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + prefix
                            + "ledger_apply (idem_key, task_id, step, kind, worker, at) VALUES (?, ?, ?, ?, ?, ?)")) {
                        ps.setString(1, idempotencyKey);
                        ps.setString(2, taskId);
                        ps.setString(3, step);
                        ps.setString(4, kind);
                        ps.setString(5, worker);
                        ps.setLong(6, now);
                        ps.executeUpdate();
                    }
                }
                c.commit();
                return inserted;
            } catch (SQLException | RuntimeException e) {
                try {
                    c.rollback();
                } catch (SQLException ignored) {
                    e.addSuppressed(ignored);
                }
                throw e;
            }
        }
    }
}
