package dev.sas.core.unit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.StepDefinition;
import dev.sas.core.Workflow;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Conditional steps and timers are checked where they are set, and their combinations at build(). */
class WorkflowShapesValidationTest {

    private static final Instant NOW = Instant.parse("2030-01-01T00:00:00Z");

    @Test
    void a_timer_waits_for_a_duration_from_the_time_it_comes_up() {
        Workflow<String> wf = Workflow.builder("wf", Codec.string())
                .timer("wait", t -> t.waitFor(Duration.ofDays(2)))
                .step("go", s -> s.execute(ctx -> "went"))
                .build();
        StepDefinition<String> timer = wf.step("wait");
        assertThat(timer.isTimer()).isTrue();
        assertThat(timer.isConditional()).isFalse();
        assertThat(timer.hasCompensation()).isFalse();
        assertThat(timer.firesAt(null, NOW)).isEqualTo(NOW.plus(Duration.ofDays(2)));
        assertThat(wf.step("go").isTimer()).isFalse();
        assertThatThrownBy(() -> wf.step("go").firesAt(null, NOW)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'go' is not a timer");
    }

    @Test
    void a_timer_needs_exactly_one_of_wait_for_and_wait_until() {
        assertThatThrownBy(() -> Workflow.builder("wf", Codec.string()).timer("wait", t -> { }))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("timer 'wait' has no time: set waitFor(...) or waitUntil(...)");
        assertThatThrownBy(() -> Workflow.builder("wf", Codec.string())
                .timer("wait", t -> t.waitFor(Duration.ofHours(1)).waitUntil(ctx -> NOW)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("timer 'wait' sets both waitFor(PT1H) and waitUntil(...); choose one");
    }

    @Test
    void bad_timer_and_condition_arguments_are_refused_where_they_are_set() {
        Workflow.Builder<String> b = Workflow.builder("wf", Codec.string());
        assertThatThrownBy(() -> b.timer("wait", t -> t.waitFor(Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("timer 'wait': waitFor must be positive, was PT0S");
        assertThatThrownBy(() -> b.timer("wait", t -> t.waitFor(null)))
                .isInstanceOf(NullPointerException.class).hasMessage("timer 'wait': waitFor must not be null");
        assertThatThrownBy(() -> b.timer("wait", t -> t.waitUntil(null)))
                .isInstanceOf(NullPointerException.class).hasMessage("timer 'wait': waitUntil must not be null");
        assertThatThrownBy(() -> b.step("s", s -> s.when(null)))
                .isInstanceOf(NullPointerException.class).hasMessage("step 's': when condition must not be null");
        assertThatThrownBy(() -> b.timer("bad name", t -> t.waitFor(Duration.ofDays(1))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timer name");
    }

    @Test
    void a_condition_decides_whether_the_step_runs_and_a_step_without_one_always_runs() {
        Workflow<String> wf = Workflow.builder("wf", Codec.string())
                .step("a", s -> s.execute(ctx -> "a"))
                .step("b", s -> s.when(ctx -> false).execute(ctx -> "b"))
                .timer("c", t -> t.when(ctx -> true).waitUntil(ctx -> NOW))
                .build();
        assertThat(wf.step("a").isConditional()).isFalse();
        assertThat(wf.step("a").shouldRun(null)).isTrue();
        assertThat(wf.step("b").isConditional()).isTrue();
        assertThat(wf.step("b").shouldRun(null)).isFalse();
        assertThat(wf.step("c").isConditional()).isTrue();
        assertThat(wf.step("c").shouldRun(null)).isTrue();
        assertThat(wf.step("c").firesAt(null, NOW.minusSeconds(5))).isEqualTo(NOW);
    }

    @Test
    void a_timer_name_is_unique_among_the_steps() {
        assertThatThrownBy(() -> Workflow.builder("wf", Codec.string())
                .step("wait", s -> s.execute(ctx -> "x"))
                .timer("wait", t -> t.waitFor(Duration.ofDays(1))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("step name 'wait' is used twice");
    }
}
