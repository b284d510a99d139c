package dev.sas.examples.orders;

import dev.sas.core.CircuitBreaker;
import dev.sas.core.Codec;
import dev.sas.core.FlowControl;
import dev.sas.core.ForEachResults;
import dev.sas.core.RetryPolicy;
import dev.sas.core.StepRef;
import dev.sas.core.TypedStepBuilder;
import dev.sas.core.Workflow;
import dev.sas.examples.orders.services.Form;
import dev.sas.rabbitmq.RabbitAgent;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The order-processing workflow: open the order, reserve stock and charge the payment at the same
 * time (two parallel branches, joined), ship each parcel (a fan-out, one element per unit ordered,
 * two at once), confirm the order. If a branch fails for good (a blocked SKU, a declined card), the
 * other is cancelled and whatever either branch completed is compensated, so the order ends
 * {@code COMPENSATED}; a parcel the carrier refuses cancels the other parcels and compensates
 * every shipped parcel, then both branches. The remote steps call services through
 * {@link ServiceAgent}s and each has a compensation (release the stock, refund the payment, cancel
 * the parcel's shipment) that goes through the same agent, with the compensation's own idempotency
 * key. The last step is local: it reads the fan-out's joined output and marks the order row
 * confirmed with the parcels' shipment ids. Stateless; the workflow it builds is immutable.
 */
public final class OrderWorkflow {

    /** The workflow's name. */
    public static final String NAME = "order-processing";
    /** How long one attempt at a step may take before the supervisor recovers it. */
    public static final Duration STEP_DEADLINE = Duration.ofSeconds(2);
    /** How many attempts at a step may time out (found past their deadline) before the order fails. */
    public static final int MAX_TIMEOUTS = 4;

    /**
     * The payment provider's limits, shared by every runtime of the shop: at most 8 charges and
     * refunds in flight, and a circuit breaker that opens after 5 failures in a row (or half of at
     * least 20 calls within 10 s), stays open 1 s, then lets one probe through. While it is open,
     * orders wait in WAITING instead of spending their retries on a provider that is down.
     */
    public static final FlowControl PAYMENT_FLOW = FlowControl.builder()
            .maxConcurrentCalls(8)
            .circuitBreaker(CircuitBreaker.builder()
                    .consecutiveFailures(5)
                    .failureRate(50, 20)
                    .window(Duration.ofSeconds(10))
                    .openFor(Duration.ofSeconds(1))
                    .build())
            .build();

    /** The parallel step that reserves the stock and charges the payment at the same time. */
    public static final String RESERVE_AND_CHARGE = "reserve-and-charge";
    /**
     * How long the join waits for both branches before it starts again (finding the branches it
     * started): far more than a branch's steps take with their retries, time-outs and a payment outage.
     */
    public static final Duration JOIN_DEADLINE = Duration.ofSeconds(30);
    /**
     * Retries of the join's compensation, which waits for a cancelled branch to end: every 250 ms to
     * 1 s, for up to a few minutes, so a failed order is undone soon after its other branch ends.
     */
    public static final RetryPolicy JOIN_COMPENSATION_RETRY = RetryPolicy.builder().maxAttempts(300)
            .backoff(Duration.ofMillis(250), Duration.ofSeconds(1), 2.0).build();
    /** The branch of {@link #RESERVE_AND_CHARGE} that reserves the stock. */
    public static final String STOCK_BRANCH = "stock";
    /** The branch of {@link #RESERVE_AND_CHARGE} that charges the payment. */
    public static final String PAYMENT_BRANCH = "payment";
    /** Reserves the stock (branch {@link #STOCK_BRANCH}); its output is the warehouse's form reply. */
    public static final StepRef<String> RESERVE_STOCK = StepRef.of("reserve-stock");
    /** Charges the payment (branch {@link #PAYMENT_BRANCH}); its output is the payment provider's form reply. */
    public static final StepRef<String> CHARGE_PAYMENT = StepRef.of("charge-payment");
    /**
     * The fan-out that ships the order's parcels, one element per {@link Parcel}, at most
     * {@link #PARCEL_CONCURRENCY} at once; its output lists each parcel's carrier reply, in order.
     */
    public static final String SHIP_PARCELS = "ship-parcels";
    /** The step run once per parcel: books the parcel's shipment; its output is the carrier's form reply. */
    public static final String SHIP_PARCEL = "ship-parcel";
    /** How many parcels of one order are shipped at once. */
    public static final int PARCEL_CONCURRENCY = 2;
    /** Confirms the order; its output, the task's result, is the parcels' shipment ids, comma-separated. */
    public static final StepRef<String> CONFIRM_ORDER = StepRef.of("confirm-order");

    private OrderWorkflow() {
    }

    /**
     * The agents of the shop's three remote services.
     *
     * @param inventory the warehouse
     * @param payment the payment provider
     * @param shipping the carrier
     */
    public record Agents(ServiceAgent inventory, ServiceAgent payment, ServiceAgent shipping) {

        /** @throws NullPointerException if an agent is null */
        public Agents {
            Objects.requireNonNull(inventory, "inventory must not be null");
            Objects.requireNonNull(payment, "payment must not be null");
            Objects.requireNonNull(shipping, "shipping must not be null");
        }

        /** Agents for the services at these addresses, sharing one HTTP client. */
        public static Agents connect(URI inventory, URI payment, URI shipping) {
            HttpClient http = HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(1))
                    .build();
            return new Agents(new ServiceAgent("inventory", inventory, http),
                    new ServiceAgent("payment", payment, http, PAYMENT_FLOW),
                    new ServiceAgent("shipping", shipping, http));
        }
    }

    /**
     * Builds the workflow.
     *
     * @param agents the services' agents
     * @param orders the order database, for the confirming step
     * @throws NullPointerException if an argument is null
     */
    public static Workflow<Order> create(Agents agents, OrderDatabase orders) {
        return create(agents, orders, null);
    }

    /**
     * Builds the workflow with the charge sent over RabbitMQ: the payment step publishes the charge
     * to {@code payments}' request queue and completes when a {@link PaymentWorker} (in a process of
     * its own) publishes the payment service's reply, which a {@code RabbitAgentReplyConsumer} hands to the
     * store. The refund (the compensation) still calls the payment service directly. The charge runs
     * beside the reservation as in the default mode: a payment branch cancelled while its request is
     * out (the reservation failed) has an unknown outcome, which the parallel step compensates once the
     * charge's deadline has passed (a redelivered request may be charged until then).
     *
     * @param agents the services' agents
     * @param orders the order database, for the confirming step
     * @param payments the payment agent over RabbitMQ, or null to charge through {@code agents.payment()}
     * @throws NullPointerException if {@code agents} or {@code orders} is null
     */
    public static Workflow<Order> create(Agents agents, OrderDatabase orders, RabbitAgent payments) {
        Objects.requireNonNull(agents, "agents must not be null");
        Objects.requireNonNull(orders, "orders must not be null");
        ServiceAgent inventory = agents.inventory();
        ServiceAgent payment = agents.payment();
        ServiceAgent shipping = agents.shipping();
        // tag::workflow[]
        Consumer<TypedStepBuilder<Order, String>> reserve = s -> s
                .call(inventory, ctx -> ServiceCall.post("/reserve",
                        "orderId", ctx.input().orderId(),
                        "sku", ctx.input().sku(),
                        "quantity", Integer.toString(ctx.input().quantity())))
                .completeWithin(STEP_DEADLINE)
                .maxTimeouts(MAX_TIMEOUTS)
                .compensateWith(inventory, ctx -> ServiceCall.post("/release",
                        "orderId", ctx.input().orderId()));
        Consumer<TypedStepBuilder<Order, String>> charge = s -> (payments == null
                ? s.call(payment, ctx -> ServiceCall.post("/charge",
                        "orderId", ctx.input().orderId(),
                        "amountCents", Long.toString(ctx.input().amountCents())))
                : s.awaitCompletion(payments.request(ctx -> Form.encode(Form.of(
                        "orderId", ctx.input().orderId(),
                        "amountCents", Long.toString(ctx.input().amountCents())))))
                        .retry(ServiceAgent.RETRY))
                .completeWithin(STEP_DEADLINE)
                .maxTimeouts(MAX_TIMEOUTS)
                .compensateWith(payment, ctx -> ServiceCall.post("/refund",
                        "orderId", ctx.input().orderId()));
        return Workflow.builder(NAME, Order.CODEC)
                .parallel(RESERVE_AND_CHARGE, p -> p
                        .branch(STOCK_BRANCH, b -> b.step(RESERVE_STOCK, reserve))
                        .branch(PAYMENT_BRANCH, b -> b.step(CHARGE_PAYMENT, charge))
                        .completeWithin(JOIN_DEADLINE)
                        .compensationRetry(JOIN_COMPENSATION_RETRY))
                .forEach(SHIP_PARCELS, Parcel.CODEC, ctx -> Parcel.of(ctx.input()), each -> each
                        .step(SHIP_PARCEL, s -> s
                                .call(shipping, ctx -> ServiceCall.post("/shipments",
                                        "orderId", ctx.input().orderId(),
                                        "parcel", ctx.input().id(),
                                        "address", ctx.input().address()))
                                .completeWithin(STEP_DEADLINE)
                                .maxTimeouts(MAX_TIMEOUTS)
                                .compensateWith(shipping, ctx -> ServiceCall.post("/cancel",
                                        "orderId", ctx.input().orderId(),
                                        "parcel", ctx.input().id())))
                        .concurrency(PARCEL_CONCURRENCY)
                        .completeWithin(JOIN_DEADLINE))
                .step(CONFIRM_ORDER, s -> s
                        .execute(ctx -> {
                            String shipmentIds = ForEachResults.of(ctx.output(SHIP_PARCELS).orElseThrow())
                                    .outputs(Codec.string()).stream()
                                    .map(reply -> Form.decode(reply).get("shipmentId"))
                                    .collect(Collectors.joining(","));
                            orders.confirm(ctx.input().orderId(), shipmentIds);
                            return shipmentIds;
                        })
                        .completeWithin(STEP_DEADLINE)
                        .maxTimeouts(MAX_TIMEOUTS))
                .build();
        // end::workflow[]
    }
}
