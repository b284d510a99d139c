package dev.sas.jdbc.internal;

import dev.sas.core.spi.ScheduleSpec;
import dev.sas.core.spi.ScheduleStore;
import dev.sas.core.spi.StoredSchedule;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;

/**
 * The recurring schedules in SQL ({@code <prefix>schedule}, one row per schedule). Statements run
 * one by one outside a transaction: a registration reads the row, inserts it if absent (a duplicate
 * key means another node inserted it first, and the row is read again) or replaces a definition
 * that differs; the last fire time moves by compare-and-set. The active supervisor reads every row
 * once per pass. Jdbi; thread-safe.
 */
final class JdbcSchedules implements ScheduleStore {

    private static final String COLUMNS = "name, workflow, workflow_version, input, priority, first_step,"
            + " first_step_timeout_ms, fire_trigger, cron_zone, missed_fires, paused, last_fire_at, registered_at,"
            + " updated_at";

    private final StoreContext db;

    JdbcSchedules(StoreContext db) {
        this.db = db;
    }

    private String table() {
        return db.t().schedule();
    }

    @Override
    public Registration register(ScheduleSpec spec, Instant now) {
        Objects.requireNonNull(spec, "spec must not be null");
        Objects.requireNonNull(now, "now must not be null");
        long at = now.toEpochMilli();
        return db.run("registering schedule '" + spec.name() + "'", null, () -> db.jdbi().withHandle(h -> {
            Optional<StoredSchedule> existing = read(h, spec.name());
            if (existing.isEmpty()) {
                try {
                    h.createUpdate("INSERT INTO " + table() + " (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                            + " ?, ?, ?, ?)")
                            .bind(0, spec.name()).bind(1, spec.workflow()).bind(2, spec.workflowVersion())
                            .bind(3, spec.input()).bind(4, spec.priority()).bind(5, spec.firstStepName())
                            .bind(6, spec.firstStepTimeout().toMillis()).bind(7, spec.trigger()).bind(8, spec.zone())
                            .bind(9, spec.missedFires()).bind(10, false).bind(11, at).bind(12, at).bind(13, at)
                            .execute();
                    return Registration.CREATED;
                } catch (JdbiException e) {
                    if (!db.dialect().isDuplicateKey(e)) {
                        throw e;
                    }
                    existing = read(h, spec.name()); // another node inserted it first
                }
            }
            if (existing.isEmpty() || existing.get().spec().equals(spec)) {
                return existing.isEmpty() ? Registration.CREATED : Registration.UNCHANGED;
            }
            h.createUpdate("UPDATE " + table() + " SET workflow = ?, workflow_version = ?, input = ?, priority = ?,"
                    + " first_step = ?, first_step_timeout_ms = ?, fire_trigger = ?, cron_zone = ?, missed_fires = ?,"
                    + " updated_at = ? WHERE name = ?")
                    .bind(0, spec.workflow()).bind(1, spec.workflowVersion()).bind(2, spec.input())
                    .bind(3, spec.priority()).bind(4, spec.firstStepName()).bind(5, spec.firstStepTimeout().toMillis())
                    .bind(6, spec.trigger()).bind(7, spec.zone()).bind(8, spec.missedFires()).bind(9, at)
                    .bind(10, spec.name()).execute();
            return Registration.UPDATED;
        }));
    }

    @Override
    public List<StoredSchedule> schedules() {
        return db.run("reading the schedules", null, () -> db.jdbi().withHandle(h -> h.createQuery(
                "SELECT " + COLUMNS + " FROM " + table() + " ORDER BY name").map((rs, ctx) -> row(rs)).list()));
    }

    @Override
    public Optional<StoredSchedule> find(String name) {
        Objects.requireNonNull(name, "name must not be null");
        return db.run("reading schedule '" + name + "'", null, () -> db.jdbi().withHandle(h -> read(h, name)));
    }

    private Optional<StoredSchedule> read(Handle h, String name) {
        return h.createQuery("SELECT " + COLUMNS + " FROM " + table() + " WHERE name = ?").bind(0, name)
                .map((rs, ctx) -> row(rs)).findFirst()
                // a database comparing names ignoring case or trailing spaces must not answer for another name
                .filter(s -> s.name().equals(name));
    }

    @Override
    public boolean advance(String name, Instant expected, Instant to, Instant now) {
        return db.run("moving the last fire time of schedule '" + name + "'", null, () -> db.jdbi().withHandle(h ->
                h.createUpdate("UPDATE " + table() + " SET last_fire_at = ? WHERE name = ? AND last_fire_at = ?")
                        .bind(0, to.toEpochMilli()).bind(1, name).bind(2, expected.toEpochMilli()).execute() > 0));
    }

    @Override
    public boolean setPaused(String name, boolean paused, Instant now) {
        long at = now.toEpochMilli();
        return db.run((paused ? "pausing" : "resuming") + " schedule '" + name + "'", null,
                () -> db.jdbi().withHandle(h -> {
                    int n = paused
                            ? h.createUpdate("UPDATE " + table() + " SET paused = ?, updated_at = ? WHERE name = ?"
                                    + " AND paused = ?").bind(0, true).bind(1, at).bind(2, name).bind(3, false).execute()
                            : h.createUpdate("UPDATE " + table() + " SET paused = ?, last_fire_at = ?, updated_at = ?"
                                    + " WHERE name = ? AND paused = ?").bind(0, false).bind(1, at).bind(2, at)
                                    .bind(3, name).bind(4, true).execute();
                    return n > 0 || read(h, name).isPresent();
                }));
    }

    @Override
    public boolean remove(String name) {
        return db.run("removing schedule '" + name + "'", null, () -> db.jdbi().withHandle(h ->
                h.createUpdate("DELETE FROM " + table() + " WHERE name = ?").bind(0, name).execute() > 0));
    }

    private static StoredSchedule row(ResultSet rs) throws SQLException {
        ScheduleSpec spec = new ScheduleSpec(rs.getString("name"), rs.getString("workflow"),
                rs.getInt("workflow_version"), rs.getString("input"), rs.getInt("priority"), rs.getString("first_step"),
                Duration.ofMillis(rs.getLong("first_step_timeout_ms")), rs.getString("fire_trigger"),
                rs.getString("cron_zone"), rs.getString("missed_fires"));
        return new StoredSchedule(spec, rs.getBoolean("paused"), Instant.ofEpochMilli(rs.getLong("last_fire_at")),
                Instant.ofEpochMilli(rs.getLong("registered_at")), Instant.ofEpochMilli(rs.getLong("updated_at")));
    }

    @Override
    public String toString() {
        return "JdbcSchedules{" + table() + '}';
    }
}
