package dev.sas.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.StatusChannel;
import dev.sas.core.StatusUpdate;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Settings checked where they are set, and the message body read back as written. No broker needed. */
class RabbitSettingsTest {

    private final RabbitConnection rabbit = RabbitConnection.builder().uri("amqp://guest:guest@127.0.0.1:5672").build();

    @Test
    void bad_settings_are_refused_naming_the_setting() {
        assertThatThrownBy(() -> RabbitConnection.builder().uri("http://nowhere"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("uri");
        assertThatThrownBy(() -> RabbitConnection.builder().build()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("uri is required");
        assertThatThrownBy(() -> RabbitConnection.builder().connectTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("connectTimeout");
        assertThatThrownBy(() -> RabbitStatusChannel.builder("bad name", rabbit))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("status channel name");
        assertThatThrownBy(() -> RabbitStatusChannel.builder("ok", rabbit).confirmTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("confirmTimeout");
        assertThatThrownBy(() -> RabbitStatusChannel.builder("ok", rabbit).routingKey(" "))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("routingKey");
        assertThatThrownBy(() -> RabbitStatusChannel.decode("{\"taskId\":1}".getBytes()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not an SAS reply message");
    }

    @Test
    void a_channel_is_built_without_touching_the_broker_and_a_closed_connection_refuses_use() {
        StatusChannel channel = RabbitStatusChannel.builder("orders-replies", rabbit).batchSize(50)
                .leaseTime(Duration.ofSeconds(3)).build();
        assertThat(channel.name()).isEqualTo("orders-replies");
        assertThat(channel.batchSize()).isEqualTo(50);
        assertThat(channel.redeliverOnFailure()).isTrue();
        assertThat(rabbit.isOpen()).isFalse();
        rabbit.close();
        assertThatThrownBy(rabbit::openChannel).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void a_message_body_reads_back_as_written_whatever_its_text_holds() {
        TaskEvent e = new TaskEvent(TaskId.random(), "key \"1\" \\ é ☃", "wf", TaskEvent.Type.STEP_FAILED, 2, "ship",
                3, Instant.parse("2030-01-01T00:00:00.123Z"), "line 1\nline 2\ttab \u0001 end");
        StatusUpdate m = new StatusUpdate("replies", 42, e);

        assertThat(RabbitStatusChannel.decode(dev.sas.rabbitmq.internal.ReplyJson.write(m))).isEqualTo(m);
        StatusUpdate nulls = new StatusUpdate("replies", 7, new TaskEvent(e.taskId(), null, null,
                TaskEvent.Type.RECEIVED, -1, null, 0, e.at(), null));
        assertThat(RabbitStatusChannel.decode(dev.sas.rabbitmq.internal.ReplyJson.write(nulls))).isEqualTo(nulls);
    }

    @Test
    void a_status_message_an_older_build_published_with_reply_event_names_is_read_with_their_new_names() {
        String old = "{\"channel\":\"replies\",\"deliveryId\":3,\"taskId\":\"t-1\",\"businessKey\":null,"
                + "\"workflow\":\"w\",\"status\":\"%s\",\"stepIndex\":0,\"step\":\"approve\",\"attempt\":1,"
                + "\"at\":\"2030-01-01T00:00:00Z\",\"message\":null}";

        assertThat(RabbitStatusChannel.decode(old.formatted("REPLY_AWAITED").getBytes(java.nio.charset.StandardCharsets.UTF_8))
                .event().type()).isEqualTo(TaskEvent.Type.COMPLETION_AWAITED);
        assertThat(RabbitStatusChannel.decode(old.formatted("REPLY_RECEIVED").getBytes(java.nio.charset.StandardCharsets.UTF_8))
                .event().type()).isEqualTo(TaskEvent.Type.COMPLETION_RECEIVED);
    }
}
