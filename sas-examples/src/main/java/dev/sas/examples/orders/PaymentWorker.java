package dev.sas.examples.orders;

import dev.sas.examples.orders.services.Form;
import dev.sas.rabbitmq.AgentWorker;
import dev.sas.rabbitmq.RabbitConnection;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The payment agent as a process of its own, the way an agent worker is deployed: it needs the broker
 * and the payment service, no database and no SAS runtime. It consumes the payment agent's request
 * queue, calls the payment service's {@code /charge} with the request's idempotency key and
 * deadline, and publishes the service's answer as the reply. {@code --rabbitmq} mode of the example
 * runs it in a second JVM, and kills and restarts it mid-run.
 *
 * <pre>
 * java -cp ... dev.sas.examples.orders.PaymentWorker --rabbitmq amqp://guest:guest@127.0.0.1:5672 \
 *     --payment http://127.0.0.1:41234 --queue sas.agent.payment
 * </pre>
 */
public final class PaymentWorker {

    private PaymentWorker() {
    }

    /**
     * Entry point: {@code --rabbitmq URI --payment URI --queue NAME}. Prints {@code READY} once it
     * consumes, then runs until the process ends.
     *
     * @throws Exception if the worker cannot start
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            opts.put(args[i], args[i + 1]);
        }
        ServiceAgent payment = new ServiceAgent("payment", URI.create(opts.get("--payment")),
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(1))
                        .build());
        // tag::worker[]
        RabbitConnection rabbit = RabbitConnection.builder().uri(opts.get("--rabbitmq"))
                .connectionName("payment-worker").build();
        AgentWorker worker = AgentWorker.builder("payment", rabbit)
                .requestQueue(opts.get("--queue"))
                .concurrency(16)                                  // calls in flight (hung ones included)
                .handler(request -> payment.callNow(new ServiceCall("/charge", Form.decode(request.payload())),
                        request.idempotencyKey(), request.remaining()))
                .build().start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            worker.close();                                       // running calls finish, then replies, then acks
            rabbit.close();
        }));
        // end::worker[]
        while (!worker.consuming()) {
            Thread.sleep(50);
        }
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        new CountDownLatch(1).await();
    }
}
