package dev.sas.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.CompletionOutcome;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.StoreUnavailableException;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.AwaitWrite;
import dev.sas.core.spi.CompletionTarget;
import dev.sas.core.spi.CompletionWrite;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StepCompletion;
import dev.sas.core.spi.StepCompletionStore;
import dev.sas.core.spi.Transition;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The agent transport on one JVM, against the broker of {@code SAS_TEST_RABBITMQ_URI} and the
 * in-memory store on a manual clock: the request message, a worker's reply completing the step
 * through the reply consumer, duplicates, expired requests, failures, foreign messages, a store that
 * fails and a broken connection.
 */
class AgentTransportTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final InMemoryStateStore store = new InMemoryStateStore();
    private final ManualClock clock = new ManualClock();
    private String uri;
    private String agentName;
    private RabbitConnection rabbit;
    private RabbitAgent agent;
    private Workflow<String> pay;
    private SasRuntime runtime;

    @BeforeEach
    void setUp() {
        uri = RabbitTests.rabbitUri();
        agentName = "test-" + RabbitTests.randomLetters(8);
        rabbit = RabbitConnection.builder().uri(uri).connectionName("sas-test").build();
        // tag::agent[]
        agent = RabbitAgent.builder(agentName, rabbit).build();  // queues sas.agent.<name> and sas.agent.<name>.replies
        pay = Workflow.builder("pay", Codec.string())
                .step("charge", s -> s.completeWithin(Duration.ofMinutes(1))   // the reply's deadline
                        .awaitCompletion(agent.request(ctx -> "charge " + ctx.input())))
                .build();
        // end::agent[]
        runtime = SasRuntime.builder().stateStore(store).clock(clock).workflow(pay).completionTokenKeys(PayFlows.KEYS).build();
    }

    @AfterEach
    void tearDown() {
        if (rabbit != null) {
            agent.close();
            rabbit.close();
            RabbitTests.deleteQueues(uri, agentName);
        }
    }

    private TaskId sendOne(String input) {
        TaskId id = runtime.client().submit(pay, "order-" + input, input).id();
        Drain.untilIdle(runtime);
        assertThat(status(id)).isEqualTo(TaskStatus.AWAITING_COMPLETION);
        return id;
    }

    private TaskStatus status(TaskId id) {
        return runtime.client().find(id).map(TaskInfo::status).orElseThrow();
    }

    private AgentWorker.Builder worker(AgentWorker.Handler handler) {
        return AgentWorker.builder(agent).clock(clock).handler(handler);
    }

    private GetResponse takeRequest() throws Exception {
        try (Channel ch = rabbit.openChannel()) {
            return ch.basicGet(agent.requestQueue(), true);
        }
    }

    private void publish(String queue, AMQP.BasicProperties props, byte[] body) throws Exception {
        try (Channel ch = rabbit.openChannel()) {
            ch.basicPublish("", queue, props, body);
        }
    }

    @Test
    void a_request_is_one_persistent_message_with_the_payload_token_key_and_deadline() throws Exception {
        TaskId id = sendOne("10 EUR");
        TaskInfo info = runtime.client().find(id).orElseThrow();

        GetResponse got = takeRequest();

        assertThat(got).isNotNull();
        assertThat(new String(got.getBody(), StandardCharsets.UTF_8)).isEqualTo("charge 10 EUR");
        AMQP.BasicProperties p = got.getProps();
        assertThat(p.getDeliveryMode()).isEqualTo(2);
        assertThat(p.getReplyTo()).isEqualTo(agent.replyQueue()).isEqualTo("sas.agent." + agentName + ".replies");
        Map<String, Object> h = p.getHeaders();
        String token = h.get("sas-reply-token").toString();
        assertThat(p.getCorrelationId()).isEqualTo(token);
        assertThat(h.get("sas-task-id")).hasToString(id.value());
        assertThat(h.get("sas-business-key")).hasToString("order-10 EUR");
        assertThat(h.get("sas-workflow")).hasToString("pay");
        assertThat(h.get("sas-step")).hasToString("charge");
        assertThat(h.get("sas-step-index")).isEqualTo(0);
        assertThat(h.get("sas-attempt")).isEqualTo(1);
        assertThat(h.get("sas-agent")).hasToString(agentName);
        assertThat(h.get("sas-idempotency-key").toString()).isNotBlank();
        assertThat(h.get("sas-complete-by")).isEqualTo(info.completeBy().toEpochMilli());
        assertThat(runtime.client().stepCompletion().completeEncoded(token, "ok")).as("the token completes the step")
                .isEqualTo(CompletionOutcome.COMPLETED);
    }

    @Test
    void a_worker_reply_completes_the_step_and_a_duplicate_request_changes_nothing() throws Exception {
        TaskId id = sendOne("20 EUR");
        GetResponse request = takeRequest();
        publish(agent.requestQueue(), request.getProps(), request.getBody());
        publish(agent.requestQueue(), request.getProps(), request.getBody()); // delivered twice
        List<String> keys = new CopyOnWriteArrayList<>();

        // tag::consumer[]
        RabbitAgentReplyConsumer replies = RabbitAgentReplyConsumer.builder(agent, runtime.client()).build().start();
        // end::consumer[]
        try (replies; AgentWorker worker = worker(r -> {
            keys.add(r.idempotencyKey());
            return "paid (" + r.payload() + ", " + r.remaining() + " left)";
        }).build().start()) {
            Awaitility.await().atMost(WAIT).until(() -> replies.count(CompletionOutcome.COMPLETED)
                    + replies.count(CompletionOutcome.ALREADY_COMPLETED) == 2);
            assertThat(replies.count(CompletionOutcome.COMPLETED)).isEqualTo(1);
            assertThat(worker.answered()).isEqualTo(2);
        }

        assertThat(keys).hasSize(2).containsOnly(request.getProps().getHeaders().get("sas-idempotency-key").toString());
        TaskInfo done = runtime.client().find(id).orElseThrow();
        assertThat(done.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(done.steps().get(0).output()).isEqualTo("paid (charge 20 EUR, PT1M left)");
        assertThat(runtime.client().events(id)).extracting(TaskEvent::type)
                .containsOnlyOnce(TaskEvent.Type.COMPLETION_RECEIVED, TaskEvent.Type.PROCESSED);
    }

    @Test
    void a_request_past_its_deadline_is_dropped_by_the_worker_without_calling_the_service() throws Exception {
        TaskId id = sendOne("30 EUR");
        clock.tick(Duration.ofMinutes(2));
        AtomicInteger calls = new AtomicInteger();

        try (AgentWorker worker = worker(r -> "called " + calls.incrementAndGet()).build().start()) {
            Awaitility.await().atMost(WAIT).until(() -> worker.expired() == 1);
        }

        assertThat(calls).hasValue(0);
        assertThat(takeRequest()).as("acknowledged: gone from the queue").isNull();
        try (Channel ch = rabbit.openChannel()) {
            ch.queueDeclarePassive(agent.replyQueue());
            assertThat(ch.messageCount(agent.replyQueue())).as("no reply").isZero();
        } catch (java.io.IOException e) {
            // no reply queue at all: no reply either
        }
        assertThat(status(id)).isEqualTo(TaskStatus.AWAITING_COMPLETION);
    }

    @Test
    void a_non_retryable_failure_fails_the_step_and_a_retryable_one_retries_it() throws Exception {
        TaskId doomed = sendOne("bad card");
        TaskId flaky = sendOne("busy");
        try (AgentWorker worker = worker(r -> {
            if (r.payload().contains("bad card")) {
                throw new NonRetryableException("card declined");
            }
            throw new java.io.IOException("payment service busy");
        }).build().start();
                RabbitAgentReplyConsumer replies = RabbitAgentReplyConsumer.builder(agent, runtime.client()).build().start()) {
            Awaitility.await().atMost(WAIT).until(() -> replies.count(CompletionOutcome.FAILED) == 2);
            assertThat(worker.failed()).isEqualTo(2);
        }

        TaskInfo failed = runtime.client().find(doomed).orElseThrow();
        assertThat(failed.status()).isEqualTo(TaskStatus.ERROR);
        assertThat(failed.lastError()).contains("card declined");
        TaskInfo retrying = runtime.client().find(flaky).orElseThrow();
        assertThat(retrying.status()).as("retried per the step's policy").isEqualTo(TaskStatus.PENDING);
        assertThat(retrying.lastError()).contains("payment service busy");
    }

    @Test
    void messages_that_are_not_sas_requests_or_replies_are_rejected_and_bad_or_forged_tokens_are_refused()
            throws Exception {
        TaskId victim = sendOne("35 EUR");
        String token = takeRequest().getProps().getHeaders().get("sas-reply-token").toString();
        int dot = token.indexOf('.');
        String body = new String(Base64.getUrlDecoder().decode(token.substring(0, dot)), StandardCharsets.UTF_8);
        String otherTask = body.substring(0, body.lastIndexOf(':') + 1) + TaskId.random().value();
        String forged = Base64.getUrlEncoder().withoutPadding().encodeToString(otherTask.getBytes(StandardCharsets.UTF_8))
                + token.substring(dot);
        AMQP.BasicProperties bare = new AMQP.BasicProperties.Builder().replyTo(agent.replyQueue()).build();
        try (AgentWorker worker = worker(r -> "never").build().start();
                RabbitAgentReplyConsumer replies = RabbitAgentReplyConsumer.builder(agent, runtime.client()).build().start()) {
            Awaitility.await().atMost(WAIT).until(() -> worker.consuming() && replies.consuming());
            publish(agent.requestQueue(), bare, "hello".getBytes(StandardCharsets.UTF_8));
            publish(agent.replyQueue(), bare, "hello".getBytes(StandardCharsets.UTF_8));
            publish(agent.replyQueue(), new AMQP.BasicProperties.Builder().headers(Map.of("sas-reply-token",
                    "not-a-token", "sas-outcome", "ok")).build(), "x".getBytes(StandardCharsets.UTF_8));
            publish(agent.replyQueue(), new AMQP.BasicProperties.Builder().headers(Map.of("sas-reply-token",
                    token.substring(0, token.length() - 3), "sas-outcome", "ok")).build(),
                    "truncated".getBytes(StandardCharsets.UTF_8));
            Awaitility.await().atMost(WAIT).until(() -> worker.rejected() == 1 && replies.rejected() == 1
                    && replies.count(CompletionOutcome.INVALID_TOKEN) == 2);
            assertThat(worker.answered()).isZero();
            assertThat(status(victim)).isEqualTo(TaskStatus.AWAITING_COMPLETION);
            assertThat(runtime.metrics().invalidCompletionTokens()).isEqualTo(2);
            assertThat(runtime.client().stepCompletion().completeEncoded(forged, "paid by mallory"))
                    .as("another task's id in a real token").isEqualTo(CompletionOutcome.INVALID_TOKEN);
        }
    }

    @Test
    void a_reply_the_store_cannot_record_goes_back_to_the_queue_and_completes_the_step_later() throws Exception {
        TaskId id = sendOne("40 EUR");
        AtomicInteger failuresLeft = new AtomicInteger(2);
        StateStore flaky = (StateStore) Proxy.newProxyInstance(StateStore.class.getClassLoader(),
                new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals("stepCompletions")) {
                        StepCompletionStore real = store.stepCompletions().orElseThrow();
                        return Optional.of(new StepCompletionStore() {
                            @Override
                            public AwaitWrite awaitCompletion(Transition awaiting,
                                    Function<StepCompletion, Transition> ifCompleted, Instant now) {
                                return real.awaitCompletion(awaiting, ifCompleted, now);
                            }

                            @Override
                            public CompletionWrite acceptCompletion(StepCompletion completion,
                                    Function<CompletionTarget, Transition> decide, Instant now) {
                                if (failuresLeft.getAndDecrement() > 0) {
                                    throw new StoreUnavailableException("database down (test)", null);
                                }
                                return real.acceptCompletion(completion, decide, now);
                            }
                        });
                    }
                    try {
                        return method.invoke(store, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        SasClient client = SasClient.builder().stateStore(flaky).clock(clock).workflow(pay)
                .completionTokenKeys(PayFlows.KEYS).build();

        try (AgentWorker worker = worker(r -> "paid").build().start();
                RabbitAgentReplyConsumer replies = RabbitAgentReplyConsumer.builder(agent, client)
                        .backoff(Duration.ofMillis(10)).maxBackoff(Duration.ofMillis(50)).build().start()) {
            Awaitility.await().atMost(WAIT).until(() -> replies.count(CompletionOutcome.COMPLETED) == 1);
            assertThat(replies.storeFailures()).isEqualTo(2);
            assertThat(worker.answered()).as("the service was called once").isEqualTo(1);
        }
        assertThat(status(id)).isEqualTo(TaskStatus.PROCESSED);
    }

    @Test
    void after_a_broken_connection_the_worker_and_the_consumer_consume_again() throws Exception {
        try (AgentWorker worker = worker(r -> "paid " + r.payload()).reconnectDelay(Duration.ofMillis(100))
                .build().start();
                RabbitAgentReplyConsumer replies = RabbitAgentReplyConsumer.builder(agent, runtime.client())
                        .reconnectDelay(Duration.ofMillis(100)).build().start()) {
            Awaitility.await().atMost(WAIT).until(() -> worker.consuming() && replies.consuming());
            rabbit.connection().abort();

            TaskId id = sendOne("50 EUR"); // opens a new connection to publish
            Awaitility.await().atMost(WAIT).until(() -> status(id) == TaskStatus.PROCESSED);
            assertThat(worker.consuming()).isTrue();
            assertThat(replies.consuming()).isTrue();
        }
    }
}
