package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepRef;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** A compensation registered with compensateWith(agent, request) goes the way of an agent call. */
class AgentCompensationTest {

    sealed interface PaymentRequest permits Charge, Refund {
    }

    record Charge(String orderId) implements PaymentRequest {
    }

    record Refund(String receiptId) implements PaymentRequest {
    }

    record Receipt(String id) {
    }

    static final StepRef<Receipt> CHARGE = StepRef.of("charge", Codec.of(Receipt::id, Receipt::new));
    static final RetryPolicy THREE_TRIES = RetryPolicy.builder().maxAttempts(3)
            .fixedBackoff(Duration.ofSeconds(1)).jitter(0).build();

    /** A payments agent that records every request and the thread it ran on; refunds follow a script. */
    static final class Payments implements Agent<PaymentRequest, Receipt> {
        final List<AgentRequest<PaymentRequest>> requests = new CopyOnWriteArrayList<>();
        final List<String> threads = new CopyOnWriteArrayList<>();
        final Deque<Supplier<CompletionStage<Receipt>>> refunds = new ArrayDeque<>();

        Payments thenRefund(Supplier<CompletionStage<Receipt>> outcome) {
            refunds.add(outcome);
            return this;
        }

        List<AgentRequest<PaymentRequest>> refundRequests() {
            return requests.stream().filter(AgentRequest::compensation).toList();
        }

        @Override
        public String name() {
            return "payments";
        }

        @Override
        public CompletionStage<Receipt> call(AgentRequest<PaymentRequest> request) {
            requests.add(request);
            threads.add(Thread.currentThread().getName());
            if (request.payload() instanceof Charge c) {
                return CompletableFuture.completedFuture(new Receipt("rcpt-" + c.orderId()));
            }
            Supplier<CompletionStage<Receipt>> next = refunds.poll();
            return next != null ? next.get() : CompletableFuture.completedFuture(null);
        }

        @Override
        public RetryPolicy retryPolicy() {
            return THREE_TRIES;
        }
    }

    private final InMemoryStateStore store = new InMemoryStateStore();
    private final ManualClock clock = new ManualClock();

    private static Workflow<String> orders(Payments payments, Duration compensateWithin) {
        return Workflow.builder("orders", Codec.string())
                .step(CHARGE, s -> s.call(payments, ctx -> new Charge(ctx.input()))
                        .completeWithin(Duration.ofMinutes(1))
                        .compensateWith(payments, ctx -> new Refund(ctx.output(CHARGE).id()))
                        .compensateWithin(compensateWithin))
                .step("ship", s -> s.execute(ctx -> {
                    throw new NonRetryableException("no courier");
                }))
                .build();
    }

    private static CompletionStage<Receipt> failing() {
        return CompletableFuture.failedFuture(new IllegalStateException("refund service down"));
    }

    private SasRuntime manual(Workflow<?> wf) {
        return SasRuntime.builder().stateStore(store).clock(clock).workflow(wf).build();
    }

    private TaskInfo status(SasRuntime sas, TaskId id) {
        return sas.client().find(id).orElseThrow();
    }

