package dev.sas.reliability;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import dev.sas.core.Codec;
import dev.sas.core.StatusChannel;
import dev.sas.core.StatusConsumer;
import dev.sas.core.StatusUpdate;
import dev.sas.core.RuntimeBuilder;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.SubmitOptions;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import dev.sas.rabbitmq.RabbitConnection;
import dev.sas.rabbitmq.RabbitStatusChannel;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One node of a cross-node reply run ({@link XNodeRun}), in a JVM of its own. Roles:
 * <ul>
 *   <li>{@code worker}: a runtime running {@link #workflow}; with {@code --rabbit-uri} it also
 *       registers the status channel as a RabbitMQ publisher to {@code --queue}.</li>
 *   <li>{@code client}: the application, no runtime: submits {@code --tasks} tasks ({@code t-0} ...)
 *       at {@code --rate} per second with {@code --channel} as status channel (again from the start
 *       after a restart: duplicates are no-ops), and writes every status message it receives to
 *       {@code --out}, one line each ({@code deliveryId taskId type}), before acknowledging it: from
 *       the store's outbox through a {@link StatusConsumer}, or with {@code --rabbit-uri} from the
 *       RabbitMQ queue, reconnecting while the broker is away.</li>
 * </ul>
 * Halts as soon as its coordinator ({@code --parent-pid}) is gone. Prints {@code READY} once up and
 * {@code SUBMITTED n} as it submits.
 */
public final class XNodeMain {

    /** Time each of the two steps takes. */
    static final Duration STEP_TIME = Duration.ofMillis(30);
    /** A step's deadline: a killed worker's tasks are recovered this long after they started. */
    static final Duration COMPLETE_WITHIN = Duration.ofSeconds(2);

    private XNodeMain() {
    }

    /** Two steps, each as long as {@link #STEP_TIME}. */
    static Workflow<String> workflow() {
        return Workflow.builder("xnode", Codec.string())
                .step("reserve", s -> s.execute(ctx -> work("reserved " + ctx.input())).completeWithin(COMPLETE_WITHIN))
                .step("confirm", s -> s.execute(ctx -> work("confirmed " + ctx.input())).completeWithin(COMPLETE_WITHIN))
                .build();
    }

    private static String work(String result) {
        LockSupport.parkNanos(STEP_TIME.toNanos());
        return result;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            o.put(args[i], args[i + 1]);
        }
        long parent = Long.parseLong(o.get("--parent-pid"));
        ProcessHandle.of(parent).ifPresentOrElse(h -> h.onExit().thenRun(() -> Runtime.getRuntime().halt(3)),
                () -> Runtime.getRuntime().halt(3));
        JdbcStateStore store = JdbcStateStore.builder().url(o.get("--url")).tablePrefix(o.get("--prefix"))
                .maxPoolSize(6).poolName("xnode-" + o.get("--name")).createSchema(false).build();
        String rabbitUri = o.get("--rabbit-uri");
        String channel = o.get("--channel");
        Duration lease = Duration.ofMillis(Long.parseLong(o.getOrDefault("--lease-ms", "3000")));
        if (o.get("--role").equals("worker")) {
            RuntimeBuilder b = SasRuntime.builder().stateStore(store).workflow(workflow()).instanceId(o.get("--name"))
                    .schedulerThreads(8).supervisorInterval(Duration.ofMillis(500)).shutdownGrace(Duration.ZERO);
            if (rabbitUri != null) {
                RabbitConnection rabbit = RabbitConnection.builder().uri(rabbitUri).connectionName(o.get("--name"))
                        .connectTimeout(Duration.ofSeconds(2)).build();
                b.statusChannel(RabbitStatusChannel.builder(channel, rabbit).routingKey(o.get("--queue"))
                        .confirmTimeout(Duration.ofSeconds(3)).leaseTime(lease).build());
            }
            b.build().start();
            System.out.println("READY " + o.get("--name"));
            System.out.flush();
            new CountDownLatch(1).await();
            return;
        }
        OutputStream out = new FileOutputStream(o.get("--out"), true);
        if (rabbitUri != null) {
            consumeQueue(rabbitUri, o.get("--queue"), out);
        } else {
            StatusConsumer.builder().stateStore(store).consumerId("client-a")
                    .channel(StatusChannel.builder(channel).leaseTime(lease).handler(batch -> write(out, batch)).build())
                    .build().start();
        }
        System.out.println("READY " + o.get("--name"));
        System.out.flush();
        SasClient client = SasClient.builder().stateStore(store).build();
        Workflow<String> wf = workflow();
        int tasks = Integer.parseInt(o.get("--tasks"));
        long periodNanos = TimeUnit.SECONDS.toNanos(1) / Integer.parseInt(o.get("--rate"));
        SubmitOptions options = SubmitOptions.builder().statusChannel(channel).build();
        long next = System.nanoTime();
        for (int i = 0; i < tasks; i++) {
            client.submit(wf, "t-" + i, "input-" + i, options);
            System.out.println("SUBMITTED " + (i + 1));
            next += periodNanos;
            LockSupport.parkNanos(next - System.nanoTime());
        }
        System.out.println("ALL SUBMITTED");
        System.out.flush();
        new CountDownLatch(1).await();
    }

    private static synchronized void write(OutputStream out, List<StatusUpdate> batch) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (StatusUpdate m : batch) {
            sb.append(m.deliveryId()).append(' ').append(m.taskId()).append(' ').append(m.status()).append('\n');
        }
        out.write(sb.toString().getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** Consumes the queue with manual acks (after the line is written), reconnecting while the broker is away. */
    private static void consumeQueue(String uri, String queue, OutputStream out) {
        Thread t = new Thread(() -> {
            RabbitConnection rabbit = RabbitConnection.builder().uri(uri).connectionName("client-a")
                    .connectTimeout(Duration.ofSeconds(2)).build();
            while (true) {
                try {
                    Channel ch = rabbit.openChannel();
                    ch.basicQos(100);
                    ch.queueDeclare(queue, true, false, false, null);
                    ch.basicConsume(queue, false, new DefaultConsumer(ch) {
                        @Override
                        public void handleDelivery(String tag, Envelope env, AMQP.BasicProperties props, byte[] body)
                                throws IOException {
                            write(out, List.of(RabbitStatusChannel.decode(body)));
                            ch.basicAck(env.getDeliveryTag(), false);
                        }
                    });
                    while (ch.isOpen()) {
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
                    }
                } catch (IOException | RuntimeException e) {
                    System.err.println("queue consumer: " + e + "; reconnecting");
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
            }
        }, "queue-consumer");
        t.setDaemon(true);
        t.start();
    }
}
