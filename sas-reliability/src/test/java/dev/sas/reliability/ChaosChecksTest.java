package dev.sas.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.reliability.ChaosChecks.Action;
import dev.sas.reliability.ChaosChecks.Effect;
import dev.sas.reliability.ChaosChecks.Exec;
import dev.sas.reliability.ChaosChecks.Outage;
import dev.sas.reliability.ChaosChecks.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The chaos run's checks over synthetic ledgers: a clean run passes, and each broken invariant
 * (overlap, double application, stall, false failure, poison, cancel, resubmit) fails it.
 */
class ChaosChecksTest {
    private static final String NODE_A = "w0-i1-p100";
    private static final String NODE_B = "w1-i1-p200";

    /** 100 tasks, every 20th (index 10, 30, ...) declined, every 50th (12, 62) poison, every 25th (3, 28, ...) cancelled. */
    private final ChaosSettings settings = new ChaosSettings().tasks(100).failEvery(20).poisonEvery(50)
            .cancelEvery(25);
    private final List<Task> tasks = new ArrayList<>();
    private final List<Exec> execs = new ArrayList<>();
    private final List<Effect> effects = new ArrayList<>();
    private final List<Action> actions = new ArrayList<>();
    private long nextId = 1;

    /** A task whose three steps ran once each on node A, 100 ms apart, from {@code t0}. */
    private String processed(int index, long t0) {
        String id = "task-" + index;
        tasks.add(new Task(id, index, "PROCESSED", t0, null, 0, 0));
        long t = t0;
        for (String step : ChaosWorkflow.STEPS) {
            exec(id, step, "forward", 1, NODE_A, t, 2_000, t + 50L, Ledger.APPLIED);
            t += 100;
        }
        return id;
    }

    private Exec exec(String task, String step, String kind, int attempt, String node, long start, long window,
            Long end, String outcome) {
        Exec e = new Exec(nextId++, task, step, kind, attempt, node, task + ":" + kind + ":" + step, start, window, end,
                outcome);
        execs.add(e);
        if (Ledger.APPLIED.equals(outcome)) {
            effects.add(new Effect(e.id(), e.key(), task, step, kind));
        }
        return e;
    }

    private ChaosReport check(Outage outage) {
        ChaosReport r = new ChaosReport();
        r.total = tasks.size();
        new ChaosChecks(settings, tasks, execs, effects, actions,
                outage == null ? List.of() : List.of(outage)).check(r);
        return r;
    }

    private ChaosReport checkSupervisorLost(Outage lost) {
        ChaosReport r = new ChaosReport();
        r.total = tasks.size();
        new ChaosChecks(settings, tasks, execs, effects, actions, List.of()).supervisorLost(List.of(lost)).check(r);
        return r;
    }

    private ChaosReport check() {
        return check(null);
    }

