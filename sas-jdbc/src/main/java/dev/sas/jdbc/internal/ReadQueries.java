package dev.sas.jdbc.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** Status and history reads for clients and operators. Jdbi (reads only). Thread-safe. */
final class ReadQueries {

    private final StoreContext db;

    ReadQueries(StoreContext db) {
        this.db = db;
    }

    /** See {@code StateStore.find}. */
    Optional<TaskInfo> find(TaskId taskId) {
        return db.run("find", taskId, () -> db.jdbi().withHandle(h -> {
            Optional<TaskInfo> task = h.createQuery("SELECT " + RowMapper.TASK_COLUMNS + " FROM " + db.t().task()
                            + " WHERE task_id = ?")
                    .bind(0, taskId.value())
                    .map((rs, ctx) -> RowMapper.taskInfo(rs, List.of()))
                    .findOne();
            if (task.isEmpty()) {
                return task;
            }
            List<TaskInfo.StepInfo> steps = h.createQuery("SELECT " + RowMapper.STEP_COLUMNS + " FROM "
                            + db.t().step() + " WHERE task_id = ? ORDER BY step_index")
                    .bind(0, taskId.value())
                    .map((rs, ctx) -> RowMapper.stepInfo(rs))
                    .list();
            return Optional.of(RowMapper.withSteps(task.get(), steps));
        }));
    }

    /**
     * See {@code StateStore.findByBusinessKey}. The key is compared exactly: MariaDB and MySQL
     * compare {@code VARCHAR}s ignoring trailing spaces ({@code PAD SPACE}), so the row the index
     * finds is returned only if its key is the very one asked for.
     */
    Optional<TaskId> findByBusinessKey(String workflow, String businessKey) {
        return db.run("findByBusinessKey '" + businessKey + "'", null, () -> db.jdbi().withHandle(h -> h.createQuery(
                        "SELECT task_id, business_key FROM " + db.t().task() + " WHERE workflow = ? AND business_key = ?")
                .bind(0, workflow).bind(1, businessKey)
                .map((rs, ctx) -> businessKey.equals(rs.getString(2)) ? TaskId.of(rs.getString(1)) : null)
                .stream().filter(java.util.Objects::nonNull).findFirst()));
    }

    /** See {@code StateStore.list}: filters and a keyset cursor on (created_at, task_id). */
    List<TaskInfo> list(TaskQuery query) {
        StringBuilder sql = new StringBuilder("SELECT " + RowMapper.TASK_COLUMNS + " FROM " + db.t().task()
                + " WHERE 1 = 1");
        List<Object> args = new ArrayList<>();
        if (query.status() != null) {
            sql.append(" AND state = ?");
            args.add(query.status().name());
        }
        if (query.workflow() != null) {
            sql.append(" AND workflow = ?");
            args.add(query.workflow());
        }
        if (query.afterCreatedAt() != null) {
            long after = query.afterCreatedAt().toEpochMilli();
            sql.append(" AND (created_at > ? OR (created_at = ? AND task_id > ?))");
            args.add(after);
            args.add(after);
            args.add(query.afterTaskId().value());
        }
        sql.append(" ORDER BY created_at, task_id LIMIT ?");
        args.add(query.limit());
        return db.run("list " + query, null, () -> db.jdbi().withHandle(h -> {
            var q = h.createQuery(sql.toString());
            for (int i = 0; i < args.size(); i++) {
                q.bind(i, args.get(i));
            }
            return q.map((rs, ctx) -> RowMapper.taskInfo(rs, List.of())).list();
        }));
    }

    /** See {@code StateStore.countByStatus}. */
    Map<TaskStatus, Long> countByStatus() {
        return db.run("countByStatus", null, () -> db.jdbi().withHandle(h -> {
            Map<TaskStatus, Long> counts = new EnumMap<>(TaskStatus.class);
            h.createQuery("SELECT state, COUNT(*) FROM " + db.t().task() + " GROUP BY state")
                    .map((rs, ctx) -> counts.put(TaskStatus.valueOf(rs.getString(1)), rs.getLong(2)))
                    .forEach(x -> { });
            return counts;
        }));
    }

    /** See {@code StateStore.countByWorkflow}: one grouped query. */
    Map<String, Map<TaskStatus, Long>> countByWorkflow() {
        return db.run("countByWorkflow", null, () -> db.jdbi().withHandle(h -> {
            Map<String, Map<TaskStatus, Long>> counts = new TreeMap<>();
            h.createQuery("SELECT workflow, state, COUNT(*) FROM " + db.t().task() + " GROUP BY workflow, state")
                    .map((rs, ctx) -> counts.computeIfAbsent(rs.getString(1), w -> new EnumMap<>(TaskStatus.class))
                            .put(TaskStatus.valueOf(rs.getString(2)), rs.getLong(3)))
                    .forEach(x -> { });
            return counts;
        }));
    }

    /** See {@code StateStore.events}. */
    List<TaskEvent> events(TaskId taskId) {
        return db.run("events", taskId, () -> db.jdbi().withHandle(h -> h.createQuery(
                        "SELECT " + EventRows.COLUMNS + " FROM " + db.t().task() + " t LEFT JOIN " + db.t().event()
                                + " e ON e.task_id = t.task_id WHERE t.task_id = ? ORDER BY e.id")
                .bind(0, taskId.value())
                .scanResultSet((supplier, ctx) -> EventRows.read(taskId, supplier.get()))));
    }
}
