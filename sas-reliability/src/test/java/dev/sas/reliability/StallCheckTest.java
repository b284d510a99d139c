package dev.sas.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.reliability.ChaosChecks.Effect;
import dev.sas.reliability.ChaosChecks.Exec;
import dev.sas.reliability.ChaosChecks.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The stall bound over synthetic histories ({@link StallCheck}): a queue far longer than the
 * bound, served in due order, is queueing and not a stall; a task passed over by work that became
 * claimable later, never started while others run, or left while the cluster started nothing, is
 * a stall. The "claim skips a task" bug is simulated by a claim loop that leaves one task out.
 */
class StallCheckTest {
    private static final int TASKS = 200;
    private static final long CALL_MS = 100;

    private final ChaosSettings settings = new ChaosSettings().tasks(TASKS);
    private final List<Task> tasks = new ArrayList<>();
    private final List<Exec> execs = new ArrayList<>();
    private final List<Effect> effects = new ArrayList<>();
    /** When the store released task-0 to be claimed again (its STEP_RETRYING / STEP_TIMED_OUT events). */
    private final List<Long> releases = new ArrayList<>();
    private long nextId = 1;

    /** A step of a task that is due (claimable) at {@code due}. */
    private record Due(long due, int task, int step) {
    }

    /**
     * One worker claiming in due order (as the store's {@code ORDER BY next_attempt_at}), one call
     * of 100 ms at a time: {@link #TASKS} tasks submitted 100 ms apart (20 s), three steps each, about 60 s
     * of work. {@code skipped} (or -1) is the task the claim leaves out until nothing else is due;
     * {@code pending} (or -1) is never claimed and stays PENDING.
     */
    private void serve(int skipped, int pending) {
        PriorityQueue<Due> queue = new PriorityQueue<>((a, b) -> a.due() != b.due() ? Long.compare(a.due(), b.due())
                : Integer.compare(a.task(), b.task()));
        for (int i = 0; i < TASKS; i++) {
            long created = 1_000 + i * 100L;
            tasks.add(new Task(id(i), i, i == pending ? "PENDING" : "PROCESSED", created, null, 0, 0));
            if (i != pending) {
                queue.add(new Due(created, i, 0));
            }
        }
        List<Due> held = new ArrayList<>();
        long now = 0;
        while (!queue.isEmpty() || !held.isEmpty()) {
            Due d = queue.isEmpty() ? held.remove(0) : queue.poll();
            if (d.task() == skipped && !queue.isEmpty()) {
                held.add(d);
                continue;
            }
            long start = Math.max(now, d.due());
            String step = ChaosWorkflow.STEPS[d.step()];
            Exec e = new Exec(nextId++, id(d.task()), step, "forward", 1, "w0-i1-p100", id(d.task()) + ":" + step,
                    start, 2_000, start + CALL_MS, Ledger.APPLIED);
            execs.add(e);
            effects.add(new Effect(e.id(), e.key(), e.task(), step, "forward"));
            now = start + CALL_MS;
            if (d.step() + 1 < ChaosWorkflow.STEPS.length) {
                queue.add(new Due(now, d.task(), d.step() + 1));
            }
        }
    }

    private static String id(int i) {
        return "task-" + i;
    }

    private ChaosReport check() {
        ChaosReport r = new ChaosReport();
        r.total = tasks.size();
        new ChaosChecks(settings, tasks, execs, effects, List.of(), List.of()).releases(Map.of(id(0), releases)).check(r);
        return r;
    }

    @Test
    void a_fifo_queue_far_longer_than_the_bound_is_queueing_not_a_stall() {
        serve(-1, -1);

        ChaosReport r = check();

        assertThat(r.maxWaitMs).as("the queue is far longer than the bound").isGreaterThan(5 * r.stallBoundMs);
        assertThat(r.stallViolations).isZero();
        assertThat(r.queuedWaits).as("most first steps waited past the bound").isGreaterThan(TASKS / 2);
        assertThat(r.p50QueuedMs).isGreaterThan(r.stallBoundMs).isLessThanOrEqualTo(r.p99QueuedMs);
        assertThat(r.p99QueuedMs).isLessThanOrEqualTo(r.maxQueuedMs).isLessThanOrEqualTo(r.maxWaitMs);
        assertThat(r.violations()).noneMatch(v -> v.contains("stall"));
        assertThat(r.toMarkdown()).contains(
                "| stall bound violations (bound 2600 ms): passed over / cluster idle | 0 (0 / 0) |",
                "queueing, not a stall): count, p50 / p99 / max (of them judged by idleness only: no claim of their own,"
                        + " after a claim the ledger never saw, or with no release recorded) | "
                        + r.queuedWaits + ", ");
    }

