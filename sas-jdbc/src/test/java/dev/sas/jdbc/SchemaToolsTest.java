package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskResult;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import liquibase.Scope;
import liquibase.command.CommandScope;
import liquibase.command.core.UpdateCommandStep;
import liquibase.command.core.helpers.DbUrlConnectionArgumentsCommandStep;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.ClassLoaderResourceAccessor;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * SAS's schema applied by the application's own tool, beside the application's own first migration
 * (docs/jdbc.md, Flyway / Liquibase): SAS's scripts through a Flyway of their own (own history
 * table) and through the Liquibase changelog in the jar, the store built with
 * {@code createSchema(false)}, and a runtime running a task on that schema. Each database gets a
 * fresh schema (H2: a new in-memory database; PostgreSQL: a schema; MariaDB: a database), dropped
 * afterwards.
 */
class SchemaToolsTest {
    private static final Workflow<String> HELLO = Workflow.builder("schema-tools", Codec.string())
            .step("hello", s -> s.execute(ctx -> "hello " + ctx.input()))
            .build();

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"H2_MEMORY", "POSTGRES", "MARIADB"})
    void flyway_applies_sas_scripts_with_their_own_history_beside_the_application_v1(TestDb db) throws Exception {
        try (Scratch scratch = Scratch.on(db); HikariDataSource ds = scratch.pool()) {
            MigrateResult app = appFlyway(ds).migrate();
            MigrateResult sas = sasFlyway(ds, db).migrate();

            assertThat(app.migrationsExecuted).isEqualTo(1);
            assertThat(sas.migrationsExecuted).isEqualTo(17);
            // the next start: nothing to do for either, nothing collides
            assertThat(appFlyway(ds).migrate().migrationsExecuted).isZero();
            assertThat(sasFlyway(ds, db).migrate().migrationsExecuted).isZero();
            assertThat(versions(appFlyway(ds))).containsExactly("1");
            assertThat(versions(sasFlyway(ds, db))).startsWith("0", "1", "2").endsWith("16", "17");

            runsATask(ds);
            assertThat(tableExists(ds, "sas_schema_version")).as("SAS's own migrator stayed off").isFalse();
        }
    }

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"H2_MEMORY", "POSTGRES", "MARIADB"})
    void liquibase_applies_the_sas_changelog_included_after_the_application_v1(TestDb db) throws Exception {
        try (Scratch scratch = Scratch.on(db); HikariDataSource ds = scratch.pool()) {
            liquibaseUpdate(ds);
            liquibaseUpdate(ds); // the next start changes nothing

            List<String> ids = query(ds, "SELECT id FROM DATABASECHANGELOG ORDER BY orderexecuted");
            String dialect = db == TestDb.H2_MEMORY ? "h2" : db == TestDb.POSTGRES ? "postgresql" : "mariadb";
            assertThat(ids).hasSize(18).startsWith("1", "sas-V1__init-" + dialect)
                    .endsWith("sas-V17__awaiting_completion-" + dialect);
            assertThat(tableExists(ds, "orders")).isTrue();

            runsATask(ds);
            assertThat(tableExists(ds, "sas_schema_version")).as("SAS's own migrator stayed off").isFalse();
        }
    }

    @Test
    void a_store_that_does_not_create_its_schema_refuses_to_start_on_a_missing_script() throws Exception {
        try (Scratch scratch = Scratch.on(TestDb.H2_MEMORY); HikariDataSource ds = scratch.pool()) {
            Flyway.configure().dataSource(ds).locations("classpath:dev/sas/jdbc/schema/h2").table("sas_flyway_history")
                    .placeholders(Map.of("prefix", "sas_")).target("8").load().migrate();

            assertThatThrownBy(() -> JdbcStateStore.builder().dataSource(ds).createSchema(false).build())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("createSchema is off")
                    .hasMessageContaining("sas_step_reply")
                    .hasMessageContaining("dev/sas/jdbc/schema/h2/V9__step_reply.sql");
        }
    }

    private static Flyway appFlyway(HikariDataSource ds) {
        return Flyway.configure().dataSource(ds).locations("classpath:dev/sas/jdbc/schematools/app").load();
    }

    // tag::flyway[]
    private static Flyway sasFlyway(HikariDataSource ds, TestDb db) {
        String database = db == TestDb.H2_MEMORY ? "h2" : db == TestDb.POSTGRES ? "postgresql" : "mariadb";
        return Flyway.configure()
                .dataSource(ds)
                .locations("classpath:dev/sas/jdbc/schema/" + database) // h2, postgresql or mariadb
                .table("sas_flyway_history")                            // SAS's versions, apart from yours
                .placeholders(Map.of("prefix", "sas_"))                 // the store's tablePrefix
                .baselineOnMigrate(true).baselineVersion("0")           // the schema already holds your tables
                .load();
    }
    // end::flyway[]

    private static void liquibaseUpdate(HikariDataSource ds) throws Exception {
        try (Connection c = ds.getConnection()) {
            Database database = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(c));
            Scope.child(Scope.Attr.resourceAccessor.name(), new ClassLoaderResourceAccessor(), () ->
                    new CommandScope(UpdateCommandStep.COMMAND_NAME)
                            .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, database)
                            .addArgumentValue(UpdateCommandStep.CHANGELOG_FILE_ARG,
                                    "dev/sas/jdbc/schematools/app-changelog.xml")
                            .execute());
        }
    }

    private static void runsATask(HikariDataSource ds) {
        try (JdbcStateStore store = JdbcStateStore.builder().dataSource(ds).createSchema(false).build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(HELLO).build().start()) {
            TaskResult result = runtime.client().submit(HELLO, "greeting-1", "world").await(Duration.ofSeconds(60));
            assertThat(result.status()).isEqualTo(TaskStatus.PROCESSED);
        }
    }

    /** The versions in a Flyway's history table, in the order applied (the baseline is "0"). */
    private static List<String> versions(Flyway flyway) {
        return Arrays.stream(flyway.info().applied()).map(m -> m.getVersion().getVersion()).toList();
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

    private static boolean tableExists(HikariDataSource ds, String table) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.executeQuery("SELECT 1 FROM " + table + " WHERE 1 = 0").close();
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    /** A fresh, empty schema on a test database, dropped on close. */
    private record Scratch(String url, String adminUrl, String drop) implements AutoCloseable {
        static Scratch on(TestDb db) throws SQLException {
            String base = db.url();
            String name = "t" + TestDb.randomLetters(10);
            return switch (db) {
                case H2_MEMORY -> new Scratch(base, null, null);
                case POSTGRES -> {
                    exec(base, "CREATE SCHEMA " + name);
                    yield new Scratch(base + (base.contains("?") ? "&" : "?") + "currentSchema=" + name, base,
                            "DROP SCHEMA " + name + " CASCADE");
                }
                case MARIADB -> {
                    // jdbc:mariadb://host:port/db?params -> jdbc:mariadb://host:port/db_<name>?params
                    int slash = base.indexOf('/', "jdbc:mariadb://".length());
                    int query = base.indexOf('?', slash);
                    String dbName = base.substring(slash + 1, query < 0 ? base.length() : query) + "_" + name;
                    exec(base, "CREATE DATABASE " + dbName);
                    yield new Scratch(base.substring(0, slash + 1) + dbName + (query < 0 ? "" : base.substring(query)),
                            base, "DROP DATABASE " + dbName);
                }
                default -> throw new IllegalArgumentException("no scratch schema on " + db);
            };
        }

        HikariDataSource pool() {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(url);
            config.setMaximumPoolSize(8);
            return new HikariDataSource(config);
        }

        @Override
        public void close() throws SQLException {
            if (drop != null) {
                exec(adminUrl, drop);
            }
        }

        private static void exec(String url, String sql) throws SQLException {
            try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
                s.execute(sql);
            }
        }
    }
}
