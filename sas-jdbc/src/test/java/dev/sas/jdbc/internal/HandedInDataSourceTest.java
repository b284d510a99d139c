package dev.sas.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * A data source the host hands in at REPEATABLE READ (MariaDB's default): SAS works at READ
 * COMMITTED on its connections and hands them back at the host's level.
 */
class HandedInDataSourceTest {

    @Test
    void sas_uses_read_committed_and_gives_the_connection_back_at_the_hosts_level() throws Exception {
        String url = System.getenv("SAS_TEST_MARIADB_URL");
        assumeTrue(url != null && !url.isBlank(), "SAS_TEST_MARIADB_URL not set: skipping the MariaDB isolation test");
        try (HikariDataSource host = new HikariDataSource()) {
            host.setJdbcUrl(url);
            host.setMaximumPoolSize(1);
            int hostLevel;
            try (Connection c = host.getConnection()) {
                hostLevel = c.getTransactionIsolation();
            }
            assertThat(hostLevel).as("MariaDB's default").isEqualTo(Connection.TRANSACTION_REPEATABLE_READ);

            Jdbi jdbi = Jdbi.create(host).installPlugin(Isolation.readCommitted(hostLevel));
            String inSas = jdbi.withHandle(h -> h.createQuery("SELECT @@tx_isolation").mapTo(String.class).one());
            assertThat(inSas).isEqualTo("READ-COMMITTED");
            try (Connection c = host.getConnection()) {
                assertThat(c.getTransactionIsolation()).as("the host's level, after SAS").isEqualTo(hostLevel);
                try (var st = c.createStatement(); var rs = st.executeQuery("SELECT @@tx_isolation")) {
                    rs.next();
                    assertThat(rs.getString(1)).isEqualTo("REPEATABLE-READ");
                }
            }
        }
    }
}
