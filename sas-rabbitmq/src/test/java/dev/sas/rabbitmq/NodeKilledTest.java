package dev.sas.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.CompletionOutcome;
import dev.sas.core.SasClient;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.awaitility.Awaitility;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The node that published a request dies (SIGKILL) before the reply: the reply still arrives
 * through the queue, on another node that holds only a client, and completes the step exactly once;
 * a reply after the step's complete-by is rejected and changes nothing.
 */
class NodeKilledTest {
    private static final long SHORT_DEADLINE_MS = 3_000;

    @ParameterizedTest
    @ValueSource(strings = {RabbitTests.POSTGRES, RabbitTests.MARIADB})
    void a_reply_completes_the_step_on_another_node_once_and_a_late_reply_changes_nothing(String env)
            throws Exception {
        String uri = RabbitTests.rabbitUri();
        String url = RabbitTests.dbUrl(env);
        String prefix = "t" + RabbitTests.randomLetters(8) + "_";
        String agentName = "test-" + RabbitTests.randomLetters(8);
        try (RabbitConnection rabbit = RabbitConnection.builder().uri(uri).connectionName("sas-test-node-b").build();
                RabbitAgent agent = RabbitAgent.builder(agentName, rabbit).build();
                JdbcStateStore store = RabbitTests.store(url, prefix)) {
            Workflow<String> pay = PayFlows.pay(agent, Duration.ofMinutes(2));
            Workflow<String> payShort = PayFlows.pay("rabbit-pay-short", agent, Duration.ofMillis(SHORT_DEADLINE_MS));
            SasClient client = SasClient.builder().stateStore(store).workflow(pay).workflow(payShort)
                    .completionTokenKeys(PayFlows.KEYS).build();
            TaskId paid = client.submit(pay, "order-1", "100 EUR").id();
            TaskId late = client.submit(payShort, "order-2", "200 EUR").id();

            TaskInfo lateBefore;
            try (Child nodeA = Child.start(SenderNode.class, url, prefix, uri, agentName,
                    Long.toString(SHORT_DEADLINE_MS))) {
                nodeA.awaitLine("node started");
                Awaitility.await("node A sent both requests").atMost(Duration.ofSeconds(60))
                        .until(() -> status(client, paid) == TaskStatus.AWAITING_COMPLETION
                                && status(client, late) == TaskStatus.AWAITING_COMPLETION);
                nodeA.kill();
                lateBefore = client.find(late).orElseThrow();
            }
            Awaitility.await("the short step's complete-by passed").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> Instant.now().isAfter(lateBefore.completeBy().plusSeconds(1)));

            // this worker's clock is behind, so it answers the late request instead of dropping it: the store decides
            Clock behind = Clock.fixed(lateBefore.completeBy().minusSeconds(1), ZoneOffset.UTC);
            Map<String, Integer> calls = new ConcurrentHashMap<>();
            try (AgentWorker worker = AgentWorker.builder(agent).clock(behind).handler(request -> {
                calls.merge(request.taskId().value(), 1, Integer::sum);
                return "paid " + request.payload();
            }).build().start();
                    RabbitAgentReplyConsumer replies = RabbitAgentReplyConsumer.builder(agent, client).build().start()) {
                Awaitility.await("both replies recorded").atMost(Duration.ofSeconds(60))
                        .until(() -> replies.count(CompletionOutcome.COMPLETED) + replies.count(CompletionOutcome.LATE) == 2);
                assertThat(replies.count(CompletionOutcome.COMPLETED)).isEqualTo(1);
                assertThat(replies.count(CompletionOutcome.LATE)).isEqualTo(1);
                assertThat(worker.answered()).isEqualTo(2);
            }

            TaskInfo done = client.find(paid).orElseThrow();
            assertThat(done.status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(done.steps().get(0).output()).isEqualTo("paid 100 EUR");
            assertThat(calls).containsEntry(paid.value(), 1);
            assertThat(client.events(paid)).extracting(TaskEvent::type)
                    .containsOnlyOnce(TaskEvent.Type.COMPLETION_AWAITED, TaskEvent.Type.COMPLETION_RECEIVED, TaskEvent.Type.PROCESSED);

            TaskInfo lateAfter = client.find(late).orElseThrow();
            assertThat(lateAfter.status()).as("the late reply changed nothing").isEqualTo(TaskStatus.AWAITING_COMPLETION);
            assertThat(lateAfter.lease()).isEqualTo(lateBefore.lease());
            assertThat(lateAfter.steps().get(0).output()).isNull();
            assertThat(client.events(late)).extracting(TaskEvent::type)
                    .doesNotContain(TaskEvent.Type.COMPLETION_RECEIVED, TaskEvent.Type.PROCESSED);
            assertThat(calls).containsEntry(late.value(), 1);
        } finally {
            RabbitTests.dropTables(url, prefix);
            RabbitTests.deleteQueues(uri, agentName);
        }
    }

    private static TaskStatus status(SasClient client, TaskId id) {
        return client.find(id).map(TaskInfo::status).orElse(null);
    }
}