    @Test
    void compensation_through_an_agent_runs_on_the_agents_executor_and_the_agent_sees_a_compensation_request() {
        Payments payments = new Payments();
        Workflow<String> wf = orders(payments, Duration.ofSeconds(30));
        ExecutorService paymentsPool = Executors.newSingleThreadExecutor(r -> new Thread(r, "payments-pool"));
        try (SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).agentExecutor("payments", paymentsPool)
                .pollInterval(Duration.ofMillis(50)).build().start()) {
            TaskId id = sas.client().submit(wf, "o-1", "o-1").id();

            await().atMost(Duration.ofSeconds(20)).until(() -> status(sas, id).status() == TaskStatus.COMPENSATED);

            assertThat(payments.threads).containsExactly("payments-pool", "payments-pool");
            AgentRequest<PaymentRequest> refund = payments.refundRequests().get(0);
            assertThat(refund.payload()).isEqualTo(new Refund("rcpt-o-1"));
            assertThat(refund.stepName()).isEqualTo("charge");
            assertThat(refund.idempotencyKey()).endsWith(":charge:compensate");
            assertThat(payments.requests.get(0).compensation()).isFalse();
            assertThat(status(sas, id).step("charge").compensationStatus()).isEqualTo(StepStatus.COMPENSATED);
        } finally {
            paymentsPool.shutdownNow();
        }
    }

    @Test
    void a_failing_compensation_is_retried_with_the_agents_policy() {
        Payments payments = new Payments().thenRefund(AgentCompensationTest::failing)
                .thenRefund(AgentCompensationTest::failing);
        Workflow<String> wf = orders(payments, Duration.ofSeconds(30));
        SasRuntime sas = manual(wf);
        TaskId id = sas.client().submit(wf, "o-1", "o-1").id();

        Drain.schedulerOnce(sas);
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.COMPENSATING);
        assertThat(status(sas, id).nextAttemptAt()).as("the agent policy's fixed 1 s backoff")
                .isEqualTo(clock.instant().plusSeconds(1));
        clock.tick(Duration.ofSeconds(1));
        Drain.schedulerOnce(sas);
        clock.tick(Duration.ofSeconds(1));
        Drain.schedulerOnce(sas);

        assertThat(payments.refundRequests()).extracting(AgentRequest::attempt).containsExactly(1, 2, 3);
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.COMPENSATED);
    }

    @Test
    void compensation_retry_on_the_step_replaces_the_agents_policy() {
        Payments payments = new Payments().thenRefund(AgentCompensationTest::failing);
        Workflow<String> wf = Workflow.builder("orders", Codec.string())
                .step(CHARGE, s -> s.call(payments, ctx -> new Charge(ctx.input()))
                        .compensateWith(payments, ctx -> new Refund(ctx.output(CHARGE).id()))
                        .compensationRetry(RetryPolicy.none()))
                .step("ship", s -> s.execute(ctx -> {
                    throw new NonRetryableException("no courier");
                }))
                .build();
        SasRuntime sas = manual(wf);
        TaskId id = sas.client().submit(wf, "o-1", "o-1").id();

        Drain.schedulerOnce(sas);

        assertThat(payments.refundRequests()).hasSize(1);
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.COMPENSATION_FAILED);
        assertThat(status(sas, id).step("charge").compensationStatus()).isEqualTo(StepStatus.COMPENSATION_FAILED);
    }

    @Test
    void a_compensation_that_misses_compensate_within_is_recovered_like_a_timed_out_compensation() {
        Payments payments = new Payments().thenRefund(CompletableFuture::new); // hangs, then succeeds
        Workflow<String> wf = orders(payments, Duration.ofSeconds(5));
        SasRuntime sas = manual(wf);
        TaskId id = sas.client().submit(wf, "o-1", "o-1").id();

        Drain.schedulerOnce(sas);
        Instant compensationStarted = clock.instant();
        TaskInfo hanging = status(sas, id);
        assertThat(hanging.status()).isEqualTo(TaskStatus.COMPENSATING);
        assertThat(hanging.completeBy()).as("compensateWithin, not the step's one minute")
                .isEqualTo(compensationStarted.plusSeconds(5));
        assertThat(payments.refundRequests().get(0).completeBy()).isEqualTo(compensationStarted.plusSeconds(5));

        clock.tick(Duration.ofSeconds(6));
        assertThat(Drain.supervisorOnce(sas)).isEqualTo(1);
        TaskInfo recovered = status(sas, id);
        assertThat(recovered.status()).isEqualTo(TaskStatus.COMPENSATING);
        assertThat(recovered.failureCount()).isEqualTo(1);
        assertThat(recovered.lastError()).contains("compensation of step 'charge'").contains("passed its deadline");

        clock.tick(Duration.ofSeconds(1)); // the agent policy's backoff
        Drain.schedulerOnce(sas);

        assertThat(payments.refundRequests()).hasSize(2);
        assertThat(payments.refundRequests().get(1).completeBy()).isEqualTo(clock.instant().plusSeconds(5));
        assertThat(status(sas, id).status()).isEqualTo(TaskStatus.COMPENSATED);
    }
}
