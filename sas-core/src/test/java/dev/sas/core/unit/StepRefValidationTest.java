package dev.sas.core.unit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.Codec;
import dev.sas.core.RetryPolicy;
import dev.sas.core.StepDefinition;
import dev.sas.core.StepRef;
import dev.sas.core.Workflow;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Typed step refs and agent compensations are checked where they are set, and their combinations at build(). */
class StepRefValidationTest {

    record Receipt(String id) {
    }

    static final Codec<Receipt> RECEIPT = Codec.of(Receipt::id, Receipt::new);
    static final StepRef<Receipt> CHARGE = StepRef.of("charge", RECEIPT);
    static final StepRef<String> SHIP = StepRef.of("ship");
    static final RetryPolicy AGENT_POLICY = RetryPolicy.builder().maxAttempts(7).build();

    static final Agent<String, Receipt> PAYMENTS = new Agent<>() {
        @Override
        public String name() {
            return "payments";
        }

        @Override
        public CompletionStage<Receipt> call(AgentRequest<String> request) {
            return CompletableFuture.completedFuture(new Receipt("r-" + request.payload()));
        }

        @Override
        public RetryPolicy retryPolicy() {
            return AGENT_POLICY;
        }
    };

    @Nested
    class Refs {

        @Test
        void a_typed_step_stores_its_output_with_the_refs_codec_and_the_workflow_exposes_its_refs() {
            Workflow<String> wf = Workflow.builder("orders", Codec.string())
                    .step(CHARGE, s -> s.call(PAYMENTS, ctx -> ctx.input()))
                    .step("note", s -> s.execute(ctx -> "n"))
                    .step(SHIP, s -> s.reads(CHARGE).execute(ctx -> "ship " + ctx.output(CHARGE).id()))
                    .build();

            assertThat(wf.refs()).containsExactly(CHARGE, StepRef.of("note"), SHIP);
            assertThat(wf.lastStep()).isEqualTo(SHIP);
            assertThat(wf.step(CHARGE).ref().codec()).isSameAs(RECEIPT);
            assertThat(wf.step(CHARGE).reads()).isEmpty();
            assertThat(wf.step(SHIP).reads()).containsExactly(CHARGE);
            assertThat(CHARGE.decode("r-1")).isEqualTo(new Receipt("r-1"));
            assertThat(CHARGE.decode(null)).isNull();
        }