    @Test
    void a_clean_ledger_breaks_no_invariant() {
        processed(0, 1_000);
        String declined = "task-10";
        tasks.add(new Task(declined, 10, "COMPENSATED", 1_000, null, 0, 0));
        exec(declined, "reserve", "forward", 1, NODE_A, 1_010, 2_000, 1_050L, Ledger.APPLIED);
        exec(declined, "debit", "forward", 1, NODE_A, 1_100, 2_000, 1_150L, Ledger.APPLIED);
        exec(declined, "settle", "forward", 1, NODE_A, 1_200, 2_000, 1_250L, Ledger.DECLINED);
        exec(declined, "debit", "compensate", 1, NODE_A, 1_300, 2_000, 1_350L, Ledger.APPLIED);
        exec(declined, "reserve", "compensate", 1, NODE_A, 1_400, 2_000, 1_450L, Ledger.APPLIED);
        // node A killed after applying debit; node B takes over after the deadline and finds it applied
        String killed = "task-1";
        tasks.add(new Task(killed, 1, "PROCESSED", 1_000, null, 0, 0));
        exec(killed, "reserve", "forward", 1, NODE_A, 1_000, 2_000, 1_040L, Ledger.APPLIED);
        exec(killed, "debit", "forward", 1, NODE_A, 1_100, 1_900, null, null);
        effects.add(new Effect(999, killed + ":forward:debit", killed, "debit", "forward"));
        exec(killed, "debit", "forward", 2, NODE_B, 3_300, 2_000, 3_340L, Ledger.DUPLICATE);
        exec(killed, "settle", "forward", 1, NODE_B, 3_400, 2_000, 3_440L, Ledger.APPLIED);
        String poison = "task-12";
        tasks.add(new Task(poison, 12, "ERROR", 1_000, "input cannot be decoded by workflow 'chaos-transfer':"
                + " StackOverflowError", 2, 1));
        actions.add(new Action(poison, "resubmit", true, 1_500));
        String cancelled = "task-3";
        tasks.add(new Task(cancelled, 3, "CANCELLED", 1_000, null, 0, 0));
        exec(cancelled, "reserve", "forward", 1, NODE_A, 1_000, 2_000, 1_040L, Ledger.APPLIED);
        actions.add(new Action(cancelled, "cancel", true, 1_060));
        exec(cancelled, "reserve", "compensate", 1, NODE_A, 1_100, 2_000, 1_140L, Ledger.APPLIED);
        String tooLate = "task-28";
        processed(28, 1_000);
        actions.add(new Action(tooLate, "cancel", false, 1_500));

        ChaosReport r = check();

        assertThat(r.violations()).isEmpty();
        assertThat(r.terminal).isEqualTo(6);
        assertThat(r.poisonParked).isEqualTo(1);
        assertThat(r.cancelsSent).isEqualTo(2);
        assertThat(r.cancelsAccepted).isEqualTo(1);
        assertThat(r.duplicateCalls).isEqualTo(1);
        assertThat(r.maxWaitMs).as("the takeover waited for the deadline, from the lost run's start and backoff")
                .isEqualTo(3_300 - 1_100 - ChaosChecks.maxBackoff(ChaosWorkflow.retryPolicy(), 1));
    }

    @Test
    void two_nodes_running_one_step_at_the_same_time_is_an_overlap() {
        String id = processed(0, 1_000);
        // node B starts the same step while node A's execution [1100, 1150] is still running
        exec(id, "debit", "forward", 2, NODE_B, 1_120, 2_000, 1_160L, Ledger.DUPLICATE);

        ChaosReport r = check();

        assertThat(r.overlaps).isEqualTo(1);
        assertThat(r.overlapExamples).singleElement().asString().contains(id, NODE_A, NODE_B);
        assertThat(r.violations()).anyMatch(v -> v.contains("overlapping executions"));
    }

    @Test
    void a_request_that_reached_the_service_after_its_deadline_is_active_at_no_instant() {
        String id = processed(0, 1_000);
        // attempt 1 of debit, held in a frozen node, arrives during node A's execution [1100, 1150]
        // with no time left: the service ran it anyway, SAS gave it none
        exec(id, "debit", "forward", 1, NODE_B, 1_120, 0, 1_140L, Ledger.DUPLICATE);
        assertThat(check().overlaps).isZero();

        exec(id, "debit", "forward", 1, NODE_B, 1_125, 10, 1_140L, Ledger.DUPLICATE);
        assertThat(check().overlaps).as("with 10 ms left it was active").isEqualTo(1);
    }

    @Test
    void an_execution_that_never_ended_counts_until_its_deadline_and_no_longer() {
        String id = "task-0";
        tasks.add(new Task(id, 0, "PROCESSED", 1_000, null, 0, 0));
        exec(id, "reserve", "forward", 1, NODE_A, 1_000, 2_000, null, null);
        exec(id, "reserve", "forward", 2, NODE_B, 3_100, 2_000, 3_140L, Ledger.APPLIED);
        exec(id, "debit", "forward", 1, NODE_B, 3_200, 2_000, 3_240L, Ledger.APPLIED);
        exec(id, "settle", "forward", 1, NODE_B, 3_300, 2_000, 3_340L, Ledger.APPLIED);
        assertThat(check().overlaps).isZero();

        exec(id, "reserve", "forward", 3, NODE_B, 2_900, 2_000, 2_950L, Ledger.DUPLICATE);
        assertThat(check().overlaps).as("started before the open execution's deadline").isEqualTo(1);
    }

    @Test
    void one_key_applied_by_two_executions_is_applied_twice() {
        String id = processed(0, 1_000);
        Exec second = exec(id, "settle", "forward", 2, NODE_B, 5_000, 2_000, 5_040L, Ledger.APPLIED);

        ChaosReport r = check();

        assertThat(second.key()).isEqualTo(id + ":forward:settle");
        assertThat(r.keysAppliedTwice).isEqualTo(1);
        assertThat(r.overlaps).isZero();
        assertThat(r.violations()).anyMatch(v -> v.startsWith("effects applied twice"));
    }

