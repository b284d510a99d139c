package dev.sas.jdbc.internal;

import dev.sas.core.CircuitBreaker;
import dev.sas.core.spi.FlowControlStore;
import dev.sas.core.spi.GateChange;
import dev.sas.core.spi.GateState;
import dev.sas.core.spi.GateView;
import dev.sas.core.spi.Permit;
import dev.sas.core.spi.StepKey;
import dev.sas.core.spi.TaskDecisions;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.statement.Query;
import org.jdbi.v3.core.statement.Update;

/**
 * The agent gates and their permits: a gate row locked ({@code SELECT … FOR UPDATE}) for each
 * change, so two changes of one gate never interleave on any database, and permit rows inserted and
 * deleted under that lock. The store only applies what the runtime's decision returns. Jdbi (a few
 * small statements per change). Tables {@code agent_gate} and {@code agent_permit} (schema V7).
 * Thread-safe.
 */
final class Gates implements FlowControlStore {

    /** Tries of a change the database chose as a deadlock victim (it was rolled back, so it is safe to run again). */
    private static final int ATTEMPTS = 3;
    /** Permits renewed per statement. */
    private static final int RENEW_CHUNK = 500;
    private static final String COLUMNS = "gate, breaker_state, breaker_since, open_until, window_start, window_calls,"
            + " window_failures, consecutive_failures, probe_successes, rate_next_us, wait_next_us, held_until,"
            + " avg_hold_ms, last_failure, updated_at";

    private final StoreContext db;

    Gates(StoreContext db) {
        this.db = db;
    }

    /**
     * {@inheritDoc}
     *
     * <p>The gate's row is locked with {@code SELECT … FOR UPDATE} for the change (created first, in
     * a transaction of its own, if it has none); a change the database aborts as a deadlock victim is
     * run again, {@code decide} included.
     *
     * @throws dev.sas.core.StateStoreException if the database fails; then nothing was written
     */
    @Override
    public <T> T changeGate(String gate, Instant now, Function<GateView, GateChange<T>> decide) {
        Objects.requireNonNull(gate, "gate must not be null");
        Objects.requireNonNull(now, "now must not be null");
        Objects.requireNonNull(decide, "decide must not be null");
        return db.run("changeGate " + gate, null, () -> {
            boolean created = false;
            for (int attempt = 1; ; attempt++) {
                boolean existed = !created;
                try {
                    Changed<T> changed = db.jdbi().inTransaction(h -> changeIn(h, gate, now, decide, existed));
                    if (changed != null) {
                        return changed.result;
                    }
                } catch (JdbiException e) {
                    if (attempt >= ATTEMPTS || !Claims.isDeadlock(e)) {
                        throw e;
                    }
                    continue;
                }
                // the gate has no row yet: create it in a transaction of its own (a failed insert
                // would abort a PostgreSQL transaction), then change it as any other
                create(gate, now);
                created = true;
            }
        });
    }

    /** A change's result, or null from {@link #changeIn} when the gate has no row. */
    private record Changed<T>(T result) {
    }

