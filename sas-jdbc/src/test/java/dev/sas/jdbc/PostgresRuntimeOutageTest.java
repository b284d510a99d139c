package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A running runtime loses every database connection again and again (pg_terminate_backend on its
 * pool): it logs, backs off and goes on; every task ends PROCESSED and every step is recorded once.
 */
class PostgresRuntimeOutageTest {

    @Test
    void runtime_survives_repeated_connection_kills_and_finishes_every_task_once() throws Exception {
        String url = TestDb.POSTGRES.url();
        String prefix = TestDb.randomPrefix();
        String poolName = "sas-outage-" + TestDb.randomLetters(6);
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        Workflow<String> wf = Workflow.builder("outage", Codec.string())
                .step("one", s -> s.execute(ctx -> count(runs, ctx.taskId() + "/one")).completeWithin(Duration.ofSeconds(2)))
                .step("two", s -> s.execute(ctx -> count(runs, ctx.taskId() + "/two")).completeWithin(Duration.ofSeconds(2)))
                .build();
        int tasks = 600;
        int kills = 0;
        try (JdbcStateStore store = JdbcStateStore.builder().url(url).tablePrefix(prefix).poolName(poolName)
                .maxPoolSize(4).build();
             SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).pollInterval(Duration.ofMillis(50))
                     .supervisorInterval(Duration.ofMillis(200)).build().start()) {
            for (int i = 0; i < tasks; i++) {
                submitWithRetry(sas, wf, "k" + i);
                if (i % 150 == 75) {
                    kills += kill(url, poolName);
                }
            }
            kills += kill(url, poolName);
            // Reads may meet a killed pooled connection too: ride them out like the runtime does.
            Map<TaskStatus, Long> counts = await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200))
                    .ignoreExceptionsInstanceOf(dev.sas.core.StateStoreException.class)
                    .until(sas.client()::countByStatus, c -> c.get(TaskStatus.PROCESSED) == tasks);

            assertThat(kills).as("connections were really killed").isPositive();
            assertThat(counts.get(TaskStatus.PROCESSED)).isEqualTo(tasks);
            try (Connection c = DriverManager.getConnection(url);
                    PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM (SELECT task_id, step_index FROM "
                            + prefix + "event WHERE type = 'STEP_COMPLETED' GROUP BY task_id, step_index"
                            + " HAVING COUNT(*) > 1) d");
                    ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getLong(1)).as("(task, step) pairs recorded as completed twice").isZero();
            }
        } finally {
            TestDb.POSTGRES.drop(url, prefix);
        }
        assertThat(runs).hasSize(2 * tasks);
    }

    private static String count(Map<String, AtomicInteger> runs, String key) {
        runs.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
        return "ok";
    }

    /** A host retries a submit that failed because its connection was killed; duplicates are absorbed by the key. */
    private static void submitWithRetry(SasRuntime sas, Workflow<String> wf, String key) {
        for (int attempt = 1; ; attempt++) {
            try {
                sas.client().submit(wf, key, "x").id();
                return;
            } catch (dev.sas.core.StateStoreException e) {
                if (attempt >= 5) {
                    throw e;
                }
            }
        }
    }

    private static int kill(String url, String poolName) throws Exception {
        return TestDb.killPostgresConnections(url, poolName);
    }
}
