package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * Four runtimes with four threads each race over 1,000 two-step tasks on a real database. Each
 * step appends (task, step, lease, instance) to a ledger table in the same database: no task may
 * be left unprocessed, no (task, step) completed twice, and no claim (task, lease) held by two
 * instances.
 */
class MultiInstanceRaceTest {

    /** Enough for every runtime to race the others for claims all along (2,000 proved nothing more). */
    private static final int TASKS = 1_000;
    private static final int RUNTIMES = 4;

    @Test
    void four_runtimes_on_postgres_process_every_task_once() throws Exception {
        race(TestDb.POSTGRES);
    }

    @Test
    void four_runtimes_on_mariadb_process_every_task_once() throws Exception {
        race(TestDb.MARIADB);
    }

    private void race(TestDb db) throws Exception {
        String url = db.url();
        String prefix = TestDb.randomPrefix();
        String ledger = prefix + "ledger";
        List<SasRuntime> runtimes = new ArrayList<>();
        List<Workflow<String>> workflows = new ArrayList<>();
        List<JdbcStateStore> stores = new ArrayList<>();
        HikariConfig pool = new HikariConfig();
        pool.setJdbcUrl(url);
        pool.setMaximumPoolSize(RUNTIMES * 4);
        pool.setPoolName("ledger-" + prefix);
        HikariDataSource ledgerPool = new HikariDataSource(pool);
        Jdbi jdbi = Jdbi.create(ledgerPool);
        jdbi.useHandle(h -> h.execute("CREATE TABLE " + ledger
                + " (task_id VARCHAR(64) NOT NULL, step VARCHAR(20) NOT NULL, lease BIGINT NOT NULL, instance VARCHAR(100) NOT NULL)"));
        try {
            for (int r = 0; r < RUNTIMES; r++) {
                String instance = "node-" + r;
                Workflow<String> wf = Workflow.builder("race", Codec.string())
                        .step("one", s -> s.execute(ctx -> append(jdbi, ledger, ctx.taskId().value(), "one",
                                ctx.lease(), instance)).completeWithin(Duration.ofSeconds(60)))
                        .step("two", s -> s.execute(ctx -> append(jdbi, ledger, ctx.taskId().value(), "two",
                                ctx.lease(), instance)).completeWithin(Duration.ofSeconds(60)))
                        .build();
                workflows.add(wf);
                JdbcStateStore store = TestDb.builder(url, prefix).maxPoolSize(6).build();
                stores.add(store);
                runtimes.add(SasRuntime.builder().stateStore(store).workflow(wf).instanceId(instance).schedulerThreads(4)
                        .claimBatchSize(32).maxInFlight(64).pollInterval(Duration.ofMillis(50)).build().start());
            }
            ExecutorService submitters = Executors.newFixedThreadPool(RUNTIMES);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int r = 0; r < RUNTIMES; r++) {
                SasRuntime sas = runtimes.get(r);
                Workflow<String> wf = workflows.get(r);
                int offset = r;
                futures.add(submitters.submit(() -> {
                    go.await();
                    for (int i = offset; i < TASKS; i += RUNTIMES) {
                        sas.client().submit(wf, "order-" + i, "in-" + i).id();
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS);
            }
            submitters.shutdown();

            SasRuntime any = runtimes.get(0);
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
                    .until(() -> any.client().countByStatus().get(TaskStatus.PROCESSED) == TASKS);

            Map<TaskStatus, Long> counts = any.client().countByStatus();
            assertThat(counts.get(TaskStatus.PROCESSED)).isEqualTo(TASKS);
            long rows = jdbi.withHandle(h -> h.createQuery("SELECT COUNT(*) FROM " + ledger).mapTo(Long.class).one());
            assertThat(rows).as("each step ran exactly once (no faults injected)").isEqualTo(2L * TASKS);
            long doubleSteps = jdbi.withHandle(h -> h.createQuery("SELECT COUNT(*) FROM (SELECT task_id, step FROM "
                    + ledger + " GROUP BY task_id, step HAVING COUNT(*) > 1) d").mapTo(Long.class).one());
            assertThat(doubleSteps).isZero();
            long sharedClaims = jdbi.withHandle(h -> h.createQuery("SELECT COUNT(*) FROM (SELECT task_id, lease FROM "
                    + ledger + " GROUP BY task_id, lease HAVING COUNT(DISTINCT instance) > 1) d").mapTo(Long.class)
                    .one());
            assertThat(sharedClaims).as("no claim held by two instances").isZero();
            long completedTwice = jdbi.withHandle(h -> h.createQuery("SELECT COUNT(*) FROM (SELECT task_id, step_index FROM "
                    + prefix + "event WHERE type = 'STEP_COMPLETED' GROUP BY task_id, step_index HAVING COUNT(*) > 1) d")
                    .mapTo(Long.class).one());
            assertThat(completedTwice).isZero();
            long instancesUsed = jdbi.withHandle(h -> h.createQuery("SELECT COUNT(DISTINCT instance) FROM " + ledger)
                    .mapTo(Long.class).one());
            assertThat(instancesUsed).as("the work was shared").isGreaterThan(1);
            long stale = runtimes.stream().mapToLong(s -> s.metrics().staleRejected()).sum();
            assertThat(stale).isZero();
        } finally {
            for (SasRuntime s : runtimes) {
                s.close();
            }
            for (JdbcStateStore s : stores) {
                s.close();
            }
            jdbi.useHandle(h -> h.execute("DROP TABLE " + ledger));
            ledgerPool.close();
            db.drop(url, prefix);
        }
    }

    private static String append(Jdbi jdbi, String ledger, String taskId, String step, long lease, String instance) {
        jdbi.useHandle(h -> h.createUpdate("INSERT INTO " + ledger + " (task_id, step, lease, instance) VALUES (?, ?, ?, ?)")
                .bind(0, taskId).bind(1, step).bind(2, lease).bind(3, instance).execute());
        return step;
    }
}
