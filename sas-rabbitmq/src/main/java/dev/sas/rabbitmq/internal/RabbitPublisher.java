package dev.sas.rabbitmq.internal;

import com.rabbitmq.client.AMQP;
import dev.sas.core.StatusHandler;
import dev.sas.core.StatusUpdate;
import dev.sas.core.TaskEvent;
import dev.sas.rabbitmq.RabbitConnection;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * Publishes a status channel's batches to RabbitMQ: one persistent message per status, mandatory, on
 * a channel in confirm mode, and returns only once the broker confirmed every message of the batch
 * and returned none as unroutable. Anything else (broker down, a nack, a confirm that does not come in
 * time, a return) throws, after discarding the channel: the pump delivers the batch again from the
 * store's outbox, with the same message ids. Thread-safe (one batch at a time).
 */
public final class RabbitPublisher implements StatusHandler {
    private final RabbitConnection rabbit;
    private final String exchange;
    private final String routingKey;
    private final ConfirmPool pool;

    /**
     * @param declareQueue declare a durable queue named {@code routingKey} (for the default exchange)
     */
    public RabbitPublisher(RabbitConnection rabbit, String exchange, String routingKey, boolean declareQueue,
            Duration confirmTimeout) {
        this.rabbit = rabbit;
        this.exchange = exchange;
        this.routingKey = routingKey;
        this.pool = new ConfirmPool(rabbit, ch -> {
            if (declareQueue) {
                ch.queueDeclare(routingKey, true, false, false, null);
            }
        }, confirmTimeout, 1);
    }

    @Override
    public synchronized void deliver(List<StatusUpdate> messages) throws IOException, InterruptedException,
            TimeoutException {
        List<ConfirmPool.Message> out = new ArrayList<>(messages.size());
        for (StatusUpdate m : messages) {
            out.add(new ConfirmPool.Message(properties(m), ReplyJson.write(m)));
        }
        try {
            pool.publish(exchange, routingKey, out);
        } catch (IOException e) {
            throw new IOException(e.getMessage() + ". They stay in the outbox and are published again", e);
        }
    }

    private static AMQP.BasicProperties properties(StatusUpdate m) {
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
