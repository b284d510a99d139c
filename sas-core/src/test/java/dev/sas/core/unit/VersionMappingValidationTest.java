package dev.sas.core.unit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.Workflow;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A version's {@code movesFrom} mapping is checked where it is set and against the version's steps at build(). */
class VersionMappingValidationTest {

    private static Workflow.Builder<String> v2() {
        return Workflow.builder("orders", Codec.string()).version(2)
                .step("reserve", s -> s.execute(ctx -> "r"))
                .step("charge-v2", s -> s.execute(ctx -> "c"));
    }

    @Test
    void a_valid_mapping_is_kept_and_other_versions_have_none() {
        Workflow<String> w = v2().movesFrom(1, m -> m.step("charge", "charge-v2")).build();
        assertThat(w.movesFrom(1).orElseThrow().steps()).isEqualTo(Map.of("charge", "charge-v2"));
        assertThat(w.movesFrom(1).orElseThrow().fromVersion()).isEqualTo(1);
        assertThat(w.movesFrom(3)).isEmpty();
    }

    @Test
    void a_target_that_is_not_a_step_of_the_version_fails_at_build_naming_the_steps() {
        assertThatThrownBy(() -> v2().movesFrom(1, m -> m.step("charge", "charge-v3")).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("workflow 'orders' v2: movesFrom(1) maps step 'charge' to 'charge-v3', which is not a"
                        + " step of this version; steps are [reserve, charge-v2]");
    }

    @Test
    void two_old_steps_to_one_step_and_a_mapping_to_itself_fail_at_build() {
        assertThatThrownBy(() -> v2().movesFrom(1, m -> m.step("charge", "charge-v2").step("pay", "charge-v2"))
                .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("maps both 'charge' and 'pay' to step 'charge-v2'");
        assertThatThrownBy(() -> v2().movesFrom(2, m -> { }).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("movesFrom(2) maps this version to itself");
    }

    @Test
    void bad_arguments_fail_where_they_are_set() {
        assertThatThrownBy(() -> v2().movesFrom(0, m -> { }))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1, was 0");
        assertThatThrownBy(() -> v2().movesFrom(1, m -> { }).movesFrom(1, m -> { }))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("declared twice");
        assertThatThrownBy(() -> v2().movesFrom(1, m -> m.step("a", "reserve").step("a", "charge-v2")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("step 'a' is mapped twice");
        assertThatThrownBy(() -> v2().movesFrom(1, m -> m.step("a b", "reserve")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("old step name must match");
        assertThatThrownBy(() -> v2().movesFrom(1, null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("mapping must not be null");
    }
}
