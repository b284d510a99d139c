package dev.sas.rabbitmq;

import dev.sas.core.CompletionOutcome;
import dev.sas.core.SasClient;
import dev.sas.rabbitmq.internal.AgentMessages;
import dev.sas.rabbitmq.internal.QueueConsumer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Completes steps with the replies agent workers publish: consumes a {@link RabbitAgent}'s reply queue
 * and hands each reply to {@link dev.sas.core.StepCompletionClient#completeEncoded} (or
 * {@link dev.sas.core.StepCompletionClient#fail(String, String, boolean)}). Start it on any SAS node,
 * or in a process that holds only a client: the reply does not need the node that sent the request.
 *
 * <pre>{@code
 * RabbitAgentReplyConsumer replies = RabbitAgentReplyConsumer.builder(payments, runtime.client()).build().start();
 * }</pre>
 *
 * <p>A reply is acknowledged once the store answered, whatever it answered: accepted, or
 * {@link CompletionOutcome#LATE late}, {@link CompletionOutcome#STALE stale}, {@link CompletionOutcome#ALREADY_COMPLETED a
 * duplicate}, {@link CompletionOutcome#NOT_FOUND not found} or {@link CompletionOutcome#INVALID_TOKEN with a token
 * the client's keys did not sign}, which change nothing and are counted
 * ({@link #count}). When the store fails the reply goes back to the queue after a back-off (growing to
 * {@link Builder#maxBackoff}) and is tried again; a message that is not an SAS reply is rejected. After a
 * broken connection (a broker restart) it consumes again by itself. Several consumers (on several
 * nodes) may share the queue.
 *
 * <p>Thread-safe. {@link #close()} stops consuming and waits for the replies being recorded.
 */
public final class RabbitAgentReplyConsumer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RabbitAgentReplyConsumer.class);

    /** Default number of replies recorded at once: 4. */
    public static final int DEFAULT_CONCURRENCY = 4;
    /** Default first back-off after a store failure: 200 ms (doubling up to the maximum). */
    public static final Duration DEFAULT_BACKOFF = Duration.ofMillis(200);
    /** Default longest back-off after store failures: 5 s. */
    public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(5);

    private final String queue;
    private final SasClient client;
    private final RabbitConnection rabbit;
    private final Duration backoff;
    private final Duration maxBackoff;
    private final QueueConsumer consumer;
    private final Map<CompletionOutcome, AtomicLong> outcomes = new EnumMap<>(CompletionOutcome.class);
    private final AtomicLong storeFailures = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private final AtomicLong consecutiveFailures = new AtomicLong();

    private RabbitAgentReplyConsumer(Builder b) {
        this.queue = b.queue;
        this.client = b.client;
        this.rabbit = b.rabbit;
        this.backoff = b.backoff;
        this.maxBackoff = b.maxBackoff;
        for (CompletionOutcome o : CompletionOutcome.values()) {
            outcomes.put(o, new AtomicLong());
        }
        boolean declare = b.declareQueue;
        this.consumer = new QueueConsumer(rabbit, queue, b.concurrency, b.prefetch > 0 ? b.prefetch : b.concurrency * 4,
                b.reconnectDelay, (ch, q) -> {
                    if (declare) {
                        AgentMessages.declareQuorumQueue(ch, q);
                    }
                }, "sas-replies-" + queue, this::process);
    }

    /**
     * A builder for a consumer of {@code agent}'s reply queue, on its connection, completing steps
     * through {@code client}. Not thread-safe.
     *
     * @throws NullPointerException if an argument is null
     */
    public static Builder builder(RabbitAgent agent, SasClient client) {
        Objects.requireNonNull(agent, "agent must not be null");
        return new Builder(agent.replyQueue(), agent.connection(), client);
    }

    /**
     * A builder for a consumer of the reply queue {@code queue} on {@code rabbit}, completing steps
     * through {@code client}. Not thread-safe.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code queue} is not a valid queue name
     */
    public static Builder builder(String queue, RabbitConnection rabbit, SasClient client) {
        return new Builder(RabbitAgent.checkQueue("queue", queue), rabbit, client);
    }

    /** Starts consuming. Idempotent. Returns this consumer. */
    public RabbitAgentReplyConsumer start() {
        consumer.start();
        return this;
    }

    private void process(com.rabbitmq.client.AMQP.BasicProperties props, byte[] body, boolean redelivered,
            QueueConsumer.Settle settle) {
        AgentMessages.Reply reply;
        try {
            reply = AgentMessages.readReply(props, body);
        } catch (IllegalArgumentException e) {
            rejected.incrementAndGet();
            log.warn("reply queue {}: dropping a message that is not an SAS reply: {}", queue, e.getMessage());
            settle.reject();
            return;
        }
        Object taskId = props.getHeaders() == null ? null : props.getHeaders().get(AgentMessages.TASK_ID);
        String previousTask = MDC.get("sas.taskId");
        if (taskId != null) {
            MDC.put("sas.taskId", taskId.toString());
        }
        try {
            CompletionOutcome outcome = reply.ok()
                    ? client.stepCompletion().completeEncoded(reply.replyToken(), reply.text())
                    : client.stepCompletion().fail(reply.replyToken(), reply.text(), reply.retryable());
            consecutiveFailures.set(0);
            outcomes.get(outcome).incrementAndGet();
            if (!outcome.accepted()) {
                log.info("reply queue {}: a reply was {} and changed nothing", queue, outcome);
            }
            settle.ack();
        } catch (IllegalArgumentException e) {
            rejected.incrementAndGet();
            log.warn("reply queue {}: dropping a reply the store refuses: {}", queue, e.getMessage());
            settle.reject();
        } catch (RuntimeException e) {
            storeFailures.incrementAndGet();
            long n = consecutiveFailures.incrementAndGet();
            Duration wait = backoff.multipliedBy(1L << Math.min(n - 1, 20));
            if (wait.compareTo(maxBackoff) > 0) {
                wait = maxBackoff;
            }
            log.warn("reply queue {}: the store failed recording a reply ({}); it goes back to the queue after {}",
                    queue, e.toString(), wait);
            consumer.pause(wait);
            settle.requeue();
        } finally {
            if (previousTask == null) {
                MDC.remove("sas.taskId");
            } else {
                MDC.put("sas.taskId", previousTask);
            }
        }
    }

    /** How many replies had {@code outcome} so far. */
    public long count(CompletionOutcome outcome) {
        return outcomes.get(Objects.requireNonNull(outcome, "outcome must not be null")).get();
    }

    /** How many times the store failed recording a reply (each was given back to the queue). */
    public long storeFailures() {
        return storeFailures.get();
    }

    /** Messages dropped because they were not SAS replies or the store refused their token. */
    public long rejected() {
        return rejected.get();
    }

    /** True while the consumer is consuming (false while the broker is unreachable). */
    public boolean consuming() {
        return consumer.consuming();
    }

    /** The queue consumed. */
    public String queue() {
        return queue;
    }

    /** Stops consuming and waits for the replies being recorded. Idempotent. */
    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(10));
    }

    @Override
    public String toString() {
        return "RabbitAgentReplyConsumer{" + queue + " on " + rabbit.address() + '}';
    }

    /** Builds a {@link RabbitAgentReplyConsumer}. Not thread-safe. */
    public static final class Builder {
        private final String queue;
        private final RabbitConnection rabbit;
        private final SasClient client;
        private int concurrency = DEFAULT_CONCURRENCY;
        private int prefetch;
        private Duration backoff = DEFAULT_BACKOFF;
        private Duration maxBackoff = DEFAULT_MAX_BACKOFF;
        private Duration reconnectDelay = AgentWorker.DEFAULT_RECONNECT_DELAY;
        private boolean declareQueue = true;

        private Builder(String queue, RabbitConnection rabbit, SasClient client) {
            this.queue = queue;
            this.rabbit = Objects.requireNonNull(rabbit, "rabbit must not be null");
            this.client = Objects.requireNonNull(client, "client must not be null");
        }

        /**
         * How many replies are recorded at once (threads {@code sas-replies-<queue>-N}). Default 4.
         *
         * @throws IllegalArgumentException if less than 1 or more than 256
         */
        public Builder concurrency(int concurrency) {
            if (concurrency < 1 || concurrency > 256) {
                throw new IllegalArgumentException("concurrency must be between 1 and 256, was " + concurrency);
            }
            this.concurrency = concurrency;
            return this;
        }

        /**
         * How many unacknowledged replies the broker hands this consumer at once. Default four times
         * the concurrency.
         *
         * @throws IllegalArgumentException if less than 1 or more than 65,535
         */
        public Builder prefetch(int prefetch) {
            if (prefetch < 1 || prefetch > 65_535) {
                throw new IllegalArgumentException("prefetch must be between 1 and 65535, was " + prefetch);
            }
            this.prefetch = prefetch;
            return this;
        }

        /**
         * First wait after the store failed before the reply goes back to the queue; it doubles with
         * each failure in a row, up to {@link #maxBackoff}. Default 200 ms.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder backoff(Duration backoff) {
            this.backoff = RabbitAgent.checkPositive("backoff", backoff);
            return this;
        }

        /**
         * Longest wait after store failures. Default 5 s.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder maxBackoff(Duration maxBackoff) {
            this.maxBackoff = RabbitAgent.checkPositive("maxBackoff", maxBackoff);
            return this;
        }

        /**
         * Wait before consuming again after the connection broke. Default 1 s.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder reconnectDelay(Duration delay) {
            this.reconnectDelay = RabbitAgent.checkPositive("reconnectDelay", delay);
            return this;
        }

        /** Whether to declare the queue (durable, quorum) before consuming. Default true. */
        public Builder declareQueue(boolean declare) {
            this.declareQueue = declare;
            return this;
        }

        /**
         * The consumer (not started).
         *
         * @throws IllegalStateException if the back-off is longer than the maximum back-off, the
         *     prefetch is below the concurrency, or the client has no reply token keys to check the
         *     replies' tokens with
         */
        public RabbitAgentReplyConsumer build() {
            if (client.config().completionTokenKeys() == null) {
                throw new IllegalStateException("the client has no completionTokenKeys, so it could check no reply's"
                        + " token: build it with completionTokenKeys(...) (the same keys as the runtimes that send the"
                        + " requests), or pass a runtime's client");
            }
            if (backoff.compareTo(maxBackoff) > 0) {
                throw new IllegalStateException("backoff (" + backoff + ") must not exceed maxBackoff (" + maxBackoff
                        + ")");
            }
            if (prefetch > 0 && prefetch < concurrency) {
                throw new IllegalStateException("prefetch (" + prefetch + ") must be at least concurrency ("
                        + concurrency + ")");
            }
            return new RabbitAgentReplyConsumer(this);
        }
    }
}
