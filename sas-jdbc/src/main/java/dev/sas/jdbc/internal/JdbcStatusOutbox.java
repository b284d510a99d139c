package dev.sas.jdbc.internal;

import dev.sas.core.StatusUpdate;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.spi.StatusOutbox;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;

/**
 * The status outbox in SQL: the channel registry with each channel's consumer lease and
 * position ({@code reply_channel}), and the messages not yet delivered ({@code reply_outbox}, written
 * by {@link Rows#insertEvents} with every event of a task that has a status channel). Delivered
 * messages are deleted by id, never by range, so a message whose transaction committed after a
 * higher-numbered one is still read later. Jdbi; the pumps call it a few times a second. Thread-safe.
 */
final class JdbcStatusOutbox implements StatusOutbox {

    private final StoreContext db;

    JdbcStatusOutbox(StoreContext db) {
        this.db = db;
    }

    @Override
    public void register(String channel, Instant now) {
        Objects.requireNonNull(channel, "channel must not be null");
        db.run("registering status channel '" + channel + "'", null, () -> db.jdbi().withHandle(h -> {
            ensureRow(h, channel, now.toEpochMilli());
            return null;
        }));
    }

    /** Inserts the channel's row unless it exists; a concurrent insert by another node is fine. */
    private void ensureRow(Handle h, String channel, long nowMs) {
        boolean exists = h.createQuery("SELECT COUNT(*) FROM " + db.t().replyChannel() + " WHERE channel = ?")
                .bind(0, channel).mapTo(Long.class).one() > 0;
        if (exists) {
            return;
        }
        try {
            h.createUpdate("INSERT INTO " + db.t().replyChannel() + " (channel, holder, expires_at, last_delivery_id,"
                    + " delivered, registered_at) VALUES (?, NULL, 0, 0, 0, ?)")
                    .bind(0, channel).bind(1, nowMs).execute();
        } catch (JdbiException e) {
            if (!db.dialect().isDuplicateKey(e)) {
                throw e;
            }
        }
    }

    @Override
    public Set<String> channels() {
        return db.run("reading the status channels", null, () -> db.jdbi().withHandle(h -> new HashSet<>(h.createQuery(
                "SELECT channel FROM " + db.t().replyChannel()).mapTo(String.class).list())));
    }

    @Override
    public boolean tryAcquire(String channel, String consumerId, Instant now, Duration ttl) {
        Objects.requireNonNull(consumerId, "consumerId must not be null");
        long nowMs = now.toEpochMilli();
        return db.run("taking status channel '" + channel + "'", null, () -> db.jdbi().withHandle(h -> {
            String sql = "UPDATE " + db.t().replyChannel() + " SET holder = ?, expires_at = ? WHERE channel = ?"
                    + " AND (holder IS NULL OR holder = ? OR expires_at < ?)";
            int n = h.createUpdate(sql).bind(0, consumerId).bind(1, nowMs + ttl.toMillis()).bind(2, channel)
                    .bind(3, consumerId).bind(4, nowMs).execute();
            if (n == 0) {
                ensureRow(h, channel, nowMs);
                n = h.createUpdate(sql).bind(0, consumerId).bind(1, nowMs + ttl.toMillis()).bind(2, channel)
                        .bind(3, consumerId).bind(4, nowMs).execute();
            }
            return n > 0;
        }));
    }

    @Override
    public void release(String channel, String consumerId) {
        db.run("releasing status channel '" + channel + "'", null, () -> db.jdbi().withHandle(h -> h.createUpdate(
                "UPDATE " + db.t().replyChannel() + " SET holder = NULL, expires_at = 0 WHERE channel = ? AND holder = ?")
                .bind(0, channel).bind(1, consumerId).execute()));
    }

    @Override
    public List<StatusUpdate> pending(String channel, int limit) {
        if (limit <= 0) {
            return List.of();
        }
        return db.run("reading status channel '" + channel + "'", null, () -> db.jdbi().withHandle(h -> h.createQuery(
                "SELECT id, task_id, business_key, workflow, type, step_index, step_name, attempt, at, message FROM "
                        + db.t().statusOutbox() + " WHERE channel = ? ORDER BY id LIMIT ?")
                .bind(0, channel).bind(1, limit)
                .map((rs, ctx) -> new StatusUpdate(channel, rs.getLong(1), new TaskEvent(TaskId.of(rs.getString(2)),
                        rs.getString(3), rs.getString(4), TaskEvent.Type.valueOf(rs.getString(5)), rs.getInt(6),
                        rs.getString(7), rs.getInt(8), Instant.ofEpochMilli(rs.getLong(9)), rs.getString(10))))
                .list()));
    }

    @Override
    public boolean acknowledge(String channel, String consumerId, List<Long> deliveryIds, Instant now) {
        long nowMs = now.toEpochMilli();
        long last = deliveryIds.stream().mapToLong(Long::longValue).max().orElse(0);
        return db.run("acknowledging " + deliveryIds.size() + " message(s) of status channel '" + channel + "'", null,
                () -> db.jdbi().inTransaction(h -> {
                    for (int from = 0; from < deliveryIds.size(); from += Rows.ROWS_PER_STATEMENT) {
                        List<Long> chunk = deliveryIds.subList(from, Math.min(deliveryIds.size(),
                                from + Rows.ROWS_PER_STATEMENT));
                        var delete = h.createUpdate("DELETE FROM " + db.t().statusOutbox() + " WHERE channel = ? AND id IN ("
                                + Dialect.placeholders(chunk.size()) + ")").bind(0, channel);
                        for (int i = 0; i < chunk.size(); i++) {
                            delete.bind(i + 1, chunk.get(i));
                        }
                        delete.execute();
                    }
                    return h.createUpdate("UPDATE " + db.t().replyChannel() + " SET last_delivery_id = CASE WHEN"
                                    + " last_delivery_id < ? THEN ? ELSE last_delivery_id END, delivered = delivered + ?,"
                                    + " acknowledged_at = ? WHERE channel = ? AND holder = ? AND expires_at >= ?")
                            .bind(0, last).bind(1, last).bind(2, deliveryIds.size()).bind(3, nowMs).bind(4, channel)
                            .bind(5, consumerId).bind(6, nowMs).execute() > 0;
                }));
    }
}
