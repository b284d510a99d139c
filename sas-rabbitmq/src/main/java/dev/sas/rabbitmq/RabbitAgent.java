package dev.sas.rabbitmq;

import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.CompletionRequest;
import dev.sas.core.StepContext;
import dev.sas.rabbitmq.internal.AgentMessages;
import dev.sas.rabbitmq.internal.ConfirmPool;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * A remote agent reached over RabbitMQ, as in the pattern's figure: a step sends its request to the
 * agent's request queue, {@link AgentWorker agent workers} (competing consumers, in processes of their
 * own) call the service and publish the reply to the reply queue, and a {@link RabbitAgentReplyConsumer}
 * on any SAS node completes the step with it. Both queues are durable quorum queues.
 *
 * <pre>{@code
 * RabbitAgent payments = RabbitAgent.builder("payments", rabbit).build();   // sas.agent.payments(.replies)
 * Workflow<Order> wf = Workflow.builder("orders", orderCodec)
 *         .step("charge", s -> s.completeWithin(Duration.ofSeconds(30))
 *                 .awaitCompletion(payments.request(ctx -> ctx.input().toJson())))
 *         .build();
 * }</pre>
 *
 * <p>A {@linkplain #request request} publishes one persistent message with publisher confirms and
 * returns once the broker confirmed it; a nack, an unroutable message or no confirm within
 * {@link Builder#confirmTimeout} throws, which counts a failed attempt of the step (retried per its
 * policy, with the same idempotency key). The message: body the encoded payload, reply-to the reply
 * queue, correlation and message id the reply token, and headers {@code sas-idempotency-key},
 * {@code sas-complete-by} (epoch ms), {@code sas-reply-token}, {@code sas-task-id},
 * {@code sas-business-key}, {@code sas-workflow}, {@code sas-step}, {@code sas-step-index},
 * {@code sas-attempt}, {@code sas-agent}.
 *
 * <p>Immutable and thread-safe: many steps publish at once, each on a pooled channel. {@link #close()}
 * closes the pooled channels, not the {@link RabbitConnection}.
 */
public final class RabbitAgent implements AutoCloseable {
    /** Prefix of the default request queue: {@code sas.agent.<name>}. */
    public static final String DEFAULT_QUEUE_PREFIX = "sas.agent.";
    /** Suffix of the default reply queue: {@code sas.agent.<name>.replies}. */
    public static final String DEFAULT_REPLY_SUFFIX = ".replies";
    /** Default longest wait for the broker to confirm a request: 5 s. */
    public static final Duration DEFAULT_CONFIRM_TIMEOUT = Duration.ofSeconds(5);
    /** Channels kept open for publishing between requests. */
    private static final int IDLE_CHANNELS = 8;

    private final String name;
    private final String requestQueue;
    private final String replyQueue;
    private final RabbitConnection rabbit;
    private final Duration confirmTimeout;
    private final boolean declareQueues;
    private final Clock clock;
    private final ConfirmPool pool;

    private RabbitAgent(Builder b) {
        this.name = b.name;
        this.requestQueue = b.requestQueue != null ? b.requestQueue : DEFAULT_QUEUE_PREFIX + b.name;
        this.replyQueue = b.replyQueue != null ? b.replyQueue : requestQueue + DEFAULT_REPLY_SUFFIX;
        this.rabbit = b.rabbit;
        this.confirmTimeout = b.confirmTimeout;
        this.declareQueues = b.declareQueues;
        this.clock = b.clock;
        this.pool = new ConfirmPool(rabbit, ch -> {
            if (declareQueues) {
                AgentMessages.declareQuorumQueue(ch, requestQueue);
                AgentMessages.declareQuorumQueue(ch, replyQueue);
            }
        }, confirmTimeout, IDLE_CHANNELS);
    }

    /**
     * A builder for the agent {@code name} on {@code rabbit}. Not thread-safe.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is blank or longer than 200 characters
     */
    public static Builder builder(String name, RabbitConnection rabbit) {
        return new Builder(name, rabbit);
    }

    /**
     * The request of an {@code awaitCompletion} step whose payload is the text {@code payload} makes of
     * the step's context.
     *
     * @param <I> the workflow's input type
     * @throws NullPointerException if {@code payload} is null
     */
    public <I> CompletionRequest<I> request(Function<? super StepContext<I>, String> payload) {
        return request(payload, Codec.string());
    }

    /**
     * The request of an {@code awaitCompletion} step whose payload is the value {@code payload} makes of
     * the step's context, encoded with {@code codec}. A payload that cannot be made or encoded fails
     * the step without retry ({@link NonRetryableException}); a publish the broker does not confirm
     * is a failed attempt, retried per the step's policy.
     *
     * @param <I> the workflow's input type
     * @param <Q> the payload type
     * @throws NullPointerException if an argument is null
     */
    public <I, Q> CompletionRequest<I> request(Function<? super StepContext<I>, ? extends Q> payload, Codec<Q> codec) {
        Objects.requireNonNull(payload, "payload must not be null");
        Objects.requireNonNull(codec, "codec must not be null");
        return (ctx, token) -> {
            String text;
            try {
                text = codec.encode(payload.apply(ctx));
            } catch (RuntimeException e) {
                throw new NonRetryableException("agent '" + name + "': the request payload of step '" + ctx.stepName()
                        + "' cannot be made or encoded: " + e.getMessage(), e);
            }
            AgentMessages.RequestHeaders headers = new AgentMessages.RequestHeaders(name, token, ctx.idempotencyKey(),
                    ctx.completeBy(), ctx.taskId().value(), ctx.businessKey(), ctx.workflow(), ctx.stepName(),
                    ctx.stepIndex(), ctx.attempt());
            byte[] body = text == null ? new byte[0] : text.getBytes(StandardCharsets.UTF_8);
            pool.publish("", requestQueue, List.of(new ConfirmPool.Message(
                    AgentMessages.request(headers, replyQueue, clock.instant()), body)));
        };
    }

    /** The agent's name. */
    public String name() {
        return name;
    }

    /** The queue requests are published to (workers consume it). */
    public String requestQueue() {
        return requestQueue;
    }

    /** The queue replies are published to (a {@link RabbitAgentReplyConsumer} consumes it). */
    public String replyQueue() {
        return replyQueue;
    }

    /** The longest wait for a request's confirm. */
    public Duration confirmTimeout() {
        return confirmTimeout;
    }

    /** Whether the queues are declared (as durable quorum queues) before the first publish. */
    public boolean declareQueues() {
        return declareQueues;
    }

    /** The connection the requests go out on. */
    public RabbitConnection connection() {
        return rabbit;
    }

    /** Closes the pooled publishing channels (not the connection). Idempotent. */
    @Override
    public void close() {
        pool.close();
    }

    @Override
    public String toString() {
        return "RabbitAgent{" + name + ", requests " + requestQueue + ", replies " + replyQueue + " on "
                + rabbit.address() + '}';
    }

    static String checkQueue(String what, String queue) {
        Objects.requireNonNull(queue, what + " must not be null");
        if (queue.isBlank()) {
            throw new IllegalArgumentException(what + " must not be blank");
        }
        if (queue.getBytes(StandardCharsets.UTF_8).length > 255) {
            throw new IllegalArgumentException(what + " must be at most 255 bytes (a RabbitMQ queue name), was "
                    + queue.length() + " characters");
        }
        if (queue.startsWith("amq.")) {
            throw new IllegalArgumentException(what + " must not start with 'amq.' (reserved by RabbitMQ), was '"
                    + queue + "'");
        }
        return queue;
    }

    static Duration checkPositive(String what, Duration d) {
        Objects.requireNonNull(d, what + " must not be null");
        if (d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException(what + " must be positive, was " + d);
        }
        return d;
    }

    /** Builds a {@link RabbitAgent}. Not thread-safe; {@link #build()} may be called again. */
    public static final class Builder {
        private final String name;
        private final RabbitConnection rabbit;
        private String requestQueue;
        private String replyQueue;
        private Duration confirmTimeout = DEFAULT_CONFIRM_TIMEOUT;
        private boolean declareQueues = true;
        private Clock clock = Clock.systemUTC();

        private Builder(String name, RabbitConnection rabbit) {
            Objects.requireNonNull(name, "name must not be null");
            if (name.isBlank()) {
                throw new IllegalArgumentException("name must not be blank");
            }
            if (name.length() > 200) {
                throw new IllegalArgumentException("name must be at most 200 characters (it names queues), was "
                        + name.length());
            }
            this.name = name;
            this.rabbit = Objects.requireNonNull(rabbit, "rabbit must not be null");
        }

        /**
         * The request queue. Default {@code sas.agent.<name>}.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if blank, longer than 255 bytes or starting with {@code amq.}
         */
        public Builder requestQueue(String queue) {
            this.requestQueue = checkQueue("requestQueue", queue);
            return this;
        }

        /**
         * The reply queue. Default the request queue's name followed by {@code .replies}.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if blank, longer than 255 bytes or starting with {@code amq.}
         */
        public Builder replyQueue(String queue) {
            this.replyQueue = checkQueue("replyQueue", queue);
            return this;
        }

        /**
         * Longest wait for the broker to confirm a request; past it the attempt fails and is retried.
         * Default 5 s.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder confirmTimeout(Duration timeout) {
            this.confirmTimeout = checkPositive("confirmTimeout", timeout);
            return this;
        }

        /**
         * Whether to declare both queues as durable quorum queues before the first publish
         * (idempotent). Default true; turn it off when the queues are provisioned by other means.
         */
        public Builder declareQueues(boolean declare) {
            this.declareQueues = declare;
            return this;
        }

        /**
         * The clock stamping the messages' timestamp. Default the system clock (UTC).
         *
         * @throws NullPointerException if null
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * The agent.
         *
         * @throws IllegalStateException if the request and reply queues are the same
         */
        public RabbitAgent build() {
            String req = requestQueue != null ? requestQueue : DEFAULT_QUEUE_PREFIX + name;
            String rep = replyQueue != null ? replyQueue : req + DEFAULT_REPLY_SUFFIX;
            if (req.equals(rep)) {
                throw new IllegalStateException("requestQueue and replyQueue must differ, both were '" + req + "'");
            }
            return new RabbitAgent(this);
        }
    }
}
