package dev.sas.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.SasClient;
import dev.sas.testing.InMemoryStateStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The agent, worker and reply consumer builders: defaults and every setting checked where it is set. */
class RabbitAgentBuilderTest {
    private final RabbitConnection rabbit = RabbitConnection.builder().uri("amqp://guest:guest@127.0.0.1:5672").build();

    @Test
    void queues_default_to_the_agent_name() {
        RabbitAgent agent = RabbitAgent.builder("payments", rabbit).build();
        assertThat(agent.requestQueue()).isEqualTo("sas.agent.payments");
        assertThat(agent.replyQueue()).isEqualTo("sas.agent.payments.replies");
        assertThat(agent.confirmTimeout()).isEqualTo(RabbitAgent.DEFAULT_CONFIRM_TIMEOUT);
        assertThat(agent.declareQueues()).isTrue();
        RabbitAgent custom = RabbitAgent.builder("payments", rabbit).requestQueue("pay.in").build();
        assertThat(custom.replyQueue()).isEqualTo("pay.in.replies");
        assertThat(AgentWorker.builder(custom).handler(r -> "x").build().requestQueue()).isEqualTo("pay.in");
        assertThat(AgentWorker.builder("payments", rabbit).handler(r -> "x").build().requestQueue())
                .isEqualTo("sas.agent.payments");
    }

    @Test
    void bad_agent_settings_are_refused_where_set() {
        assertThatThrownBy(() -> RabbitAgent.builder(" ", rabbit)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("name must not be blank");
        assertThatThrownBy(() -> RabbitAgent.builder("p", null)).isInstanceOf(NullPointerException.class)
                .hasMessage("rabbit must not be null");
        assertThatThrownBy(() -> RabbitAgent.builder("p", rabbit).requestQueue("amq.x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("amq.");
        assertThatThrownBy(() -> RabbitAgent.builder("p", rabbit).replyQueue("q".repeat(256)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("255 bytes");
        assertThatThrownBy(() -> RabbitAgent.builder("p", rabbit).confirmTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("confirmTimeout must be positive, was PT0S");
        assertThatThrownBy(() -> RabbitAgent.builder("p", rabbit).requestQueue("q").replyQueue("q").build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("must differ");
        RabbitAgent agent = RabbitAgent.builder("p", rabbit).build();
        assertThatThrownBy(() -> agent.request(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void bad_worker_settings_are_refused_where_set_or_at_build() {
        assertThatThrownBy(() -> AgentWorker.builder("p", rabbit).concurrency(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("concurrency must be between 1 and 1000, was 0");
        assertThatThrownBy(() -> AgentWorker.builder("p", rabbit).prefetch(0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AgentWorker.builder("p", rabbit).reconnectDelay(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> AgentWorker.builder("p", rabbit).build()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("handler is required");
        assertThatThrownBy(() -> AgentWorker.builder("p", rabbit).handler(r -> "x").concurrency(8).prefetch(2).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("prefetch (2)")
                .hasMessageContaining("concurrency (8)");
    }

    @Test
    void bad_reply_consumer_settings_are_refused_where_set_or_at_build() {
        SasClient client = SasClient.builder().stateStore(new InMemoryStateStore()).completionTokenKeys(PayFlows.KEYS)
                .build();
        RabbitAgent agent = RabbitAgent.builder("p", rabbit).build();
        assertThatThrownBy(() -> RabbitAgentReplyConsumer.builder(agent, null)).isInstanceOf(NullPointerException.class)
                .hasMessage("client must not be null");
        assertThatThrownBy(() -> RabbitAgentReplyConsumer.builder(" ", rabbit, client))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("queue must not be blank");
        assertThatThrownBy(() -> RabbitAgentReplyConsumer.builder(agent, client).concurrency(0))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RabbitAgentReplyConsumer.builder(agent, client).backoff(Duration.ofSeconds(10)).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("maxBackoff");
        assertThat(RabbitAgentReplyConsumer.builder(agent, client).build().queue()).isEqualTo("sas.agent.p.replies");
        SasClient noKeys = SasClient.builder().stateStore(new InMemoryStateStore()).build();
        assertThatThrownBy(() -> RabbitAgentReplyConsumer.builder(agent, noKeys).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("completionTokenKeys");
    }
}