    private <T> Changed<T> changeIn(Handle h, String gate, Instant now, Function<GateView, GateChange<T>> decide,
            boolean existed) {
        String g = db.t().agentGate();
        String p = db.t().agentPermit();
        GateState state = h.createQuery("SELECT " + COLUMNS + " FROM " + g + " WHERE gate = ? FOR UPDATE")
                .bind(0, gate)
                .map((rs, ctx) -> state(rs))
                .findOne().orElse(null);
        if (state == null) {
            return null;
        }
        long nowMs = now.toEpochMilli();
        h.createUpdate("DELETE FROM " + p + " WHERE gate = ? AND expires_at <= ?").bind(0, gate).bind(1, nowMs)
                .execute();
        int[] counts = h.createQuery("SELECT COUNT(*), COALESCE(SUM(CASE WHEN probe THEN 1 ELSE 0 END), 0) FROM " + p
                        + " WHERE gate = ?")
                .bind(0, gate)
                .map((rs, ctx) -> new int[] {rs.getInt(1), rs.getInt(2)})
                .one();
        GateChange<T> change = Objects.requireNonNull(decide.apply(new GateView(gate, state, existed, counts[0],
                counts[1])), "decide must not return null");
        if (change.state() != null) {
            Update u = h.createUpdate("UPDATE " + g + " SET breaker_state = ?, breaker_since = ?, open_until = ?,"
                    + " window_start = ?, window_calls = ?, window_failures = ?, consecutive_failures = ?,"
                    + " probe_successes = ?, rate_next_us = ?, wait_next_us = ?, held_until = ?, avg_hold_ms = ?,"
                    + " last_failure = ?,"
                    + " updated_at = ? WHERE gate = ?");
            int i = bindState(u, 0, change.state());
            u.bind(i, gate).execute();
        }
        if (change.giveBack() != null) {
            h.createUpdate("DELETE FROM " + p + " WHERE permit_id = ?").bind(0, change.giveBack()).execute();
        }
        Permit take = change.take();
        if (take != null) {
            h.createUpdate("INSERT INTO " + p + " (permit_id, gate, holder, probe, acquired_at, expires_at)"
                            + " VALUES (?, ?, ?, ?, ?, ?)")
                    .bind(0, take.id()).bind(1, gate).bind(2, take.holder()).bind(3, take.probe())
                    .bind(4, take.acquiredAt().toEpochMilli()).bind(5, take.expiresAt().toEpochMilli())
                    .execute();
        }
        return new Changed<>(change.result());
    }

    /** Inserts the gate's initial row unless another runtime did first. */
    private void create(String gate, Instant now) {
        try {
            db.jdbi().useHandle(h -> {
                Update u = h.createUpdate("INSERT INTO " + db.t().agentGate() + " (" + COLUMNS + ") VALUES ("
                        + Dialect.placeholders(15) + ")");
                u.bind(0, gate);
                bindState(u, 1, GateState.initial(now));
                u.execute();
            });
        } catch (JdbiException e) {
            if (!db.dialect().isDuplicateKey(e)) {
                throw e;
            }
        }
    }

    /** Binds the 14 state columns from {@code i}; returns the next position. */
    private static int bindState(Update u, int i, GateState s) {
        u.bind(i++, s.breaker().name());
        u.bind(i++, s.breakerSince().toEpochMilli());
        u.bind(i++, s.openUntil().toEpochMilli());
        u.bind(i++, s.windowStart().toEpochMilli());
        u.bind(i++, s.windowCalls());
        u.bind(i++, s.windowFailures());
        u.bind(i++, s.consecutiveFailures());
        u.bind(i++, s.probeSuccesses());
        u.bind(i++, micros(s.rateNext()));
        u.bind(i++, micros(s.waitNext()));
        u.bind(i++, s.heldUntil().toEpochMilli());
        u.bind(i++, s.avgHoldMillis());
        u.bind(i++, s.lastFailure());
        u.bind(i++, s.updatedAt().toEpochMilli());
        return i;
    }

    private static GateState state(ResultSet rs) throws SQLException {
        return new GateState(CircuitBreaker.State.valueOf(rs.getString("breaker_state")),
                Instant.ofEpochMilli(rs.getLong("breaker_since")), Instant.ofEpochMilli(rs.getLong("open_until")),
                Instant.ofEpochMilli(rs.getLong("window_start")), rs.getInt("window_calls"),
                rs.getInt("window_failures"), rs.getInt("consecutive_failures"), rs.getInt("probe_successes"),
                ofMicros(rs.getLong("rate_next_us")), ofMicros(rs.getLong("wait_next_us")),
                Instant.ofEpochMilli(rs.getLong("held_until")), rs.getLong("avg_hold_ms"),
                rs.getString("last_failure"), Instant.ofEpochMilli(rs.getLong("updated_at")));
    }

