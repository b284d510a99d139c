package dev.sas.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.SasRuntime;
import dev.sas.core.SubmitOptions;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Reads the registry after a run driven by hand on a manual clock. */
class SasMicrometerTest {

    private final ManualClock clock = new ManualClock();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private Workflow<String> orders() {
        return Workflow.builder("orders", Codec.string())
                .step("reserve", s -> s.execute(ctx -> {
                    clock.tick(Duration.ofSeconds(2));
                    return "reserved";
                }))
                .step("charge", s -> s.execute(ctx -> {
                    clock.tick(Duration.ofMillis(500));
                    if (ctx.input().startsWith("bad")) {
                        throw new NonRetryableException("card declined");
                    }
                    return "charged";
                }))
                .build();
    }

    @Test
    void a_run_leaves_counters_step_timers_and_outcomes_per_workflow_in_the_registry() {
        Workflow<String> wf = orders();
        InMemoryStateStore store = new InMemoryStateStore();
        // tag::bind[]
        SasMicrometer metrics = SasMicrometer.builder(registry).tags(Tags.of("app", "shop")).build();
        SasRuntime runtime = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf)
                .onEvent(metrics.listener())
                .build();
        metrics.bind(runtime);
        // end::bind[]
        try (runtime) {
            runtime.client().submit(wf, "o-1", "ok-1");
            runtime.client().submit(wf, "o-2", "ok-2");
            runtime.client().submit(wf, "o-3", "bad-3");
            Drain.untilIdle(runtime);

            assertThat(registry.get("sas.tasks.submitted").tag("app", "shop").functionCounter().count()).isEqualTo(3);
            assertThat(registry.get("sas.tasks.claimed").functionCounter().count()).isGreaterThanOrEqualTo(3);
            assertThat(registry.get("sas.steps").tags("workflow", "orders", "step", "reserve", "outcome", "completed")
                    .counter().count()).isEqualTo(3);
            assertThat(registry.get("sas.steps").tags("workflow", "orders", "step", "charge", "outcome", "completed")
                    .counter().count()).isEqualTo(2);
            assertThat(registry.get("sas.steps").tags("workflow", "orders", "step", "charge", "outcome", "failed")
                    .counter().count()).isEqualTo(1);

            Timer reserve = registry.get("sas.step.duration")
                    .tags("workflow", "orders", "step", "reserve", "outcome", "completed").timer();
            assertThat(reserve.count()).isEqualTo(3);
            assertThat(reserve.max(TimeUnit.MILLISECONDS)).isEqualTo(2_000);
            assertThat(registry.get("sas.step.duration").tags("step", "charge", "outcome", "failed").timer()
                    .totalTime(TimeUnit.MILLISECONDS)).isEqualTo(500);

            assertThat(registry.get("sas.tasks.finished").tags("workflow", "orders", "outcome", "processed")
                    .counter().count()).isEqualTo(2);
            assertThat(registry.get("sas.tasks.finished").tags("workflow", "orders", "outcome", "error")
                    .counter().count()).isEqualTo(1);
            assertThat(registry.get("sas.tasks").tag("state", "processed").gauge().value()).isEqualTo(2);
            assertThat(registry.get("sas.tasks").tag("state", "error").gauge().value()).isEqualTo(1);
            assertThat(registry.get("sas.tasks.in.flight").gauge().value()).isZero();
            assertThat(registry.get("sas.clock.skew").timeGauge().value(TimeUnit.MILLISECONDS)).isZero();
        }
    }

    @Test
    void store_gauges_show_the_queue_and_the_age_of_the_oldest_due_task_at_most_once_per_refresh() {
        Workflow<String> wf = orders();
        SasMicrometer metrics = SasMicrometer.builder(registry).storeRefresh(Duration.ofMillis(1)).build();
        InMemoryStateStore store = new InMemoryStateStore();
        // a client-only runtime: nothing claims, so the tasks wait
        try (SasRuntime runtime = metrics.bind(SasRuntime.builder().stateStore(store).clock(clock).workflow(wf)
                .schedulerEnabled(false).build())) {
            runtime.client().submit(wf, "o-1", "ok-1");
            clock.tick(Duration.ofSeconds(40));
            runtime.client().submit(wf, "o-2", "ok-2", SubmitOptions.builder().delay(Duration.ofHours(1)).build());
            clock.tick(Duration.ofSeconds(20));
            assertThat(registry.get("sas.tasks").tag("state", "pending").gauge().value()).isEqualTo(2);
            assertThat(registry.get("sas.tasks.oldest.due.age").timeGauge().value(TimeUnit.SECONDS)).isEqualTo(60);
            assertThat(registry.get("sas.supervisor.leader").gauge().value()).isZero();
        }
    }

    @Test
    void store_gauges_are_not_read_again_within_the_refresh_interval() {
        Workflow<String> wf = orders();
        SasMicrometer metrics = SasMicrometer.builder(registry).storeRefresh(Duration.ofHours(1)).build();
        InMemoryStateStore store = new InMemoryStateStore();
        try (SasRuntime runtime = metrics.bind(SasRuntime.builder().stateStore(store).clock(clock).workflow(wf)
                .schedulerEnabled(false).build())) {
            assertThat(registry.get("sas.tasks").tag("state", "pending").gauge().value()).isZero();
            runtime.client().submit(wf, "o-1", "ok-1");
            assertThat(registry.get("sas.tasks").tag("state", "pending").gauge().value()).as("cached").isZero();
        }
    }

    @Test
    void settings_are_checked_where_they_are_set() {
        assertThatThrownBy(() -> SasMicrometer.builder(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("registry must not be null");
        assertThatThrownBy(() -> SasMicrometer.builder(registry).storeRefresh(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("storeRefresh must be positive, was PT0S");
    }
}
