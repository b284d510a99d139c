package dev.sas.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.reliability.HistoryChecker.Call;
import dev.sas.reliability.HistoryChecker.Cancel;
import dev.sas.reliability.HistoryChecker.Outage;
import dev.sas.reliability.HistoryChecker.Violation;
import dev.sas.reliability.HistoryChecker.Write;
import dev.sas.reliability.HistoryChecker.WriteKind;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The history checker over synthetic histories: a clean one passes, and each violation it looks
 * for (one history per bug of issue 31's table, and the other invariants) fails it.
 */
class HistoryCheckerTest {
    private static final long TIMEOUT = 2_000;
    private static final String T = "task-1";

    private final List<String> submitted = new ArrayList<>(List.of(T));
    private final Map<String, String> states = new HashMap<>();
    private final List<Write> writes = new ArrayList<>();
    private final List<Call> calls = new ArrayList<>();
    private final List<Cancel> cancels = new ArrayList<>();
    private final List<Outage> outages = new ArrayList<>();
    private long callId;

    private HistoryChecker.Result check() {
        return new HistoryChecker(List.of(ChaosWorkflow.STEPS), 1_000, 1_000)
                .check(submitted, states, writes, calls, cancels, outages);
    }

    private void submit(long at) {
        writes.add(new Write(T, at, WriteKind.SUBMIT, 0, -1, -1, true, at, "SUBMITTED"));
    }

    private void claim(long at, long lease, int step) {
        writes.add(new Write(T, at, WriteKind.CLAIM, lease, step, at + TIMEOUT, false, -1, "STEP_STARTED"));
    }

    private void claimCompensation(long at, long lease) {
        writes.add(new Write(T, at, WriteKind.CLAIM, lease, -1, at + TIMEOUT, false, -1, "COMPENSATION_STARTED"));
    }

    /** The holder completes a step and starts {@code next} in the same claim (-1: it ends the task). */
    private void next(long at, long lease, int next) {
        boolean ends = next < 0;
        writes.add(new Write(T, at, WriteKind.HOLDER, lease, next, ends ? -1 : at + TIMEOUT, ends, -1,
                ends ? "STEP_COMPLETED+PROCESSED" : "STEP_COMPLETED+STEP_STARTED"));
    }

    private void holderCompensates(long at, long lease) {
        writes.add(new Write(T, at, WriteKind.HOLDER, lease, -1, at + TIMEOUT, false, -1, "COMPENSATING"));
    }

    private void expire(long at, long lease, long dueAt) {
        writes.add(new Write(T, at, WriteKind.EXPIRED, lease, -1, -1, true, dueAt, "STEP_TIMED_OUT"));
    }

    private Call call(String step, String kind, long start, long end, Long applied) {
        Call c = new Call(++callId, T, step, kind, T + ":" + step + (kind.equals("forward") ? "" : ":compensate"), 1,
                "n0", start, end, TIMEOUT, applied);
        calls.add(c);
        return c;
    }

    /** A task that ran its three steps in one claim from t=1000, 100 ms per step. */
    private void processed() {
        submit(1_000);
        claim(1_010, 1, 0);
        call("reserve", "forward", 1_020, 1_100, 1_050L);
        next(1_110, 1, 1);
        call("debit", "forward", 1_120, 1_200, 1_150L);
        next(1_210, 1, 2);
        call("settle", "forward", 1_220, 1_300, 1_250L);
        next(1_310, 1, -1);
        states.put(T, "PROCESSED");
    }

    @Test
    void a_clean_history_passes() {
        processed();

        HistoryChecker.Result r = check();

        assertThat(r.passed()).as(r.summary()).isTrue();
    }

    @Nested
    class Leases {
        @Test
        void a_stale_holder_write_after_a_takeover_is_caught() {
            // lease 1 times out, lease 2 takes over, then lease 1's completion is written anyway (no fence)
            submit(1_000);
            claim(1_010, 1, 0);
            call("reserve", "forward", 1_020, 3_500, 3_400L);
            expire(3_100, 1, 3_100);
            claim(3_150, 2, 0);
            next(3_510, 1, 1);
            states.put(T, "PROCESSED");

            assertThat(check().count(Violation.LEASE_NOT_CURRENT)).isEqualTo(1);
        }

        @Test
        void a_holder_write_after_its_deadline_is_caught_even_before_a_takeover() {
            submit(1_000);
            claim(1_010, 1, 0);
            next(3_011, 1, 1);

            assertThat(check().count(Violation.WRITE_AFTER_DEADLINE)).isEqualTo(1);
        }

        @Test
        void a_recovery_before_the_deadline_is_caught() {
            submit(1_000);
            claim(1_010, 1, 0);
            expire(1_510, 1, 1_510);

            assertThat(check().count(Violation.EARLY_RECOVERY)).isEqualTo(1);
        }

        @Test
        void a_recovery_exactly_at_the_deadline_is_not_early() {
            submit(1_000);
            claim(1_010, 1, 0);
            expire(3_010, 1, 3_010);
            claim(3_020, 2, 0);

            assertThat(check().count(Violation.EARLY_RECOVERY)).isZero();
        }

        @Test
        void a_claim_of_a_task_someone_holds_is_caught() {
            submit(1_000);
            claimCompensation(1_010, 1);
            claimCompensation(1_060, 2);

            assertThat(check().count(Violation.CLAIM_WHILE_HELD)).isEqualTo(1);
        }

        @Test
        void a_cancel_never_releases_a_running_claim() {
            submit(1_000);
            claim(1_010, 1, 0);
            writes.add(new Write(T, 1_050, WriteKind.CANCEL, 1, -1, -1, true, 1_050, "CANCEL_REQUESTED"));
            claimCompensation(1_100, 2);

            assertThat(check().count(Violation.CLAIM_WHILE_HELD)).isEqualTo(1);
        }
    }

    @Nested
    class Calls {
        @Test
        void two_calls_of_one_step_active_at_once_are_caught() {
            processed();
            call("debit", "forward", 1_150, 1_180, null);

            assertThat(check().count(Violation.OVERLAP)).isEqualTo(1);
        }

        @Test
        void a_call_past_its_deadline_does_not_overlap_a_retry_after_it() {
            processed();
            calls.clear();
            call("reserve", "forward", 1_020, 1_020 + TIMEOUT + 500, null); // the service ignored its deadline
            call("reserve", "forward", 1_020 + TIMEOUT + 100, 3_200, 3_150L);
            call("debit", "forward", 3_210, 3_250, 3_230L);
            call("settle", "forward", 3_260, 3_300, 3_280L);

            assertThat(check().count(Violation.OVERLAP)).isZero();
        }

        @Test
        void a_call_that_reached_the_service_after_its_deadline_overlaps_nothing_but_one_before_it_does() {
            processed();
            calls.clear();
            // the retry runs; the first attempt's request, held in a frozen node, arrives with no time left
            call("reserve", "forward", 3_300, 3_360, null);
            calls.add(new Call(++callId, T, "reserve", "forward", T + ":reserve", 1, "n0", 3_330, 3_357L, 0, 3_354L));
            call("debit", "forward", 3_400, 3_450, 3_430L);
            call("settle", "forward", 3_460, 3_500, 3_480L);
            assertThat(check().count(Violation.OVERLAP)).isZero();

            calls.removeIf(c -> c.attempt() == 1 && c.step().equals("reserve") && c.windowMs() == 0);
            calls.add(new Call(++callId, T, "reserve", "forward", T + ":reserve", 1, "n0", 3_330, 3_357L, 5, 3_354L));
            assertThat(check().count(Violation.OVERLAP)).as("with 5 ms left it was active").isEqualTo(1);
        }

        @Test
        void an_effect_applied_twice_under_two_keys_is_caught() {
            processed();
            calls.add(new Call(++callId, T, "debit", "forward", T + ":debit:2", 2, "n1", 1_400, 1_450L, TIMEOUT, 1_420L));

            assertThat(check().count(Violation.APPLIED_TWICE)).isEqualTo(1);
        }

        @Test
        void a_late_effect_racing_a_retry_started_after_its_deadline_is_the_services_doing_but_not_before() {
            processed();
            calls.clear();
            long deadline = 1_020 + TIMEOUT;
            // the service ignored its deadline and applied after the retry (started past it) looked the key up
            call("reserve", "forward", 1_020, deadline + 400, deadline + 350);
            call("reserve", "forward", deadline + 100, deadline + 420, deadline + 380);
            call("debit", "forward", deadline + 430, deadline + 470, deadline + 450L);
            call("settle", "forward", deadline + 480, deadline + 520, deadline + 500L);

            HistoryChecker.Result r = check();
            assertThat(r.count(Violation.APPLIED_TWICE)).as(r.summary()).isZero();
            assertThat(r.lateDuplicates).isEqualTo(1);

            // the retry under another key: the service could not know it was the same step
            calls.set(1, new Call(calls.get(1).id(), T, "reserve", "forward", T + ":reserve:2", 2, "n1", deadline + 100,
                    deadline + 420L, TIMEOUT, deadline + 380));
            assertThat(check().count(Violation.APPLIED_TWICE)).isEqualTo(1);
            calls.set(1, new Call(calls.get(1).id(), T, "reserve", "forward", T + ":reserve", 2, "n1", deadline + 100,
                    deadline + 420L, TIMEOUT, deadline + 380));

            // applied on time: a second application is SAS's to answer for
            calls.set(0, new Call(calls.get(0).id(), T, "reserve", "forward", T + ":reserve", 1, "n0", 1_020,
                    deadline + 400, TIMEOUT, deadline - 10));
            assertThat(check().count(Violation.APPLIED_TWICE)).isEqualTo(1);
        }
    }

    @Nested
    class Compensations {
        /** Declined at settle: reserve and debit applied, then undone from t. */
        private void compensatedFrom(long t) {
            submit(1_000);
            claim(1_010, 1, 0);
            call("reserve", "forward", 1_020, 1_100, 1_050L);
            next(1_110, 1, 1);
            call("debit", "forward", 1_120, 1_200, 1_150L);
            next(1_210, 1, 2);
            call("settle", "forward", 1_220, 1_300, null);
            holderCompensates(1_310, 1);
            states.put(T, "COMPENSATED");
        }

        @Test
        void compensations_in_reverse_order_pass() {
            compensatedFrom(1_300);
            call("debit", "compensate", 1_320, 1_400, 1_350L);
            call("reserve", "compensate", 1_410, 1_500, 1_450L);

            HistoryChecker.Result r = check();
            assertThat(r.passed()).as(r.summary()).isTrue();
        }

        @Test
        void compensations_in_forward_order_are_caught() {
            compensatedFrom(1_300);
            call("reserve", "compensate", 1_320, 1_400, 1_350L);
            call("debit", "compensate", 1_410, 1_500, 1_450L);

            assertThat(check().count(Violation.COMPENSATION_ORDER)).isEqualTo(1);
        }

        @Test
        void a_compensation_while_a_forward_call_may_still_apply_is_caught() {
            compensatedFrom(1_300);
            call("debit", "forward", 1_250, 1_900, null); // a call another lease still runs
            call("debit", "compensate", 1_320, 1_400, 1_350L);
            call("reserve", "compensate", 1_410, 1_500, 1_450L);

            assertThat(check().count(Violation.COMPENSATION_DURING_FORWARD)).isEqualTo(2);
        }

        @Test
        void a_compensation_before_the_effect_it_undoes_is_caught() {
            compensatedFrom(1_300);
            calls.removeIf(c -> c.step().equals("debit"));
            call("debit", "forward", 1_120, 1_330, 1_320L);
            call("debit", "compensate", 1_305, 1_400, 1_350L);
            call("reserve", "compensate", 1_410, 1_500, 1_450L);

            assertThat(check().count(Violation.COMPENSATION_BEFORE_EFFECT)).isEqualTo(1);
        }

        @Test
        void a_compensated_task_that_kept_an_effect_is_caught() {
            compensatedFrom(1_300);
            call("reserve", "compensate", 1_410, 1_500, 1_450L);

            assertThat(check().count(Violation.UNCOMPENSATED)).isEqualTo(1);
        }
    }

    @Nested
    class Cancels {
        @Test
        void an_accepted_cancel_before_the_last_step_started_that_ends_processed_is_caught() {
            processed();
            cancels.add(new Cancel(T, 1_130, true));

            assertThat(check().count(Violation.CANCEL_IGNORED)).isEqualTo(1);
        }

        @Test
        void an_accepted_cancel_after_the_last_step_started_may_end_processed() {
            processed();
            cancels.add(new Cancel(T, 1_215, true));

            HistoryChecker.Result r = check();
            assertThat(r.passed()).as(r.summary()).isTrue();
        }

        @Test
        void a_refused_cancel_is_no_promise() {
            processed();
            cancels.add(new Cancel(T, 1_130, false));

            assertThat(check().passed()).isTrue();
        }
    }

    @Nested
    class Lost {
        @Test
        void a_task_without_a_row_is_lost() {
            submitted.add("task-2");
            processed();

            assertThat(check().count(Violation.LOST)).isEqualTo(1);
        }

        @Test
        void a_task_left_parked_or_waiting_is_not_terminal() {
            processed();
            submitted.add("task-2");
            submitted.add("task-3");
            states.put("task-2", "PARKED");
            states.put("task-3", "WAITING");

            assertThat(check().count(Violation.LOST)).isEqualTo(2);
        }

        @Test
        void a_processed_task_without_every_effect_is_caught() {
            processed();
            calls.removeIf(c -> c.step().equals("debit"));

            assertThat(check().count(Violation.STATE_MISMATCH)).isEqualTo(1);
        }
    }

    @Nested
    class Stalls {
        @Test
        void a_wait_is_measured_from_when_the_task_became_claimable_not_from_its_submission() {
            // submitted at 1000 but due at 5000 (a delayed submit or a retry's backoff): claimed 5500
            writes.add(new Write(T, 1_000, WriteKind.SUBMIT, 0, -1, -1, true, 5_000, "SUBMITTED"));
            claim(5_500, 1, 0);

            HistoryChecker.Result r = check();
            assertThat(r.count(Violation.STALL)).isZero();
            assertThat(r.longestWaitMs).isEqualTo(500);
        }

        @Test
        void a_claim_long_after_the_task_became_claimable_is_a_stall() {
            submit(1_000);
            claim(2_001, 1, 0);

            assertThat(check().count(Violation.STALL)).isEqualTo(1);
        }

        @Test
        void a_wait_through_an_outage_counts_from_its_end() {
            submit(1_000);
            outages.add(new Outage(1_100, 4_000));
            claim(4_500, 1, 0);

            HistoryChecker.Result r = check();
            assertThat(r.count(Violation.STALL)).isZero();
            assertThat(r.longestWaitMs).isEqualTo(500);
        }

        @Test
        void an_expired_claim_recovered_long_after_its_deadline_is_a_stall() {
            submit(1_000);
            claim(1_010, 1, 0);
            expire(1_010 + TIMEOUT + 1_001, 1, 1_010 + TIMEOUT + 1_001);

            assertThat(check().count(Violation.STALL)).isEqualTo(1);
        }
    }
}
