package dev.sas.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.StepDefinition;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskEvent.Type;
import dev.sas.core.TaskId;
import dev.sas.core.Workflow;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which of a task's events bound the wait before a step of unknown outcome is compensated (chains and units alike). */
class InDoubtTest {
    private static final TaskId ID = TaskId.random();
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private static final Duration WITHIN = Duration.ofMinutes(2);
    private static final Workflow<String> WF = Workflow.builder("in-doubt", Codec.string())
            .step("pick", s -> s.execute(ctx -> "p").compensateWith(ctx -> { }))
            .step("approve", s -> s.awaitCompletion((ctx, token) -> { }).completeWithin(WITHIN).compensateWith(ctx -> { }))
            .step("notify", s -> s.awaitCompletion((ctx, token) -> { }).completeWithin(WITHIN))
            .build();
    private static final StepDefinition<String> PICK = WF.steps().get(0);
    private static final StepDefinition<String> APPROVE = WF.steps().get(1);
    private static final StepDefinition<String> NOTIFY = WF.steps().get(2);

    private static TaskEvent at(int seconds, Type type, int step) {
        return new TaskEvent(ID, "k", "in-doubt", type, step, null, 1, T0.plusSeconds(seconds), null);
    }

    private static Instant until(int seconds) {
        return T0.plusSeconds(seconds).plus(WITHIN).plus(InDoubt.GRACE);
    }

    @Test
    void the_request_sent_last_bounds_the_wait() {
        assertThat(InDoubt.until(APPROVE, 1, List.of(at(0, Type.STEP_COMPLETED, 0), at(1, Type.STEP_STARTED, 1),
                at(2, Type.COMPLETION_AWAITED, 1)))).isEqualTo(until(2));
    }

    @Test
    void a_send_that_failed_may_still_be_queued_so_its_attempt_bounds_the_wait() {
        assertThat(InDoubt.until(APPROVE, 1, List.of(at(1, Type.STEP_STARTED, 1), at(3, Type.STEP_RETRYING, 1))))
                .isEqualTo(until(1));
        assertThat(InDoubt.until(APPROVE, 1, List.of(at(1, Type.STEP_STARTED, 1), at(2, Type.COMPLETION_AWAITED, 1),
                at(200, Type.STEP_TIMED_OUT, 1)))).as("timed out: already past").isEqualTo(until(2));
    }

    @Test
    void an_answered_request_leaves_nothing_in_doubt_until_the_next_attempt_sends_again() {
        List<TaskEvent> answered = List.of(at(1, Type.STEP_STARTED, 1), at(2, Type.COMPLETION_AWAITED, 1),
                at(5, Type.COMPLETION_RECEIVED, 1), at(5, Type.STEP_RETRYING, 1));
        assertThat(InDoubt.until(APPROVE, 1, answered)).isNull();
        List<TaskEvent> again = new java.util.ArrayList<>(answered);
        again.add(at(10, Type.STEP_STARTED, 1));
        assertThat(InDoubt.until(APPROVE, 1, again)).isEqualTo(until(10));
    }

    @Test
    void nothing_is_awaited_for_other_steps_steps_without_a_compensation_or_completed_steps() {
        assertThat(InDoubt.until(APPROVE, 1, List.of(at(1, Type.STEP_STARTED, 0)))).as("another step").isNull();
        assertThat(InDoubt.until(NOTIFY, 2, List.of(at(1, Type.STEP_STARTED, 2)))).as("no compensation").isNull();
        assertThat(InDoubt.until(NOTIFY, 2, List.of(at(1, Type.STEP_STARTED, 2), at(2, Type.STEP_RETRYING, 2))))
                .as("no compensation, after a failure").isNull();
        assertThat(InDoubt.until(APPROVE, 1, List.of(at(1, Type.STEP_STARTED, 1), at(3, Type.COMPLETION_RECEIVED, 1),
                at(3, Type.STEP_COMPLETED, 1)))).as("completed").isNull();
        assertThat(InDoubt.until(APPROVE, 1, List.of())).as("no events").isNull();
        assertThat(InDoubt.failedSend(APPROVE, T0, true)).as("answered").isNull();
        assertThat(InDoubt.failedSend(APPROVE, T0, false)).isEqualTo(until(0));
        assertThat(InDoubt.failedSend(PICK, T0, false)).isNull();
        assertThat(InDoubt.pending(until(0), until(0))).as("passed").isNull();
    }

    @Test
    void a_call_in_process_is_in_doubt_until_its_deadline_while_it_runs_and_for_the_grace_once_it_ended() {
        Instant started = T0.plusSeconds(1);
        assertThat(InDoubt.until(PICK, 0, List.of(at(1, Type.STEP_STARTED, 0)))).as("running")
                .isEqualTo(started.plus(PICK.completeWithin()).plus(InDoubt.GRACE));
        assertThat(InDoubt.until(PICK, 0, List.of(at(1, Type.STEP_STARTED, 0), at(3, Type.STEP_RETRYING, 0))))
                .as("failed: its call ended").isEqualTo(T0.plusSeconds(3).plus(InDoubt.GRACE));
        assertThat(InDoubt.until(PICK, 0, List.of(at(1, Type.STEP_STARTED, 0), at(40, Type.STEP_TIMED_OUT, 0))))
                .as("timed out").isEqualTo(T0.plusSeconds(40).plus(InDoubt.GRACE));
    }

    @Test
    void a_unit_and_a_chain_wait_the_same_for_a_failed_send() {
        // a parallel branch's awaiting step whose send failed, then cancelled: before one rule, a unit
        // waited only the grace after STEP_RETRYING while its request could still be queued
        List<TaskEvent> failedSend = List.of(at(1, Type.STEP_STARTED, 1), at(2, Type.STEP_RETRYING, 1));
        assertThat(InDoubt.until(APPROVE, 1, failedSend)).isEqualTo(until(1))
                .isAfter(T0.plusSeconds(2).plus(InDoubt.GRACE));
    }
}
