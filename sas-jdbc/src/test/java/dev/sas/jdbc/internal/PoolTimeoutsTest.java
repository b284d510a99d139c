package dev.sas.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The time-outs reach the driver and the server session of every connection of a pool the store creates. */
class PoolTimeoutsTest {

    private static final Timeouts TIMEOUTS = new Timeouts(Duration.ofMillis(2500), Duration.ofSeconds(7),
            Duration.ofMillis(1500), Duration.ofMillis(3200));

    @Test
    void postgres_gets_driver_time_outs_in_whole_seconds_rounded_up_and_session_statement_and_idle_transaction_time_outs() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:postgresql://127.0.0.1/x");
        new PostgresDialect().configurePool(config, "p", TIMEOUTS);

        assertThat(config.getDataSourceProperties()).containsEntry("connectTimeout", "3")
                .containsEntry("socketTimeout", "7");
        String url = System.getenv("SAS_TEST_POSTGRES_URL");
        assumeTrue(url != null && !url.isBlank(), "SAS_TEST_POSTGRES_URL not set");
        assertThat(sessionValue(url, "SHOW statement_timeout")).isEqualTo("1500ms");
        assertThat(sessionValue(url, "SHOW idle_in_transaction_session_timeout")).isEqualTo("3200ms");
    }

    @Test
    void mariadb_gets_driver_time_outs_in_milliseconds_and_session_statement_and_idle_transaction_time_outs() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:mariadb://127.0.0.1/x");
        new MariaDbDialect().configurePool(config, "p", TIMEOUTS);

        assertThat(config.getDataSourceProperties()).containsEntry("connectTimeout", "2500")
                .containsEntry("socketTimeout", "7000");
        String url = System.getenv("SAS_TEST_MARIADB_URL");
        assumeTrue(url != null && !url.isBlank(), "SAS_TEST_MARIADB_URL not set");
        assertThat(Double.parseDouble(sessionValue(url, "SELECT @@SESSION.max_statement_time"))).isEqualTo(1.5);
        assertThat(sessionValue(url, "SELECT @@SESSION.idle_transaction_timeout")).isEqualTo("4");
    }

    private static String sessionValue(String url, String sql) throws Exception {
        try (HikariDataSource pool = Pools.create(url, Urls.redact(url), null, null, 1, "timeouts-test",
                Duration.ofSeconds(5), TIMEOUTS);
                Connection c = pool.getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
