package dev.sas.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A parallel branch's or fan-out element's step reads the outputs of its workflow's steps before the
 * fork, with their refs; a step after the fork or another branch's is refused at build time.
 */
class ForkReadsTest {

    private static final StepRef<Integer> OPENED = StepRef.of("opened", Codec.of(String::valueOf, Integer::valueOf));
    private static final StepRef<String> SHIPPED = StepRef.of("shipped", Codec.string());

    private static Workflow<?> unit(Workflow<?> parent, String name) {
        return ChildGroup.unitWorkflows(parent).stream().filter(w -> w.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void a_branch_and_an_element_step_may_read_steps_and_branches_before_the_fork() {
        Workflow<String> w = Workflow.builder("orders", Codec.string())
                .step(OPENED, s -> s.execute(ctx -> 42))
                .parallel("first", p -> p
                        .branch("a", b -> b.step("a1", s -> s.reads(OPENED).execute(ctx -> "a" + ctx.output(OPENED))))
                        .branch("b", b -> b.step("b1", s -> s.execute(ctx -> "b"))))
                .parallel("second", p -> p
                        .branch("c", b -> b.step("c1", s -> s.reads(OPENED).execute(ctx -> "c")))
                        .branch("d", b -> b.step("d1", s -> s.execute(ctx -> ctx.output("a").orElseThrow()))))
                .forEach("each", Codec.string(), ctx -> List.of("x"), f -> f
                        .step("ship", s -> s.reads(OPENED).execute(ctx -> ctx.input() + ctx.output(OPENED))))
                .build();

        Workflow<?> a = unit(w, "orders.first.a");
        assertThat(a.isGroupUnit()).isTrue();
        assertThat(a.readsFork("opened")).isTrue();
        assertThat(a.readsFork("a1")).as("its own step").isFalse();
        assertThat(a.readsFork("c")).as("a branch of a later parallel step").isFalse();
        a.checkOutputRef(OPENED);
        assertThatThrownBy(() -> a.checkOutputRef(StepRef.of("opened"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("defined with");
        Workflow<?> d = unit(w, "orders.second.d");
        assertThat(d.readsFork("a")).as("a branch of the parallel step before").isTrue();
        assertThat(d.readsFork("first")).isTrue();
        assertThat(d.readsFork("c1")).as("another branch of its own parallel step").isFalse();
        Workflow<?> each = unit(w, "orders.each.each");
        assertThat(each.readsFork("opened")).isTrue();
        assertThat(each.readsFork("second")).isTrue();
        assertThat(Workflow.builder("plain", Codec.string()).step(OPENED, s -> s.execute(ctx -> 1)).build()
                .readsFork("opened")).as("not a unit workflow").isFalse();
    }

    @Test
    void a_branch_step_reading_a_step_after_the_fork_or_another_branch_is_refused_at_build() {
        assertThatThrownBy(() -> Workflow.builder("later", Codec.string())
                .parallel("fork", p -> p
                        .branch("a", b -> b.step("a1", s -> s.reads(SHIPPED).execute(ctx -> "a")))
                        .branch("b", b -> b.step("b1", s -> s.execute(ctx -> "b"))))
                .step(SHIPPED, s -> s.execute(ctx -> "z"))
                .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("step 'a1' reads step 'shipped'")
                .hasMessageContaining("before its group step 'fork' (those are [])");
        StepRef<String> b1 = StepRef.of("b1", Codec.string());
        assertThatThrownBy(() -> Workflow.builder("sibling", Codec.string())
                .step(OPENED, s -> s.execute(ctx -> 1))
                .parallel("fork", p -> p
                        .branch("a", b -> b.step("a1", s -> s.reads(b1).execute(ctx -> "a")))
                        .branch("b", b -> b.step(b1, s -> s.execute(ctx -> "b"))))
                .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("(those are [opened])")
                .hasMessageContaining("not later steps nor other branches");
        assertThatThrownBy(() -> Workflow.builder("wrong-ref", Codec.string())
                .step(OPENED, s -> s.execute(ctx -> 1))
                .parallel("fork", p -> p
                        .branch("a", b -> b.step("a1", s -> s.reads(StepRef.of("opened")).execute(ctx -> "a")))
                        .branch("b", b -> b.step("b1", s -> s.execute(ctx -> "b"))))
                .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is defined with");
    }

    @Test
    void an_element_step_reading_a_step_after_the_fan_out_is_refused_at_build() {
        assertThatThrownBy(() -> Workflow.builder("later-each", Codec.string())
                .step(OPENED, s -> s.execute(ctx -> 1))
                .forEach("each", Codec.string(), ctx -> List.of("x"), f -> f
                        .step("ship", s -> s.reads(SHIPPED).execute(ctx -> "s")))
                .step(SHIPPED, s -> s.execute(ctx -> "z"))
                .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("step 'ship' reads step 'shipped'")
                .hasMessageContaining("before its group step 'each' (those are [opened])");
    }
}
