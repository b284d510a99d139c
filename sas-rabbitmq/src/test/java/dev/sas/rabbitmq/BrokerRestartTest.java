package dev.sas.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The broker is stopped and started again ({@code rabbitmqctl stop_app} / {@code start_app}) while
 * 200 tasks go through the agent: every task ends PROCESSED, none is lost, and the service (which
 * dedupes by idempotency key) applies each once.
 */
class BrokerRestartTest {
    private static final int TASKS = 200;

    @ParameterizedTest
    @ValueSource(strings = {RabbitTests.POSTGRES, RabbitTests.MARIADB})
    void every_task_ends_processed_once_across_a_broker_restart(String env) throws Exception {
        String uri = RabbitTests.rabbitUri();
        String url = RabbitTests.dbUrl(env);
        assumeTrue(rabbitmqctl("status") == 0, "rabbitmqctl is not runnable here: cannot restart the broker");
        String prefix = "t" + RabbitTests.randomLetters(8) + "_";
        String agentName = "test-" + RabbitTests.randomLetters(8);
        Map<String, AtomicInteger> callsByKey = new ConcurrentHashMap<>();
        Map<String, String> applied = new ConcurrentHashMap<>();
        AtomicInteger calls = new AtomicInteger();
        CountDownLatch brokerStopped = new CountDownLatch(1);
        boolean stopped = false;
        try (RabbitConnection rabbit = RabbitConnection.builder().uri(uri).connectionName("sas-test-node").build();
                RabbitAgent agent = RabbitAgent.builder(agentName, rabbit).build();
                JdbcStateStore store = RabbitTests.store(url, prefix)) {
            Workflow<String> pay = PayFlows.pay(agent, Duration.ofSeconds(30));
            try (SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(pay).completionTokenKeys(PayFlows.KEYS)
                    .pollInterval(Duration.ofMillis(100)).supervisorInterval(Duration.ofSeconds(1)).build().start();
                    RabbitAgentReplyConsumer replies = RabbitAgentReplyConsumer.builder(agent, runtime.client())
                            .reconnectDelay(Duration.ofMillis(500)).build().start();
                    AgentWorker worker = AgentWorker.builder(agent).concurrency(8)
                            .reconnectDelay(Duration.ofMillis(500)).handler(request -> {
                                if (calls.incrementAndGet() > TASKS / 5) {
                                    // past the first fifth the service answers only once the broker went down, so
                                    // the restart comes mid-run with calls in flight, however fast the machine
                                    brokerStopped.await(2, TimeUnit.MINUTES);
                                }
                                callsByKey.computeIfAbsent(request.idempotencyKey(), k -> new AtomicInteger())
                                        .incrementAndGet();
                                // the service applies a key once and answers the same for a repeat
                                return applied.computeIfAbsent(request.idempotencyKey(),
                                        k -> "charged " + request.payload());
                            }).build().start()) {
                SasClient client = runtime.client();
                Map<String, String> inputs = new LinkedHashMap<>();
                for (int i = 0; i < TASKS; i++) {
                    inputs.put("order-" + i, i + " EUR");
                }
                List<TaskHandle> handles = client.submitAll(pay, inputs);

                Awaitility.await("some tasks done before the restart").atMost(Duration.ofSeconds(120))
                        .until(() -> processed(client) >= TASKS / 10);
                long doneBeforeStop = processed(client);
                stopped = true;
                assertThat(rabbitmqctl("stop_app")).as("rabbitmqctl stop_app").isZero();
                brokerStopped.countDown();
                assertThat(rabbitmqctl("start_app")).as("rabbitmqctl start_app").isZero();
                stopped = false;

                Awaitility.await("every task processed").atMost(Duration.ofMinutes(3))
                        .pollInterval(Duration.ofMillis(500))
                        .until(() -> processed(client) == TASKS);

                assertThat(doneBeforeStop).as("the restart came mid-run").isLessThanOrEqualTo(TASKS / 5);
                assertThat(client.countByStatus().get(TaskStatus.PROCESSED)).isEqualTo(TASKS);
                assertThat(applied).hasSize(TASKS);
                for (TaskHandle h : handles) {
                    var info = client.find(h.id()).orElseThrow();
                    assertThat(info.steps().get(0).output()).isEqualTo("charged " + inputs.get(info.businessKey()));
                    assertThat(client.events(h.id())).extracting(TaskEvent::type)
                            .containsOnlyOnce(TaskEvent.Type.COMPLETION_RECEIVED, TaskEvent.Type.PROCESSED);
                }
                assertThat(callsByKey.values().stream().mapToInt(AtomicInteger::get).sum())
                        .as("calls (a repeat after the restart is allowed, each key applied once)")
                        .isGreaterThanOrEqualTo(TASKS);
            }
        } finally {
            brokerStopped.countDown();
            if (stopped) {
                rabbitmqctl("start_app");
            }
            RabbitTests.dropTables(url, prefix);
            RabbitTests.deleteQueues(uri, agentName);
        }
    }

    private static long processed(SasClient client) {
        return client.countByStatus().getOrDefault(TaskStatus.PROCESSED, 0L);
    }

    /** Runs {@code rabbitmqctl <command>}; its exit code, or -1 if it cannot run or hangs. */
    static int rabbitmqctl(String command) {
        try {
            Process p = new ProcessBuilder("rabbitmqctl", "-q", command).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            if (p.exitValue() != 0) {
                System.err.println("rabbitmqctl " + command + ": " + new String(out, StandardCharsets.UTF_8));
            }
            return p.exitValue();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
