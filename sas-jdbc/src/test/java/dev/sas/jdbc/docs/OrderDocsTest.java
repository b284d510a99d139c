package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Agent;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepRef;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskLogging;
import dev.sas.core.TaskResult;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jackson.JsonCodec;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import org.junit.jupiter.api.Test;

/** The order workflow shown in docs/concepts.md and docs/getting-started.md, compiled and run. */
class OrderDocsTest {

    record Order(String id, long cents, boolean inStock) {
    }

    record Receipt(String paymentId, long cents) {
    }

    /** A stand-in for a payment service: charges and refunds, each applied once per idempotency key. */
    static final class Bank {
        final Map<String, Long> charges = new ConcurrentHashMap<>();
        final Map<String, Long> refunds = new ConcurrentHashMap<>();

        Receipt charge(String key, Order order) {
            charges.putIfAbsent(key, order.cents());
            return new Receipt("pay-" + order.id(), order.cents());
        }

        Receipt refund(String key, Order order) {
            refunds.putIfAbsent(key, order.cents());
            return new Receipt("refund-" + order.id(), order.cents());
        }
    }

    private final Bank bank = new Bank();

    // tag::definitions[]
    static final StepRef<String> RESERVE = StepRef.of("reserve");
    static final StepRef<Receipt> CHARGE = StepRef.of("charge", JsonCodec.of(Receipt.class));
    static final StepRef<String> SHIP = StepRef.of("ship");

    // the bank's client blocks: its calls run on a pool that keeps the task's log context (MDC)
    Executor bankCalls = TaskLogging.propagating(ForkJoinPool.commonPool());
    Agent<Order, Receipt> payments = Agent.of("payments", request -> CompletableFuture.supplyAsync(() ->
            request.compensation()
                    ? bank.refund(request.idempotencyKey(), request.payload())
                    : bank.charge(request.idempotencyKey(), request.payload()), bankCalls));

    Workflow<Order> orders = Workflow.builder("orders", JsonCodec.of(Order.class))
            .step(RESERVE, s -> s.execute(ctx -> "reserved " + ctx.input().id()))
            .step(CHARGE, s -> s.call(payments, ctx -> ctx.input())
                    .completeWithin(Duration.ofSeconds(10))
                    .compensateWith(payments, ctx -> ctx.input())) // a refund, through the same agent
            .step(SHIP, s -> s.reads(CHARGE).execute(ctx -> {
                if (!ctx.input().inStock()) {
                    throw new IllegalStateException("out of stock");
                }
                return "shipped, paid by " + ctx.output(CHARGE).paymentId();
            }))
            .build();
    // end::definitions[]

    @Test
    void an_order_runs_through_an_agent_and_the_caller_waits_for_its_typed_result() throws Exception {
        // tag::run[]
        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:orders;DB_CLOSE_DELAY=-1").build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders).build().start()) {
            TaskHandle order = runtime.client().submit(orders, "order-42", new Order("42", 1999, true));

            TaskResult result = order.await(Duration.ofSeconds(30));
            System.out.println(result.status() + ": " + result.output(CHARGE).orElseThrow()); // PROCESSED: Receipt[...]
            // end::run[]
            assertThat(result.status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(result.output(CHARGE)).contains(new Receipt("pay-42", 1999));
            assertThat(result.output(SHIP)).contains("shipped, paid by pay-42");
            assertThat(bank.charges).containsOnlyKeys(order.id() + ":charge");
            assertThat(bank.refunds).isEmpty();

            TaskHandle unshippable = runtime.client().submit(orders, "order-43", new Order("43", 500, false));
            TaskResult failed = unshippable.await(Duration.ofSeconds(30));
            assertThat(failed.status()).as("ship failed for good: the charge is refunded through the agent")
                    .isEqualTo(TaskStatus.COMPENSATED);
            assertThat(bank.refunds).containsOnlyKeys(unshippable.id() + ":charge:compensate");
        }
    }

    @Test
    void a_web_tier_holds_only_a_client_and_a_worker_tier_runs_the_tasks() {
        String url = "jdbc:h2:mem:two-tiers;DB_CLOSE_DELAY=-1";
        try (JdbcStateStore webStore = JdbcStateStore.builder().url(url).build();
             JdbcStateStore workerStore = JdbcStateStore.builder().url(url).build()) {
            // tag::web-tier[]
            // Web tier: a client, no threads. Submits are durable when they return.
            SasClient client = SasClient.builder().stateStore(webStore).build();
            TaskHandle order = client.submit(orders, "order-7", new Order("7", 500, true));
            // end::web-tier[]

            // tag::worker-tier[]
            // Worker tier (any number of instances, in other processes): runs the steps.
            try (SasRuntime worker = SasRuntime.builder().stateStore(workerStore).workflow(orders).build().start()) {
                // ... until shutdown
                // end::worker-tier[]
                TaskResult result = order.await(Duration.ofSeconds(30));
                assertThat(result.isProcessed()).isTrue();
                assertThat(client.find("orders", "order-7").orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
                assertThat(worker.metrics().claimed()).isEqualTo(1);
            }
        }
    }
}
