package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.Codec;
import dev.sas.core.CompletionOutcome;
import dev.sas.core.CompletionTokenKeys;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.Transition;
import dev.sas.testing.Drain;
import dev.sas.testing.ManualClock;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Upgrading a database of schema V16, whose task awaits its step's completion under the names the
 * builds before 0.3 stored (state {@code AWAITING_REPLY}, holder {@code sas:awaiting-reply}, events
 * {@code REPLY_AWAITED} / {@code REPLY_RECEIVED}, also packed into {@code then_type}, and an
 * undelivered status message): SAS's migrator applies V17 only, the task reads as
 * {@code AWAITING_COMPLETION}, its history with the new event names, and the token its request sent
 * still completes the step. A store that does not create its schema refuses to start before V17.
 *
 * <p>The V16 rows are those an older build writes: this build writes the task on the V16 schema
 * (nothing but names changed since), then raw SQL gives every stored name its pre-0.3 value.
 */
class AwaitingCompletionUpgradeTest {

    private static final CompletionTokenKeys KEYS = CompletionTokenKeys.builder()
            .currentKey("k1", "upgrade test key, 32 bytes or more".getBytes(StandardCharsets.UTF_8)).build();

    private static final AtomicReference<String> TOKEN = new AtomicReference<>();

    private static final Workflow<String> APPROVAL = Workflow.builder("upgrade-approval", Codec.string())
            .step("approve", s -> s.awaitCompletion((ctx, token) -> TOKEN.set(token)).completeWithin(Duration.ofDays(7)))
            .step("ship", s -> s.execute(ctx -> "shipped after " + ctx.output("approve").orElseThrow()))
            .build();

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"H2_MEMORY", "POSTGRES", "MARIADB"})
    void a_task_awaiting_a_reply_at_v16_reads_as_awaiting_completion_after_v17_and_completes_by_its_token(TestDb db)
            throws Exception {
        String url = db.url();
        String prefix = TestDb.randomPrefix();
        ManualClock clock = new ManualClock(Instant.parse("2030-03-01T09:00:00Z"));
        try (HikariDataSource ds = pool(url)) {
            TaskId id = awaitingTaskAtV16(ds, prefix, clock);
            recordSasVersionsThrough16(ds, prefix);

            try (JdbcStateStore store = JdbcStateStore.builder().dataSource(ds).tablePrefix(prefix).build();
                    SasRuntime sas = runtime(store, clock)) {
                assertThat(query(ds, "SELECT version FROM " + prefix + "schema_version WHERE version > 15 ORDER BY version"))
                        .containsExactly("16", "17");
                TaskInfo info = sas.client().find(id).orElseThrow();
                assertThat(info.status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);
                assertThat(info.lockedBy()).isEqualTo(Transition.AWAITING_COMPLETION_HOLDER);
                assertThat(sas.client().events(id)).extracting(TaskEvent::type)
                        .contains(TaskEvent.Type.COMPLETION_AWAITED, TaskEvent.Type.COMPLETION_RECEIVED);
                assertThat(query(ds, "SELECT type FROM " + prefix + "reply_outbox"))
                        .containsExactly("COMPLETION_AWAITED");
                assertThat(sas.client().countByStatus()).containsEntry(TaskStatus.AWAITING_COMPLETION, 1L);

                clock.tick(Duration.ofDays(1));
                assertThat(sas.client().stepCompletion().complete(TOKEN.get(), "approved by ann"))
                        .isEqualTo(CompletionOutcome.COMPLETED);
                Drain.untilIdle(sas);

                TaskInfo done = sas.client().find(id).orElseThrow();
                assertThat(done.status()).isEqualTo(TaskStatus.PROCESSED);
                assertThat(done.step("ship").output()).isEqualTo("shipped after approved by ann");
            }
            assertThat(query(ds, "SELECT type FROM " + prefix + "event WHERE type LIKE 'REPLY%'"
                    + " OR then_type LIKE 'REPLY%' OR before_type LIKE 'REPLY%'")).isEmpty();
        } finally {
            dropAll(db, url, prefix);
        }
    }

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"H2_MEMORY", "POSTGRES", "MARIADB"})
    void a_store_that_does_not_create_its_schema_refuses_pre_v17_values_and_starts_once_flyway_applied_v17(TestDb db)
            throws Exception {
        String url = db.url();
        String prefix = TestDb.randomPrefix();
        ManualClock clock = new ManualClock(Instant.parse("2030-03-01T09:00:00Z"));
        try (HikariDataSource ds = pool(url)) {
            TaskId id = awaitingTaskAtV16(ds, prefix, clock);

            assertThatThrownBy(() -> JdbcStateStore.builder().dataSource(ds).tablePrefix(prefix).createSchema(false).build())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("AWAITING_REPLY")
                    .hasMessageContaining("V17__awaiting_completion.sql");

            assertThat(flyway(ds, db, prefix, "17").migrate().migrationsExecuted).isEqualTo(1);
            try (JdbcStateStore store = JdbcStateStore.builder().dataSource(ds).tablePrefix(prefix).createSchema(false)
                    .build(); SasRuntime sas = runtime(store, clock)) {
                assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);
                assertThat(sas.client().stepCompletion().complete(TOKEN.get(), "approved"))
                        .isEqualTo(CompletionOutcome.COMPLETED);
            }
        } finally {
            dropAll(db, url, prefix);
        }
    }

    /**
     * Schema V16 (through Flyway, as an application managing SAS's scripts would), a task whose
     * step awaits its completion, and the names a pre-0.3 build stores for it.
     */
    private static TaskId awaitingTaskAtV16(HikariDataSource ds, String prefix, ManualClock clock) throws SQLException {
        assertThat(flyway(ds, dbOf(ds), prefix, "16").migrate().migrationsExecuted).isEqualTo(16);
        TaskId id;
        try (JdbcStateStore store = JdbcStateStore.builder().dataSource(ds).tablePrefix(prefix).createSchema(false)
                .build(); SasRuntime sas = runtime(store, clock)) {
            id = sas.client().submit(APPROVAL, "order-1", "a car").id();
            Drain.untilIdle(sas);
            assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);
        }
        String t = id.value();
        assertThat(update(ds, "UPDATE " + prefix + "task SET state = 'AWAITING_REPLY', locked_by = 'sas:awaiting-reply'"
                + " WHERE task_id = '" + t + "'")).isEqualTo(1);
        assertThat(update(ds, "UPDATE " + prefix + "event SET type = 'REPLY_AWAITED' WHERE task_id = '" + t
                + "' AND type = 'COMPLETION_AWAITED'") + update(ds, "UPDATE " + prefix + "event SET then_type ="
                + " 'REPLY_AWAITED' WHERE task_id = '" + t + "' AND then_type = 'COMPLETION_AWAITED'"))
                .as("the awaited event, in a row of its own or packed").isEqualTo(1);
        // a reply an earlier attempt received (failed), packed after its start, and a status message not yet delivered
        update(ds, "INSERT INTO " + prefix + "event (task_id, type, step_index, step_name, attempt, at, message,"
                + " then_type, then_step_index, then_step_name, then_attempt) VALUES ('" + t + "', 'STEP_STARTED', 0,"
                + " 'approve', 0, 1, NULL, 'REPLY_RECEIVED', 0, 'approve', 0)");
        update(ds, "INSERT INTO " + prefix + "reply_outbox (channel, task_id, business_key, workflow, type, step_index,"
                + " step_name, attempt, at, message) VALUES ('orders', '" + t + "', 'order-1', 'upgrade-approval',"
                + " 'REPLY_AWAITED', 0, 'approve', 1, 1, NULL)");
        return id;
    }

    /** What SAS's own migrator records after applying V1 to V16 (the task table exists: Flyway made it). */
    private static void recordSasVersionsThrough16(HikariDataSource ds, String prefix) throws SQLException {
        update(ds, "CREATE TABLE " + prefix + "schema_version (version INT NOT NULL PRIMARY KEY,"
                + " description VARCHAR(200) NOT NULL)");
        for (int v = 1; v <= 16; v++) {
            update(ds, "INSERT INTO " + prefix + "schema_version (version, description) VALUES (" + v + ", 'v" + v + "')");
        }
    }

    private static SasRuntime runtime(JdbcStateStore store, ManualClock clock) {
        return SasRuntime.builder().stateStore(store).clock(clock).trustLocalClock().instanceId("node-a")
                .workflow(APPROVAL).completionTokenKeys(KEYS).build();
    }

    private static Flyway flyway(HikariDataSource ds, TestDb db, String prefix, String target) {
        String dir = db == TestDb.H2_MEMORY ? "h2" : db == TestDb.POSTGRES ? "postgresql" : "mariadb";
        return Flyway.configure().dataSource(ds).locations("classpath:dev/sas/jdbc/schema/" + dir)
                .table(prefix + "flyway_history").placeholders(Map.of("prefix", prefix))
                .baselineOnMigrate(true).baselineVersion("0").target(target).load();
    }

    private static TestDb dbOf(HikariDataSource ds) {
        String url = ds.getJdbcUrl();
        return url.startsWith("jdbc:h2:") ? TestDb.H2_MEMORY : url.startsWith("jdbc:postgresql:") ? TestDb.POSTGRES
                : TestDb.MARIADB;
    }

    private static HikariDataSource pool(String url) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(8);
        return new HikariDataSource(config);
    }

    private static int update(HikariDataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            return s.executeUpdate(sql);
        }
    }

    private static List<String> query(HikariDataSource ds, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    private static void dropAll(TestDb db, String url, String prefix) throws SQLException {
        if (db == TestDb.H2_MEMORY) {
            return;
        }
        db.drop(url, prefix);
        try (Connection c = java.sql.DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + prefix + "flyway_history");
        }
    }
}
