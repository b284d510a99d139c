package dev.sas.jdbc;

import static dev.sas.jdbc.Tasks.T0;
import static dev.sas.jdbc.Tasks.newTask;
import static dev.sas.jdbc.Tasks.received;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.StateStoreException;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Connections killed under the store: it reports the failure or recovers, never half-writes. */
class PostgresConnectionLossTest {

    private String url;
    private String prefix;
    private String poolName;
    private JdbcStateStore store;

    @BeforeEach
    void open() {
        url = TestDb.POSTGRES.url();
        prefix = TestDb.randomPrefix();
        poolName = "sas-test-" + TestDb.randomLetters(8);
        store = JdbcStateStore.builder().url(url).tablePrefix(prefix).poolName(poolName).maxPoolSize(3).build();
    }

    @AfterEach
    void close() {
        if (store == null) {
            return; // skipped: PostgreSQL is not configured
        }
        store.close();
        TestDb.POSTGRES.drop(url, prefix);
    }

    private int killPoolConnections() throws Exception {
        return TestDb.killPostgresConnections(url, poolName);
    }

    @Test
    void killed_connections_make_the_next_write_fail_cleanly_or_succeed_and_nothing_is_half_written()
            throws Exception {
        TaskId id = TaskId.random();
        store.submit(newTask(id, "kill", "{}", T0), received(id, "kill", T0), null);
        ClaimedTask c = store.claim("a", 1, T0, Tasks.WF_V1).get(0);

        assertThat(killPoolConnections()).isPositive();
        // One transition, retried as the runtime retries it: if the kill lost the commit's
        // acknowledgement, the retry is recognised as applied.
        Transition finish = Tasks.finish(c, T0);

        boolean applied = false;
        try {
            applied = store.write(List.of(finish), T0).equals(List.of(WriteOutcome.APPLIED));
        } catch (StateStoreException e) {
            assertThat(e.getMessage()).contains("write");
            // Other pooled connections were killed too: read once the pool has replaced them.
            TaskInfo untouched = Awaitility.await().atMost(Duration.ofSeconds(20))
                    .ignoreExceptionsInstanceOf(StateStoreException.class)
                    .until(() -> store.find(id).orElseThrow(), info -> true);
            assertThat(untouched.status()).isEqualTo(TaskStatus.PROCESSING);
            assertThat(untouched.steps()).isEmpty();
            assertThat(store.events(id)).extracting(TaskEvent::type)
                    .containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.STEP_STARTED);
        }
        if (!applied) {
            // the pool replaces broken connections; the runtime's retry then goes through
            Awaitility.await().atMost(Duration.ofSeconds(20)).ignoreExceptionsInstanceOf(StateStoreException.class)
                    .until(() -> store.write(List.of(finish), T0).get(0).isApplied());
        }
        TaskInfo done = store.find(id).orElseThrow();
        assertThat(done.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(done.steps()).hasSize(1);
        assertThat(store.events(id)).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.RECEIVED,
                TaskEvent.Type.STEP_STARTED, TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.PROCESSED);
    }

    @Test
    void killed_connections_during_a_claim_burst_never_hand_out_a_task_twice() throws Exception {
        for (int i = 0; i < 200; i++) {
            TaskId id = TaskId.random();
            store.submit(newTask(id, "k" + i, "{}", T0), received(id, "k" + i, T0), null);
        }
        java.util.Set<TaskId> seen = new java.util.HashSet<>();
        for (int round = 0; round < 40 && seen.size() < 200; round++) {
            if (round % 5 == 2) {
                killPoolConnections();
            }
            try {
                for (ClaimedTask c : store.claim("a", 10, T0, Tasks.WF_V1)) {
                    assertThat(seen.add(c.taskId())).as("claimed twice: %s", c.taskId()).isTrue();
                }
            } catch (StateStoreException expectedWhileConnectionsDie) {
                // the next round (or the pool's replacement connection) goes on
            }
        }
        Awaitility.await().atMost(Duration.ofSeconds(20)).ignoreExceptionsInstanceOf(StateStoreException.class).until(() -> {
            for (ClaimedTask c : store.claim("a", 50, T0, Tasks.WF_V1)) {
                assertThat(seen.add(c.taskId())).isTrue();
            }
            return seen.size() == 200;
        });
        // every claimed task has exactly one start event: no claim was recorded without its event
        for (TaskId id : seen) {
            assertThat(store.events(id)).extracting(TaskEvent::type)
                    .containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.STEP_STARTED);
        }
    }
}
