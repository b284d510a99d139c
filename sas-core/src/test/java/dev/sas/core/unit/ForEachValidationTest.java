package dev.sas.core.unit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.ForEachFailure;
import dev.sas.core.ForEachResults;
import dev.sas.core.Workflow;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Fan-out steps are checked where they are set, with messages naming the step; results read back in order. */
class ForEachValidationTest {

    private static Workflow.Builder<String> wf() {
        return Workflow.builder("wf", Codec.string());
    }

    @Test
    void a_fan_out_step_awaits_its_elements_and_compensates_them() {
        Workflow<String> w = wf().version(2)
                .forEach("each", Codec.string(), ctx -> List.of("a", "b"), e -> e
                        .step("work", s -> s.execute(ctx -> ctx.input())).concurrency(4)
                        .onFailure(ForEachFailure.COLLECT_FAILURES).completeWithin(Duration.ofMinutes(5)))
                .build();
        assertThat(w.steps()).hasSize(1);
        assertThat(w.step("each").startsChildTask()).isTrue();
        assertThat(w.step("each").runsUnits()).isTrue();
        assertThat(w.step("each").hasCompensation()).as("it compensates its elements' steps").isTrue();
        assertThat(w.step("each").completeWithin()).isEqualTo(Duration.ofMinutes(5));
    }

    @Test
    void settings_are_checked_where_they_are_set_naming_the_step() {
        assertThatThrownBy(() -> wf().forEach("each", Codec.string(), ctx -> List.of(), e -> e.concurrency(0)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("forEach step 'each': concurrency must be between 1 and 1000, was 0");
        assertThatThrownBy(() -> wf().forEach("each", Codec.string(), ctx -> List.of(), e -> e.concurrency(1001)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("was 1001");
        assertThatThrownBy(() -> wf().forEach("each", Codec.string(), ctx -> List.of(), e -> e
                .step("wait-for-slot", s -> s.execute(ctx -> "x"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'wait-for-slot'");
        assertThatThrownBy(() -> wf().forEach("each", Codec.string(), ctx -> List.of(), e -> e
                .step("a", s -> s.execute(ctx -> "x")).step("b", s -> s.execute(ctx -> "y"))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("set twice ('a' and 'b')");
        assertThatThrownBy(() -> wf().forEach("each", Codec.string(), ctx -> List.of(), e -> e.completeWithin(Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("completeWithin must be positive");
        assertThatThrownBy(() -> wf().forEach("each", null, ctx -> List.<String>of(), e -> { }))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("elementCodec");
    }

    @Test
    void a_missing_element_step_or_a_name_in_use_is_refused() {
        assertThatThrownBy(() -> wf().forEach("each", Codec.string(), ctx -> List.of(), e -> e.concurrency(2)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("forEach step 'each' of workflow 'wf' has no element step");
        assertThatThrownBy(() -> wf().step("each", s -> s.execute(ctx -> "x"))
                .forEach("each", Codec.string(), ctx -> List.of(), e -> e.step("w", s -> s.execute(ctx -> "x"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'each'");
    }

    @Test
    void results_keep_list_order_outputs_nulls_and_errors() {
        assertThatThrownBy(() -> ForEachResults.of("{\"not\":\"it\"}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not the output of a forEach step");
        ForEachResults r = ForEachResults.of("sas-for-each:1;o3:a:be5:oops!o-1:");
        assertThat(r.size()).isEqualTo(3);
        assertThat(r.elements().get(0).output()).isEqualTo("a:b");
        assertThat(r.failures()).singleElement().satisfies(f -> {
            assertThat(f.index()).isEqualTo(1);
            assertThat(f.error()).isEqualTo("oops!");
        });
        assertThat(r.elements().get(2).succeeded()).isTrue();
        assertThat(r.elements().get(2).output()).isNull();
        assertThatThrownBy(() -> r.outputs(Codec.string())).isInstanceOf(IllegalStateException.class)
                .hasMessage("element 1 failed: oops!");
    }
}
