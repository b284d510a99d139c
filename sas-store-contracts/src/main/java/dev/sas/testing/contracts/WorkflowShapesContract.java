package dev.sas.testing.contracts;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * What the workflow shapes decided by the task state machine do on every store: a conditional step
 * whose condition does not hold is recorded SKIPPED and never compensated, and a durable timer
 * rests WAITING, held by no node and no in-flight slot, until the database's clock reaches its
 * instant. Driven by hand with a {@link ManualClock}. Subclass it with a fresh store per test, as
 * for {@link StateStoreContract}.
 */
public abstract class WorkflowShapesContract extends StoreTestSupport {

    /** Time for every runtime here. */
    protected final ManualClock clock = new ManualClock();
    /** What the steps did, in order: "step:input". */
    private final List<String> ran = new CopyOnWriteArrayList<>();
    /** The compensations that ran, in order: "step:input". */
    private final List<String> compensated = new CopyOnWriteArrayList<>();

    private SasRuntime runtime(Workflow<?> workflow) {
        return runtimeOn(clock, workflow);
    }

    private static List<TaskEvent> events(SasRuntime sas, TaskId id) {
        return sas.client().events(id);
    }

    private static List<TaskEvent.Type> types(SasRuntime sas, TaskId id) {
        return events(sas, id).stream().map(TaskEvent::type).toList();
    }

    // ------------------------------------------------------------------ conditional steps

    /** reserve (compensated), charge only for "card" (compensated), ship (fails for "fail" inputs). */
    private Workflow<String> payment(String name) {
        return Workflow.builder(name, Codec.string())
                .step("reserve", s -> s.execute(ctx -> record("reserve", ctx.input()))
                        .compensateWith(ctx -> compensated.add("reserve:" + ctx.input())))
                .step("charge", s -> s.when(ctx -> ctx.input().startsWith("card"))
                        .execute(ctx -> record("charge", ctx.input()))
                        .compensateWith(ctx -> compensated.add("charge:" + ctx.input())))
                .step("ship", s -> s.execute(ctx -> {
                    if (ctx.input().endsWith("fail")) {
                        throw new NonRetryableException("no courier for " + ctx.input());
                    }
                    return record("ship", ctx.input());
                }))
                .build();
    }

    private String record(String step, String input) {
        ran.add(step + ":" + input);
        return step + " done";
    }

    @Test
    void a_step_whose_condition_holds_runs_and_one_whose_condition_fails_is_recorded_skipped() {
        Workflow<String> wf = payment("shapes-when");
        SasRuntime sas = runtime(wf);
        TaskId card = sas.client().submit(wf, "order-1", "card").id();
        TaskId cash = sas.client().submit(wf, "order-2", "cash").id();

        Drain.untilIdle(sas);

        assertThat(sas.client().find(card).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(sas.client().find(card).orElseThrow().step("charge").status()).isEqualTo(StepStatus.COMPLETED);
        TaskInfo info = sas.client().find(cash).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("charge").status()).isEqualTo(StepStatus.SKIPPED);
        assertThat(info.step("charge").output()).isNull();
        assertThat(info.step("ship").status()).isEqualTo(StepStatus.COMPLETED);
        assertThat(ran).contains("charge:card").doesNotContain("charge:cash").contains("ship:cash");
        assertThat(types(sas, cash)).containsSubsequence(TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.STEP_SKIPPED,
                TaskEvent.Type.STEP_STARTED, TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.PROCESSED);
        assertThat(events(sas, cash)).filteredOn(e -> e.type() == TaskEvent.Type.STEP_SKIPPED)
                .extracting(TaskEvent::stepName).containsExactly("charge");
        assertThat(types(sas, card)).doesNotContain(TaskEvent.Type.STEP_SKIPPED);
    }

    @Test
    void a_skipped_step_is_never_compensated_when_a_later_step_fails() {
        Workflow<String> wf = payment("shapes-skip-comp");
        SasRuntime sas = runtime(wf);
        TaskId cash = sas.client().submit(wf, "order-1", "cash-fail").id();
        TaskId card = sas.client().submit(wf, "order-2", "card-fail").id();

        Drain.untilIdle(sas);

        TaskInfo info = sas.client().find(cash).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(info.step("charge").status()).isEqualTo(StepStatus.SKIPPED);
        assertThat(info.step("charge").compensationStatus()).isNull();
        assertThat(info.step("reserve").compensationStatus()).isEqualTo(StepStatus.COMPENSATED);
        assertThat(compensated).as("the skipped charge is not compensated; the one that ran is")
                .containsOnlyOnce("reserve:cash-fail", "charge:card-fail", "reserve:card-fail")
                .doesNotContain("charge:cash-fail");
        assertThat(events(sas, cash)).filteredOn(e -> e.type() == TaskEvent.Type.COMPENSATION_STARTED)
                .extracting(TaskEvent::stepName).containsExactly("reserve");
        assertThat(sas.client().find(card).orElseThrow().status()).isEqualTo(TaskStatus.COMPENSATED);
    }

