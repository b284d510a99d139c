package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.StateStoreException;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

class JdbcStateStoreBuilderTest {

    @Test
    void invalid_table_prefix_is_rejected_naming_the_setting_and_value() {
        assertThatThrownBy(() -> JdbcStateStore.builder().tablePrefix("x; drop table"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tablePrefix")
                .hasMessageContaining("x; drop table");
        assertThatThrownBy(() -> JdbcStateStore.builder().tablePrefix("1abc")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> JdbcStateStore.builder().tablePrefix("a".repeat(22)))
                .isInstanceOf(IllegalArgumentException.class);
        JdbcStateStore.builder().tablePrefix("My_App2_");
    }

    @Test
    void arguments_are_checked_where_they_are_set() {
        assertThatThrownBy(() -> JdbcStateStore.builder().dataSource(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("dataSource must not be null");
        assertThatThrownBy(() -> JdbcStateStore.builder().maxPoolSize(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxPoolSize must be positive, was -1");
        assertThatThrownBy(() -> JdbcStateStore.builder().url("postgres://x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("url");
    }

    @Test
    void data_source_and_url_together_contradict_each_other() {
        DataSource ds = new JdbcDataSource();
        assertThatThrownBy(() -> JdbcStateStore.builder().dataSource(ds).url("jdbc:h2:mem:x").build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("dataSource")
                .hasMessageContaining("url");
        assertThatThrownBy(() -> JdbcStateStore.builder().dataSource(ds).maxPoolSize(3).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("dataSource")
                .hasMessageContaining("maxPoolSize");
    }

    @Test
    void a_store_without_a_database_is_refused_rather_than_given_a_private_h2_file() {
        assertThatThrownBy(() -> JdbcStateStore.builder().tablePrefix("nodb_").build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no database")
                .hasMessageContaining("dataSource(...)")
                .hasMessageContaining("url(...)")
                .hasMessageContaining("embeddedH2(file)");
    }

    @Test
    void embedded_h2_with_a_url_contradicts() {
        assertThatThrownBy(() -> JdbcStateStore.builder().embeddedH2(java.nio.file.Path.of("target/x"))
                .url("jdbc:h2:mem:x").build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("embeddedH2")
                .hasMessageContaining("url");
    }

    @Test
    void embedded_h2_keeps_its_state_in_the_named_file_across_stores(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        java.nio.file.Path file = dir.resolve("state");
        try (JdbcStateStore store = JdbcStateStore.builder().embeddedH2(file).build()) {
            assertThat(store.toString()).contains("h2").contains(file.toAbsolutePath().toString());
            assertThat(store.countByStatus()).isEmpty();
        }
        assertThat(dir.resolve("state.mv.db")).exists();
    }

    @Test
    void a_url_no_driver_accepts_names_the_dependency_to_add() {
        assertThatThrownBy(() -> JdbcStateStore.builder().url("jdbc:oracle:thin:@127.0.0.1:1:x").build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no JDBC driver")
                .hasMessageContaining("jdbc:oracle:thin");
    }

    @Test
    void unreachable_database_fails_with_a_message_naming_the_url_without_the_password() {
        String url = "jdbc:postgresql://127.0.0.1:1/test?user=sas&password=s3cret-pw&ssl=false";
        assertThatThrownBy(() -> JdbcStateStore.builder().url(url).build())
                .isInstanceOf(StateStoreException.class)
                .hasMessageContaining("127.0.0.1:1/test")
                .hasMessageNotContaining("s3cret-pw");
        String userInfo = "jdbc:mariadb://sas:s3cret-pw@127.0.0.1:1/test";
        assertThatThrownBy(() -> JdbcStateStore.builder().url(userInfo).password("other-s3cret").build())
                .isInstanceOf(StateStoreException.class)
                .hasMessageContaining("127.0.0.1:1/test")
                .hasMessageNotContaining("s3cret-pw")
                .hasMessageNotContaining("other-s3cret");
    }

    @Test
    void to_string_names_the_database_and_prefix_but_no_credentials() {
        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:ts;PASSWORD=hidden").tablePrefix("ts_")
                .build()) {
            assertThat(store.toString()).contains("h2", "ts_").doesNotContain("hidden");
        }
    }

    @Test
    void store_on_an_existing_schema_can_skip_schema_creation() {
        try (JdbcStateStore first = JdbcStateStore.builder().url("jdbc:h2:mem:noschema").tablePrefix("ns_").build();
                JdbcStateStore second = JdbcStateStore.builder().url("jdbc:h2:mem:noschema").tablePrefix("ns_")
                        .createSchema(false).build()) {
            assertThat(second.countByStatus()).isEmpty();
            assertThat(first.countByStatus()).isEmpty();
        }
    }

    @Test
    void a_store_that_does_not_create_its_schema_refuses_to_start_without_its_tables() {
        assertThatThrownBy(() -> JdbcStateStore.builder().url("jdbc:h2:mem:missing-tables").tablePrefix("none_")
                .createSchema(false).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("createSchema is off, but none_task.task_id cannot be read")
                .hasMessageContaining("dev/sas/jdbc/schema/h2/V1__init.sql, with ${prefix} = none_");
    }

    @Test
    void operations_on_missing_tables_throw_state_store_exception_naming_the_operation() throws Exception {
        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:missing").tablePrefix("none_").build()) {
            // the tables vanish under a running store (build() refuses to start without them)
            try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:h2:mem:missing");
                    java.sql.Statement s = c.createStatement()) {
                s.execute("DROP ALL OBJECTS");
            }
            assertThatThrownBy(() -> store.claim("node-1", 10, Tasks.T0, Tasks.WF_V1))
                    .isInstanceOf(StateStoreException.class)
                    .hasMessageContaining("claim by node-1");
            dev.sas.core.TaskId id = dev.sas.core.TaskId.of("task-42");
            assertThatThrownBy(() -> store.find(id))
                    .isInstanceOf(StateStoreException.class)
                    .hasMessageContaining("task-42");
        }
    }

    @Test
    void time_outs_are_checked_where_they_are_set() {
        assertThatThrownBy(() -> JdbcStateStore.builder().connectTimeout(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("connectTimeout must not be null");
        assertThatThrownBy(() -> JdbcStateStore.builder().socketTimeout(java.time.Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("socketTimeout must be positive, was PT0S");
        assertThatThrownBy(() -> JdbcStateStore.builder().statementTimeout(java.time.Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("statementTimeout must be positive, was PT-1S");
    }

    @Test
    void socket_time_out_not_above_the_statement_time_out_is_refused_at_build_naming_both() {
        assertThatThrownBy(() -> JdbcStateStore.builder().url("jdbc:h2:mem:to")
                .socketTimeout(java.time.Duration.ofSeconds(5)).statementTimeout(java.time.Duration.ofSeconds(5)).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("socketTimeout")
                .hasMessageContaining("statementTimeout");
        // the default statement time-out (30 s) is above a 20 s socket time-out
        assertThatThrownBy(() -> JdbcStateStore.builder().url("jdbc:h2:mem:to")
                .socketTimeout(java.time.Duration.ofSeconds(20)).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("PT30S");
    }

    @Test
    void time_outs_with_a_data_source_are_refused_because_its_own_settings_apply() {
        DataSource ds = new JdbcDataSource();
        assertThatThrownBy(() -> JdbcStateStore.builder().dataSource(ds).socketTimeout(java.time.Duration.ofSeconds(9))
                .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("dataSource")
                .hasMessageContaining("time-out");
    }
}