    static long micros(Instant t) {
        return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1_000);
    }

    static Instant ofMicros(long micros) {
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
    }

    /** @throws dev.sas.core.StateStoreException if the database fails */
    @Override
    public int renewPermits(Collection<String> permitIds, Instant now, Instant expiresAt) {
        Objects.requireNonNull(permitIds, "permitIds must not be null");
        Objects.requireNonNull(now, "now must not be null");
        Objects.requireNonNull(expiresAt, "expiresAt must not be null");
        List<String> ids = List.copyOf(permitIds);
        if (ids.isEmpty()) {
            return 0;
        }
        return db.run("renewPermits", null, () -> db.jdbi().withHandle(h -> {
            int renewed = 0;
            for (int from = 0; from < ids.size(); from += RENEW_CHUNK) {
                List<String> chunk = ids.subList(from, Math.min(ids.size(), from + RENEW_CHUNK));
                Update u = h.createUpdate("UPDATE " + db.t().agentPermit() + " SET expires_at = ? WHERE expires_at > ?"
                        + " AND permit_id IN (" + Dialect.placeholders(chunk.size()) + ")");
                u.bind(0, expiresAt.toEpochMilli()).bind(1, now.toEpochMilli());
                Rows.bindAll(u, 2, chunk);
                renewed += u.execute();
            }
            return renewed;
        }));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Candidates through the claim's index, each decided and written fenced.
     *
     * @throws dev.sas.core.StateStoreException if the database fails
     */
    @Override
    public int wakeWaiting(Set<StepKey> steps, Instant now, int limit) {
        Objects.requireNonNull(steps, "steps must not be null");
        Objects.requireNonNull(now, "now must not be null");
        if (steps.isEmpty() || limit <= 0) {
            return 0;
        }
        List<StepKey> keys = List.copyOf(steps);
        long nowMs = now.toEpochMilli();
        return db.run("wakeWaiting", null, () -> db.jdbi().inTransaction(h -> {
            Query select = h.createQuery(db.dialect().wakeWaitingCandidatesSql(db.t(), keys.size()));
            int i = 0;
            select.bind(i++, nowMs);
            for (StepKey k : keys) {
                select.bind(i++, k.workflow()).bind(i++, k.workflowVersion()).bind(i++, k.step());
            }
            select.bind(i, limit);
            List<TaskChanges.Write> writes = new ArrayList<>();
            for (TaskChanges.Read r : select.map((rs, ctx) -> TaskChanges.read(rs, 1)).list()) {
                TaskDecisions.wake(r.snapshot(), now).ifPresent(c -> writes.add(new TaskChanges.Write(r, c)));
            }
            // a task claimed or moved on meanwhile is left alone (the write is fenced on the row read)
            int woken = 0;
            for (boolean changed : TaskChanges.apply(h, db.t(), writes, nowMs, false)) {
                woken += changed ? 1 : 0;
            }
            return woken;
        }));
    }

    /** @throws dev.sas.core.StateStoreException if the database fails */
    @Override
    public List<GateView> gates(Instant now) {
        Objects.requireNonNull(now, "now must not be null");
        return db.run("gates", null, () -> db.jdbi().withHandle(h -> {
            Map<String, int[]> counts = new HashMap<>();
            h.createQuery("SELECT gate, COUNT(*), COALESCE(SUM(CASE WHEN probe THEN 1 ELSE 0 END), 0) FROM "
                            + db.t().agentPermit() + " WHERE expires_at > ? GROUP BY gate")
                    .bind(0, now.toEpochMilli())
                    .map((rs, ctx) -> counts.put(rs.getString(1), new int[] {rs.getInt(2), rs.getInt(3)}))
                    .forEach(x -> { });
            List<GateView> out = new ArrayList<>();
            h.createQuery("SELECT " + COLUMNS + " FROM " + db.t().agentGate() + " ORDER BY gate")
                    .map((rs, ctx) -> {
                        String gate = rs.getString("gate");
                        int[] c = counts.getOrDefault(gate, new int[2]);
                        return new GateView(gate, state(rs), true, c[0], c[1]);
                    })
                    .forEach(out::add);
            return out;
        }));
    }
}
