package dev.sas.cli;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/** The command line against PostgreSQL ({@code SAS_TEST_POSTGRES_URL}); skipped when it is not set. */
class PostgresCliTest extends CliContract {

    @Override
    String url() {
        String url = System.getenv("SAS_TEST_POSTGRES_URL");
        assumeTrue(url != null && !url.isBlank(), "SAS_TEST_POSTGRES_URL not set: skipping the PostgreSQL CLI tests");
        if (!url.contains("127.0.0.1") && !url.contains("localhost")) {
            throw new IllegalStateException("SAS_TEST_POSTGRES_URL must point at 127.0.0.1; the tests create and drop"
                    + " tables");
        }
        return url;
    }

    @Override
    void drop(String url, String prefix) {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            for (String table : new String[] {"event", "step", "task", "supervisor_lease", "runtime_workflow",
                "schema_version", "reply_outbox", "reply_channel", "agent_gate", "agent_permit", "step_reply", "schedule"}) {
                s.execute("DROP TABLE IF EXISTS " + prefix + table);
            }
            for (String function : new String[] {"notify_submitted", "notify_due", "notify_done", "notify_replies"}) {
                s.execute("DROP FUNCTION IF EXISTS " + prefix + function + "() CASCADE");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot drop the tables " + prefix + "*", e);
        }
    }
}
