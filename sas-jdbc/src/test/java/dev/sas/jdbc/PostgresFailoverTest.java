package dev.sas.jdbc;

import static dev.sas.jdbc.Tasks.T0;
import static dev.sas.jdbc.Tasks.newTask;
import static dev.sas.jdbc.Tasks.received;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.StoreUnavailableException;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A failover as the store's pool sees it, on one PostgreSQL server: a database whose sessions turn
 * read-only stands for a primary demoted to a standby (its open connections answer 25006), and
 * resetting it for the new primary that new connections find. Runs in a database of its own,
 * created and dropped here.
 */
class PostgresFailoverTest {

    private String serverUrl;
    private String database;
    private String url;
    private String poolName;
    private JdbcStateStore store;

    @BeforeEach
    void open() throws SQLException {
        serverUrl = TestDb.POSTGRES.url();
        database = "sas_failover_" + TestDb.randomLetters(8);
        admin("CREATE DATABASE " + database);
        url = serverUrl.replaceFirst("(//[^/]+/)[^?]*", "$1" + database);
        poolName = "sas-test-" + TestDb.randomLetters(8);
        store = JdbcStateStore.builder().url(url).poolName(poolName).maxPoolSize(2).build();
    }

    @AfterEach
    void close() throws SQLException {
        if (store == null) {
            return; // skipped: PostgreSQL is not configured
        }
        store.close();
        admin("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
    }

    private void admin(String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(serverUrl); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private static boolean readOnly(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof SQLException s && "25006".equals(s.getSQLState())) {
                return true;
            }
        }
        return false;
    }

    @Test
    void writes_to_a_demoted_primary_are_unavailable_not_refused_and_the_pool_then_finds_the_new_primary()
            throws Exception {
        TaskId id = TaskId.random();
        store.submit(newTask(id, "ro", "{}", T0), received(id, "ro", T0), null);
        ClaimedTask claimed = store.claim("a", 1, T0, Tasks.WF_V1).get(0);
        Transition finish = Tasks.finish(claimed, T0);

        // demote: every session the pool opens from now on is read-only, and the open ones are dropped
        admin("ALTER DATABASE " + database + " SET default_transaction_read_only = on");
        TestDb.killPostgresConnections(url, poolName);
        StoreUnavailableException demoted = Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
            try {
                store.write(List.of(finish), T0);
                return null;
            } catch (StoreUnavailableException e) {
                return readOnly(e) ? e : null; // before that, the killed connections (57P01, 08006)
            }
        }, e -> e != null);
        assertThat(demoted.getMessage()).contains("read-only");

        // the new primary: new sessions take writes, and nothing but the pool's own reaction replaces
        // the read-only connections it holds
        admin("ALTER DATABASE " + database + " RESET default_transaction_read_only");
        Awaitility.await().atMost(Duration.ofSeconds(30)).ignoreExceptionsInstanceOf(StoreUnavailableException.class)
                .until(() -> store.write(List.of(finish), T0).get(0), WriteOutcome::isApplied);
        assertThat(store.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
    }
}
