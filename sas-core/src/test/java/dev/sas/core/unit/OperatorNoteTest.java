package dev.sas.core.unit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.OperatorNote;
import org.junit.jupiter.api.Test;

class OperatorNoteTest {

    @Test
    void describes_who_and_why_and_leaves_out_a_blank_reason() {
        assertThat(OperatorNote.of(" alice ", " customer withdrew ").describe()).isEqualTo("by alice: customer withdrew");
        assertThat(OperatorNote.of("alice", "  ").describe()).isEqualTo("by alice");
        assertThat(OperatorNote.of("alice", null).reason()).isNull();
    }

    @Test
    void refuses_a_blank_or_long_operator_a_long_reason_and_control_characters() {
        assertThatThrownBy(() -> OperatorNote.of(null, "x")).isInstanceOf(NullPointerException.class)
                .hasMessage("operator must not be null");
        assertThatThrownBy(() -> OperatorNote.of(" ", "x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("operator must be 1 to 100 characters");
        assertThatThrownBy(() -> OperatorNote.of("a".repeat(101), null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> OperatorNote.of("alice", "r".repeat(501))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reason must be at most 500 characters, was 501");
        assertThatThrownBy(() -> OperatorNote.of("alice", "two\nlines")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reason must not contain control characters (found U+000A at 3)");
        assertThatThrownBy(() -> OperatorNote.of("al\u0000ice", null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("operator must not contain control characters");
    }
}
