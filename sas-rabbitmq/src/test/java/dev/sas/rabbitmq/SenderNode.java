package dev.sas.rabbitmq;

import dev.sas.core.SasRuntime;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * Node A of {@link NodeKilledTest}, in a JVM of its own: a runtime that claims the tasks and publishes
 * their requests, until the test SIGKILLs it. Arguments: test JVM pid, database URL, table prefix,
 * broker URI, agent name, the short workflow's deadline in ms.
 */
public final class SenderNode {
    private SenderNode() {
    }

    /** Runs the node until killed. */
    public static void main(String[] args) throws Exception {
        Child.dieWithParent(args[0]);
        JdbcStateStore store = RabbitTests.store(args[1], args[2]);
        RabbitConnection rabbit = RabbitConnection.builder().uri(args[3]).connectionName("sas-test-node-a").build();
        RabbitAgent agent = RabbitAgent.builder(args[4], rabbit).build();
        SasRuntime runtime = SasRuntime.builder().stateStore(store).instanceId("node-a").completionTokenKeys(PayFlows.KEYS)
                .workflow(PayFlows.pay(agent, Duration.ofMinutes(2)))
                .workflow(PayFlows.pay("rabbit-pay-short", agent, Duration.ofMillis(Long.parseLong(args[5]))))
                .supervisorEnabled(false)
                .pollInterval(Duration.ofMillis(100))
                .build().start();
        System.out.println("node started " + runtime);
        new CountDownLatch(1).await();
    }
}