    @Test
    void a_late_effect_also_applied_by_a_retry_started_after_its_deadline_is_reported_not_counted_twice() {
        String id = processed(0, 1_000);
        // settle attempt 1 ran from 1,200 with 2,000 ms; the service applied it late, after the retry did
        Exec first = execs.get(2);
        execs.set(2, new Exec(first.id(), id, "settle", "forward", 1, NODE_A, first.key(), 1_200, 2_000, 3_600L,
                Ledger.APPLIED));
        effects.set(2, new Effect(first.id(), first.key(), id, "settle", "forward", true));
        Exec retry = exec(id, "settle", "forward", 2, NODE_B, 3_300, 2_000, 3_500L, Ledger.APPLIED);

        ChaosReport r = check();
        assertThat(r.keysAppliedTwice).isZero();
        assertThat(r.lateDuplicates).isEqualTo(1);
        assertThat(r.overlaps).isZero();

        effects.set(2, new Effect(first.id(), first.key(), id, "settle", "forward", false));
        assertThat(check().keysAppliedTwice).as("applied on time, then again by the retry").isEqualTo(1);
        assertThat(retry.key()).isEqualTo(first.key());
    }

    @Test
    void a_step_waiting_past_its_deadline_and_two_supervisor_intervals_breaks_the_stall_bound() {
        // bound: completeWithin 2000 + 2 x supervisorInterval 300 = 2600 ms
        String id = "task-0";
        tasks.add(new Task(id, 0, "PROCESSED", 1_000, null, 0, 0));
        exec(id, "reserve", "forward", 1, NODE_A, 1_000, 2_000, null, null);
        long rerun = 1_000 + ChaosChecks.maxBackoff(ChaosWorkflow.retryPolicy(), 1) + 2_601;
        exec(id, "reserve", "forward", 2, NODE_B, rerun, 2_000, rerun + 40, Ledger.APPLIED);
        exec(id, "debit", "forward", 1, NODE_B, rerun + 100, 2_000, rerun + 140, Ledger.APPLIED);
        exec(id, "settle", "forward", 1, NODE_B, rerun + 200, 2_000, rerun + 240, Ledger.APPLIED);

        ChaosReport r = check();

        assertThat(r.stallBoundMs).isEqualTo(2_600);
        assertThat(r.stallViolations).isEqualTo(1);
        assertThat(r.worstStalls).singleElement().asString().contains(id, "waited 2601 ms > 2600 ms");
        assertThat(r.violations()).anyMatch(v -> v.contains("stall bound"));
    }

    @Test
    void after_a_failover_the_stall_bound_runs_from_its_end_plus_the_reconnect_allowance() {
        String id = "task-1";
        tasks.add(new Task(id, 1, "PROCESSED", 1_000, null, 0, 0));
        // bound 2,600 ms; claimable again when the outage ends at 4,000: started 2,901 ms later
        exec(id, "reserve", "forward", 1, NODE_A, 6_901, 2_000, 6_940L, Ledger.APPLIED);
        exec(id, "debit", "forward", 1, NODE_A, 7_000, 2_000, 7_040L, Ledger.APPLIED);
        exec(id, "settle", "forward", 1, NODE_A, 7_100, 2_000, 7_140L, Ledger.APPLIED);

        assertThat(check(new Outage(2_000, 4_000)).stallViolations).as("a restart: no allowance").isEqualTo(1);
        assertThat(check(new Outage(2_000, 4_000, 300)).stallViolations).as("2,901 > 2,600 + 300").isEqualTo(1);
        assertThat(check(new Outage(2_000, 4_000, 301)).stallViolations).isZero();
    }

