package dev.sas.core.unit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepBuilder;
import dev.sas.core.TaskQuery;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskId;
import dev.sas.core.TaskNotFoundException;
import dev.sas.core.Workflow;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Bad configuration and arguments are refused where they are given, naming the setting and the value. */
class ApiValidationTest {

    private static Workflow<String> simple(String name) {
        return Workflow.builder(name, Codec.string()).step("s", s -> s.execute(ctx -> "x")).build();
    }

    @Test
    void workflow_builder_names_the_step_and_the_setting() {
        assertThatThrownBy(() -> Workflow.builder("bad name!", Codec.string()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("workflow name")
                .hasMessageContaining("bad name!");
        assertThatThrownBy(() -> Workflow.builder("wf", null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("inputCodec");
        assertThatThrownBy(() -> Workflow.builder("wf", Codec.string()).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("has no steps");
        assertThatThrownBy(() -> Workflow.builder("wf", Codec.string()).version(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("version must be at least 1, was 0");
        assertThatThrownBy(() -> Workflow.builder("wf", Codec.string()).step("pay", s -> { }))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("step 'pay' has no work");
        assertThatThrownBy(() -> Workflow.builder("wf", Codec.string())
                .step("pay", s -> s.completeWithin(Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("step 'pay': completeWithin must be positive, was PT0S");
        assertThatThrownBy(() -> Workflow.builder("wf", Codec.string())
                .step("pay", s -> s.execute(ctx -> "x").maxTimeouts(0)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("step 'pay': maxTimeouts must be at least 1, was 0");
        assertThatThrownBy(() -> Workflow.builder("wf", Codec.string())
                .step("a", s -> s.execute(ctx -> "x")).step("a", s -> s.execute(ctx -> "y")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'a' is used twice");
    }

    @Test
    @SuppressWarnings("removal")
    void the_old_name_failure_threshold_sets_max_timeouts_and_is_checked_under_both_names() {
        Workflow<String> wf = Workflow.builder("wf", Codec.string())
                .step("pay", s -> s.execute(ctx -> "x").failureThreshold(7))
                .build();

        assertThat(wf.step("pay").maxTimeouts()).isEqualTo(7);
        assertThat(wf.step("pay").failureThreshold()).isEqualTo(7);
        assertThat(Workflow.builder("wf", Codec.string()).step("pay", s -> s.execute(ctx -> "x")).build()
                .step("pay").maxTimeouts()).isEqualTo(StepBuilder.DEFAULT_MAX_TIMEOUTS)
                .isEqualTo(StepBuilder.DEFAULT_FAILURE_THRESHOLD);
        assertThatThrownBy(() -> Workflow.builder("wf", Codec.string())
                .step("pay", s -> s.execute(ctx -> "x").failureThreshold(0)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("step 'pay': failureThreshold (now maxTimeouts) must be at least 1, was 0");
    }

    @Test
    void workflow_builder_does_not_change_what_it_already_built() {
        Workflow.Builder<String> b = Workflow.builder("wf", Codec.string()).step("a", s -> s.execute(ctx -> "x"));
        Workflow<String> first = b.build();
        b.step("b", s -> s.execute(ctx -> "y"));
        assertThat(first.steps()).hasSize(1);
        assertThat(b.build().steps()).hasSize(2);
        assertThatThrownBy(() -> first.steps().add(null)).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> first.step("missing")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no step 'missing'");
    }

    @Test
    void retry_policy_rejects_bad_values_and_backs_off_exponentially_within_its_jitter() {
        assertThatThrownBy(() -> RetryPolicy.builder().maxAttempts(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxAttempts must be at least 1, was 0");
        assertThatThrownBy(() -> RetryPolicy.builder().jitter(1.0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("jitter");
        assertThatThrownBy(() -> RetryPolicy.builder().backoff(Duration.ofSeconds(2), Duration.ofSeconds(1), 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max backoff");
        RetryPolicy exact = RetryPolicy.builder().backoff(Duration.ofMillis(100), Duration.ofSeconds(1), 2).jitter(0)
                .abortOn(IllegalArgumentException.class).build();
        assertThat(exact.backoff(1)).isEqualTo(Duration.ofMillis(100));
        assertThat(exact.backoff(2)).isEqualTo(Duration.ofMillis(200));
        assertThat(exact.backoff(4)).isEqualTo(Duration.ofMillis(800));
        assertThat(exact.backoff(10)).isEqualTo(Duration.ofSeconds(1));
        assertThat(exact.isNonRetryable(new IllegalArgumentException())).isTrue();
        assertThat(exact.isNonRetryable(new IllegalStateException())).isFalse();
        RetryPolicy jittered = RetryPolicy.builder().backoff(Duration.ofMillis(1000), Duration.ofSeconds(10), 2)
                .jitter(0.5).build();
        List<Duration> samples = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            samples.add(jittered.backoff(1));
        }
        assertThat(samples).allSatisfy(d -> assertThat(d.toMillis()).isBetween(500L, 1500L));
        assertThat(samples.stream().distinct().count()).as("jitter spreads retries").isGreaterThan(10);
    }

    @Test
    void runtime_builder_checks_each_setting_and_the_combination() {
        assertThatThrownBy(() -> SasRuntime.builder().schedulerThreads(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("schedulerThreads must be at least 1, was 0");
        assertThatThrownBy(() -> SasRuntime.builder().pollInterval(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("pollInterval must be positive");
        assertThatThrownBy(() -> SasRuntime.builder().stateStore(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("stateStore must not be null");
        assertThatThrownBy(() -> SasRuntime.builder().instanceId(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SasRuntime.builder().workflow(simple("a")).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("stateStore is required");
        assertThatThrownBy(() -> SasRuntime.builder().stateStore(new InMemoryStateStore()).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("at least one workflow");
        assertThatThrownBy(() -> SasRuntime.builder().stateStore(new InMemoryStateStore()).workflow(simple("a"))
                .claimBatchSize(100).maxInFlight(10).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("claimBatchSize (100)")
                .hasMessageContaining("maxInFlight (10)");
        assertThatThrownBy(() -> SasRuntime.builder().workflow(simple("a")).workflow(simple("a")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("already registered");
        assertThatThrownBy(() -> SasRuntime.builder().statusChannel("bad channel", e -> { }))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("status channel name");
        assertThatThrownBy(() -> SubmitOptions.builder().delay(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("delay must not be negative");
        assertThatThrownBy(() -> TaskId.of(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TaskId.of("x".repeat(65))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void runtime_refuses_null_arguments_and_unknown_tasks_with_clear_errors() {
        Workflow<String> wf = simple("a");
        SasRuntime sas = SasRuntime.builder().stateStore(new InMemoryStateStore()).clock(new ManualClock()).workflow(wf).build();
        TaskId unknown = TaskId.random();
        assertThatThrownBy(() -> sas.client().submit(null, "k", "x").id()).isInstanceOf(NullPointerException.class)
                .hasMessage("workflow must not be null");
        assertThatThrownBy(() -> sas.client().submit(wf, "k", "x", null).id()).isInstanceOf(NullPointerException.class)
                .hasMessage("options must not be null");
        assertThatThrownBy(() -> sas.client().find(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> sas.client().events(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> sas.client().operations().cancel(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> sas.client().operations().resubmit(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> TaskQuery.all().withStatus(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> TaskQuery.all().withLimit(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> sas.client().list(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> sas.client().operations().cancel(unknown)).isInstanceOf(TaskNotFoundException.class)
                .hasMessageContaining(unknown.value());
        assertThat(sas.client().find(unknown)).isEmpty();
        // The client submits any definition: an equal one built elsewhere, or a version only other nodes run.
        Workflow<String> sameNameOtherInstance = simple("a");
        assertThat(sas.client().submit(sameNameOtherInstance, "k", "x").created()).isTrue();
        Workflow<String> v2 = Workflow.builder("a", Codec.string()).version(2).step("s", s -> s.execute(c -> "x"))
                .build();
        assertThat(sas.client().submit(v2, "k2", "x").created()).isTrue();
        assertThat(sas.client().submit(wf, "k", "x").created()).as("same workflow and key: the first task").isFalse();
        sas.start();
        sas.close();
        sas.close();
        assertThatThrownBy(sas::start).isInstanceOf(IllegalStateException.class);
    }
}
