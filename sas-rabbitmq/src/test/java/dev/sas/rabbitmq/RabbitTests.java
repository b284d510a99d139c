package dev.sas.rabbitmq;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.rabbitmq.client.Channel;
import dev.sas.jdbc.JdbcStateStore;
import dev.sas.jdbc.internal.Dialects;
import dev.sas.jdbc.internal.SchemaManager;
import dev.sas.jdbc.internal.Tables;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.concurrent.ThreadLocalRandom;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/** What the RabbitMQ tests share: the broker and database URLs (skipping when unset), names, clean-up. */
final class RabbitTests {
    /** The environment variables naming the databases the multi-JVM tests run on. */
    static final String POSTGRES = "SAS_TEST_POSTGRES_URL";
    static final String MARIADB = "SAS_TEST_MARIADB_URL";

    private RabbitTests() {
    }

    /** The broker's URI, or skips the test. */
    static String rabbitUri() {
        String uri = System.getenv("SAS_TEST_RABBITMQ_URI");
        assumeTrue(uri != null && !uri.isBlank(), "SAS_TEST_RABBITMQ_URI not set: skipping the RabbitMQ tests");
        return uri;
    }

    /** The database URL in {@code env}, or skips the test. */
    static String dbUrl(String env) {
        String url = System.getenv(env);
        assumeTrue(url != null && !url.isBlank(), env + " not set: skipping this test on that database");
        if (!url.contains("127.0.0.1") && !url.contains("localhost")) {
            throw new IllegalStateException(env + " must point at 127.0.0.1; tests create and drop tables");
        }
        return url;
    }

    static String randomLetters(int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append((char) ('a' + ThreadLocalRandom.current().nextInt(26)));
        }
        return sb.toString();
    }

    /** A store with its own table prefix. */
    static JdbcStateStore store(String url, String prefix) {
        return JdbcStateStore.builder().url(url).tablePrefix(prefix).maxPoolSize(8).build();
    }

    /** Drops the tables of {@code prefix}. */
    static void dropTables(String url, String prefix) {
        try (Connection c = DriverManager.getConnection(url); Handle h = Jdbi.open(c)) {
            new SchemaManager(Jdbi.create(c), Dialects.detect(c.getMetaData().getDatabaseProductName()),
                    new Tables(prefix)).dropAll(h);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot drop tables " + prefix + "*", e);
        }
    }

    /** Deletes the default queues of the agent {@code agentName}. */
    static void deleteQueues(String uri, String agentName) {
        try (RabbitConnection rabbit = RabbitConnection.builder().uri(uri).connectionName("sas-test-cleanup").build();
                Channel ch = rabbit.openChannel()) {
            ch.queueDelete(RabbitAgent.DEFAULT_QUEUE_PREFIX + agentName);
            ch.queueDelete(RabbitAgent.DEFAULT_QUEUE_PREFIX + agentName + RabbitAgent.DEFAULT_REPLY_SUFFIX);
        } catch (Exception e) {
            throw new IllegalStateException("cannot delete the queues of agent " + agentName, e);
        }
    }
}