    @Test
    void the_stall_bound_measures_from_when_the_task_was_claimable_not_from_its_submission() {
        String id = "task-1";
        tasks.add(new Task(id, 1, "PROCESSED", 1_000, null, 0, 0));
        exec(id, "reserve", "forward", 1, NODE_A, 5_100, 2_000, 5_140L, Ledger.APPLIED);
        exec(id, "debit", "forward", 1, NODE_A, 5_200, 2_000, 5_240L, Ledger.APPLIED);
        exec(id, "settle", "forward", 1, NODE_A, 5_300, 2_000, 5_340L, Ledger.APPLIED);

        assertThat(check(new Outage(3_000, 5_000)).stallViolations).as("claimable 2,000 ms before, 100 ms after")
                .isZero();
        ChaosReport r = check(new Outage(3_601, 5_000));
        assertThat(r.stallViolations).as("claimable 2,601 ms before the outage: a stall of its own").isEqualTo(1);
        assertThat(r.worstStalls).singleElement().asString().contains("waited 2601 ms > 2600 ms");
        assertThat(check(new Outage(500, 2_000)).stallViolations).as("held until 2,000: started 3,100 ms later")
                .isEqualTo(1);
    }

    @Test
    void a_database_outage_during_the_wait_extends_the_stall_bound_by_its_length() {
        processed(0, 1_000);
        String id = "task-1";
        tasks.add(new Task(id, 1, "PROCESSED", 1_000, null, 0, 0));
        exec(id, "reserve", "forward", 1, NODE_A, 6_000, 2_000, 6_040L, Ledger.APPLIED);
        exec(id, "debit", "forward", 1, NODE_A, 6_100, 2_000, 6_140L, Ledger.APPLIED);
        exec(id, "settle", "forward", 1, NODE_A, 6_200, 2_000, 6_240L, Ledger.APPLIED);
        assertThat(check().stallViolations).as("waited 5000 ms for its first step").isEqualTo(1);

        assertThat(check(new Outage(2_000, 5_000)).stallViolations).isZero();
        assertThat(check(new Outage(7_000, 9_000)).stallViolations).as("an outage after it started").isEqualTo(1);
        settings.stallSlack(Duration.ofMillis(2_400));
        assertThat(check().stallViolations).as("with slack for CI").isZero();
    }

    @Test
    void losing_the_supervisor_during_the_wait_extends_the_stall_bound_by_one_lease() {
        processed(0, 1_000);
        String id = "task-1";
        tasks.add(new Task(id, 1, "PROCESSED", 1_000, null, 0, 0));
        // the first step's run started at 1,000 and was lost: its re-run is due at its start
        exec(id, "reserve", "forward", 1, NODE_A, 1_000, 2_000, null, Ledger.APPLIED);
        exec(id, "reserve", "forward", 2, NODE_B, 4_400, 2_000, 4_440L, Ledger.DUPLICATE);
        exec(id, "debit", "forward", 1, NODE_B, 4_500, 2_000, 4_540L, Ledger.APPLIED);
        exec(id, "settle", "forward", 1, NODE_B, 4_600, 2_000, 4_640L, Ledger.APPLIED);
        long lease = settings.supervisorLeaseMs();
        assertThat(check().stallViolations).as("a re-run 3,400 ms after a lost run").isEqualTo(1);

        assertThat(checkSupervisorLost(new Outage(2_900, 2_900 + lease)).stallViolations).isZero();
        assertThat(checkSupervisorLost(new Outage(5_000, 5_000 + lease)).stallViolations)
                .as("the supervisor lost after the re-run started").isEqualTo(1);
    }

    @Test
    void a_task_failing_without_an_injected_fault_is_a_false_failure() {
        tasks.add(new Task("task-0", 0, "ERROR", 1_000, "step 'debit' attempt 10 passed its deadline", 1, 0));
        tasks.add(new Task("task-1", 1, "COMPENSATED", 1_000, null, 0, 0));
        tasks.add(new Task("task-2", 2, "CANCELLED", 1_000, null, 0, 0));
        tasks.add(new Task("task-4", 4, "COMPENSATION_FAILED", 1_000, null, 0, 0));

        ChaosReport r = check();

        assertThat(r.falseFailures).isEqualTo(4);
        assertThat(r.violations()).anyMatch(v -> v.startsWith("4 false failures"));
    }

