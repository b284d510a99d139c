package dev.sas.rabbitmq;

import dev.sas.core.StatusChannel;
import dev.sas.core.StatusUpdate;
import dev.sas.rabbitmq.internal.RabbitPublisher;
import dev.sas.rabbitmq.internal.ReplyJson;
import java.time.Duration;
import java.util.Objects;

/**
 * A status channel whose status messages go to RabbitMQ: the node consuming the channel publishes one
 * persistent message per status (task id, business key, workflow, step, status) with publisher
 * confirms, and the store forgets a message only once the broker confirmed it. While the broker is
 * down (or a message is unroutable) the messages wait in the store's outbox and are published again,
 * with the same message id, when it is back: nothing is lost, a message may arrive twice.
 *
 * <pre>{@code
 * RabbitConnection rabbit = RabbitConnection.builder().uri("amqp://guest:guest@127.0.0.1:5672").build();
 * SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders)
 *         .statusChannel(RabbitStatusChannel.builder("orders-replies", rabbit).build())   // queue "orders-replies"
 *         .build().start();
 * }</pre>
 *
 * <p>A message: body {@code application/json} ({@link #decode} reads it back), message id the
 * delivery id (drop repeats by it), correlation id the task id, type the status, timestamp the
 * event's time, and headers {@code sas-task-id}, {@code sas-business-key}, {@code sas-workflow},
 * {@code sas-step}, {@code sas-step-index}, {@code sas-status}, {@code sas-delivery-id},
 * {@code sas-channel}.
 */
public final class RabbitStatusChannel {
    /** Default longest wait for the broker to confirm a batch: 10 s. */
    public static final Duration DEFAULT_CONFIRM_TIMEOUT = Duration.ofSeconds(10);

    private RabbitStatusChannel() {
    }

    /**
     * A builder for the status channel {@code name}, publishing on {@code rabbit}. Not thread-safe.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is not a valid channel name
     */
    public static Builder builder(String name, RabbitConnection rabbit) {
        return new Builder(name, rabbit);
    }

    /**
     * The reply message in the body of a message this channel published.
     *
     * @throws NullPointerException if {@code body} is null
     * @throws IllegalArgumentException if it is not such a message
     */
    public static StatusUpdate decode(byte[] body) {
        return ReplyJson.read(Objects.requireNonNull(body, "body must not be null"));
    }

    /** Builds a {@link StatusChannel} publishing to RabbitMQ. Not thread-safe. */
    public static final class Builder {
        private final StatusChannel.Builder channel;
        private final String name;
        private final RabbitConnection rabbit;
        private String exchange = "";
        private String routingKey;
        private Boolean declareQueue;
        private Duration confirmTimeout = DEFAULT_CONFIRM_TIMEOUT;

        private Builder(String name, RabbitConnection rabbit) {
            this.channel = StatusChannel.builder(name);
            this.name = name;
            this.rabbit = Objects.requireNonNull(rabbit, "rabbit must not be null");
        }

        /**
         * The exchange to publish to. Default {@code ""}, the default exchange, which routes to the
         * queue named by the routing key.
         *
         * @throws NullPointerException if null
         */
        public Builder exchange(String exchange) {
            this.exchange = Objects.requireNonNull(exchange, "exchange must not be null");
            return this;
        }

        /**
         * The routing key. Default: the channel's name (with the default exchange: the queue of that name).
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if blank
         */
        public Builder routingKey(String routingKey) {
            Objects.requireNonNull(routingKey, "routingKey must not be null");
            if (routingKey.isBlank()) {
                throw new IllegalArgumentException("routingKey must not be blank");
            }
            this.routingKey = routingKey;
            return this;
        }

        /**
         * Whether to declare a durable queue named after the routing key before publishing (idempotent).
         * Default: true with the default exchange, false with another (bind your queues to it).
         */
        public Builder declareQueue(boolean declare) {
            this.declareQueue = declare;
            return this;
        }

        /**
         * Longest wait for the broker to confirm a batch; past it the batch is published again.
         * Default 10 s.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder confirmTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "confirmTimeout must not be null");
            if (timeout.isZero() || timeout.isNegative()) {
                throw new IllegalArgumentException("confirmTimeout must be positive, was " + timeout);
            }
            this.confirmTimeout = timeout;
            return this;
        }

        /**
         * Most messages published per confirm (see {@link StatusChannel.Builder#batchSize}).
         *
         * @throws IllegalArgumentException if less than 1 or more than 1,000
         */
        public Builder batchSize(int batchSize) {
            channel.batchSize(batchSize);
            return this;
        }

        /**
         * The consuming node's lease (see {@link StatusChannel.Builder#leaseTime}).
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if shorter than 1 s
         */
        public Builder leaseTime(Duration leaseTime) {
            channel.leaseTime(leaseTime);
            return this;
        }

        /** The status channel, to register with {@code RuntimeBuilder.statusChannel} or a {@code StatusConsumer}. */
        public StatusChannel build() {
            String key = routingKey != null ? routingKey : name;
            boolean declare = declareQueue != null ? declareQueue : exchange.isEmpty();
            return channel.handler(new RabbitPublisher(rabbit, exchange, key, declare, confirmTimeout)).build();
        }
    }
}
