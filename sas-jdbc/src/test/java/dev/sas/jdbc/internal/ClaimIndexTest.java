package dev.sas.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.WorkflowVersion;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * Every claim is served by an index in its order: on MariaDB and H2 the claim reads one state at a
 * time through {@code (state, priority DESC, next_attempt_at)} and never sorts the due rows, so
 * its cost does not grow with the due backlog (5,000 due here, all at one priority but one); on
 * PostgreSQL the partial claim index, which holds PENDING, COMPENSATING and WAITING rows, does the same.
 */
class ClaimIndexTest {

    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private static final int DUE = 5_000;

    private static String prefix() {
        StringBuilder sb = new StringBuilder("ci");
        for (int i = 0; i < 8; i++) {
            sb.append((char) ('a' + ThreadLocalRandom.current().nextInt(26)));
        }
        return sb.append('_').toString();
    }

    /** Applies the schema, submits {@link #DUE} due tasks, runs {@code check} and drops the tables. */
    private static void withBacklog(String url, java.util.function.BiConsumer<Handle, Tables> check) throws Exception {
        Jdbi jdbi = Jdbi.create(url).installPlugin(JdbcStore.PLUGIN);
        String product = jdbi.withHandle(h -> h.getConnection().getMetaData().getDatabaseProductName());
        Dialect dialect = Dialects.detect(product);
        Tables tables = new Tables(prefix());
        try (Handle keep = jdbi.open()) { // keeps an in-memory H2 alive
            new SchemaManager(jdbi, dialect, tables).apply();
            try {
                JdbcStore store = new JdbcStore(jdbi, dialect, tables);
                for (int batch = 0; batch < DUE / 1_000; batch++) {
                    List<NewTask> tasks = new ArrayList<>();
                    List<TaskEvent> events = new ArrayList<>();
                    for (int i = 0; i < 1_000; i++) {
                        int n = batch * 1_000 + i;
                        TaskId id = TaskId.random();
                        Instant due = T0.plusMillis(n);
                        tasks.add(new NewTask(id, "wf", 1, "k-" + n, n == 4_321 ? 5 : 0, "in", null, "only",
                                Duration.ofSeconds(30), due, due));
                        events.add(new TaskEvent(id, "k-" + n, "wf", TaskEvent.Type.RECEIVED, -1, null, 0, due, null));
                    }
                    store.submitAll(tasks, events, null);
                }
                dialect.afterSchemaApplied(keep, tables);
                check.accept(keep, tables);
                // and the claim itself takes the highest priority first, then the longest due
                var claimed = store.claim("node", 3, T0.plusSeconds(3_600), Set.of(new WorkflowVersion("wf", 1)));
                assertThat(claimed).extracting(c -> c.businessKey()).containsExactly("k-4321", "k-0", "k-1");
            } finally {
                new SchemaManager(jdbi, dialect, tables).dropAll(keep);
            }
        }
    }

    @Test
    void mariadb_claim_reads_the_index_in_order_without_a_filesort() throws Exception {
        String url = System.getenv("SAS_TEST_MARIADB_URL");
        assumeTrue(url != null && !url.isBlank(), "SAS_TEST_MARIADB_URL not set: skipping the MariaDB claim index test");
        withBacklog(url, (h, t) -> {
            h.execute("ANALYZE TABLE " + t.task());
            List<Map<String, Object>> plan = h.createQuery("EXPLAIN " + MariaDbDialect.claimSelectSql(t, 1))
                    .bind(0, "PENDING").bind(1, T0.plusSeconds(3_600).toEpochMilli()).bind(2, "wf").bind(3, 1)
                    .bind(4, 64).mapToMap().list();
            assertThat(plan).hasSize(1);
            Map<String, Object> row = plan.get(0);
            assertThat(String.valueOf(row.get("key"))).isEqualTo(t.prefix() + "task_claim_order_idx");
            assertThat(String.valueOf(row.get("extra"))).doesNotContainIgnoringCase("filesort");
            assertThat(taskIndexes(h, t)).as("V15 dropped the parked index every state change rewrote")
                    .contains(t.prefix() + "task_claim_order_idx").doesNotContain(t.prefix() + "task_parked_idx");
        });
    }

    @Test
    void postgres_claim_reads_the_partial_claim_index_that_holds_waiting_tasks_without_a_sort() throws Exception {
        String url = System.getenv("SAS_TEST_POSTGRES_URL");
        assumeTrue(url != null && !url.isBlank(), "SAS_TEST_POSTGRES_URL not set: skipping the PostgreSQL claim index test");
        withBacklog(url, (h, t) -> {
            String plan = String.join("\n", h.createQuery("EXPLAIN " + PostgresDialect.claimSql(t, 1))
                    .bind(0, T0.plusSeconds(3_600).toEpochMilli()).bind(1, "wf").bind(2, 1).bind(3, 64)
                    .bind(4, "node").bind(5, 0L).bind(6, 0L).bind(7, 0L).bind(8, 0L).mapTo(String.class).list());
            String candidates = plan.substring(0, plan.indexOf("CTE u"));
            assertThat(candidates).as("the due rows come from the index in claim order: no sort")
                    .contains("Index Scan using " + t.prefix() + "task_claim_wait_idx").doesNotContain("Sort");
        });
    }

    @Test
    void h2_claim_reads_the_index_in_order() throws Exception {
        withBacklog("jdbc:h2:mem:claimidx-" + prefix(), (h, t) -> {
            String plan = h.createQuery("EXPLAIN " + H2Dialect.claimCandidatesSql(t, 1))
                    .bind(0, "PENDING").bind(1, T0.plusSeconds(3_600).toEpochMilli()).bind(2, "wf").bind(3, 1)
                    .bind(4, 64).mapTo(String.class).one();
            assertThat(plan).containsIgnoringCase(t.prefix() + "task_claim_order_idx").contains("index sorted");
            assertThat(taskIndexes(h, t)).as("V15 dropped the parked index every state change rewrote")
                    .contains((t.prefix() + "task_claim_order_idx").toUpperCase(java.util.Locale.ROOT))
                    .doesNotContain((t.prefix() + "task_parked_idx").toUpperCase(java.util.Locale.ROOT));
        });
    }

    /** The names of the task table's indexes, as the driver reports them. */
    private static Set<String> taskIndexes(Handle h, Tables t) {
        try {
            java.sql.Connection c = h.getConnection();
            String table = t.task();
            Set<String> names = new java.util.HashSet<>();
            for (String name : List.of(table, table.toUpperCase(java.util.Locale.ROOT))) {
                try (java.sql.ResultSet rs = c.getMetaData().getIndexInfo(c.getCatalog(), null, name, false, false)) {
                    while (rs.next()) {
                        if (rs.getString("INDEX_NAME") != null) {
                            names.add(rs.getString("INDEX_NAME"));
                        }
                    }
                }
            }
            return names;
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
