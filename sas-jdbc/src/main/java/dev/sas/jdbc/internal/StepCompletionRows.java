package dev.sas.jdbc.internal;

import static dev.sas.jdbc.internal.Rows.setString;

import dev.sas.core.StateStoreException;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.AwaitWrite;
import dev.sas.core.spi.CompletionTarget;
import dev.sas.core.spi.CompletionWrite;
import dev.sas.core.spi.StepCompletion;
import dev.sas.core.spi.StepCompletionStore;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * Completions of steps that await one: the transition that makes a task await its reply (or applies a
 * reply kept meanwhile), and a reply's fenced application. Each runs in one transaction that first
 * locks the task's row, so a reply and the awaiting transition of the same attempt are serialised,
 * and a reply's checks (duplicate, lease, step, state, deadline) and writes see one state. Plain
 * JDBC on the transaction's connection, sharing the transition writer. Thread-safe.
 */
final class StepCompletionRows implements StepCompletionStore {

    private final StoreContext db;
    private final TransitionWriter writer;
    private final String lockTask;
    private final String findReply;
    private final String insertReply;

    StepCompletionRows(StoreContext db, TransitionWriter writer) {
        this.db = db;
        this.writer = writer;
        this.lockTask = "SELECT workflow, workflow_version, business_key, state, lease, current_step, attempt,"
                + " failure_count, complete_by, cancel_requested, reply_to, locked_by FROM " + db.t().task()
                + " WHERE task_id = ? FOR UPDATE";
        // Read after the task's row lock, which every writer of a task's replies takes first; the
        // store's connections run at READ COMMITTED, so this sees every reply committed before.
        this.findReply = "SELECT outcome, payload, received_at FROM " + db.t().stepReply()
                + " WHERE task_id = ? AND step_index = ? AND lease = ?";
        this.insertReply = "INSERT INTO " + db.t().stepReply()
                + " (task_id, step_index, lease, outcome, payload, received_at) VALUES (?, ?, ?, ?, ?, ?)";
    }

    /**
     * {@inheritDoc}
     *
     * <p>One transaction that locks the task's row first.
     */
    @Override
    public AwaitWrite awaitCompletion(Transition awaiting, Function<StepCompletion, Transition> ifCompleted,
            Instant now) {
        Objects.requireNonNull(awaiting, "awaiting must not be null");
        Objects.requireNonNull(ifCompleted, "ifCompleted must not be null");
        long nowMs = now.toEpochMilli();
        return db.run("awaitCompletion", awaiting.taskId(), () -> db.jdbi().inTransaction(h -> {
            Connection c = h.getConnection();
            try {
                if (lock(c, awaiting.taskId()) == null) {
                    return new AwaitWrite(WriteOutcome.STALE, null, awaiting);
                }
                StepCompletion kept = find(c, awaiting.taskId(), awaiting.fromStep(), awaiting.lease());
                if (kept == null) {
                    return new AwaitWrite(writer.writeIn(c, List.of(awaiting), nowMs).get(0), null, awaiting);
                }
                // The reply came first. Its transition is fenced as the awaiting one would be (same
                // holder, lease, state and step), so it is written instead, in this transaction.
                Transition instead = ifCompleted.apply(kept);
                return new AwaitWrite(writer.writeIn(c, List.of(instead), nowMs).get(0), kept, instead);
            } catch (SQLException e) {
                throw failed("awaitCompletion", e);
            }
        }));
    }

    /**
     * {@inheritDoc}
     *
     * <p>One transaction that locks the task's row first; the completion is kept in the
     * {@code <prefix>step_reply} table until the task is purged.
     */
    @Override
    public CompletionWrite acceptCompletion(StepCompletion reply, Function<CompletionTarget, Transition> decide,
            Instant now) {
        Objects.requireNonNull(reply, "completion must not be null");
        Objects.requireNonNull(decide, "decide must not be null");
        long nowMs = now.toEpochMilli();
        return db.run("acceptCompletion", reply.taskId(), () -> db.jdbi().inTransaction(h -> {
            Connection c = h.getConnection();
            try {
                Row r = lock(c, reply.taskId());
                if (r == null) {
                    return CompletionWrite.of(CompletionWrite.Kind.NOT_FOUND);
                }
                CompletionWrite.Kind refused = reply.refusal(r.target, r.lockedBy != null,
                        find(c, reply.taskId(), reply.step(), reply.lease()) != null, Instant.ofEpochMilli(nowMs));
                if (refused != null) {
                    return CompletionWrite.of(refused);
                }
                if (r.target.status() != TaskStatus.AWAITING_COMPLETION) {
                    insert(c, reply);
                    return CompletionWrite.of(CompletionWrite.Kind.KEPT);
                }
                Transition t = decide.apply(r.target);
                WriteOutcome outcome = writer.writeIn(c, List.of(t), nowMs).get(0);
                if (outcome.kind() == WriteOutcome.Kind.REFUSED) {
                    return CompletionWrite.of(CompletionWrite.Kind.REFUSED);
                }
                if (!outcome.isApplied()) {
                    return CompletionWrite.of(CompletionWrite.Kind.STALE);
                }
                insert(c, reply);
                return new CompletionWrite(CompletionWrite.Kind.APPLIED, t);
            } catch (SQLException e) {
                throw failed("acceptCompletion", e);
            }
        }));
    }

    private record Row(CompletionTarget target, String lockedBy) {
    }

    private Row lock(Connection c, TaskId id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(lockTask)) {
            ps.setString(1, id.value());
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return new Row(new CompletionTarget(id, rs.getString(1), rs.getInt(2), rs.getString(3),
                        TaskStatus.valueOf(rs.getString(4)), rs.getLong(5), rs.getInt(6), rs.getInt(7), rs.getInt(8),
                        RowMapper.instantOrNull(rs, 9), rs.getBoolean(10), rs.getString(11)), rs.getString(12));
            }
        }
    }

    private StepCompletion find(Connection c, TaskId id, int step, long lease) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(findReply)) {
            ps.setString(1, id.value());
            ps.setInt(2, step);
            ps.setLong(3, lease);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return new StepCompletion(id, step, lease, StepCompletion.Kind.valueOf(rs.getString(1)), rs.getString(2),
                        Instant.ofEpochMilli(rs.getLong(3)));
            }
        }
    }

    private void insert(Connection c, StepCompletion reply) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(insertReply)) {
            ps.setString(1, reply.taskId().value());
            ps.setInt(2, reply.step());
            ps.setLong(3, reply.lease());
            ps.setString(4, reply.kind().name());
            setString(ps, 5, reply.payload());
            ps.setLong(6, reply.receivedAt().toEpochMilli());
            ps.executeUpdate();
        }
    }

    private StateStoreException failed(String operation, SQLException e) {
        return new StateStoreException(operation + " failed on " + db.dialect().name() + ": "
                + StoreContext.rootMessage(e), e);
    }
}
