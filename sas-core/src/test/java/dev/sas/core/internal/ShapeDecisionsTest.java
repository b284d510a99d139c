package dev.sas.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.internal.ShapeDecisions.SkippedNotCompensated;
import dev.sas.core.internal.ShapeDecisions.StepSkipped;
import dev.sas.core.internal.ShapeDecisions.TimerFired;
import dev.sas.core.internal.ShapeDecisions.TimerStarted;
import dev.sas.core.internal.TaskStateMachine.CancelRequested;
import dev.sas.core.internal.TaskStateMachine.CompensationCompleted;
import dev.sas.core.internal.TaskStateMachine.Decision;
import dev.sas.core.internal.TaskStateMachine.Snapshot;
import dev.sas.core.internal.TaskStateMachine.StepFailed;
import dev.sas.core.spi.Transition;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The state machine's decisions for conditional steps and timers: a skip advances and records
 * SKIPPED, compensation passes over skipped steps, a timer releases the task WAITING until its instant.
 */
class ShapeDecisionsTest {
    private static final Instant STARTED = Instant.parse("2030-01-01T00:00:00Z");
    private static final Instant NOW = STARTED.plusSeconds(1);
    private static final TaskId ID = TaskId.of("task-1");

    /** reserve (compensated), charge (conditional, compensated), wait (timer), ship. */
    private static final Workflow<String> WF = Workflow.builder("order", Codec.string())
            .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> { }))
            .step("charge", s -> s.when(ctx -> ctx.input().equals("card")).execute(ctx -> "c")
                    .compensateWith(ctx -> { }))
            .timer("wait", t -> t.waitFor(Duration.ofDays(2)))
            .step("ship", s -> s.execute(ctx -> "s"))
            .build();

    private static Snapshot at(TaskStatus status, int step, Set<Integer> skipped) {
        return new Snapshot(ID, "order-42", "order", WF, 7, status, step, 1, 0, false, false, skipped);
    }

    private static List<TaskEvent.Type> types(Transition t) {
        return t.events().stream().map(TaskEvent::type).toList();
    }

    @Test
    void a_skipped_step_is_recorded_skipped_and_the_next_step_starts_in_the_same_claim() {
        Decision d = TaskStateMachine.decide(at(TaskStatus.PROCESSING, 1, Set.of()), new StepSkipped(STARTED), NOW);

        Transition t = d.transition();
        assertThat(t.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(t.keepLock()).isTrue();
        assertThat(t.currentStep()).isEqualTo(2);
        assertThat(t.step().status()).isEqualTo(StepStatus.SKIPPED);
        assertThat(t.step().index()).isEqualTo(1);
        assertThat(t.step().output()).isNull();
        assertThat(types(t)).containsExactly(TaskEvent.Type.STEP_SKIPPED, TaskEvent.Type.STEP_STARTED);
        assertThat(d.ifCancelRequested()).as("a cancel compensates only the steps before the skipped one")
                .isInstanceOfSatisfying(CancelRequested.class, c -> assertThat(c.compensateFrom()).isZero());
    }

    @Test
    void a_failure_after_a_skipped_step_compensates_the_completed_steps_only() {
        Decision d = TaskStateMachine.decide(at(TaskStatus.PROCESSING, 3, Set.of(1)),
                new StepFailed(new NonRetryableException("no courier"), STARTED), NOW);

        assertThat(d.transition().status()).isEqualTo(TaskStatus.COMPENSATING);
        assertThat(d.transition().currentStep()).as("charge (1) was skipped: reserve (0) is compensated").isZero();
        Decision unknown = TaskStateMachine.decide(at(TaskStatus.PROCESSING, 3, Set.of()),
                new StepFailed(new NonRetryableException("no courier"), STARTED), NOW);
        assertThat(unknown.transition().currentStep()).as("charge ran: it is compensated first").isEqualTo(1);
    }

    @Test
    void compensation_goes_on_below_a_skipped_step_and_a_skipped_step_met_compensating_is_passed_over() {
        Decision done = TaskStateMachine.decide(at(TaskStatus.COMPENSATING, 2, Set.of(1)),
                new CompensationCompleted(STARTED), NOW);
        assertThat(done.transition().currentStep()).isZero();

        Decision over = TaskStateMachine.decide(at(TaskStatus.COMPENSATING, 1, Set.of(1)), new SkippedNotCompensated(),
                NOW);
        assertThat(over.transition().status()).isEqualTo(TaskStatus.COMPENSATING);
        assertThat(over.transition().currentStep()).isZero();
        assertThat(over.transition().step()).as("nothing recorded for the skipped step").isNull();
        assertThat(types(over.transition())).containsExactly(TaskEvent.Type.COMPENSATION_STARTED);

        Decision end = TaskStateMachine.decide(
                new Snapshot(ID, "k", "order", WF, 7, TaskStatus.COMPENSATING, 1, 1, 0, false, false, Set.of(0, 1)),
                new SkippedNotCompensated(), NOW);
        assertThat(end.transition().status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(types(end.transition())).containsExactly(TaskEvent.Type.COMPENSATED);
    }

    @Test
    void a_timer_releases_the_task_waiting_until_its_instant_with_the_attempt_given_back() {
        Instant firesAt = NOW.plus(Duration.ofDays(2));
        Decision d = TaskStateMachine.decide(at(TaskStatus.PROCESSING, 2, Set.of()), new TimerStarted(firesAt, STARTED),
                NOW);

        Transition t = d.transition();
        assertThat(t.status()).isEqualTo(TaskStatus.WAITING);
        assertThat(t.keepLock()).isFalse();
        assertThat(t.nextAttemptAt()).isEqualTo(firesAt);
        assertThat(t.currentStep()).isEqualTo(2);
        assertThat(t.attempt()).isZero();
        assertThat(t.lastError()).isEqualTo("waiting for timer 'wait' until " + firesAt);
        assertThat(t.step().status()).isEqualTo(StepStatus.WAITING);
        assertThat(t.step().output()).isEqualTo(firesAt.toString());
        assertThat(types(t)).containsExactly(TaskEvent.Type.TIMER_STARTED);
        assertThat(t.events().get(0).message()).isEqualTo("until " + firesAt);
        assertThat(d.ifCancelRequested()).isNotNull();
    }

    @Test
    void a_timer_whose_instant_has_come_completes_with_the_instant_as_its_output() {
        Decision past = TaskStateMachine.decide(at(TaskStatus.PROCESSING, 2, Set.of()),
                new TimerStarted(NOW.minusSeconds(1), STARTED), NOW);
        Decision fired = TaskStateMachine.decide(at(TaskStatus.PROCESSING, 2, Set.of()), new TimerFired(NOW, STARTED),
                NOW);

        for (Decision d : List.of(past, fired)) {
            assertThat(d.transition().status()).isEqualTo(TaskStatus.PROCESSING);
            assertThat(d.transition().currentStep()).isEqualTo(3);
            assertThat(d.transition().step().status()).isEqualTo(StepStatus.COMPLETED);
            assertThat(types(d.transition())).containsExactly(TaskEvent.Type.TIMER_FIRED, TaskEvent.Type.STEP_STARTED);
        }
        assertThat(fired.transition().step().output()).isEqualTo(NOW.toString());
    }
}