        @Test
        void a_ref_needs_a_valid_name_and_a_codec() {
            assertThatThrownBy(() -> StepRef.of("bad name!", RECEIPT)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("step name").hasMessageContaining("bad name!");
            assertThatThrownBy(() -> StepRef.of("charge", null)).isInstanceOf(NullPointerException.class)
                    .hasMessage("step 'charge': codec must not be null");
            assertThatThrownBy(() -> Workflow.builder("orders", Codec.string()).step((StepRef<String>) null,
                    s -> s.execute(ctx -> "x"))).isInstanceOf(NullPointerException.class)
                    .hasMessageContaining("step ref must not be null");
        }

        @Test
        void a_ref_whose_name_another_step_already_uses_is_refused_naming_both() {
            assertThatThrownBy(() -> Workflow.builder("orders", Codec.string())
                    .step("charge", s -> s.execute(ctx -> "x"))
                    .step(CHARGE, s -> s.call(PAYMENTS, ctx -> "1")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("workflow 'orders': step name 'charge' is used twice")
                    .hasMessageContaining("step 0");
        }

        @Test
        void reading_a_ref_that_is_not_a_step_of_the_workflow_fails_at_build_naming_workflow_step_and_ref() {
            Workflow.Builder<String> b = Workflow.builder("orders", Codec.string())
                    .step(SHIP, s -> s.reads(CHARGE).execute(ctx -> "x"));

            assertThatThrownBy(b::build).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("workflow 'orders' v1: step 'ship' reads step 'charge'")
                    .hasMessageContaining("which is not a step of this workflow; steps are [ship]");
        }

        @Test
        void reading_a_later_step_or_the_step_itself_fails_at_build() {
            assertThatThrownBy(() -> Workflow.builder("orders", Codec.string())
                    .step(SHIP, s -> s.reads(CHARGE).execute(ctx -> "x"))
                    .step(CHARGE, s -> s.call(PAYMENTS, ctx -> "1"))
                    .build())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("step 'ship' reads step 'charge'")
                    .hasMessageContaining("which is step 1, after it; a step can read only earlier steps");
            assertThatThrownBy(() -> Workflow.builder("orders", Codec.string())
                    .step(SHIP, s -> s.reads(SHIP).execute(ctx -> "x"))
                    .build())
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("which is the step itself");
        }

        @Test
        void reading_a_ref_with_the_right_name_but_another_codec_fails_at_build() {
            StepRef<String> chargeAsText = StepRef.of("charge");

            assertThatThrownBy(() -> Workflow.builder("orders", Codec.string())
                    .step(CHARGE, s -> s.call(PAYMENTS, ctx -> "1"))
                    .step(SHIP, s -> s.reads(chargeAsText).execute(ctx -> "x"))
                    .build())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("step 'ship' reads step 'charge'")
                    .hasMessageContaining("but that step is defined with StepRef{charge");
        }

        @Test
        void looking_up_a_ref_of_another_workflow_names_the_workflow_and_the_ref() {
            Workflow<String> wf = Workflow.builder("orders", Codec.string())
                    .step("charge", s -> s.execute(ctx -> "x"))
                    .build();

            assertThatThrownBy(() -> wf.step(SHIP)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("workflow 'orders' v1 has no step 'ship'");
            assertThatThrownBy(() -> wf.step(CHARGE)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("workflow 'orders' v1: step 'charge' is defined with StepRef{charge");
        }

        @Test
        void reads_refuses_a_null_ref() {
            assertThatThrownBy(() -> Workflow.builder("orders", Codec.string())
                    .step(SHIP, s -> s.reads(CHARGE, null)))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessage("step 'ship': a ref in reads(...) must not be null");
        }
    }

    @Nested
    class Compensations {

        @Test
        void an_agent_compensation_defaults_to_the_agents_retry_policy_and_the_steps_deadline() {
            Workflow<String> wf = Workflow.builder("orders", Codec.string())
                    .step(CHARGE, s -> s.call(PAYMENTS, ctx -> "1").retry(RetryPolicy.none())
                            .completeWithin(Duration.ofSeconds(9))
                            .compensateWith(PAYMENTS, ctx -> "refund"))
                    .build();
            StepDefinition<String> charge = wf.step(CHARGE);

            assertThat(charge.hasCompensation()).isTrue();
            assertThat(charge.compensationAgentName()).contains("payments");
            assertThat(charge.retryPolicy()).isSameAs(RetryPolicy.none());
            assertThat(charge.compensationRetryPolicy()).isSameAs(AGENT_POLICY);
            assertThat(charge.retryPolicy(true)).isSameAs(AGENT_POLICY);
            assertThat(charge.compensateWithin()).isEqualTo(Duration.ofSeconds(9));
            assertThat(charge.completeWithin(true)).isEqualTo(Duration.ofSeconds(9));
        }

        @Test
        void a_compensation_may_set_its_own_deadline_and_retry_policy() {
            RetryPolicy once = RetryPolicy.none();
            Workflow<String> wf = Workflow.builder("orders", Codec.string())
                    .step(CHARGE, s -> s.call(PAYMENTS, ctx -> "1")
                            .compensateWith(PAYMENTS, ctx -> "refund")
                            .compensateWithin(Duration.ofSeconds(3))
                            .compensationRetry(once))
                    .step("local", s -> s.execute(ctx -> "x").compensateWith(ctx -> { }))
                    .build();

            assertThat(wf.step(CHARGE).compensateWithin()).isEqualTo(Duration.ofSeconds(3));
            assertThat(wf.step(CHARGE).completeWithin()).isEqualTo(Duration.ofSeconds(30));
            assertThat(wf.step(CHARGE).compensationRetryPolicy()).isSameAs(once);
            assertThat(wf.step("local").compensationRetryPolicy()).as("a local compensation keeps the step's policy")
                    .isSameAs(wf.step("local").retryPolicy());
            assertThat(wf.step("local").compensationAgentName()).isEmpty();
        }

        @Test
        void compensation_settings_are_checked_where_they_are_set() {
            assertThatThrownBy(() -> Workflow.builder("orders", Codec.string())
                    .step("pay", s -> s.compensateWithin(Duration.ZERO)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("step 'pay': compensateWithin must be positive, was PT0S");
            assertThatThrownBy(() -> Workflow.builder("orders", Codec.string())
                    .step("pay", s -> s.compensateWith(null, ctx -> "x")))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessage("step 'pay': compensation agent must not be null");
            assertThatThrownBy(() -> Workflow.builder("orders", Codec.string())
                    .step("pay", s -> s.compensateWith(PAYMENTS, null)))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessage("step 'pay': compensation request must not be null");
            assertThatThrownBy(() -> Workflow.builder("orders", Codec.string())
                    .step("pay", s -> s.compensationRetry(null)))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessage("step 'pay': compensation retry policy must not be null");
        }

        @Test
        void compensation_settings_without_a_compensation_or_two_compensations_fail_at_build_naming_both() {
            assertThatThrownBy(() -> Workflow.builder("orders", Codec.string())
                    .step("pay", s -> s.execute(ctx -> "x").compensateWithin(Duration.ofSeconds(1))))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("step 'pay' sets compensateWithin(PT1S) but no compensateWith(...)");
            assertThatThrownBy(() -> Workflow.builder("orders", Codec.string())
                    .step("pay", s -> s.execute(ctx -> "x").compensationRetry(RetryPolicy.none())))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("step 'pay' sets compensationRetry(...) but no compensateWith(...)");
            assertThatThrownBy(() -> Workflow.builder("orders", Codec.string())
                    .step("pay", s -> s.execute(ctx -> "x").compensateWith(ctx -> { })
                            .compensateWith(PAYMENTS, ctx -> "refund")))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("sets both compensateWith(compensation) and compensateWith(agent, request)");
        }
    }
}
