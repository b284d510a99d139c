package dev.sas.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Status channels across JVMs, as issue 13 asks: A, a client-only JVM, submits tasks with a reply
 * channel; worker JVMs B and C run them; B is SIGKILLed and A is SIGKILLed and restarted mid-way. A's
 * channel gets, for every task, RECEIVED and exactly one terminal status, in order, and exactly the
 * events the store logged, once repeats are dropped by delivery id. Once through the store's outbox
 * (A consumes the channel) on PostgreSQL, once through RabbitMQ with the broker stopped and started
 * mid-run (B and C publish, A reads the queue). 200 tasks at 100/s; {@code -Dsas.xnode.tasks=1000}
 * for the full run.
 */
class CrossNodeRepliesTest {
    private static final int TASKS = Integer.getInteger("sas.xnode.tasks", 200);
    private static final int RATE = Integer.getInteger("sas.xnode.rate", 100);
    private static final Duration START = Duration.ofSeconds(90);

    private static String postgres() {
        String url = System.getenv("SAS_TEST_POSTGRES_URL");
        assumeTrue(url != null && !url.isBlank(), "SAS_TEST_POSTGRES_URL not set: skipping the cross-node reply runs");
        if (!url.contains("127.0.0.1") && !url.contains("localhost")) {
            throw new IllegalStateException("SAS_TEST_POSTGRES_URL must point at 127.0.0.1; the run creates and drops tables");
        }
        return url;
    }

    @Test
    @Timeout(300)
    void every_task_s_statuses_reach_the_restarted_client_through_the_outbox_while_a_worker_is_killed()
            throws Exception {
        run(postgres(), null);
    }

    @Test
    @Timeout(300)
    void every_task_s_statuses_reach_the_client_through_rabbitmq_across_a_broker_restart() throws Exception {
        String url = postgres();
        String rabbit = System.getenv("SAS_TEST_RABBITMQ_URI");
        assumeTrue(rabbit != null && !rabbit.isBlank(), "SAS_TEST_RABBITMQ_URI not set: skipping the RabbitMQ run");
        assumeTrue(XNodeRun.rabbitmqctl("status"), "rabbitmqctl is not available here (or needs root): cannot stop"
                + " and start the broker, skipping the RabbitMQ run");
        run(url, rabbit);
    }

    private static void run(String url, String rabbit) throws Exception {
        boolean brokerStopped = false;
        try (XNodeRun run = new XNodeRun(url, TASKS, RATE, rabbit, Path.of("target", "xnode"))) {
            run.start("B", false);
            run.start("C", false);
            await("workers up").atMost(START).until(() -> run.isReady("B") && run.isReady("C"));
            run.start("A1", true);
            await("A up").atMost(START).until(() -> run.isReady("A1"));

            await("a third submitted").atMost(START).until(() -> run.submitted("A1") >= TASKS / 3);
            run.kill("B");
            await("half submitted").atMost(START).until(() -> run.submitted("A1") >= TASKS / 2);
            if (rabbit != null) {
                assertThat(XNodeRun.rabbitmqctl("stop_app")).as("rabbitmqctl stop_app").isTrue();
                brokerStopped = true;
                run.log("broker stopped");
            }
            run.kill("A1");
            run.start("A2", true);
            await("A restarted").atMost(START).until(() -> run.isReady("A2"));
            await("A resubmitting").atMost(START).until(() -> run.submitted("A2") >= TASKS / 2);
            if (rabbit != null) {
                assertThat(XNodeRun.rabbitmqctl("start_app")).as("rabbitmqctl start_app").isTrue();
                brokerStopped = false;
                run.log("broker started");
            }

            await("every task ended and A heard its end").atMost(Duration.ofSeconds(180))
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> run.terminalInStore() == TASKS && run.terminalHeard() == TASKS);
            XNodeRun.Report report = run.check();
            System.out.println("[cross-node replies" + (rabbit != null ? " via RabbitMQ" : "") + "] " + report);

            assertThat(report.problems()).as("what A heard against the store's event log").isEmpty();
            assertThat(report.terminalInStore()).isEqualTo(TASKS);
            assertThat(report.messagesHeard()).isGreaterThanOrEqualTo(TASKS * 6L);
        } finally {
            if (brokerStopped) {
                XNodeRun.rabbitmqctl("start_app");
            }
        }
    }
}
