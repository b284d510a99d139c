package dev.sas.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.sas.core.Codec;
import dev.sas.core.StatusChannel;
import dev.sas.core.StatusUpdate;
import dev.sas.core.SasException;
import dev.sas.core.SasRuntime;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The RabbitMQ status channel against the broker of {@code SAS_TEST_RABBITMQ_URI}: one confirmed,
 * persistent message per status with its ids and headers; a message the broker cannot route stays in
 * the outbox and is published again, same id, once it can; a broken connection is replaced.
 */
class RabbitStatusChannelTest {

    private final InMemoryStateStore store = new InMemoryStateStore();
    private final ManualClock clock = new ManualClock();
    private final Workflow<String> wf = Workflow.builder("greet", Codec.string())
            .step("hello", s -> s.execute(ctx -> "hello " + ctx.input())).build();
    private RabbitConnection rabbit;
    private String queue;

    static String uri() {
        String uri = System.getenv("SAS_TEST_RABBITMQ_URI");
        assumeTrue(uri != null && !uri.isBlank(), "SAS_TEST_RABBITMQ_URI not set: skipping the RabbitMQ tests");
        return uri;
    }

    @BeforeEach
    void connect() {
        rabbit = RabbitConnection.builder().uri(uri()).connectionName("sas-test").build();
        queue = "sas-test-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void cleanUp() throws Exception {
        if (rabbit != null) {
            try (Channel ch = rabbit.openChannel()) {
                ch.queueDelete(queue);
            }
            rabbit.close();
        }
    }

    private List<GetResponse> drainQueue() throws Exception {
        List<GetResponse> out = new ArrayList<>();
        try (Channel ch = rabbit.openChannel()) {
            for (GetResponse r = ch.basicGet(queue, true); r != null; r = ch.basicGet(queue, true)) {
                out.add(r);
            }
        }
        return out;
    }

    private SasRuntime runtime(StatusChannel channel) {
        return SasRuntime.builder().stateStore(store).clock(clock).workflow(wf).statusChannel(channel).build();
    }

    @Test
    void each_status_becomes_one_confirmed_persistent_message_carrying_the_task_and_delivery_ids() throws Exception {
        // tag::rabbit[]
        StatusChannel replies = RabbitStatusChannel.builder("orders-replies", rabbit)
                .routingKey(queue)              // default exchange: the durable queue of this name, declared if missing
                .build();
        SasRuntime runtime = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf)
                .statusChannel(replies)          // this node publishes the channel's messages
                .build();
        // end::rabbit[]
        TaskId id = runtime.client().submit(wf, "order-1", "ann",
                SubmitOptions.builder().statusChannel("orders-replies").build()).id();
        Drain.untilIdle(runtime);
        while (Drain.statusUpdatesOnce(runtime) > 0) {
            // publish everything
        }

        List<GetResponse> got = drainQueue();
        List<TaskEvent> events = runtime.client().events(id);
        assertThat(got).hasSameSizeAs(events);
        List<StatusUpdate> decoded = got.stream().map(r -> RabbitStatusChannel.decode(r.getBody())).toList();
        assertThat(decoded).extracting(StatusUpdate::event).containsExactlyElementsOf(events);
        assertThat(decoded).extracting(StatusUpdate::channel).containsOnly("orders-replies");
        GetResponse last = got.get(got.size() - 1);
        StatusUpdate lastMessage = decoded.get(decoded.size() - 1);
        assertThat(last.getProps().getMessageId()).isEqualTo(Long.toString(lastMessage.deliveryId()));
        assertThat(last.getProps().getCorrelationId()).isEqualTo(id.value());
        assertThat(last.getProps().getType()).isEqualTo("PROCESSED");
        assertThat(last.getProps().getDeliveryMode()).isEqualTo(2);
        assertThat(last.getProps().getContentType()).isEqualTo("application/json");
        assertThat(last.getProps().getHeaders().get("sas-status")).hasToString("PROCESSED");
        assertThat(last.getProps().getHeaders().get("sas-business-key")).hasToString("order-1");
        assertThat(last.getProps().getHeaders().get("sas-workflow")).hasToString("greet");
        assertThat(got.get(1).getProps().getHeaders().get("sas-step")).hasToString("hello");
        assertThat(store.statusOutbox().orElseThrow().pending("orders-replies", 10)).isEmpty();
    }

    @Test
    void a_message_the_broker_cannot_route_stays_in_the_outbox_and_is_published_again_with_the_same_id()
            throws Exception {
        // no queue declared and none to route to: the broker returns the mandatory messages
        SasRuntime runtime = runtime(RabbitStatusChannel.builder("orders-replies", rabbit).routingKey(queue)
                .declareQueue(false).build());
        TaskId id = runtime.client().submit(wf, "order-1", "bob",
                SubmitOptions.builder().statusChannel("orders-replies").build()).id();

        assertThatThrownBy(() -> Drain.statusUpdatesOnce(runtime)).isInstanceOf(SasException.class)
                .hasMessageContaining("unroutable");
        List<StatusUpdate> waiting = store.statusOutbox().orElseThrow().pending("orders-replies", 10);
        assertThat(waiting).extracting(StatusUpdate::taskId).containsExactly(id);

        try (Channel ch = rabbit.openChannel()) {
            ch.queueDeclare(queue, true, false, false, null);
        }
        assertThat(Drain.statusUpdatesOnce(runtime)).isEqualTo(1);

        List<GetResponse> got = drainQueue();
        assertThat(got).hasSize(1);
        assertThat(got.get(0).getProps().getMessageId()).isEqualTo(Long.toString(waiting.get(0).deliveryId()));
    }

    @Test
    void a_broken_connection_is_replaced_on_the_next_batch() throws Exception {
        SasRuntime runtime = runtime(RabbitStatusChannel.builder("orders-replies", rabbit).routingKey(queue).build());
        runtime.client().submit(wf, "order-1", "cy", SubmitOptions.builder().statusChannel("orders-replies").build());
        assertThat(Drain.statusUpdatesOnce(runtime)).isEqualTo(1);
        rabbit.connection().abort();
        assertThat(rabbit.isOpen()).isFalse();

        runtime.client().submit(wf, "order-2", "dee", SubmitOptions.builder().statusChannel("orders-replies").build());
        assertThat(Drain.statusUpdatesOnce(runtime)).as("a new connection and channel").isEqualTo(1);

        assertThat(drainQueue()).hasSize(2);
        assertThat(rabbit.isOpen()).isTrue();
    }
}
