package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A runtime's listeners hear only of tasks whose host transaction committed, and such a task
 * starts after the commit without the host waking the runtime.
 */
class TransactionalSubmitRuntimeTest {

    @Test
    void rolled_back_submission_is_never_announced_and_a_committed_one_runs() throws Exception {
        String url = "jdbc:h2:mem:txsubmit-" + TestDb.randomLetters(8) + ";DB_CLOSE_DELAY=-1";
        List<TaskEvent> heard = new CopyOnWriteArrayList<>();
        Workflow<String> wf = Workflow.builder("orders", Codec.string())
                .step("confirm", s -> s.execute(ctx -> "ok"))
                .build();
        try (JdbcStateStore store = JdbcStateStore.builder().url(url).build();
             SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).statusChannel("orders", heard::add)
                     .pollInterval(Duration.ofHours(1)).build().start();
             Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            SubmitOptions inTx = SubmitOptions.builder().statusChannel("orders").transaction(c).build();

            TaskId rolledBack = sas.client().submit(wf, "order-1", "x", inTx).id();
            c.rollback();
            TaskId committed = sas.client().submit(wf, "order-2", "y", inTx).id();
            c.commit();
            // No pollNow() and an hour between polls: the runtime looks again shortly after a
            // submit in a host transaction by itself.

            await().atMost(Duration.ofSeconds(10))
                    .until(() -> sas.client().find(committed).map(i -> i.status() == TaskStatus.PROCESSED).orElse(false));
            assertThat(sas.client().find(rolledBack)).isEmpty();
            assertThat(heard).noneMatch(e -> e.taskId().equals(rolledBack));
            await().atMost(Duration.ofSeconds(5)).until(() -> heard.stream()
                    .anyMatch(e -> e.taskId().equals(committed) && e.type() == TaskEvent.Type.PROCESSED));
            assertThat(sas.client().events(committed)).extracting(TaskEvent::type).first().isEqualTo(TaskEvent.Type.RECEIVED);
        }
    }

    @Test
    void a_plain_submit_joins_the_transaction_the_host_transaction_supplier_finds_on_the_calling_thread()
            throws Exception {
        String url = "jdbc:h2:mem:txambient-" + TestDb.randomLetters(8) + ";DB_CLOSE_DELAY=-1";
        ThreadLocal<Connection> current = new ThreadLocal<>();
        Workflow<String> wf = Workflow.builder("orders", Codec.string())
                .step("confirm", s -> s.execute(ctx -> "ok"))
                .build();
        try (JdbcStateStore store = JdbcStateStore.builder().url(url).hostTransaction(current::get).build();
             SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).pollInterval(Duration.ofHours(1))
                     .build().start();
             Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            current.set(c);
            TaskId rolledBack = sas.client().submit(wf, "order-1", "x").id();
            List<TaskId> batch = sas.client().submitAll(wf, java.util.Map.of("order-2", "y")).stream()
                    .map(dev.sas.core.TaskHandle::id).toList();
            assertThat(sas.client().find(rolledBack)).as("invisible outside the host transaction").isEmpty();
            c.rollback();
            TaskId committed = sas.client().submit(wf, "order-3", "z").id();
            c.commit();
            current.remove();
            TaskId own = sas.client().submit(wf, "order-4", "w").id();

            await().atMost(Duration.ofSeconds(10)).until(() -> sas.client().find(committed)
                    .map(i -> i.status() == TaskStatus.PROCESSED).orElse(false));
            await().atMost(Duration.ofSeconds(10)).until(() -> sas.client().find(own)
                    .map(i -> i.status() == TaskStatus.PROCESSED).orElse(false));
            assertThat(sas.client().find(rolledBack)).isEmpty();
            assertThat(sas.client().find(batch.get(0))).isEmpty();
        }
    }

    @Test
    void a_host_transaction_supplier_returning_another_type_is_named_in_the_error() {
        String url = "jdbc:h2:mem:txwrong-" + TestDb.randomLetters(8) + ";DB_CLOSE_DELAY=-1";
        Workflow<String> wf = Workflow.builder("orders", Codec.string())
                .step("confirm", s -> s.execute(ctx -> "ok"))
                .build();
        try (JdbcStateStore store = JdbcStateStore.builder().url(url).hostTransaction(() -> "not a connection").build()) {
            dev.sas.core.SasClient client = dev.sas.core.SasClient.builder().stateStore(store).workflow(wf).build();
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> client.submit(wf, "k", "x"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("java.lang.String")
                    .hasMessageContaining("hostTransaction");
        }
    }
}