    @Test
    void with_the_awaiting_step_a_processed_task_needs_its_effect_too() {
        ChaosSettings awaiting = new ChaosSettings().tasks(100).failEvery(20).poisonEvery(50).cancelEvery(25)
                .awaitReply(true);
        assertThat(awaiting.steps()).containsExactly("reserve", "debit", "settle", ChaosWorkflow.AWAITING_STEP);
        String without = processed(0, 1_000);
        String with = processed(1, 2_000);
        exec(with, ChaosWorkflow.AWAITING_STEP, "forward", 1, NODE_A, 2_300, 2_000, 2_350L, Ledger.APPLIED);

        ChaosReport r = new ChaosReport();
        r.total = tasks.size();
        ChaosChecks checks = new ChaosChecks(awaiting, tasks, execs, effects, actions, List.of());
        checks.check(r);

        assertThat(r.effectMismatches).as("PROCESSED without the confirm effect").isEqualTo(1);
        assertThat(checks.suspects).contains(without).doesNotContain(with);
    }

    @Test
    void the_completion_fault_point_parses() {
        assertThat(FaultPoints.parse("completion:kill:200,completion:freeze:1000"))
                .extracting(FaultPoints.Spec::point).containsOnly(FaultPoints.Point.COMPLETION);
        assertThatThrownBy(() -> FaultPoints.parse("reply:kill:10")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("completion");
    }

    @Test
    void fault_points_are_honoured_by_fewer_workers_than_run() {
        assertThat(ChaosSettings.parse(new String[] {"--fault-workers", "2"}).faultWorkers).isEqualTo(2);
        assertThatThrownBy(() -> ChaosSettings.parse(new String[] {"--workers", "3", "--fault-workers", "3"}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--fault-workers");
        assertThatThrownBy(() -> ChaosSettings.parse(new String[] {"--fault-workers", "0"}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1");
    }

    @Test
    void a_declined_task_that_ends_processed_and_a_poison_task_without_its_reason_are_unexpected() {
        processed(10, 1_000);
        tasks.add(new Task("task-12", 12, "ERROR", 1_000, "something else", 1, 0));

        ChaosReport r = check();

        assertThat(r.falseFailures).isZero();
        assertThat(r.unexpectedOutcome).isEqualTo(2);
        assertThat(r.poisonParked).isZero();
    }

    @Test
    void a_cancelled_task_must_compensate_every_effect_and_a_refused_cancel_must_leave_it_processed() {
        String id = "task-3";
        tasks.add(new Task(id, 3, "CANCELLED", 1_000, null, 0, 0));
        exec(id, "reserve", "forward", 1, NODE_A, 1_000, 2_000, 1_040L, Ledger.APPLIED);
        exec(id, "debit", "forward", 1, NODE_A, 1_100, 2_000, 1_140L, Ledger.APPLIED);
        actions.add(new Action(id, "cancel", true, 1_150));
        exec(id, "debit", "compensate", 1, NODE_A, 1_200, 2_000, 1_240L, Ledger.APPLIED);
        assertThat(check().effectMismatches).as("reserve was not compensated").isEqualTo(1);

        exec(id, "reserve", "compensate", 1, NODE_A, 1_300, 2_000, 1_340L, Ledger.APPLIED);
        assertThat(check().violations()).isEmpty();

        actions.set(0, new Action(id, "cancel", false, 1_150));
        assertThat(check().falseFailures).as("cancel returned false, yet the task was cancelled").isEqualTo(1);

        // a failover lost the first attempt's answer after it committed; the retry is refused as a second request
        actions.set(0, new Action(id, "cancel-retried", false, 1_150));
        assertThat(check().violations()).as("a refused retry does not say the first attempt failed").isEmpty();
        tasks.set(0, new Task(id, 3, "ERROR", 1_000, null, 0, 0));
        assertThat(check().falseFailures).as("ERROR is a false failure whatever the cancel said").isEqualTo(1);
    }

    @Test
    void an_accepted_cancel_counts_as_landing_on_a_running_step_only_while_a_forward_call_runs() {
        String id = "task-3";
        tasks.add(new Task(id, 3, "CANCELLED", 1_000, null, 0, 0));
        exec(id, "reserve", "forward", 1, NODE_A, 1_000, 2_000, 1_040L, Ledger.APPLIED);
        exec(id, "debit", "forward", 1, NODE_A, 1_100, 2_000, 1_140L, Ledger.APPLIED);
        exec(id, "debit", "compensate", 1, NODE_A, 1_200, 2_000, 1_240L, Ledger.APPLIED);
        exec(id, "reserve", "compensate", 1, NODE_A, 1_300, 2_000, 1_340L, Ledger.APPLIED);
        actions.add(new Action(id, "cancel", true, 1_120));
        assertThat(check().cancelsOnRunningStep).as("debit ran from 1,100 to 1,140").isEqualTo(1);

        actions.set(0, new Action(id, "cancel", true, 1_150));
        assertThat(check().cancelsOnRunningStep).as("between two calls").isZero();
        actions.set(0, new Action(id, "cancel", false, 1_120));
        assertThat(check().cancelsOnRunningStep).as("a refused cancel").isZero();
    }

    @Test
    void a_resubmitted_task_that_did_not_run_again_is_reported() {
        tasks.add(new Task("task-12", 12, "ERROR", 1_000, "input cannot be decoded by workflow 'chaos-transfer':"
                + " NumberFormatException: For input string: \"poison-12\"", 1, 1));
        actions.add(new Action("task-12", "resubmit", true, 1_500));

        ChaosReport r = check();

        assertThat(r.resubmitsNotRerun).isEqualTo(1);
        assertThat(r.violations()).anyMatch(v -> v.contains("did not run again"));
    }

    @Test
    void poison_inputs_fail_to_decode_with_a_stack_overflow_or_a_number_format_error() {
        assertThat(ChaosInput.decode(ChaosInput.of(7, Fault.NONE, true))).isEqualTo("7");
        assertThat(ChaosInput.decode("[[7]]")).isEqualTo("7");
        String deep = ChaosInput.of(12, Fault.POISON, true);
        Throwable thrown = null;
        try {
            ChaosInput.decode(deep);
        } catch (Throwable e) {
            thrown = e;
        }
        assertThat(thrown).isInstanceOf(StackOverflowError.class);
        try {
            ChaosInput.decode(ChaosInput.of(12, Fault.POISON, false));
            thrown = null;
        } catch (NumberFormatException e) {
            thrown = e;
        }
        assertThat(thrown).isInstanceOf(NumberFormatException.class);
    }

    @Test
    void skew_gives_one_worker_a_clock_ahead_and_one_behind() {
        ChaosSettings s = ChaosSettings.parse(new String[] {"--skew", "300s"});
        assertThat(s.clockOffset(0)).isEqualTo(Duration.ofMinutes(5));
        assertThat(s.clockOffset(1)).isEqualTo(Duration.ofMinutes(-5));
        assertThat(s.clockOffset(2)).isZero();
        assertThat(ChaosSettings.parse(new String[] {"--clock-offsets", "PT1S,-PT2S"}).clockOffset(1))
                .isEqualTo(Duration.ofSeconds(-2));
        assertThat(ChaosOptions.duration("-PT5M")).isEqualTo(Duration.ofMinutes(-5));
        assertThat(new ChaosSettings().clockOffset(0)).isZero();
    }

    @Test
    void a_task_left_parked_or_waiting_is_not_terminal() {
        processed(0, 1_000);
        tasks.add(new Task("task-1", 1, "PARKED", 1_000, "no node runs chaos-transfer v1", 0, 0));
        tasks.add(new Task("task-2", 2, "WAITING", 1_000, null, 0, 0));

        ChaosReport r = check();

        assertThat(r.notTerminal).isEqualTo(2);
        assertThat(r.terminal).isEqualTo(1);
    }

    @Test
    void an_effect_the_service_applied_after_its_deadline_may_stay_on_a_cancelled_task_but_counts_for_processed() {
        String id = "task-3";
        tasks.add(new Task(id, 3, "CANCELLED", 1_000, null, 0, 0));
        exec(id, "reserve", "forward", 1, NODE_A, 1_000, 2_000, 1_040L, Ledger.APPLIED);
        exec(id, "reserve", "compensate", 1, NODE_A, 1_100, 2_000, 1_140L, Ledger.APPLIED);
        Exec late = exec(id, "debit", "forward", 1, NODE_A, 1_050, 500, 1_900L, Ledger.DUPLICATE);
        effects.add(new Effect(late.id(), late.key(), id, "debit", "forward", true));
        actions.add(new Action(id, "cancel", true, 1_060));

        ChaosReport r = check();
        assertThat(r.effectMismatches).as("debit was applied after its deadline: the service's doing").isZero();
        assertThat(r.lateEffects).isEqualTo(1);

        effects.set(effects.size() - 1, new Effect(late.id(), late.key(), id, "debit", "forward", false));
        assertThat(check().effectMismatches).as("the same effect on time must be compensated").isEqualTo(1);
    }
}