    @Test
    void a_cancel_after_a_skipped_step_compensates_only_the_steps_that_ran() {
        Workflow<String> wf = Workflow.builder("shapes-skip-cancel", Codec.string())
                .step("reserve", s -> s.execute(ctx -> record("reserve", ctx.input()))
                        .compensateWith(ctx -> compensated.add("reserve:" + ctx.input())))
                .step("charge", s -> s.when(ctx -> false).execute(ctx -> record("charge", ctx.input()))
                        .compensateWith(ctx -> compensated.add("charge:" + ctx.input())))
                .timer("wait", t -> t.waitFor(Duration.ofDays(1)))
                .step("ship", s -> s.execute(ctx -> record("ship", ctx.input())))
                .build();
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "cash").id();
        Drain.untilIdle(sas);
        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.WAITING);

        assertThat(sas.client().operations().cancel(id)).isTrue();
        Drain.untilIdle(sas);

        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(compensated).containsExactly("reserve:cash");
        assertThat(ran).containsExactly("reserve:cash");
    }

    @Test
    void a_skipped_step_is_passed_over_when_a_reply_fails_the_task_where_the_skipped_steps_are_not_known() {
        AtomicReference<String> token = new AtomicReference<>();
        Workflow<String> wf = Workflow.builder("shapes-skip-reply", Codec.string())
                .step("reserve", s -> s.execute(ctx -> record("reserve", ctx.input()))
                        .compensateWith(ctx -> compensated.add("reserve:" + ctx.input())))
                .step("charge", s -> s.when(ctx -> false).execute(ctx -> record("charge", ctx.input()))
                        .compensateWith(ctx -> compensated.add("charge:" + ctx.input())))
                .step("approve", s -> s.awaitCompletion((ctx, t) -> token.set(t)).completeWithin(Duration.ofDays(1)))
                .step("ship", s -> s.execute(ctx -> record("ship", ctx.input())))
                .build();
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "cash").id();
        Drain.untilIdle(sas);
        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);

        // the reply's decision is made without a claim: it releases the task COMPENSATING at the skipped step
        assertThat(sas.client().stepCompletion().fail(token.get(), "refused", false).accepted()).isTrue();
        Drain.untilIdle(sas);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(compensated).containsExactly("reserve:cash");
        assertThat(info.step("charge").status()).isEqualTo(StepStatus.SKIPPED);
        assertThat(info.step("charge").compensationStatus()).isNull();
        assertThat(events(sas, id)).filteredOn(e -> e.type() == TaskEvent.Type.COMPENSATION_COMPLETED)
                .extracting(TaskEvent::stepName).containsExactly("reserve");
    }

    @Test
    void a_skipped_step_is_passed_over_when_the_supervisor_fails_a_timed_out_step_where_the_skipped_steps_are_not_known() {
        Workflow<String> wf = Workflow.builder("shapes-skip-timeout", Codec.string())
                .step("reserve", s -> s.execute(ctx -> record("reserve", ctx.input()))
                        .compensateWith(ctx -> compensated.add("reserve:" + ctx.input())))
                .step("charge", s -> s.when(ctx -> false).execute(ctx -> record("charge", ctx.input()))
                        .compensateWith(ctx -> compensated.add("charge:" + ctx.input())))
                .step("approve", s -> s.awaitCompletion((ctx, t) -> { }).completeWithin(Duration.ofMinutes(5))
                        .maxTimeouts(1))
                .step("ship", s -> s.execute(ctx -> record("ship", ctx.input())))
                .build();
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "cash").id();
        Drain.untilIdle(sas);
        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);

        // the supervisor's decision after the time-out is made without a claim: it releases the task
        // COMPENSATING at the step before 'approve' (which has nothing to compensate), the skipped one
        clock.tick(Duration.ofMinutes(6));
        assertThat(Drain.supervisorOnce(sas)).isEqualTo(1);
        Drain.untilIdle(sas);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(compensated).containsExactly("reserve:cash");
        assertThat(ran).containsExactly("reserve:cash");
        assertThat(info.step("charge").status()).isEqualTo(StepStatus.SKIPPED);
        assertThat(info.step("charge").compensationStatus()).isNull();
        assertThat(events(sas, id)).filteredOn(e -> e.type() == TaskEvent.Type.COMPENSATION_COMPLETED)
                .extracting(TaskEvent::stepName).containsExactly("reserve");
    }

    // ------------------------------------------------------------------ durable timers

    private Workflow<String> reminder(String name) {
        return Workflow.builder(name, Codec.string())
                .step("order", s -> s.execute(ctx -> record("order", ctx.input())))
                .timer("remind-after", t -> t.waitFor(Duration.ofDays(2)))
                .step("remind", s -> s.execute(ctx -> record("remind", ctx.input() + "@"
                        + ctx.output("remind-after").orElse("?"))))
                .build();
    }

    @Test
    void a_two_day_timer_waits_held_by_nobody_and_fires_on_the_clock() {
        Workflow<String> wf = reminder("shapes-timer");
        SasRuntime sas = runtime(wf);
        Instant submitted = clock.instant();
        TaskId id = sas.client().submit(wf, "order-1", "ann").id();
        Instant firesAt = submitted.plus(Duration.ofDays(2));

        Drain.untilIdle(sas);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.WAITING);
        assertThat(info.status().isTerminal()).isFalse();
        assertThat(info.lockedBy()).as("held by no node").isNull();
        assertThat(info.nextAttemptAt()).as("due when the timer fires").isEqualTo(firesAt);
        assertThat(info.step("remind-after").status()).isEqualTo(StepStatus.WAITING);
        assertThat(info.step("remind-after").output()).isEqualTo(firesAt.toString());
        assertThat(sas.inFlight()).as("no in-flight slot is used while it waits").isZero();
        assertThat(types(sas, id)).endsWith(TaskEvent.Type.STEP_STARTED, TaskEvent.Type.TIMER_STARTED);
        assertThat(events(sas, id)).filteredOn(e -> e.type() == TaskEvent.Type.TIMER_STARTED)
                .extracting(TaskEvent::message).containsExactly("until " + firesAt);
        assertThat(ran).containsExactly("order:ann");

        clock.tick(Duration.ofDays(1));
        assertThat(Drain.supervisorOnce(sas)).as("a waiting timer is not a stuck step").isZero();
        assertThat(Drain.untilIdle(sas)).as("not claimed before it fires").isZero();
        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.WAITING);
        assertThat(sas.inFlight()).isZero();

        clock.tick(Duration.ofDays(1));
        assertThat(Drain.untilIdle(sas)).isEqualTo(1);

        info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("remind-after").status()).isEqualTo(StepStatus.COMPLETED);
        assertThat(info.step("remind-after").output()).isEqualTo(firesAt.toString());
        assertThat(ran).containsExactly("order:ann", "remind:ann@" + firesAt);
        assertThat(types(sas, id)).containsSubsequence(TaskEvent.Type.TIMER_STARTED, TaskEvent.Type.TIMER_FIRED,
                TaskEvent.Type.STEP_STARTED, TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.PROCESSED);
    }

    @Test
    void a_timer_that_is_the_first_step_fires_once_at_its_instant() {
        Workflow<String> wf = Workflow.builder("shapes-first-timer", Codec.string())
                .timer("cool-off", t -> t.waitFor(Duration.ofHours(1)))
                .step("remind", s -> s.execute(ctx -> record("remind", ctx.input())))
                .build();
        SasRuntime sas = runtime(wf);
        Instant firesAt = clock.instant().plus(Duration.ofHours(1));
        TaskId id = sas.client().submit(wf, "order-1", "o-1").id();
        Drain.untilIdle(sas);
        assertThat(sas.client().find(id).orElseThrow().nextAttemptAt()).isEqualTo(firesAt);

        clock.tick(Duration.ofHours(1));
        Drain.untilIdle(sas);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).as("claimed at its instant, the timer fires instead of starting again")
                .isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("cool-off").output()).isEqualTo(firesAt.toString());
        assertThat(types(sas, id)).containsOnlyOnce(TaskEvent.Type.TIMER_STARTED, TaskEvent.Type.TIMER_FIRED);
    }

    @Test
    void a_timer_waits_until_an_instant_computed_from_the_input_and_one_already_past_fires_at_once() {
        Workflow<String> wf = Workflow.builder("shapes-until", Codec.string())
                .timer("until-due", t -> t.waitUntil(ctx -> Instant.parse(ctx.input())))
                .step("remind", s -> s.execute(ctx -> record("remind", ctx.input())))
                .build();
        SasRuntime sas = runtime(wf);
        Instant later = clock.instant().plus(Duration.ofDays(3));
        TaskId waits = sas.client().submit(wf, "order-1", later.toString()).id();
        TaskId past = sas.client().submit(wf, "order-2", clock.instant().minusSeconds(60).toString()).id();

        Drain.untilIdle(sas);

        assertThat(sas.client().find(past).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(types(sas, past)).contains(TaskEvent.Type.TIMER_FIRED).doesNotContain(TaskEvent.Type.TIMER_STARTED);
        TaskInfo info = sas.client().find(waits).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.WAITING);
        assertThat(info.nextAttemptAt()).isEqualTo(later);

        clock.tick(Duration.ofDays(3));
        Drain.untilIdle(sas);
        assertThat(sas.client().find(waits).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
    }

    @Test
    void a_waiting_timer_is_cancelled_at_once_and_the_steps_before_it_are_compensated() {
        Workflow<String> wf = Workflow.builder("shapes-timer-cancel", Codec.string())
                .step("reserve", s -> s.execute(ctx -> record("reserve", ctx.input()))
                        .compensateWith(ctx -> compensated.add("reserve:" + ctx.input())))
                .timer("hold", t -> t.waitFor(Duration.ofDays(30)))
                .step("ship", s -> s.execute(ctx -> record("ship", ctx.input())))
                .build();
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);

        assertThat(sas.client().operations().cancel(id)).isTrue();
        assertThat(Drain.untilIdle(sas)).as("claimed at once, not in 30 days").isEqualTo(1);

        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(compensated).containsExactly("reserve:car");
        assertThat(ran).containsExactly("reserve:car");
        assertThat(sas.inFlight()).isZero();
    }
}
