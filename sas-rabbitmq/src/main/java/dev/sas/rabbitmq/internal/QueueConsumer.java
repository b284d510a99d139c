package dev.sas.rabbitmq.internal;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import dev.sas.rabbitmq.RabbitConnection;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes one queue with manual acknowledgements and a prefetch, handing each delivery to a pool of
 * named threads, and consumes again on a new channel whenever the channel or the connection broke
 * (broker restarted, network dropped): a delivery not acknowledged on the old channel is redelivered
 * by the broker. Thread-safe.
 */
public final class QueueConsumer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(QueueConsumer.class);

    /** Handles one delivery on a pool thread and settles it through {@code settle}. */
    @FunctionalInterface
    public interface Processor {
        /** Must settle the delivery (ack, nack or reject) unless the consumer is closing. */
        void process(AMQP.BasicProperties properties, byte[] body, boolean redelivered, Settle settle);
    }

    /** Settles one delivery on the channel it came from; a settle on a broken channel is a no-op. */
    public interface Settle {
        /** Acknowledges: the broker forgets the message. */
        void ack();

        /** Gives the message back to the queue, for this or another consumer. */
        void requeue();

        /** Drops the message (dead-lettered if the queue has a dead-letter exchange). */
        void reject();
    }

    /** Declares the queue on a fresh channel before consuming. */
    @FunctionalInterface
    public interface Declare {
        /**
         * @throws IOException if the broker refused
         */
        void declare(Channel channel, String queue) throws IOException;
    }

    private final RabbitConnection rabbit;
    private final String queue;
    private final int prefetch;
    private final Duration reconnectDelay;
    private final Declare declare;
    private final Processor processor;
    private final String name;
    private final ThreadPoolExecutor workers;
    private final CountDownLatch closing = new CountDownLatch(1);
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicInteger connects = new AtomicInteger();
    private Thread monitor;
    private volatile Channel channel;

    /**
     * @param name names the threads: {@code <name>-N} for the handlers, {@code <name>-consumer} for the
     *     thread that (re)opens the channel
     */
    public QueueConsumer(RabbitConnection rabbit, String queue, int concurrency, int prefetch, Duration reconnectDelay,
            Declare declare, String name, Processor processor) {
        this.rabbit = rabbit;
        this.queue = queue;
        this.prefetch = prefetch;
        this.reconnectDelay = reconnectDelay;
        this.declare = declare;
        this.processor = processor;
        this.name = name;
        AtomicInteger n = new AtomicInteger();
        this.workers = new ThreadPoolExecutor(concurrency, concurrency, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, name + "-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
    }

    /** Starts consuming (on a thread of its own, which opens the channel and reopens it after a failure). */
    public void start() {
        if (!started.compareAndSet(false, true)) {
            return;
        }
        monitor = new Thread(this::monitorLoop, name + "-consumer");
        monitor.setDaemon(true);
        monitor.start();
    }

    /** How many times a channel was opened and consuming started (1 + reconnections). */
    public int connects() {
        return connects.get();
    }

    /** True while a channel is open and consuming. */
    public boolean consuming() {
        Channel ch = channel;
        return ch != null && ch.isOpen();
    }

    /**
     * Waits {@code d} unless the consumer closes meanwhile.
     *
     * @return false if it is closing
     */
    public boolean pause(Duration d) {
        try {
            return !closing.await(d.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** True once {@link #close} began. */
    public boolean closing() {
        return closing.getCount() == 0;
    }

    private void monitorLoop() {
        boolean warned = false;
        while (!closing()) {
            try {
                if (!consuming()) {
                    consume();
                    if (warned) {
                        log.info("consuming {} again", queue);
                    }
                    warned = false;
                }
            } catch (IOException | RuntimeException e) {
                if (!warned) {
                    log.warn("cannot consume queue {} ({}); trying again every {}", queue, e.toString(), reconnectDelay);
                    warned = true;
                } else {
                    log.debug("cannot consume queue {} yet", queue, e);
                }
            } catch (Throwable t) {
                log.error("consumer of {} failed; going on", queue, t);
            }
            pause(reconnectDelay);
        }
    }

    private void consume() throws IOException {
        Channel old = channel;
        if (old != null) {
            ConfirmPool.abort(old);
        }
        Channel ch = rabbit.openChannel();
        try {
            declare.declare(ch, queue);
            ch.basicQos(prefetch);
            ch.basicConsume(queue, false, name, new DefaultConsumer(ch) {
                @Override
                public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties,
                        byte[] body) {
                    long deliveryTag = envelope.getDeliveryTag();
                    workers.execute(() -> run(ch, deliveryTag, properties, body, envelope.isRedeliver()));
                }
            });
        } catch (IOException | RuntimeException e) {
            ConfirmPool.abort(ch);
            throw e;
        }
        channel = ch;
        connects.incrementAndGet();
        log.info("consuming {} with prefetch {} on {}", queue, prefetch, rabbit.address());
    }

    private void run(Channel ch, long tag, AMQP.BasicProperties properties, byte[] body, boolean redelivered) {
        if (!ch.isOpen()) {
            return; // the broker delivers it again on the new channel; handling it now could only duplicate work
        }
        Settle settle = new Settle() {
            @Override
            public void ack() {
                settle(() -> ch.basicAck(tag, false), "ack");
            }

            @Override
            public void requeue() {
                settle(() -> ch.basicNack(tag, false, true), "requeue");
            }

            @Override
            public void reject() {
                settle(() -> ch.basicReject(tag, false), "reject");
            }

            private void settle(IoAction action, String what) {
                if (!ch.isOpen()) {
                    log.debug("cannot {} delivery {} of {}: its channel closed; the broker delivers it again", what,
                            tag, queue);
                    return;
                }
                try {
                    action.run();
                } catch (IOException | RuntimeException e) {
                    log.debug("cannot {} delivery {} of {}; the broker delivers it again", what, tag, queue, e);
                }
            }
        };
        try {
            processor.process(properties, body, redelivered, settle);
        } catch (Throwable t) {
            log.error("handling a message of {} failed; it goes back to the queue", queue, t);
            settle.requeue();
        }
    }

    @FunctionalInterface
    private interface IoAction {
        void run() throws IOException;
    }

    /**
     * Stops consuming, lets the handlers running finish for up to {@code grace}, then interrupts them.
     * Unacknowledged messages go back to the queue. Idempotent.
     */
    public void close(Duration grace) {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        closing.countDown();
        Channel ch = channel;
        if (ch != null && ch.isOpen()) {
            try {
                ch.basicCancel(name);
            } catch (IOException | RuntimeException e) {
                log.debug("cancelling the consumer of {} failed", queue, e);
            }
        }
        if (monitor != null) {
            try {
                monitor.join(grace.toMillis() + 1_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        workers.shutdown();
        try {
            if (!workers.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                workers.shutdownNow();
                workers.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            workers.shutdownNow();
            Thread.currentThread().interrupt();
        }
        ch = channel;
        if (ch != null) {
            try {
                if (ch.isOpen()) {
                    ch.close();
                }
            } catch (IOException | java.util.concurrent.TimeoutException | RuntimeException e) {
                ConfirmPool.abort(ch);
            }
        }
    }

    @Override
    public void close() {
        close(Duration.ofSeconds(10));
    }
}
