package dev.sas.rabbitmq.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.AMQP;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The agent transport's message format, both ways, and what it refuses. */
class AgentMessagesTest {
    private static final Instant NOW = Instant.parse("2030-01-01T00:00:00Z");
    private final AgentMessages.RequestHeaders headers = new AgentMessages.RequestHeaders("payments", "tok-1",
            "key-1", NOW.plusSeconds(30), "task-1", "order-1", "orders", "charge", 2, 3);

    @Test
    void a_request_carries_every_header_and_reads_back_the_same() {
        AMQP.BasicProperties p = AgentMessages.request(headers, "replies", NOW);

        assertThat(AgentMessages.readRequest(p)).isEqualTo(headers);
        assertThat(p.getDeliveryMode()).as("persistent").isEqualTo(2);
        assertThat(p.getReplyTo()).isEqualTo("replies");
        assertThat(p.getCorrelationId()).isEqualTo("tok-1");
        assertThat(p.getMessageId()).isEqualTo("tok-1");
        assertThat(p.getHeaders()).containsEntry("sas-complete-by", NOW.plusSeconds(30).toEpochMilli())
                .containsEntry("sas-idempotency-key", "key-1").containsEntry("sas-attempt", 3);
    }

    @Test
    void a_request_without_a_business_key_leaves_the_header_out() {
        AgentMessages.RequestHeaders noKey = new AgentMessages.RequestHeaders("payments", "tok-1", "key-1",
                NOW, "task-1", null, "orders", "charge", 0, 1);
        AMQP.BasicProperties p = AgentMessages.request(noKey, "replies", NOW);
        assertThat(p.getHeaders()).doesNotContainKey("sas-business-key");
        assertThat(AgentMessages.readRequest(p)).isEqualTo(noKey);
    }

    @Test
    void replies_read_back_as_ok_null_output_or_error_with_their_retry_flag() {
        byte[] body = "done".getBytes(StandardCharsets.UTF_8);
        assertThat(AgentMessages.readReply(AgentMessages.reply(headers, true, true, false, NOW), body))
                .isEqualTo(new AgentMessages.Reply("tok-1", true, "done", true));
        assertThat(AgentMessages.readReply(AgentMessages.reply(headers, true, true, true, NOW), new byte[0]))
                .isEqualTo(new AgentMessages.Reply("tok-1", true, null, true));
        assertThat(AgentMessages.readReply(AgentMessages.reply(headers, false, false, false, NOW), body))
                .isEqualTo(new AgentMessages.Reply("tok-1", false, "done", false));
    }

    @Test
    void a_message_missing_a_header_is_refused_naming_it() {
        Map<String, Object> h = new HashMap<>(AgentMessages.request(headers, "replies", NOW).getHeaders());
        h.remove("sas-complete-by");
        assertThatThrownBy(() -> AgentMessages.readRequest(new AMQP.BasicProperties.Builder().headers(h).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sas-complete-by");
        assertThatThrownBy(() -> AgentMessages.readRequest(new AMQP.BasicProperties.Builder().build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sas-reply-token");
        assertThatThrownBy(() -> AgentMessages.readReply(new AMQP.BasicProperties.Builder()
                .headers(Map.of("sas-reply-token", "t", "sas-outcome", "maybe")).build(), new byte[0]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sas-outcome");
    }
}
