package dev.sas.jdbc.internal;

import dev.sas.core.StateStoreException;
import dev.sas.core.spi.DeadlineRenewal;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.jdbi.v3.core.statement.Query;

/**
 * {@code StateStore.renewDeadlines}: one batched, fenced {@code UPDATE} of {@code complete_by} in
 * task-id order, in one transaction; a renewal whose update changed no row is read back, so that a
 * replay of one applied before is answered renewed. The same SQL on every dialect. Thread-safe.
 */
final class DeadlineRenewals {

    private final StoreContext db;
    private final String update;
    private final String readBack;

    DeadlineRenewals(StoreContext db) {
        this.db = db;
        this.update = "UPDATE " + db.t().task() + " SET complete_by = ? WHERE task_id = ? AND lease = ?"
                + " AND locked_by = ? AND current_step = ? AND state = ? AND complete_by >= ?";
        this.readBack = "SELECT task_id, lease, locked_by, current_step, state, complete_by FROM " + db.t().task()
                + " WHERE task_id IN (";
    }

    List<DeadlineRenewal.Outcome> renew(List<DeadlineRenewal> renewals, Instant now) {
        Objects.requireNonNull(renewals, "renewals must not be null");
        Objects.requireNonNull(now, "now must not be null");
        renewals.forEach(r -> Objects.requireNonNull(r, "a renewal must not be null"));
        if (renewals.isEmpty()) {
            return List.of();
        }
        List<Integer> order = new ArrayList<>(renewals.size());
        for (int i = 0; i < renewals.size(); i++) {
            order.add(i);
        }
        order.sort(Comparator.comparing(i -> renewals.get(i).taskId().value()));
        long nowMs = now.toEpochMilli();
        return db.run("renewDeadlines", null, () -> db.jdbi().inTransaction(h -> {
            PreparedBatch batch = h.prepareBatch(update);
            for (int i : order) {
                DeadlineRenewal r = renewals.get(i);
                batch.bind(0, r.completeBy().toEpochMilli()).bind(1, r.taskId().value()).bind(2, r.lease())
                        .bind(3, r.holder()).bind(4, r.step()).bind(5, r.status().name()).bind(6, nowMs).add();
            }
            int[] counts = batch.execute();
            DeadlineRenewal.Outcome[] out = new DeadlineRenewal.Outcome[renewals.size()];
            List<Integer> unchanged = new ArrayList<>();
            for (int k = 0; k < order.size(); k++) {
                if (counts[k] == Statement.SUCCESS_NO_INFO) {
                    throw new StateStoreException("the JDBC driver reported no update counts for a batch;"
                            + " the store needs them to tell which deadlines moved (MariaDB: do not set useBulkStmts=true)");
                }
                if (counts[k] > 0) {
                    out[order.get(k)] = DeadlineRenewal.Outcome.RENEWED;
                } else {
                    unchanged.add(order.get(k));
                }
            }
            if (!unchanged.isEmpty()) {
                Map<String, Object[]> rows = new HashMap<>();
                Query q = h.createQuery(readBack + Dialect.placeholders(unchanged.size()) + ")");
                Rows.bindAll(q, 0, unchanged.stream().map(i -> renewals.get(i).taskId().value()).toList());
                q.map((rs, ctx) -> rows.put(rs.getString(1), new Object[] {rs.getLong(2), rs.getString(3), rs.getInt(4),
                        rs.getString(5), rs.getObject(6) == null ? null : rs.getLong(6)})).forEach(x -> { });
                for (int i : unchanged) {
                    out[i] = applied(renewals.get(i), rows.get(renewals.get(i).taskId().value()))
                            ? DeadlineRenewal.Outcome.RENEWED : DeadlineRenewal.Outcome.STALE;
                }
            }
            return List.of(out);
        }));
    }

    /** A replay: the row is as the renewal left it (same holder, lease, step, state and deadline). */
    private static boolean applied(DeadlineRenewal r, Object[] row) {
        return row != null && ((Long) row[0]) == r.lease() && r.holder().equals(row[1]) && ((Integer) row[2]) == r.step()
                && r.status().name().equals(row[3]) && Long.valueOf(r.completeBy().toEpochMilli()).equals(row[4]);
    }
}
