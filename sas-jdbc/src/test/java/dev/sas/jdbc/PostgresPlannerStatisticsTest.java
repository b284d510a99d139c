package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.spi.NewTask;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A plan PostgreSQL cached while the task table was tiny (a sequential scan) is planned again once
 * the store has filled the table: the store refreshes the planner's statistics itself, instead of
 * leaving every lookup by key on that connection to scan the whole table until autovacuum gets to
 * it (switched off for this table here, so only the store can make the plan change).
 */
class PostgresPlannerStatisticsTest {

    private String url;
    private String prefix;
    private JdbcStateStore store;

    @BeforeEach
    void open() {
        url = TestDb.POSTGRES.url();
        prefix = TestDb.randomPrefix();
        store = TestDb.builder(url, prefix).poolName("planner-" + prefix).build();
    }

    @AfterEach
    void drop() {
        if (store == null) {
            return; // skipped: no PostgreSQL URL
        }
        store.close();
        TestDb.POSTGRES.drop(url, prefix);
    }

    @Test
    void a_generic_plan_cached_on_a_tiny_table_uses_the_index_once_the_store_has_filled_it() throws SQLException {
        String task = prefix + "task";
        List<NewTask> first = tasks(1);
        store.submitAll(first, received(first), null);
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("ALTER TABLE " + task + " SET (autovacuum_enabled = false)");
            s.execute("ANALYZE " + task);
            s.execute("SET plan_cache_mode = force_generic_plan");
            s.execute("PREPARE by_key(text) AS SELECT state FROM " + task + " WHERE task_id = $1");
            assertThat(plan(s)).as("the generic plan on a one-row table").contains("Seq Scan");

            List<NewTask> many = tasks(2_000);
            store.submitAll(many, received(many), null);

            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(plan(s)).as("the same prepared statement's plan").doesNotContain("Seq Scan")
                            .contains(prefix + "task_pkey"));
        }
    }

    private static String plan(Statement s) throws SQLException {
        StringBuilder plan = new StringBuilder();
        try (ResultSet rs = s.executeQuery("EXPLAIN EXECUTE by_key('x')")) {
            while (rs.next()) {
                plan.append(rs.getString(1)).append('\n');
            }
        }
        return plan.toString();
    }

    private static List<NewTask> tasks(int n) {
        Instant now = Instant.now();
        List<NewTask> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(Tasks.newTask(TaskId.random(), "k" + i + "-" + TaskId.random(), "in", now));
        }
        return out;
    }

    private static List<TaskEvent> received(List<NewTask> tasks) {
        return tasks.stream().map(t -> Tasks.received(t.taskId(), t.businessKey(), t.createdAt())).toList();
    }
}
