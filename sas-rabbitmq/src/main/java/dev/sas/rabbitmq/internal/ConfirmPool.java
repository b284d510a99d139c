package dev.sas.rabbitmq.internal;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.sas.rabbitmq.RabbitConnection;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes with publisher confirms on channels borrowed from a small pool, so many threads publish
 * at once, each waiting only for its own confirms. A publish returns once the broker confirmed every
 * message and returned none as unroutable (all are mandatory); anything else (broker down, a nack, no
 * confirm in time, a return) throws after discarding the channel, and the caller publishes again.
 * Thread-safe.
 */
public final class ConfirmPool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConfirmPool.class);

    /** Sets up a freshly opened channel (declares queues); throwing discards the channel. */
    @FunctionalInterface
    public interface Setup {
        /**
         * @throws IOException if the broker refused
         */
        void prepare(Channel channel) throws IOException;
    }

    /** One message to publish. */
    public record Message(AMQP.BasicProperties properties, byte[] body) {
    }

    private final RabbitConnection rabbit;
    private final Setup setup;
    private final Duration confirmTimeout;
    private final BlockingQueue<Pooled> idle;
    private volatile boolean closed;

    /**
     * @param maxIdle channels kept open between publishes (more are opened while more threads publish)
     */
    public ConfirmPool(RabbitConnection rabbit, Setup setup, Duration confirmTimeout, int maxIdle) {
        this.rabbit = rabbit;
        this.setup = setup;
        this.confirmTimeout = confirmTimeout;
        this.idle = new ArrayBlockingQueue<>(maxIdle);
    }

    /**
     * Publishes {@code messages} to {@code exchange} with {@code routingKey} and waits for their confirms.
     *
     * @throws IOException if the broker is unreachable, nacked a message or returned one as unroutable
     * @throws TimeoutException if the confirms did not all come within the confirm timeout
     * @throws InterruptedException if interrupted while waiting
     */
    public void publish(String exchange, String routingKey, List<Message> messages)
            throws IOException, TimeoutException, InterruptedException {
        Pooled p = borrow();
        p.returned.set(0);
        try {
            for (Message m : messages) {
                p.channel.basicPublish(exchange, routingKey, true, m.properties(), m.body());
            }
            p.channel.waitForConfirmsOrDie(confirmTimeout.toMillis());
            int n = p.returned.get();
            if (n > 0) {
                throw new IOException("RabbitMQ returned " + n + " of " + messages.size() + " message(s) as unroutable"
                        + " (exchange '" + exchange + "', routing key '" + routingKey + "': " + p.returnReason.get()
                        + "); declare the queue or binding");
            }
        } catch (IOException | InterruptedException | TimeoutException | RuntimeException e) {
            abort(p.channel);
            throw e;
        }
        if (closed || !idle.offer(p)) {
            abort(p.channel);
        }
    }

    private Pooled borrow() throws IOException {
        for (Pooled p = idle.poll(); p != null; p = idle.poll()) {
            if (p.channel.isOpen()) {
                return p;
            }
            abort(p.channel);
        }
        Channel ch = rabbit.openChannel();
        try {
            ch.confirmSelect();
            Pooled p = new Pooled(ch);
            ch.addReturnListener(r -> {
                p.returnReason.set(r.getReplyCode() + " " + r.getReplyText());
                p.returned.incrementAndGet();
            });
            setup.prepare(ch);
            return p;
        } catch (IOException | RuntimeException e) {
            abort(ch);
            throw e;
        }
    }

    /** Closes the idle channels; publishing after close opens and closes a channel per publish. */
    @Override
    public void close() {
        closed = true;
        for (Pooled p = idle.poll(); p != null; p = idle.poll()) {
            abort(p.channel);
        }
    }

    static void abort(Channel ch) {
        try {
            ch.abort();
        } catch (IOException | RuntimeException e) {
            log.debug("aborting a RabbitMQ channel failed", e);
        }
    }

    private static final class Pooled {
        final Channel channel;
        final AtomicInteger returned = new AtomicInteger();
        final AtomicReference<String> returnReason = new AtomicReference<>();

        Pooled(Channel channel) {
            this.channel = channel;
        }
    }
}
