package dev.sas.rabbitmq.internal;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ReturnListener;
import dev.sas.core.ReplyHandler;
import dev.sas.core.ReplyMessage;
import dev.sas.core.TaskEvent;
import dev.sas.rabbitmq.RabbitConnection;
import java.io.IOException;
import java.time.Duration;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes a reply channel's batches to RabbitMQ: one persistent message per status, mandatory, on
 * a channel in confirm mode, and returns only once the broker confirmed every message of the batch
 * and returned none as unroutable. Anything else (broker down, a nack, a confirm that does not come in
 * time, a return) throws, after discarding the channel: the pump delivers the batch again from the
 * store's outbox, with the same message ids. Thread-safe (one batch at a time).
 */
public final class RabbitPublisher implements ReplyHandler {
    private static final Logger log = LoggerFactory.getLogger(RabbitPublisher.class);

    private final RabbitConnection rabbit;
    private final String exchange;
    private final String routingKey;
    private final boolean declareQueue;
    private final Duration confirmTimeout;
    private final AtomicInteger returned = new AtomicInteger();
    private final AtomicReference<String> returnReason = new AtomicReference<>();
    private Channel channel;

    /**
     * @param declareQueue declare a durable queue named {@code routingKey} (for the default exchange)
     */
    public RabbitPublisher(RabbitConnection rabbit, String exchange, String routingKey, boolean declareQueue,
            Duration confirmTimeout) {
        this.rabbit = rabbit;
        this.exchange = exchange;
        this.routingKey = routingKey;
        this.declareQueue = declareQueue;
        this.confirmTimeout = confirmTimeout;
    }

    @Override
    public synchronized void deliver(List<ReplyMessage> messages) throws IOException, InterruptedException,
            TimeoutException {
        Channel ch = channel();
        returned.set(0);
        try {
            for (ReplyMessage m : messages) {
                ch.basicPublish(exchange, routingKey, true, properties(m), ReplyJson.write(m));
            }
            ch.waitForConfirmsOrDie(confirmTimeout.toMillis());
            int n = returned.get();
            if (n > 0) {
                throw new IOException("RabbitMQ returned " + n + " of " + messages.size() + " message(s) as unroutable"
                        + " (exchange '" + exchange + "', routing key '" + routingKey + "': " + returnReason.get()
                        + "); declare the queue or binding. They stay in the outbox and are published again");
            }
        } catch (IOException | InterruptedException | TimeoutException | RuntimeException e) {
            discard();
            throw e;
        }
    }

    private Channel channel() throws IOException {
        if (channel != null && channel.isOpen()) {
            return channel;
        }
        discard();
        Channel ch = rabbit.openChannel();
        try {
            ch.confirmSelect();
            ch.addReturnListener((ReturnListener) (replyCode, replyText, ex, key, props, body) -> {
                returnReason.set(replyCode + " " + replyText);
                returned.incrementAndGet();
            });
            if (declareQueue) {
                ch.queueDeclare(routingKey, true, false, false, null);
            }
        } catch (IOException | RuntimeException e) {
            abort(ch);
            throw e;
        }
        channel = ch;
        return ch;
    }

    private void discard() {
        if (channel != null) {
            abort(channel);
            channel = null;
        }
    }

    private static void abort(Channel ch) {
        try {
            ch.abort();
        } catch (IOException | RuntimeException e) {
            log.debug("aborting a RabbitMQ channel failed", e);
        }
    }

    private static AMQP.BasicProperties properties(ReplyMessage m) {
        TaskEvent e = m.event();
        Map<String, Object> headers = new HashMap<>();
        headers.put("sas-channel", m.channel());
        headers.put("sas-delivery-id", m.deliveryId());
        headers.put("sas-task-id", e.taskId().value());
        putIfSet(headers, "sas-business-key", e.businessKey());
        putIfSet(headers, "sas-workflow", e.workflow());
        headers.put("sas-status", e.type().name());
        headers.put("sas-step-index", e.stepIndex());
        putIfSet(headers, "sas-step", e.stepName());
        return new AMQP.BasicProperties.Builder()
                .messageId(Long.toString(m.deliveryId()))
                .correlationId(e.taskId().value())
                .type(e.type().name())
                .contentType("application/json")
                .contentEncoding("utf-8")
                .deliveryMode(2)
                .timestamp(Date.from(e.at()))
                .headers(headers)
                .build();
    }

    private static void putIfSet(Map<String, Object> headers, String name, String value) {
        if (value != null) {
            headers.put(name, value);
        }
    }

    @Override
    public String toString() {
        return "RabbitPublisher{" + rabbit.address() + ", exchange '" + exchange + "', routing key '" + routingKey + "'}";
    }
}
