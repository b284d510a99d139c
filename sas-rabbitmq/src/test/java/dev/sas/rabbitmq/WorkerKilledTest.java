package dev.sas.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An agent worker dies (SIGKILL) in the middle of a call: after the step's deadline (5 s) the supervisor
 * retries it, the request is sent again, a new worker answers, and the service sees the same
 * idempotency key both times; the task ends PROCESSED once.
 */
class WorkerKilledTest {

    @ParameterizedTest
    @ValueSource(strings = {RabbitTests.POSTGRES, RabbitTests.MARIADB})
    void a_call_cut_short_by_a_killed_worker_is_sent_again_after_the_deadline_with_the_same_key(String env)
            throws Exception {
        String uri = RabbitTests.rabbitUri();
        String url = RabbitTests.dbUrl(env);
        String prefix = "t" + RabbitTests.randomLetters(8) + "_";
        String agentName = "test-" + RabbitTests.randomLetters(8);
        try (RabbitConnection rabbit = RabbitConnection.builder().uri(uri).connectionName("sas-test-node").build();
                RabbitAgent agent = RabbitAgent.builder(agentName, rabbit).build();
                JdbcStateStore store = RabbitTests.store(url, prefix)) {
            Workflow<String> pay = PayFlows.pay(agent, Duration.ofSeconds(5));
            try (SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(pay).completionTokenKeys(PayFlows.KEYS)
                    .pollInterval(Duration.ofMillis(100)).supervisorInterval(Duration.ofMillis(250)).build().start();
                    RabbitAgentReplyConsumer replies = RabbitAgentReplyConsumer.builder(agent, runtime.client()).build().start()) {
                SasClient client = runtime.client();
                TaskId id;
                String firstCall;
                try (Child workerA = Child.start(HangingWorker.class, uri, agentName)) {
                    workerA.awaitLine("worker started");
                    id = client.submit(pay, "order-1", "300 EUR").id();
                    firstCall = workerA.awaitLine("CALL ");
                    workerA.kill();
                }
                String key = firstCall.split(" ")[1];
                assertThat(firstCall).endsWith(" 1");

                Awaitility.await("the supervisor timed the step out and the request was sent again")
                        .atMost(Duration.ofSeconds(60))
                        .until(() -> client.events(id).stream().filter(e -> e.type() == TaskEvent.Type.COMPLETION_AWAITED)
                                .count() >= 2);

                List<String> keys = new CopyOnWriteArrayList<>();
                List<Integer> attempts = new CopyOnWriteArrayList<>();
                try (AgentWorker workerB = AgentWorker.builder(agent).handler(request -> {
                    keys.add(request.idempotencyKey());
                    attempts.add(request.attempt());
                    return "paid " + request.payload();
                }).build().start()) {
                    Awaitility.await("a new worker answered").atMost(Duration.ofSeconds(60))
                            .until(() -> client.find(id).map(TaskInfo::status).orElse(null) == TaskStatus.PROCESSED);
                    Awaitility.await("the dead worker's request, redelivered past its deadline, was dropped")
                            .atMost(Duration.ofSeconds(30)).until(() -> workerB.expired() >= 1);
                }

                // on a slow machine the second attempt may time out too before its reply: a third comes, same key
                assertThat(keys).as("the service saw the dead worker's key again").isNotEmpty().containsOnly(key);
                assertThat(attempts).doesNotContain(1);
                TaskInfo done = client.find(id).orElseThrow();
                assertThat(done.steps().get(0).output()).isEqualTo("paid 300 EUR");
                assertThat(client.events(id)).extracting(TaskEvent::type).contains(TaskEvent.Type.STEP_TIMED_OUT)
                        .containsOnlyOnce(TaskEvent.Type.COMPLETION_RECEIVED, TaskEvent.Type.PROCESSED);
            }
        } finally {
            RabbitTests.dropTables(url, prefix);
            RabbitTests.deleteQueues(uri, agentName);
        }
    }
}
