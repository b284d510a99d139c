package dev.sas.rabbitmq;

import dev.sas.core.NonRetryableException;
import dev.sas.core.TaskId;
import dev.sas.rabbitmq.internal.AgentMessages;
import dev.sas.rabbitmq.internal.ConfirmPool;
import dev.sas.rabbitmq.internal.QueueConsumer;
import dev.sas.rabbitmq.internal.TaskMdc;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An agent worker: the process that stands between a {@link RabbitAgent}'s request queue and the
 * remote service. Deployable on its own: it needs this module and a {@link RabbitConnection}, no
 * database and no SAS runtime. Any number of workers, in any number of processes, consume the same
 * queue as competing consumers.
 *
 * <pre>{@code
 * try (RabbitConnection rabbit = RabbitConnection.builder().uri(uri).connectionName("payment-worker").build();
 *      AgentWorker worker = AgentWorker.builder("payments", rabbit).concurrency(8)
 *              .handler(request -> paymentService.charge(request.payload(), request.idempotencyKey()))
 *              .build().start()) {
 *     awaitShutdownSignal();
 * }
 * }</pre>
 *
 * <p>For each request, with manual acknowledgements and at most {@link Builder#prefetch} unacknowledged
 * per worker: a request already past its complete-by (by this worker's clock) is acknowledged and
 * dropped, since its reply would be rejected anyway; otherwise the {@link Handler} is called, its answer
 * (or its failure: {@link NonRetryableException} fails the step, any other exception is a retryable
 * failed attempt) is published to the request's reply-to queue with publisher confirms, and only then
 * is the request acknowledged. A worker that dies before the acknowledgement leaves the request to
 * the broker, which delivers it again: the service sees the same idempotency key. A reply that cannot
 * be published puts the request back on the queue after {@link Builder#reconnectDelay}. After a broken
 * connection (a broker restart) the worker consumes again by itself.
 *
 * <p>Thread-safe. {@link #close()} stops consuming, lets running calls finish for
 * {@link Builder#closeGrace}, then interrupts them; unacknowledged requests go back to the queue.
 */
public final class AgentWorker implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AgentWorker.class);

    /** Default number of requests handled at once: 4. */
    public static final int DEFAULT_CONCURRENCY = 4;
    /** Default wait before consuming again after the connection broke: 1 s. */
    public static final Duration DEFAULT_RECONNECT_DELAY = Duration.ofSeconds(1);
    /** Default longest wait for running calls at close: 10 s. */
    public static final Duration DEFAULT_CLOSE_GRACE = Duration.ofSeconds(10);

    /** Calls the remote service for one request. Implementations must be thread-safe. */
    @FunctionalInterface
    public interface Handler {
        /**
         * Handles a request and answers the step's output (encoded as the step's codec expects; a
         * step defined by name takes the text as is).
         *
         * @param request the request, with its idempotency key and deadline
         * @return the step's output, or null
         * @throws NonRetryableException to fail the step for good
         * @throws Exception for a failed attempt, retried per the step's retry policy
         */
        String handle(Request request) throws Exception;
    }

    /**
     * One request as a worker sees it. Immutable.
     *
     * @param payload the request's payload text
     * @param idempotencyKey the same for every attempt at the step: pass it to the service
     * @param completeBy the attempt's deadline; a reply after it is rejected
     * @param taskId the task
     * @param businessKey the task's business key, or null
     * @param workflow the workflow, or null if the sender did not say
     * @param step the step's name, or null if the sender did not say
     * @param stepIndex the step's index
     * @param attempt the attempt, from 1
     * @param redelivered true if the broker delivered it before (a worker died or could not reply)
     * @param clock the worker's clock, for {@link #remaining()}
     */
    public record Request(String payload, String idempotencyKey, Instant completeBy, TaskId taskId,
            String businessKey, String workflow, String step, int stepIndex, int attempt, boolean redelivered,
            Clock clock) {

        /** Time left until {@link #completeBy()} by the worker's clock, never negative. */
        public Duration remaining() {
            Duration d = Duration.between(clock.instant(), completeBy);
            return d.isNegative() ? Duration.ZERO : d;
        }

        @Override
        public String toString() {
            return "Request{task " + taskId + ", step " + step + ", attempt " + attempt + ", key " + idempotencyKey
                    + ", completeBy " + completeBy + '}';
        }
    }

    private final String agent;
    private final String requestQueue;
    private final RabbitConnection rabbit;
    private final Handler handler;
    private final int concurrency;
    private final int prefetch;
    private final Duration reconnectDelay;
    private final Duration closeGrace;
    private final Clock clock;
    private final ConfirmPool replies;
    private final QueueConsumer consumer;
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicLong answered = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong expired = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();

    private AgentWorker(Builder b) {
        this.agent = b.agent;
        this.requestQueue = b.requestQueue != null ? b.requestQueue : RabbitAgent.DEFAULT_QUEUE_PREFIX + b.agent;
        this.rabbit = b.rabbit;
        this.handler = b.handler;
        this.concurrency = b.concurrency;
        this.prefetch = b.prefetch > 0 ? b.prefetch : b.concurrency;
        this.reconnectDelay = b.reconnectDelay;
        this.closeGrace = b.closeGrace;
        this.clock = b.clock;
        this.replies = new ConfirmPool(rabbit, ch -> { }, b.confirmTimeout, concurrency);
        boolean declare = b.declareQueue;
        this.consumer = new QueueConsumer(rabbit, requestQueue, concurrency, prefetch, reconnectDelay,
                (ch, q) -> {
                    if (declare) {
                        AgentMessages.declareQuorumQueue(ch, q);
                    }
                }, "sas-agent-" + agent, this::process);
    }

    /**
     * A builder for a worker of the agent {@code agent} (the name given to {@link RabbitAgent#builder}),
     * consuming on {@code rabbit}. Not thread-safe.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code agent} is blank
     */
    public static Builder builder(String agent, RabbitConnection rabbit) {
        return new Builder(agent, rabbit);
    }

    /**
     * A builder for a worker of {@code agent}, consuming its request queue on its connection.
     *
     * @throws NullPointerException if {@code agent} is null
     */
    public static Builder builder(RabbitAgent agent) {
        Objects.requireNonNull(agent, "agent must not be null");
        return new Builder(agent.name(), agent.connection()).requestQueue(agent.requestQueue());
    }

    /** Starts consuming. Idempotent. Returns this worker. */
    public AgentWorker start() {
        if (started.compareAndSet(false, true)) {
            log.info("agent worker {} consuming {} with {} thread(s), prefetch {}", agent, requestQueue, concurrency,
                    prefetch);
            consumer.start();
        }
        return this;
    }

    private void process(com.rabbitmq.client.AMQP.BasicProperties props, byte[] body, boolean redelivered,
            QueueConsumer.Settle settle) {
        AgentMessages.RequestHeaders h;
        try {
            h = AgentMessages.readRequest(props);
        } catch (IllegalArgumentException e) {
            rejected.incrementAndGet();
            log.warn("agent worker {}: dropping a message of {} that is not an SAS request: {}", agent, requestQueue,
                    e.getMessage());
            settle.reject();
            return;
        }
        String replyTo = props.getReplyTo();
        TaskMdc mdc = TaskMdc.of(h.taskId(), h.stepIndex());
        try {
            if (replyTo == null || replyTo.isBlank()) {
                rejected.incrementAndGet();
                log.warn("agent worker {}: dropping a request without reply-to (attempt {})", agent, h.attempt());
                settle.reject();
                return;
            }
            if (!clock.instant().isBefore(h.completeBy())) {
                expired.incrementAndGet();
                log.info("agent worker {}: dropping a request past its complete-by {} (attempt {}): its reply would be"
                        + " rejected; the step's deadline retries it", agent, h.completeBy(), h.attempt());
                settle.ack();
                return;
            }
            Request request = new Request(new String(body, StandardCharsets.UTF_8), h.idempotencyKey(), h.completeBy(),
                    TaskId.of(h.taskId()), h.businessKey(), h.workflow(), h.step(), h.stepIndex(), h.attempt(),
                    redelivered, clock);
            boolean ok;
            boolean retryable = true;
            String text;
            try {
                text = handler.handle(request);
                ok = true;
            } catch (NonRetryableException e) {
                ok = false;
                retryable = false;
                text = describe(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                log.info("agent worker {}: call interrupted (closing); the request goes back to the queue", agent);
                settle.requeue();
                return;
            } catch (Exception e) {
                ok = false;
                text = describe(e);
            }
            if (ok) {
                answered.incrementAndGet();
            } else {
                failed.incrementAndGet();
                log.info("agent worker {}: the call failed (attempt {}, {}): {}", agent, h.attempt(),
                        retryable ? "retryable" : "not retryable", text);
            }
            byte[] replyBody = text == null ? new byte[0] : text.getBytes(StandardCharsets.UTF_8);
            try {
                replies.publish("", replyTo, List.of(new ConfirmPool.Message(
                        AgentMessages.reply(h, ok, retryable, ok && text == null, clock.instant()), replyBody)));
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                log.warn("agent worker {}: cannot publish the reply to {} ({}); the request goes back to the queue"
                        + " after {}", agent, replyTo, e.toString(), reconnectDelay);
                consumer.pause(reconnectDelay);
                settle.requeue();
                return;
            }
            settle.ack();
        } finally {
            mdc.close();
        }
    }

    private static String describe(Exception e) {
        String m = e.getMessage();
        return m == null || m.isBlank() ? e.getClass().getName() : m;
    }

    /** The agent's name. */
    public String agent() {
        return agent;
    }

    /** The queue consumed. */
    public String requestQueue() {
        return requestQueue;
    }

    /** Requests answered with an output. */
    public long answered() {
        return answered.get();
    }

    /** Requests answered with a failure (the handler threw). */
    public long failed() {
        return failed.get();
    }

    /** Requests dropped because they arrived past their complete-by. */
    public long expired() {
        return expired.get();
    }

    /** Messages dropped because they were not SAS requests. */
    public long rejected() {
        return rejected.get();
    }

    /** True while the worker is consuming (false while the broker is unreachable). */
    public boolean consuming() {
        return consumer.consuming();
    }

    /** Stops consuming and waits for running calls (see the class comment). Idempotent. */
    @Override
    public void close() {
        consumer.close(closeGrace);
        replies.close();
        log.info("agent worker {} closed: {} answered, {} failed, {} expired, {} rejected", agent, answered(),
                failed(), expired(), rejected());
    }

    @Override
    public String toString() {
        return "AgentWorker{" + agent + ", " + requestQueue + " on " + rabbit.address() + '}';
    }

    /** Builds an {@link AgentWorker}. Not thread-safe. */
    public static final class Builder {
        private final String agent;
        private final RabbitConnection rabbit;
        private String requestQueue;
        private Handler handler;
        private int concurrency = DEFAULT_CONCURRENCY;
        private int prefetch;
        private Duration reconnectDelay = DEFAULT_RECONNECT_DELAY;
        private Duration closeGrace = DEFAULT_CLOSE_GRACE;
        private Duration confirmTimeout = RabbitAgent.DEFAULT_CONFIRM_TIMEOUT;
        private boolean declareQueue = true;
        private Clock clock = Clock.systemUTC();

        private Builder(String agent, RabbitConnection rabbit) {
            Objects.requireNonNull(agent, "agent must not be null");
            if (agent.isBlank()) {
                throw new IllegalArgumentException("agent must not be blank");
            }
            this.agent = agent;
            this.rabbit = Objects.requireNonNull(rabbit, "rabbit must not be null");
        }

        /**
         * The queue to consume. Default {@code sas.agent.<agent>}, as {@link RabbitAgent}'s default.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if blank, longer than 255 bytes or starting with {@code amq.}
         */
        public Builder requestQueue(String queue) {
            this.requestQueue = RabbitAgent.checkQueue("requestQueue", queue);
            return this;
        }

        /**
         * What to do with each request. Required.
         *
         * @throws NullPointerException if null
         */
        public Builder handler(Handler handler) {
            this.handler = Objects.requireNonNull(handler, "handler must not be null");
            return this;
        }

        /**
         * How many requests this worker handles at once (its threads, {@code sas-agent-<agent>-N}).
         * Default 4.
         *
         * @throws IllegalArgumentException if less than 1 or more than 1,000
         */
        public Builder concurrency(int concurrency) {
            if (concurrency < 1 || concurrency > 1_000) {
                throw new IllegalArgumentException("concurrency must be between 1 and 1000, was " + concurrency);
            }
            this.concurrency = concurrency;
            return this;
        }

        /**
         * How many unacknowledged requests the broker hands this worker at once. Default: the concurrency.
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
         * Wait before consuming again after the connection broke, and before giving back a request
         * whose reply could not be published. Default 1 s.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder reconnectDelay(Duration delay) {
            this.reconnectDelay = RabbitAgent.checkPositive("reconnectDelay", delay);
            return this;
        }

        /**
         * Longest wait for running calls at close before they are interrupted. Default 10 s.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder closeGrace(Duration grace) {
            this.closeGrace = RabbitAgent.checkPositive("closeGrace", grace);
            return this;
        }

        /**
         * Longest wait for the broker to confirm a reply. Default 5 s.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive
         */
        public Builder confirmTimeout(Duration timeout) {
            this.confirmTimeout = RabbitAgent.checkPositive("confirmTimeout", timeout);
            return this;
        }

        /** Whether to declare the request queue (durable, quorum) before consuming. Default true. */
        public Builder declareQueue(boolean declare) {
            this.declareQueue = declare;
            return this;
        }

        /**
         * The clock deciding whether a request is past its complete-by, and {@link Request#remaining()}.
         * Default the system clock; keep the worker's host synchronised (NTP).
         *
         * @throws NullPointerException if null
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * The worker (not started).
         *
         * @throws IllegalStateException if no handler was set, or the prefetch is below the concurrency
         */
        public AgentWorker build() {
            if (handler == null) {
                throw new IllegalStateException("agent worker '" + agent + "': handler is required: call handler(...)"
                        + " before build()");
            }
            if (prefetch > 0 && prefetch < concurrency) {
                throw new IllegalStateException("agent worker '" + agent + "': prefetch (" + prefetch
                        + ") must be at least concurrency (" + concurrency + "), or threads stay idle");
            }
            return new AgentWorker(this);
        }
    }
}