    @Test
    void a_claim_that_skips_a_task_is_a_stall_the_task_was_passed_over() {
        serve(0, -1);

        ChaosReport r = check();

        assertThat(r.stallViolations).isEqualTo(1);
        assertThat(r.stallsPassedOver).isEqualTo(1);
        assertThat(r.worstStalls).singleElement().asString().startsWith("task task-0 forward:reserve")
                .contains("passed over: task task-");
        assertThat(r.queuedWaits).as("the others still queued in order").isPositive();
        assertThat(r.violations()).anyMatch(v -> v.contains("waited past the stall bound"));
    }

    @Test
    void a_task_never_started_while_others_run_is_a_stall() {
        serve(-1, 7);

        ChaosReport r = check();

        assertThat(r.notTerminal).isEqualTo(1);
        assertThat(r.stallViolations).isEqualTo(1);
        assertThat(r.worstStalls).singleElement().asString().startsWith("task task-7 (never started)")
                .contains("submitted, never started", "passed over");
    }

    @Test
    void a_wait_past_the_bound_while_the_cluster_started_nothing_is_a_stall() {
        long bound = settings.stallBoundMs();
        // task-0 runs its steps at 1,000-1,200; task-1, due at 1,000, starts at 3,901:
        // nothing started for bound + 101 ms
        for (int i = 0; i < 2; i++) {
            tasks.add(new Task(id(i), i, "PROCESSED", 1_000, null, 0, 0));
        }
        long t = 1_000;
        for (String step : ChaosWorkflow.STEPS) {
            execs.add(new Exec(nextId++, id(0), step, "forward", 1, "w0", id(0) + step, t, 2_000, t + 50,
                    "APPLIED"));
            t += 100;
        }
        long late = t + bound + 1;
        for (String step : ChaosWorkflow.STEPS) {
            execs.add(new Exec(nextId++, id(1), step, "forward", 1, "w0", id(1) + step, late, 2_000, late + 50,
                    "APPLIED"));
            late += 100;
        }

        ChaosReport r = check();

        assertThat(r.stallViolations).isEqualTo(1);
        assertThat(r.stallsIdle).isEqualTo(1);
        assertThat(r.worstStalls).singleElement().asString().startsWith("task task-1 forward:reserve")
                .contains("the cluster started nothing for " + (bound + 101) + " ms");
    }

    @Test
    void only_a_retry_after_a_failure_takes_a_later_place_in_the_queue_and_can_pass_a_waiting_task() {
        // task-1, due at 1,000, starts at 5,000; task-0's first call ends at 3,700 (> 1,000 + 2,600) and
        // its next call starts at 3,800: the next step on the same node (its claim continued), on another
        // node (recovered: it may keep its place in the queue), or a retry of the failed call (re-queued)
        for (String next : List.of("continued", "recovered", "retried")) {
            tasks.clear();
            execs.clear();
            for (int i = 0; i < 4; i++) {
                tasks.add(new Task(id(i), i, "PROCESSED", 1_000, null, 0, 0));
            }
            boolean retried = next.equals("retried");
            execs.add(new Exec(nextId++, id(0), "reserve", "forward", 1, "w0", "k0r", 1_000, 2_000, 3_700L,
                    retried ? Ledger.ERROR : Ledger.APPLIED));
            execs.add(new Exec(nextId++, id(0), retried ? "reserve" : "debit", "forward", retried ? 2 : 1,
                    next.equals("continued") ? "w0" : "w1", "k0d", 3_800, 2_000, 3_850L, Ledger.APPLIED));
            execs.add(new Exec(nextId++, id(2), "reserve", "forward", 1, "w1", "k2r", 2_000, 2_000, 2_050L,
                    Ledger.APPLIED));
            execs.add(new Exec(nextId++, id(3), "reserve", "forward", 1, "w1", "k3r", 3_000, 2_000, 3_050L,
                    Ledger.APPLIED));
            execs.add(new Exec(nextId++, id(1), "reserve", "forward", 1, "w2", "k1r", 5_000, 2_000, 5_050L,
                    Ledger.APPLIED));

            ChaosReport r = check();

            if (retried) {
                assertThat(r.stallsPassedOver).as("task-0's retry, re-queued at 3,700, before task-1").isEqualTo(1);
                assertThat(r.worstStalls).singleElement().asString().contains("passed over: task task-0");
            } else {
                assertThat(r.stallViolations).as(next).isZero();
                assertThat(r.queuedWaits).isEqualTo(1);
                assertThat(r.p50QueuedMs).isEqualTo(4_000);
            }
        }
    }

