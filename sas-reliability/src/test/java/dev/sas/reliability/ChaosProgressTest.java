package dev.sas.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.TaskStatus;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Issue 31 item 7: the progress line never prints -1, and parked or waiting tasks are not done. */
class ChaosProgressTest {

    @Test
    void parked_waiting_and_awaiting_tasks_are_counted_as_open() {
        String sql = ChaosProgress.openCountSql("chabcdef_task");

        assertThat(sql).startsWith("SELECT COUNT(*) FROM chabcdef_task WHERE state IN (");
        for (String open : List.of("PENDING", "PROCESSING", "COMPENSATING", "WAITING", "PARKED", "AWAITING_COMPLETION")) {
            assertThat(sql).contains("'" + open + "'");
        }
        for (String done : List.of("PROCESSED", "ERROR", "COMPENSATED", "COMPENSATION_FAILED", "CANCELLED")) {
            assertThat(sql).doesNotContain("'" + done + "'");
        }
    }

    @Test
    void every_status_is_either_counted_open_or_terminal() {
        for (TaskStatus status : TaskStatus.values()) {
            assertThat(ChaosProgress.NON_TERMINAL.contains("'" + status.name() + "'"))
                    .as(status.name())
                    .isEqualTo(!status.isTerminal());
        }
        assertThat(ChaosProgress.NON_TERMINAL.split(",")).hasSize(
                (int) Arrays.stream(TaskStatus.values()).filter(s -> !s.isTerminal()).count());
    }

    @Test
    void the_count_never_reads_minus_one() {
        assertThat(ChaosProgress.openCount(12, 40)).isEqualTo("12");
        assertThat(ChaosProgress.openCount(0, 3)).isEqualTo("0");
        assertThat(ChaosProgress.openCount(-1, 40)).isEqualTo("database unreachable (last count 40)");
        assertThat(ChaosProgress.openCount(-1, -1)).isEqualTo("database unreachable (last count none)");
        assertThat(ChaosProgress.openCount(-1, -1)).doesNotContain("-1");
    }
}
