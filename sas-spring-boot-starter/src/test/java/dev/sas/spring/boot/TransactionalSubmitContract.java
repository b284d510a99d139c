package dev.sas.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasClient;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * A Spring Boot application whose {@code @Transactional} service writes an order row and submits a
 * task with a plain {@code submit}: a rollback leaves neither, a commit keeps both and the task
 * runs. Subclasses pick the database.
 */
abstract class TransactionalSubmitContract {

    /** The application: one workflow, one transactional service. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ShopApplication {
        // tag::workflow-bean[]
        @Bean
        Workflow<String> confirmOrder() {
            return Workflow.builder("confirm-order", Codec.string())
                    .step("confirm", s -> s.execute(ctx -> "confirmed " + ctx.input()))
                    .build();
        }
        // end::workflow-bean[]

        @Bean
        Orders orders(JdbcTemplate jdbc, SasClient sas, Workflow<String> confirmOrder,
                @Value("${shop.orders-table}") String table) {
            return new Orders(jdbc, sas, confirmOrder, table);
        }
    }

    /** The application's service. */
    static class Orders {
        private final JdbcTemplate jdbc;
        private final SasClient sas;
        private final Workflow<String> confirmOrder;
        private final String table;

        Orders(JdbcTemplate jdbc, SasClient sas, Workflow<String> confirmOrder, String table) {
            this.jdbc = jdbc;
            this.sas = sas;
            this.confirmOrder = confirmOrder;
            this.table = table;
        }

        // tag::transactional-submit[]
        @Transactional
        public TaskId place(String orderId, boolean failAfterSubmit) {
            jdbc.update("INSERT INTO " + table + " (id) VALUES (?)", orderId);
            TaskId task = sas.submit(confirmOrder, orderId, orderId).id(); // joins this transaction
            if (failAfterSubmit) {
                throw new IllegalStateException("payment declined"); // rolls back the row and the task
            }
            return task;
        }
        // end::transactional-submit[]
    }

    @Autowired
    Orders orders;
    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    SasClient client;
    @Autowired
    Workflow<String> confirmOrder;

    @Value("${shop.orders-table}")
    String table;

    private void createTable() {
        jdbc.execute("CREATE TABLE IF NOT EXISTS " + table + " (id VARCHAR(64) PRIMARY KEY)");
    }

    @Test
    void a_rolled_back_transaction_leaves_no_order_and_no_task() {
        createTable();
        assertThatThrownBy(() -> orders.place("order-rb", true)).hasMessage("payment declined");

        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE id = 'order-rb'",
                Integer.class)).isZero();
        assertThat(client.find(confirmOrder.name(), "order-rb")).as("no orphan task").isEmpty();
    }

    @Test
    void a_committed_transaction_keeps_the_order_and_its_task_runs() {
        createTable();
        TaskId task = orders.place("order-ok", false);

        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE id = 'order-ok'",
                Integer.class)).isOne();
        await().atMost(Duration.ofSeconds(30)).until(() -> client.find(task)
                .map(t -> t.status() == TaskStatus.PROCESSED).orElse(false));
    }

    @Test
    void a_submit_outside_a_transaction_commits_on_its_own() {
        TaskId task = client.submit(confirmOrder, "no-tx", "no-tx").id();
        assertThat(client.find(task)).isPresent();
    }
}
