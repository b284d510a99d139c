package dev.sas.core.unit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.TaskSearch;
import dev.sas.core.TaskStatus;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class TaskSearchTest {

    @Test
    void reads_an_instant_or_a_date_as_its_start_in_utc() {
        assertThat(TaskSearch.parseTime("t", "2026-11-27")).isEqualTo(Instant.parse("2026-11-27T00:00:00Z"));
        assertThat(TaskSearch.parseTime("t", " 2026-11-27T08:30:00Z ")).isEqualTo(Instant.parse("2026-11-27T08:30:00Z"));
        assertThat(TaskSearch.parseTime("t", " ")).isNull();
        assertThatThrownBy(() -> TaskSearch.parseTime("createdAfter", "yesterday"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("createdAfter must be a time")
                .hasMessageContaining("'yesterday'");
    }

    @Test
    void refuses_times_out_of_order_and_a_blank_error_text_and_describes_itself() {
        Instant t = Instant.parse("2026-11-27T00:00:00Z");
        assertThatThrownBy(() -> new TaskSearch(null, null, t, t, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be before createdBefore");
        assertThatThrownBy(() -> new TaskSearch(null, null, null, null, " "))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("errorContains must not be blank");
        assertThat(new TaskSearch(null, null, null, null, null).any()).isFalse();
        assertThat(new TaskSearch(TaskStatus.ERROR, "orders", null, null, "declined").describe())
                .isEqualTo("state ERROR, workflow orders, last error containing 'declined'");
    }
}
