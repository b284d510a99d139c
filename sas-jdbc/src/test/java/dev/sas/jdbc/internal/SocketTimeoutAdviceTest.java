package dev.sas.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The WARN for a handed-in data source without a socket time-out names a setting; applied as the
 * advice says (Spring Boot's data source property), the connections have the network time-out the
 * store checks, so the WARN goes away.
 */
class SocketTimeoutAdviceTest {

    private static final Pattern SPRING_PROPERTY =
            Pattern.compile("spring\\.datasource\\.hikari\\.data-source-properties\\.(\\w+)=(\\d+)");

    @ParameterizedTest
    @CsvSource({"SAS_TEST_POSTGRES_URL, postgresql", "SAS_TEST_MARIADB_URL, mariadb"})
    void following_the_advice_gives_the_connections_a_network_time_out(String variable, String product)
            throws Exception {
        String url = System.getenv(variable);
        assumeTrue(url != null && !url.isBlank(), variable + " not set: skipping");
        Dialect dialect = Dialects.guessFromUrl(url);
        assertThat(dialect.name()).isEqualTo(product);
        Matcher advice = SPRING_PROPERTY.matcher(dialect.socketTimeoutAdvice());
        assertThat(advice.find()).as(dialect.socketTimeoutAdvice()).isTrue();

        assertThat(networkTimeoutMs(url, null, null)).as("a pool as Spring Boot makes it").isZero();
        assertThat(networkTimeoutMs(url, advice.group(1), advice.group(2))).as("with the advised property")
                .isEqualTo(60_000);
    }

    private static int networkTimeoutMs(String url, String property, String value) throws Exception {
        try (HikariDataSource ds = new HikariDataSource()) {
            ds.setJdbcUrl(url);
            ds.setMaximumPoolSize(1);
            if (property != null) {
                ds.addDataSourceProperty(property, value);
            }
            try (Connection c = ds.getConnection()) {
                return c.getNetworkTimeout();
            }
        }
    }
}
