package dev.sas.rabbitmq;

import java.util.concurrent.CountDownLatch;

/**
 * The agent worker of {@link WorkerKilledTest}, in a JVM of its own: it prints {@code CALL <idempotency
 * key> <attempt>} for each request and then hangs in the call, as a worker stuck on a dead service,
 * until the test SIGKILLs it. Arguments: test JVM pid, broker URI, agent name.
 */
public final class HangingWorker {
    private HangingWorker() {
    }

    /** Runs the worker until killed. */
    public static void main(String[] args) throws Exception {
        Child.dieWithParent(args[0]);
        RabbitConnection rabbit = RabbitConnection.builder().uri(args[1]).connectionName("sas-test-worker-a").build();
        CountDownLatch never = new CountDownLatch(1);
        AgentWorker worker = AgentWorker.builder(args[2], rabbit).concurrency(1).handler(request -> {
            System.out.println("CALL " + request.idempotencyKey() + " " + request.attempt());
            System.out.flush();
            never.await();
            return "never";
        }).build().start();
        System.out.println("worker started " + worker);
        never.await();
    }
}