    /**
     * Background work that keeps the cluster busy: tasks {@code first}, {@code first + 1}, ... created
     * {@code every} ms apart from {@code from} and started one per 100 ms from {@code from} (their
     * three steps 30 ms apart on w1), the last start before {@code until}.
     */
    private void background(int first, long from, long every, long until) {
        int i = first;
        for (long start = from; start < until; start += 100, i++) {
            long created = from + (i - first) * every;
            tasks.add(new Task(id(i), i, "PROCESSED", created, null, 0, 0));
            long t = start;
            for (String step : ChaosWorkflow.STEPS) {
                execs.add(new Exec(nextId++, id(i), step, "forward", 1, "w1", id(i) + ":" + step, t, 2_000, t + 20,
                        Ledger.APPLIED));
                t += 30;
            }
        }
    }

    /** Task-0's first call, {@code reserve} on w0 at 1,000, ending at 1,100 (or lost: no end, no outcome). */
    private void firstCall(String outcome) {
        tasks.add(new Task(id(0), 0, "PROCESSED", 1_000, null, 0, 0));
        boolean lost = outcome == null;
        execs.add(new Exec(nextId++, id(0), "reserve", "forward", 1, "w0", "k0", 1_000, 2_000, lost ? null : 1_100L,
                outcome));
    }

    /** Task-0's next call, at {@code start}, then the steps after it on the same node. */
    private void nextCall(String step, int attempt, String node, long start) {
        long t = start;
        int a = attempt;
        for (int i = List.of(ChaosWorkflow.STEPS).indexOf(step); i < ChaosWorkflow.STEPS.length; i++) {
            execs.add(new Exec(nextId++, id(0), ChaosWorkflow.STEPS[i], "forward", a, node, "k0" + i, t, 2_000, t + 20,
                    Ledger.APPLIED));
            a = 1;
            t += 30;
        }
    }

    @Nested
    class EveryClaimableMomentIsJudgedForPassingOver {
        private final long bound = settings.stallBoundMs();
        /** The longest backoff of a first re-run (the chaos policy's 50 ms × 1.2). */
        private final long backoff = ChaosChecks.maxBackoff(ChaosWorkflow.retryPolicy(), 1);
        /**
         * Task-0's next call: long past the bound after its latest release (3,200: a recovery after
         * its deadline), while work submitted after it keeps starting.
         */
        private final long late = 3_200 + backoff + bound + 2_000;

        @Test
        void a_retry_passed_over_by_work_submitted_after_its_due_time_is_a_stall() {
            firstCall(Ledger.ERROR);
            releases.add(1_110L); // STEP_RETRYING, written with the failure
            background(1, 1_000, 100, late);
            nextCall("reserve", 2, "w0", late);

            ChaosReport r = check();

            assertThat(r.stallsPassedOver).as("the retry was due at " + (1_100 + backoff)).isEqualTo(1);
            assertThat(r.worstStalls).singleElement().asString()
                    .startsWith("task task-0 forward:reserve attempt 2").contains("re-run 1", "passed over: task task-");
        }

        @Test
        void a_task_started_just_after_work_claimable_later_is_not_a_stall() {
            // one claim batch: the calls reach the service in any order, so a start 50 ms apart says
            // nothing about which was claimed first
            firstCall(Ledger.ERROR);
            releases.add(1_110L);
            long passerDue = 1_110 + backoff + bound + 1;
            for (int i = 1; i < 30; i++) {
                long created = 1_000 + (i - 1) * 80L; // every 80 ms up to passerDue: never idle
                long start = Math.min(created, passerDue);
                tasks.add(new Task(id(i), i, "PROCESSED", created, null, 0, 0));
                execs.add(new Exec(nextId++, id(i), "reserve", "forward", 1, "w1", id(i), start, 2_000, start + 20,
                        Ledger.APPLIED));
            }
            tasks.add(new Task(id(99), 99, "PROCESSED", passerDue, null, 0, 0));
            execs.add(new Exec(nextId++, id(99), "reserve", "forward", 1, "w2", id(99), passerDue + 100, 2_000,
                    passerDue + 120, Ledger.APPLIED));
            nextCall("reserve", 2, "w0", passerDue + 100 + StallCheck.START_JITTER_MS - 1);

            ChaosReport r = check();

            assertThat(r.stallViolations).isZero();
            assertThat(r.queuedWaits).isEqualTo(1);
        }

