package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepRef;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** Typed step outputs go through the store and come back decoded, and a foreign ref is refused at run time. */
class TypedStepsTest {

    record Order(String id, long cents) {
        static final Codec<Order> CODEC = Codec.of(o -> o.id + "|" + o.cents,
                t -> new Order(t.substring(0, t.indexOf('|')), Long.parseLong(t.substring(t.indexOf('|') + 1))));
    }

    record ChargeRequest(String orderId, long cents) {
    }

    record Receipt(String id, long cents) {
        static final Codec<Receipt> CODEC = Codec.of(r -> r.id + ":" + r.cents,
                t -> new Receipt(t.substring(0, t.indexOf(':')), Long.parseLong(t.substring(t.indexOf(':') + 1))));
    }

    record Shipment(String tracking) {
        static final Codec<Shipment> CODEC = Codec.of(Shipment::tracking, Shipment::new);
    }

    static final StepRef<Receipt> CHARGE = StepRef.of("charge", Receipt.CODEC);
    static final StepRef<Shipment> SHIP = StepRef.of("ship", Shipment.CODEC);
    static final StepRef<String> CONFIRM = StepRef.of("confirm");

    private final InMemoryStateStore store = new InMemoryStateStore();
    private final ManualClock clock = new ManualClock();
    private final List<AgentRequest<ChargeRequest>> chargeRequests = new ArrayList<>();

    private final Agent<ChargeRequest, Receipt> payments = new Agent<>() {
        @Override
        public String name() {
            return "payments";
        }

        @Override
        public CompletionStage<Receipt> call(AgentRequest<ChargeRequest> request) {
            chargeRequests.add(request);
            return CompletableFuture.completedFuture(new Receipt("rcpt-" + request.payload().orderId(),
                    request.payload().cents()));
        }
    };

    private SasRuntime runtime(Workflow<?> wf) {
        return SasRuntime.builder().stateStore(store).clock(clock).workflow(wf).build();
    }

    @Test
    void typed_outputs_round_trip_through_the_store_to_later_steps_and_to_the_tasks_result() {
        Workflow<Order> wf = Workflow.builder("orders", Order.CODEC)
                .step(CHARGE, s -> s.call(payments, ctx -> new ChargeRequest(ctx.input().id(), ctx.input().cents())))
                .step(SHIP, s -> s.reads(CHARGE)
                        .execute(ctx -> new Shipment("trk-" + ctx.output(CHARGE).id())))
                .step(CONFIRM, s -> s.reads(CHARGE, SHIP)
                        .execute(ctx -> ctx.output(SHIP).tracking() + " paid " + ctx.output(CHARGE).cents()))
                .build();
        SasRuntime sas = runtime(wf);

        TaskId id = sas.client().submit(wf, "o-1", new Order("o-1", 1250)).id();
        Drain.schedulerOnce(sas);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(chargeRequests).singleElement().satisfies(r -> assertThat(r.compensation()).isFalse());
        assertThat(info.step("charge").output()).as("stored with the ref's codec").isEqualTo("rcpt-o-1:1250");
        assertThat(CHARGE.decode(info.step("charge").output())).isEqualTo(new Receipt("rcpt-o-1", 1250));
        assertThat(info.step("ship").output()).isEqualTo("trk-rcpt-o-1");
        assertThat(wf.lastStep().decode(info.step(wf.lastStep().name()).output()))
                .isEqualTo("trk-rcpt-o-1 paid 1250");
    }

    @Test
    void reading_a_ref_of_another_workflow_fails_the_step_naming_the_workflow_and_the_ref() {
        StepRef<String> otherWorkflowsStep = StepRef.of("reserve");
        Workflow<Order> wf = Workflow.builder("orders", Order.CODEC)
                .step(CHARGE, s -> s.call(payments, ctx -> new ChargeRequest(ctx.input().id(), 1)))
                .step(CONFIRM, s -> s.retry(RetryPolicy.none()).execute(ctx -> ctx.output(otherWorkflowsStep)))
                .build();
        SasRuntime sas = runtime(wf);

        TaskId id = sas.client().submit(wf, "o-1", new Order("o-1", 1)).id();
        Drain.schedulerOnce(sas);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.ERROR);
        assertThat(info.step("confirm").error()).contains("IllegalArgumentException")
                .contains("workflow 'orders' v1 has no step 'reserve'");
    }

    @Test
    void reading_a_same_named_step_with_another_workflows_codec_fails_instead_of_decoding_wrongly() {
        StepRef<Shipment> chargeOfAnotherWorkflow = StepRef.of("charge", Shipment.CODEC);
        Workflow<Order> wf = Workflow.builder("orders", Order.CODEC)
                .step(CHARGE, s -> s.call(payments, ctx -> new ChargeRequest(ctx.input().id(), 1)))
                .step(CONFIRM, s -> s.retry(RetryPolicy.none())
                        .execute(ctx -> ctx.output(chargeOfAnotherWorkflow).tracking()))
                .build();
        SasRuntime sas = runtime(wf);

        TaskId id = sas.client().submit(wf, "o-1", new Order("o-1", 1)).id();
        Drain.schedulerOnce(sas);

        assertThat(sas.client().find(id).orElseThrow().step("confirm").error())
                .contains("workflow 'orders' v1: step 'charge' is defined with StepRef{charge");
    }

    @Test
    void a_step_that_returned_null_has_no_output_and_reading_it_names_the_step() {
        List<Optional<Shipment>> seen = new ArrayList<>();
        Workflow<Order> wf = Workflow.builder("orders", Order.CODEC)
                .step(SHIP, s -> s.execute(ctx -> null))
                .step(CONFIRM, s -> s.reads(SHIP).execute(ctx -> {
                    seen.add(ctx.outputIfPresent(SHIP));
                    return ctx.output(SHIP).tracking();
                }).retry(RetryPolicy.none()))
                .build();
        SasRuntime sas = runtime(wf);

        TaskId id = sas.client().submit(wf, "o-1", new Order("o-1", 1)).id();
        Drain.schedulerOnce(sas);

        assertThat(seen).containsExactly(Optional.empty());
        assertThat(sas.client().find(id).orElseThrow().step("confirm").error()).contains("IllegalStateException")
                .contains("workflow 'orders', step 'confirm': step 'ship' has no recorded output");
    }

    @Test
    void an_output_the_refs_codec_cannot_decode_fails_the_reading_step_without_retry() {
        StepRef<Long> number = StepRef.of("number", Codec.of(String::valueOf, text -> {
            throw new IllegalArgumentException("codec changed, cannot read '" + text + "'");
        }));
        Workflow<String> wf = Workflow.builder("numbers", Codec.string())
                .step(number, s -> s.execute(ctx -> 7L))
                .step("use", s -> s.reads(number).execute(ctx -> String.valueOf(ctx.output(number))))
                .build();
        SasRuntime sas = runtime(wf);

        TaskId id = sas.client().submit(wf, "n-1", "x").id();
        Drain.schedulerOnce(sas);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.ERROR);
        assertThat(info.step("use").attempts()).as("deterministic: not retried").isEqualTo(1);
        assertThat(info.step("use").error()).contains(NonRetryableException.class.getSimpleName())
                .contains("output of step 'number' cannot be decoded")
                .contains("codec changed, cannot read '7'");
    }
}
