package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.StatusChannel;
import dev.sas.core.StatusConsumer;
import dev.sas.core.StatusUpdate;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskHandle;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/** The samples of docs/status-updates.md: a web tier that hears the statuses of tasks a worker tier runs. */
class StatusChannelDocsTest {

    /** What the web tier shows its users: each order's latest status. */
    static final class StatusBoard {
        private final Map<String, TaskEvent.Type> latest = new ConcurrentHashMap<>();
        private final Set<Long> seen = ConcurrentHashMap.newKeySet();

        void update(StatusUpdate m) {
            latest.put(m.event().businessKey(), m.status());
        }

        boolean firstTime(long deliveryId) {
            return seen.add(deliveryId);
        }

        TaskEvent.Type latest(String order) {
            return latest.get(order);
        }
    }

    @Test
    void a_web_tier_hears_every_status_of_the_tasks_a_worker_tier_runs() {
        String url = "jdbc:h2:mem:replies-docs;DB_CLOSE_DELAY=-1";
        Workflow<String> orders = Workflow.builder("orders", Codec.string())
                .step("charge", s -> s.execute(ctx -> "charged " + ctx.input()))
                .build();
        StatusBoard board = new StatusBoard();
        try (JdbcStateStore webStore = JdbcStateStore.builder().url(url).build();
             JdbcStateStore workerStore = JdbcStateStore.builder().url(url).build();
             SasRuntime worker = SasRuntime.builder().stateStore(workerStore).workflow(orders).build().start()) {
            // tag::web-tier[]
            StatusChannel replies = StatusChannel.builder("web-replies")
                    .handler(messages -> messages.forEach(m -> {
                        if (board.firstTime(m.deliveryId())) { // at least once: drop repeats by delivery id
                            board.update(m);
                        }
                    }))
                    .build();
            StatusConsumer consumer = StatusConsumer.builder().stateStore(webStore).channel(replies)
                    .consumerId("web-1").build().start();   // registers "web-replies" in the store

            SasClient client = SasClient.builder().stateStore(webStore).build();
            TaskHandle order = client.submit(orders, "order-42", "42",
                    SubmitOptions.builder().statusChannel("web-replies").build());
            // RECEIVED, STEP_STARTED, STEP_COMPLETED, PROCESSED reach the board, in order
            // end::web-tier[]
            try (consumer) {
                await().atMost(Duration.ofSeconds(20)).until(() -> board.latest("order-42") == TaskEvent.Type.PROCESSED);
                assertThat(order.await(Duration.ofSeconds(5)).isProcessed()).isTrue();
            }
        }
    }

    @Test
    void a_runtime_consumes_a_channel_too() {
        String url = "jdbc:h2:mem:replies-docs-runtime;DB_CLOSE_DELAY=-1";
        Workflow<String> orders = Workflow.builder("orders", Codec.string())
                .step("charge", s -> s.execute(ctx -> "charged " + ctx.input()))
                .build();
        Map<String, TaskEvent.Type> latest = new ConcurrentHashMap<>();
        try (JdbcStateStore store = JdbcStateStore.builder().url(url).build()) {
            // tag::runtime[]
            SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders)
                    .statusChannel("shop", event -> latest.put(event.businessKey(), event.type()))
                    .build().start();
            runtime.client().submit(orders, "order-7", "7", SubmitOptions.builder().statusChannel("shop").build());
            // end::runtime[]
            try (runtime) {
                await().atMost(Duration.ofSeconds(20)).until(() -> latest.get("order-7") == TaskEvent.Type.PROCESSED);
            }
        }
    }
}
