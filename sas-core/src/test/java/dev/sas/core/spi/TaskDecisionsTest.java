package dev.sas.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Optional;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The store-side decisions, state by state (the contract suites check that every store applies them). */
class TaskDecisionsTest {

    private static final Instant CREATED = Instant.parse("2030-01-01T00:00:00Z");
    private static final Instant NOW = Instant.parse("2030-01-01T00:10:00Z");
    private static final Instant LATER = NOW.plusSeconds(60);

    private static TaskSnapshot task(TaskStatus status, boolean held, Instant due, boolean cancel) {
        return new TaskSnapshot(status, held, due, 2, 1, cancel, CREATED);
    }

    @Nested
    class Cancel {
        @Test
        void an_error_task_becomes_pending_due_now_with_its_failures_reset_and_its_attempts_kept() {
            TaskChange c = TaskDecisions.requestCancel(task(TaskStatus.ERROR, false, null, true), NOW).orElseThrow();
            assertThat(c).isEqualTo(new TaskChange(TaskStatus.PENDING, NOW, 2, 0, true, false, null));
        }

        @Test
        void an_awaiting_task_is_released_and_due_now() {
            TaskChange c = TaskDecisions.requestCancel(task(TaskStatus.AWAITING_COMPLETION, true, null, false), NOW)
                    .orElseThrow();
            assertThat(c).isEqualTo(new TaskChange(TaskStatus.PENDING, NOW, 2, 1, true, true, null));
        }

        @Test
        void a_waiting_task_and_an_unclaimed_delayed_pending_task_become_due_now() {
            assertThat(TaskDecisions.requestCancel(task(TaskStatus.WAITING, false, LATER, false), NOW).orElseThrow()
                    .nextAttemptAt()).isEqualTo(NOW);
            assertThat(TaskDecisions.requestCancel(task(TaskStatus.PENDING, false, LATER, false), NOW).orElseThrow()
                    .nextAttemptAt()).isEqualTo(NOW);
        }

        @Test
        void a_claimed_or_already_due_task_keeps_its_due_time_and_state() {
            Instant earlier = NOW.minusSeconds(5);
            for (TaskStatus s : EnumSet.of(TaskStatus.PENDING, TaskStatus.PARKED, TaskStatus.PROCESSING,
                    TaskStatus.COMPENSATING)) {
                TaskChange c = TaskDecisions.requestCancel(task(s, s == TaskStatus.PROCESSING, earlier, false), NOW)
                        .orElseThrow();
                assertThat(c).isEqualTo(new TaskChange(s, earlier, 2, 1, true, false, null));
            }
        }

        @Test
        void a_second_cancel_and_a_cancel_of_a_finished_task_are_refused() {
            assertThat(TaskDecisions.requestCancel(task(TaskStatus.PENDING, false, NOW, true), NOW)).isEmpty();
            for (TaskStatus s : EnumSet.of(TaskStatus.PROCESSED, TaskStatus.COMPENSATED, TaskStatus.CANCELLED,
                    TaskStatus.COMPENSATION_FAILED)) {
                assertThat(TaskDecisions.requestCancel(task(s, false, null, false), NOW)).as(s.name()).isEmpty();
            }
        }
    }

    @Test
    void resubmit_continues_an_error_task_pending_and_a_failed_compensation_compensating_with_counts_reset() {
        assertThat(TaskDecisions.resubmit(task(TaskStatus.ERROR, false, null, false), NOW))
                .contains(new TaskChange(TaskStatus.PENDING, NOW, 0, 0, false, false, null));
        assertThat(TaskDecisions.resubmit(task(TaskStatus.COMPENSATION_FAILED, false, null, true), NOW))
                .contains(new TaskChange(TaskStatus.COMPENSATING, NOW, 0, 0, true, false, null));
        assertThat(TaskDecisions.resubmit(task(TaskStatus.PENDING, false, NOW, false), NOW)).isEmpty();
    }

    @Test
    void park_takes_only_an_unclaimed_pending_task_and_unpark_makes_it_due_now() {
        TaskChange parked = TaskDecisions.park(task(TaskStatus.PENDING, false, NOW, false), "no runtime").orElseThrow();
        assertThat(parked).isEqualTo(new TaskChange(TaskStatus.PARKED, NOW, 2, 1, false, false, "no runtime"));
        assertThat(TaskDecisions.park(task(TaskStatus.PENDING, true, NOW, false), "x")).isEmpty();
        assertThat(TaskDecisions.park(task(TaskStatus.WAITING, false, NOW, false), "x")).isEmpty();
        assertThat(TaskDecisions.unpark(task(TaskStatus.PARKED, false, CREATED, false), NOW))
                .contains(new TaskChange(TaskStatus.PENDING, NOW, 2, 1, false, false, null));
        assertThat(TaskDecisions.unpark(task(TaskStatus.PENDING, false, CREATED, false), NOW)).isEmpty();
    }

    @Test
    void wake_makes_an_unclaimed_waiting_task_due_at_its_submission_time() {
        assertThat(TaskDecisions.wake(task(TaskStatus.WAITING, false, LATER, false), NOW).map(TaskChange::nextAttemptAt))
                .contains(CREATED);
        assertThat(TaskDecisions.wake(task(TaskStatus.WAITING, false, NOW, false), NOW)).isEmpty();
        assertThat(TaskDecisions.wake(task(TaskStatus.WAITING, true, LATER, false), NOW)).isEmpty();
        assertThat(TaskDecisions.wake(task(TaskStatus.PENDING, false, LATER, false), NOW)).isEqualTo(Optional.empty());
    }

