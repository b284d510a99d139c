package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sas.core.TaskStatus;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The store on a multi-host URL, as docs/ha-postgresql.md shows it. Here every "host" is the test
 * server, which is a primary, so the URL finds it; the failover itself is shown by the chaos
 * harness's {@code HaFailoverRunTest} on a real Patroni cluster.
 */
class HaDocsTest {

    @Test
    void a_store_on_a_multi_host_url_finds_the_primary() {
        String url = System.getenv("SAS_TEST_POSTGRES_URL");
        assumeTrue(url != null && !url.isBlank(), "SAS_TEST_POSTGRES_URL not set: skipping the HA docs sample");
        Matcher m = Pattern.compile("jdbc:postgresql://([^/]+)/([^?]+)\\?user=([^&]+)").matcher(url);
        assumeTrue(m.lookingAt(), "SAS_TEST_POSTGRES_URL is not of the form jdbc:postgresql://host/db?user=u");
        String hosts = m.group(1) + "," + m.group(1) + "," + m.group(1);
        String database = m.group(2);
        String user = m.group(3);

        // tag::ha-store[]
        JdbcStateStore store = JdbcStateStore.builder()
                .url("jdbc:postgresql://" + hosts + "/" + database + "?user=" + user + "&targetServerType=primary")
                .connectTimeout(Duration.ofSeconds(3)) // a host that is down costs this much per connection
                .tablePrefix("sas_ha_docs_")
                .build();
        // end::ha-store[]
        try (store) {
            assertThat(store.countByStatus()).doesNotContainKey(TaskStatus.PROCESSING);
        } finally {
            try (var c = java.sql.DriverManager.getConnection(url); var st = c.createStatement()) {
                for (String t : new String[] {"event", "step", "task", "supervisor_lease", "runtime_workflow",
                    "reply_outbox", "reply_channel", "agent_permit", "agent_gate", "step_reply", "schedule", "schema_version"}) {
                    st.execute("DROP TABLE IF EXISTS sas_ha_docs_" + t);
                }
                for (String f : new String[] {"notify_submitted", "notify_due", "notify_done", "notify_replies"}) {
                    st.execute("DROP FUNCTION IF EXISTS sas_ha_docs_" + f + "() CASCADE");
                }
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
