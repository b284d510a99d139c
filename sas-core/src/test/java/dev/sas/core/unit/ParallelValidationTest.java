package dev.sas.core.unit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.StepRef;
import dev.sas.core.Workflow;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Parallel steps are checked where they are set, with messages naming the step and branch. */
class ParallelValidationTest {

    private static final StepRef<Integer> COUNT = StepRef.of("count", Codec.of(String::valueOf, Integer::valueOf));

    private static Workflow.Builder<String> wf() {
        return Workflow.builder("wf", Codec.string());
    }

    @Test
    void a_parallel_step_awaits_its_branches_and_later_steps_read_them_by_name_and_ref() {
        Workflow<String> w = wf().version(3)
                .parallel("both", p -> p
                        .branch("left", b -> b.step("l1", s -> s.execute(ctx -> "l")).step(COUNT, s -> s.execute(ctx -> 1)))
                        .branch("right", b -> b.step("r1", s -> s.execute(ctx -> "r"))))
                .step("after", s -> s.reads(COUNT).execute(ctx -> ctx.output(COUNT) + ctx.output("right").orElseThrow()))
                .build();
        assertThat(w.steps()).hasSize(2);
        assertThat(w.step("both").startsChildTask()).isTrue();
        assertThat(w.step("both").runsUnits()).isTrue();
        assertThat(w.step("both").hasCompensation()).as("it compensates its branches' steps").isTrue();
        assertThat(w.step("both").completeWithin()).isEqualTo(Duration.ofHours(1));
        assertThat(w.outputOf("left", i -> "{\"left\":\"1\",\"right\":\"r\"}")).contains("1");
        assertThat(w.outputOf("count", i -> "{\"left\":\"1\",\"right\":null}")).contains("1");
        assertThat(w.outputOf("right", i -> "{\"left\":\"1\",\"right\":null}")).isEmpty();
        assertThat(w.outputOf("both", i -> i == 0 ? "joined" : null)).contains("joined");
        assertThat(w.outputOf("left", i -> "{ \"right\" : null , \"left\":\"a\\\"b\\\\c\\n\\u00e9\\t\"}"))
                .as("escapes decoded").contains("a\"b\\c\n\u00e9\t");
        assertThatThrownBy(() -> w.outputOf("l1", i -> "{}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has no step 'l1'");
        assertThatThrownBy(() -> w.checkOutputRef(StepRef.of("count"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("branch step 'count' is defined with");
        w.checkOutputRef(COUNT);
    }

    @Test
    void branches_need_unique_names_steps_and_at_least_two() {
        assertThatThrownBy(() -> wf().parallel("p", p -> p.branch("a", b -> b.step("x", s -> s.execute(ctx -> "")))
                .branch("a", b -> b.step("y", s -> s.execute(ctx -> "")))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("parallel step 'p': branch name 'a' is used twice; give each branch its own name");
        assertThatThrownBy(() -> wf().parallel("p", p -> p.branch("a", b -> b.step("x", s -> s.execute(ctx -> "")))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("parallel step 'p' of workflow 'wf' has 1 branch(es); add at least two");
        assertThatThrownBy(() -> wf().parallel("p", p -> p.branch("a", b -> b.step("x", s -> s.execute(ctx -> "")))
                .branch("b", b -> { })))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("parallel step 'p' of workflow 'wf': branch 'b' has no steps; add at least one with b.step(...)");
        assertThatThrownBy(() -> wf().parallel("p", p -> p.branch("a", b -> b.step("x", s -> s.execute(ctx -> "")))
                .branch("b", b -> b.step("x", s -> s.execute(ctx -> "")))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("uses the name 'x' (branch 'b') that a step or branch of this workflow already has");
        assertThatThrownBy(() -> wf().step("a", s -> s.execute(ctx -> ""))
                .parallel("p", p -> p.branch("a", b -> b.step("x", s -> s.execute(ctx -> "")))
                        .branch("b", b -> b.step("y", s -> s.execute(ctx -> "")))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("uses the name 'a' (branch 'a')");
        assertThatThrownBy(() -> wf().parallel("p", p -> p.branch("a", b -> b.step("x", s -> s.execute(ctx -> "")))
                        .branch("b", b -> b.step("y", s -> s.execute(ctx -> ""))))
                .step("x", s -> s.execute(ctx -> "")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("workflow 'wf': step name 'x' is used by branch 'a' of parallel step 0; choose another name");
    }

    @Test
    void bad_arguments_are_refused_where_they_are_set() {
        assertThatThrownBy(() -> wf().parallel("p", p -> p.completeWithin(Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("parallel step 'p': completeWithin must be positive, was PT0S");
        assertThatThrownBy(() -> wf().parallel("p", p -> p.maxTimeouts(0)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxTimeouts must be at least 1");
        assertThatThrownBy(() -> wf().parallel("p", p -> p.branch("bad name", b -> { })))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("branch name must match");
        assertThatThrownBy(() -> wf().parallel("p", p -> p.branch("a", null)))
                .isInstanceOf(NullPointerException.class).hasMessage("parallel step 'p': branch 'a' must not be null");
        assertThatThrownBy(() -> wf().parallel("p", null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void a_read_of_a_branch_must_come_after_its_parallel_step() {
        assertThatThrownBy(() -> wf().step("early", s -> s.reads(COUNT).execute(ctx -> ""))
                .parallel("p", p -> p.branch("a", b -> b.step(COUNT, s -> s.execute(ctx -> 1)))
                        .branch("b", b -> b.step("y", s -> s.execute(ctx -> ""))))
                .build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("which does not come before it");
    }
}