    @Test
    void a_move_takes_only_an_unclaimed_task_with_no_cancel_waiting_parked_or_in_error() {
        assertThat(TaskDecisions.moveVersion(task(TaskStatus.PENDING, false, LATER, false), NOW))
                .as("a delayed or retrying task keeps waiting")
                .contains(new TaskChange(TaskStatus.PENDING, LATER, 2, 1, false, false, null));
        assertThat(TaskDecisions.moveVersion(task(TaskStatus.WAITING, false, LATER, false), NOW))
                .contains(new TaskChange(TaskStatus.PENDING, NOW, 2, 1, false, false, null));
        assertThat(TaskDecisions.moveVersion(task(TaskStatus.PARKED, false, CREATED, false), NOW))
                .contains(new TaskChange(TaskStatus.PENDING, NOW, 2, 1, false, false, null));
        assertThat(TaskDecisions.moveVersion(task(TaskStatus.ERROR, false, null, false), NOW))
                .as("as a resubmit").contains(new TaskChange(TaskStatus.PENDING, NOW, 0, 0, false, false, null));
        assertThat(TaskDecisions.moveVersion(task(TaskStatus.PENDING, true, NOW, false), NOW)).isEmpty();
        assertThat(TaskDecisions.moveVersion(task(TaskStatus.PENDING, false, NOW, true), NOW)).isEmpty();
        for (TaskStatus s : EnumSet.of(TaskStatus.PROCESSING, TaskStatus.AWAITING_COMPLETION, TaskStatus.COMPENSATING,
                TaskStatus.COMPENSATION_FAILED, TaskStatus.PROCESSED, TaskStatus.COMPENSATED, TaskStatus.CANCELLED)) {
            assertThat(TaskDecisions.moveVersion(task(s, false, NOW, false), NOW)).as("%s", s).isEmpty();
        }
    }

    @Test
    void a_move_plan_places_every_step_row_by_name_and_names_the_first_without_a_place_of_its_own() {
        VersionMove.Target a = new VersionMove.Target(1, "a2", java.time.Duration.ofSeconds(5));
        VersionMove.Target b = new VersionMove.Target(0, "b", java.time.Duration.ofSeconds(6));
        VersionMove move = new VersionMove(dev.sas.core.TaskId.of("t"), 1, 2, java.util.Map.of("a", a, "b", b,
                "c", b), null);

        VersionMove.Plan swap = move.plan("b", java.util.Map.of(0, "a", 1, "b"));
        assertThat(swap.complete()).isTrue();
        assertThat(swap.current()).isEqualTo(b);
        assertThat(swap.rows()).isEqualTo(java.util.Map.of(0, a, 1, b));
        assertThat(move.plan("x", java.util.Map.of()).unmapped()).isEqualTo("x");
        assertThat(move.plan("a", java.util.Map.of(0, "gone")).unmapped()).isEqualTo("gone");
        assertThat(move.plan("a", java.util.Map.of(0, "b", 1, "c")).unmapped()).as("two rows, one place")
                .isIn("b", "c");
        assertThatThrownBy(() -> new VersionMove(dev.sas.core.TaskId.of("t"), 2, 2, java.util.Map.of(), null))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void a_claim_starts_a_step_or_goes_on_compensating_and_takes_nothing_else() {
        assertThat(TaskDecisions.claimed(TaskStatus.PENDING)).isEqualTo(TaskStatus.PROCESSING);
        assertThat(TaskDecisions.claimed(TaskStatus.WAITING)).isEqualTo(TaskStatus.PROCESSING);
        assertThat(TaskDecisions.claimed(TaskStatus.COMPENSATING)).isEqualTo(TaskStatus.COMPENSATING);
        assertThatThrownBy(() -> TaskDecisions.claimed(TaskStatus.PARKED)).isInstanceOf(IllegalArgumentException.class);
        assertThat(TaskDecisions.submitted(false)).isEqualTo(TaskStatus.PENDING);
        assertThat(TaskDecisions.submitted(true)).isEqualTo(TaskStatus.PROCESSING);
    }

    @Nested
    class UnitAction {
        private final TaskId unit = TaskId.of("unit-1");
        private final TaskId parent = TaskId.of("parent-1");

        @Test
        void a_unit_may_be_acted_on_while_its_parent_is_at_the_group_step_and_running() {
            for (TaskStatus s : EnumSet.of(TaskStatus.PENDING, TaskStatus.WAITING, TaskStatus.PARKED,
                    TaskStatus.PROCESSING, TaskStatus.AWAITING_COMPLETION)) {
                assertThat(TaskDecisions.unitAction("resubmit", unit, parent, "fork", s, true)).as(s.name()).isEmpty();
            }
        }

        @Test
        void a_unit_of_an_ended_group_is_refused_naming_unit_parent_and_what_to_do() {
            assertThat(TaskDecisions.unitAction("resubmit", unit, parent, "fork", TaskStatus.ERROR, true).orElseThrow())
                    .contains("cannot resubmit task unit-1 on its own", "step 'fork' of task parent-1",
                            "Resubmit task parent-1 instead");
            assertThat(TaskDecisions.unitAction("cancel", unit, parent, "fork", TaskStatus.COMPENSATED, true)
                    .orElseThrow()).contains("cannot cancel task unit-1", "parent-1 is COMPENSATED",
                            "has finished with it");
            assertThat(TaskDecisions.unitAction("resubmit", unit, parent, "fork", TaskStatus.COMPENSATING, true)
                    .orElseThrow()).contains("compensation");
            assertThat(TaskDecisions.unitAction("resubmit", unit, parent, "fork", TaskStatus.PENDING, false)
                    .orElseThrow()).contains("which has left that step", "parent-1 is PENDING");
            assertThat(TaskDecisions.unitAction("resubmit", unit, parent, "fork", null, false).orElseThrow())
                    .contains("no longer exists");
        }
    }
}
