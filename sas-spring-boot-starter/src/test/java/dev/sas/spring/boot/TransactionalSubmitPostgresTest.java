package dev.sas.spring.boot;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link TransactionalSubmitContract} on PostgreSQL ({@code SAS_TEST_POSTGRES_URL}), with tables of
 * this run's own prefix, dropped afterwards (tables and trigger functions).
 */
@SpringBootTest(classes = TransactionalSubmitContract.ShopApplication.class)
@EnabledIfEnvironmentVariable(named = "SAS_TEST_POSTGRES_URL", matches = "jdbc:postgresql://(127\\.0\\.0\\.1|localhost).*",
        disabledReason = "SAS_TEST_POSTGRES_URL not set (or not on 127.0.0.1): skipping the PostgreSQL Spring Boot test")
class TransactionalSubmitPostgresTest extends TransactionalSubmitContract {

    static final String PREFIX = "sb" + Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36) + "_";
    private static JdbcTemplate cleanup;

    @Autowired
    void remember(JdbcTemplate jdbc) {
        cleanup = jdbc;
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry r) {
        r.add("spring.datasource.url", () -> System.getenv("SAS_TEST_POSTGRES_URL"));
        r.add("sas.table-prefix", () -> PREFIX);
        r.add("sas.scheduler.poll-interval", () -> "1h");
        r.add("shop.orders-table", () -> PREFIX + "orders");
    }

    @AfterAll
    static void dropTables() {
        if (cleanup == null) {
            return;
        }
        List<String> tables = cleanup.queryForList("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                + " AND tablename LIKE ?", String.class, PREFIX.toLowerCase(Locale.ROOT) + "%");
        for (String t : tables) {
            cleanup.execute("DROP TABLE IF EXISTS " + t + " CASCADE");
        }
        // and the trigger functions SAS's schema creates with the same prefix
        List<String> functions = cleanup.queryForList("SELECT p.proname FROM pg_proc p JOIN pg_namespace n"
                + " ON n.oid = p.pronamespace WHERE n.nspname = current_schema() AND p.proname LIKE ?", String.class,
                PREFIX.toLowerCase(Locale.ROOT) + "%");
        for (String f : functions) {
            cleanup.execute("DROP FUNCTION IF EXISTS " + f + "() CASCADE");
        }
    }
}