        @Test
        void a_retry_queued_behind_work_due_before_it_is_not_a_stall() {
            firstCall(Ledger.ERROR);
            releases.add(1_110L);
            // the same starts, but every background task was submitted before the retry was due
            background(1, 1_000, 1, late);
            nextCall("reserve", 2, "w0", late);

            ChaosReport r = check();

            assertThat(r.stallViolations).isZero();
            assertThat(r.queuedWaits).as("the retry and most background tasks queued").isGreaterThan(1);
            assertThat(r.queuedIdleOnly).isZero();
        }

        @Test
        void a_recovered_call_passed_over_is_a_stall() {
            firstCall(null); // lost: the supervisor recovers it after its deadline
            releases.add(3_100L); // STEP_TIMED_OUT
            background(1, 1_000, 100, late);
            nextCall("reserve", 2, "w1", late);

            ChaosReport r = check();

            assertThat(r.stallsPassedOver).isEqualTo(1);
            assertThat(r.worstStalls).singleElement().asString()
                    .startsWith("task task-0 forward:reserve attempt 2").contains("passed over");
        }

        @Test
        void a_recovery_late_or_unrecorded_is_judged_from_the_release_or_by_idleness_only() {
            // the supervisor, slowed by a loaded machine, recovered the lost call just before its next
            // call: the tasks that started meanwhile were claimable before the task was; without the
            // recovery's event, when it was released is unknown
            for (String recovery : List.of("late", "unrecorded")) {
                tasks.clear();
                execs.clear();
                releases.clear();
                firstCall(null);
                if (recovery.equals("late")) {
                    releases.add(late - 50);
                }
                background(1, 1_000, 100, late);
                nextCall("reserve", 2, "w1", late);

                ChaosReport r = check();

                assertThat(r.stallViolations).as(recovery).isZero();
                assertThat(r.queuedIdleOnly).as(recovery).isEqualTo(recovery.equals("late") ? 0 : 1);
            }
        }

        @Test
        void the_next_step_on_another_node_passed_over_is_a_stall() {
            // attempt 1: released by a graceful stop; attempt 2: the claim that continued the task on
            // w0 was recovered
            for (int attempt : new int[] {1, 2}) {
                tasks.clear();
                execs.clear();
                releases.clear();
                firstCall(Ledger.APPLIED);
                releases.add(attempt == 1 ? 1_110L : 3_200L);
                background(1, 1_000, 100, late);
                nextCall("debit", attempt, "w1", late);

                ChaosReport r = check();

                assertThat(r.stallsPassedOver).as("attempt " + attempt).isEqualTo(1);
                assertThat(r.worstStalls).singleElement().asString()
                        .startsWith("task task-0 forward:debit attempt " + attempt).contains("passed over");
            }
        }

        @Test
        void a_call_after_a_claim_the_ledger_never_saw_or_within_its_claim_is_judged_by_idleness_only() {
            // attempt 3 after attempt 1: a claim in between left no call (its worker died before
            // calling) and was recovered at a time the ledger does not know; the next step on the same
            // node at attempt 1 ran within the task's claim
            for (String next : List.of("unseen claim", "continued")) {
                tasks.clear();
                execs.clear();
                boolean unseen = next.equals("unseen claim");
                firstCall(unseen ? Ledger.ERROR : Ledger.APPLIED);
                releases.clear();
                releases.add(1_110L);
                background(1, 1_000, 100, late);
                nextCall(unseen ? "reserve" : "debit", unseen ? 3 : 1, "w0", late);

                ChaosReport r = check();

                assertThat(r.stallViolations).as(next).isZero();
                assertThat(r.queuedIdleOnly).as(next).isEqualTo(1);
            }
        }

        @Test
        void a_failed_call_never_retried_while_later_work_runs_is_a_stall() {
            firstCall(Ledger.ERROR);
            releases.add(1_110L);
            tasks.set(0, new Task(id(0), 0, "PENDING", 1_000, null, 0, 0));
            background(1, 1_000, 100, late);

            ChaosReport r = check();

            assertThat(r.stallsPassedOver).isEqualTo(1);
            assertThat(r.worstStalls).singleElement().asString().startsWith("task task-0 (never started)")
                    .contains("never started again", "passed over");
        }
    }

    @Test
    void percentiles_are_nearest_rank() {
        List<Long> l = new ArrayList<>();
        for (long i = 1; i <= 100; i++) {
            l.add(i);
        }
        assertThat(StallCheck.percentile(l, 50)).isEqualTo(50);
        assertThat(StallCheck.percentile(l, 99)).isEqualTo(99);
        assertThat(StallCheck.percentile(List.of(), 99)).isZero();
    }
}
