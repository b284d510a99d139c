package dev.sas.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.DeadlineRenewal;
import dev.sas.core.spi.StateStore;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link Admission}: a deadline runs only while its step runs, with writes only for late starts. */
class AdmissionTest {
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private static final Duration WITHIN = Duration.ofSeconds(3);

    private final AtomicReference<Instant> now = new AtomicReference<>(T0);
    private final Clock clock = new Clock() {
        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }
    };
    private final List<List<DeadlineRenewal>> calls = new ArrayList<>();
    private final AtomicReference<DeadlineRenewal.Outcome> answer = new AtomicReference<>(DeadlineRenewal.Outcome.RENEWED);
    private final StateStore store = (StateStore) Proxy.newProxyInstance(StateStore.class.getClassLoader(),
            new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                if (method.getName().equals("renewDeadlines")) {
                    @SuppressWarnings("unchecked")
                    List<DeadlineRenewal> renewals = (List<DeadlineRenewal>) args[0];
                    calls.add(renewals);
                    return renewals.stream().map(r -> answer.get()).toList();
                }
                if (method.getName().equals("currentTime")) {
                    return java.util.Optional.empty();
                }
                throw new UnsupportedOperationException(method.getName());
            });
    private final AtomicInteger wakeUps = new AtomicInteger();
    private final Admission admission = new Admission(store, DatabaseClock.of(clock, store, false, "test", s -> { }),
            "node-a", 64);
    private final Workflow<String> wf = Workflow.builder("wf", Codec.string())
            .step("work", s -> s.execute(ctx -> "ok").completeWithin(WITHIN))
            .build();

    AdmissionTest() {
        admission.start(4, wakeUps::incrementAndGet);
    }

    /** A task claimed now: its deadline is now + WITHIN. */
    private TaskRun claimedNow() {
        ClaimedTask c = new ClaimedTask(TaskId.random(), "wf", 1, "k", TaskStatus.PROCESSING, 7, 0, 1, 0,
                now.get().plus(WITHIN), false, "in", null, now.get(), List.of());
        return new TaskRun(c, wf, "in");
    }

    @Test
    void a_step_that_starts_promptly_keeps_the_claims_deadline_and_writes_nothing() {
        TaskRun run = claimedNow();
        Admission.Ticket t = admission.enqueue(run);
        assertThat(admission.waiting()).isEqualTo(1);
        now.set(T0.plus(Admission.tolerance(WITHIN)));

        assertThat(admission.begin(t)).isTrue();

        assertThat(calls).isEmpty();
        assertThat(run.completeBy).isEqualTo(T0.plus(WITHIN));
        assertThat(admission.waiting()).isZero();
        assertThat(wakeUps).as("the claim loop is told that nothing waits").hasValue(1);
    }

    @Test
    void a_step_that_starts_late_restarts_its_deadline_on_the_stores_clock_before_it_runs() {
        TaskRun run = claimedNow();
        Admission.Ticket t = admission.enqueue(run);
        Instant start = T0.plus(Admission.tolerance(WITHIN)).plusMillis(1);
        now.set(start);

        assertThat(admission.begin(t)).isTrue();

        assertThat(calls).hasSize(1);
        DeadlineRenewal r = calls.get(0).get(0);
        assertThat(r.completeBy()).isEqualTo(start.plus(WITHIN));
        assertThat(r.lease()).isEqualTo(7);
        assertThat(r.holder()).isEqualTo("node-a");
        assertThat(r.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(run.completeBy).isEqualTo(start.plus(WITHIN));
    }

    @Test
    void a_step_whose_claim_moved_on_is_not_started() {
        TaskRun run = claimedNow();
        Admission.Ticket t = admission.enqueue(run);
        now.set(T0.plusSeconds(2));
        answer.set(DeadlineRenewal.Outcome.STALE);

        assertThat(admission.begin(t)).isFalse();
        assertThat(admission.waiting()).isZero();
        assertThat(run.completeBy).isEqualTo(T0.plus(WITHIN));
    }

    @Test
    void waiting_tasks_are_extended_in_one_call_when_their_reservation_nears_its_end() {
        TaskRun early = claimedNow();
        Admission.Ticket a = admission.enqueue(early);
        now.set(T0.plusSeconds(1));
        TaskRun later = claimedNow();
        admission.enqueue(later);

        now.set(T0.plus(WITHIN).minus(Admission.RENEW_BEFORE).plusMillis(1));
        admission.extendDue();

        assertThat(calls).hasSize(1);
        assertThat(calls.get(0)).extracting(DeadlineRenewal::taskId).containsExactly(early.taskId);
        Instant extended = now.get().plus(Admission.MIN_RESERVATION);
        assertThat(early.completeBy).isEqualTo(extended);
        assertThat(later.completeBy).isEqualTo(T0.plusSeconds(1).plus(WITHIN));

        // an extended task restarts its deadline exactly when it starts, however soon
        now.set(now.get().plusMillis(1));
        assertThat(admission.begin(a)).isTrue();
        assertThat(calls).hasSize(2);
        assertThat(early.completeBy).isEqualTo(now.get().plus(WITHIN));
    }

    @Test
    void a_task_abandoned_while_waiting_is_not_started_and_no_longer_counted() {
        Admission.Ticket t = admission.enqueue(claimedNow());
        admission.abandon(t);

        assertThat(admission.waiting()).isZero();
        assertThat(admission.begin(t)).isFalse();
        admission.abandon(t);
        assertThat(admission.waiting()).isZero();
    }

    @Test
    void claims_are_sized_to_what_the_threads_start_within_the_horizon() {
        assertThat(admission.capacity()).as("nothing ran yet").isEqualTo(Integer.MAX_VALUE);
        admission.ran(Duration.ofSeconds(1).toNanos());
        assertThat(admission.capacity()).as("4 threads, 1 s steps").isEqualTo(4);
        Admission fresh = new Admission(store, DatabaseClock.of(clock, store, false, "t", s -> { }), "n", 64);
        fresh.start(4, () -> { });
        fresh.ran(Duration.ofMillis(50).toNanos());
        assertThat(fresh.capacity()).as("4 threads, 50 ms steps: 1 + 250/50 each").isEqualTo(24);
    }

    @Test
    void the_gate_opens_while_fewer_wait_than_the_threads_start_during_eight_claim_round_trips() {
        AtomicLong nanos = new AtomicLong(1_000_000_000L);
        Admission a = new Admission(store, DatabaseClock.of(clock, store, false, "t", s -> { }), "n", 64, nanos::get);
        AtomicInteger woken = new AtomicInteger();
        a.start(4, woken::incrementAndGet);
        a.ran(Duration.ofMillis(1).toNanos());
        long claim = Duration.ofMillis(2).toNanos();
        assertThat(a.gateOpen(claim)).as("nothing waits").isTrue();
        List<Admission.Ticket> tickets = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            tickets.add(a.enqueue(claimedNow()));
        }
        assertThat(a.gateOpen(claim)).as("no start rate yet: open only when none waits").isFalse();
        for (int i = 0; i < 10; i++) {
            nanos.addAndGet(Duration.ofMillis(1).toNanos());
            assertThat(a.begin(tickets.get(i))).isTrue();
        }
        // a start every 1 ms, a claim of 2 ms: 16 start during eight round trips, so fewer than 17 may wait
        assertThat(a.gateOpen(claim)).as("20 wait").isFalse();
        woken.set(0);
        for (int i = 10; i < 14; i++) {
            nanos.addAndGet(Duration.ofMillis(1).toNanos());
            assertThat(a.begin(tickets.get(i))).isTrue();
        }
        assertThat(woken).as("the claim loop is woken once fewer than 17 wait").hasPositiveValue();
        assertThat(a.gateOpen(claim)).as("16 wait").isTrue();
        assertThat(a.gateOpen(Duration.ofMillis(1).toNanos())).as("a faster claim: fewer than 9 may wait").isFalse();
        assertThat(calls).as("every start was prompt: no deadline written").isEmpty();

        for (int i = 0; i < 10; i++) {
            a.ran(Duration.ofSeconds(1).toNanos());
        }
        assertThat(a.gateOpen(Duration.ofSeconds(1).toNanos()))
                .as("~1 s steps: no more wait than the 4 threads start within the horizon, however slow the claim")
                .isFalse();
    }

    @Test
    void on_a_starved_node_no_more_wait_than_start_within_the_horizon_at_the_rate_they_start() {
        AtomicLong nanos = new AtomicLong(1_000_000_000L);
        Admission a = new Admission(store, DatabaseClock.of(clock, store, false, "t", s -> { }), "n", 64, nanos::get);
        a.start(4, () -> { });
        a.ran(Duration.ofNanos(1_000).toNanos()); // no-op steps: by their length, thousands start in 250 ms
        List<Admission.Ticket> tickets = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            tickets.add(a.enqueue(claimedNow()));
        }
        for (int i = 0; i < 20; i++) {
            nanos.addAndGet(Duration.ofMillis(10).toNanos()); // yet one starts every 10 ms (no CPU for them)
            assertThat(a.begin(tickets.get(i))).isTrue();
        }
        long claim = Duration.ofMillis(100).toNanos(); // eight round trips: 80 would start meanwhile
        assertThat(a.waiting()).isEqualTo(40);
        assertThat(a.gateOpen(claim)).as("40 wait: 25 start within 250 ms").isFalse();
        for (int i = 20; i < 35; i++) {
            nanos.addAndGet(Duration.ofMillis(10).toNanos());
            assertThat(a.begin(tickets.get(i))).isTrue();
        }
        assertThat(a.gateOpen(claim)).as("25 wait").isTrue();
        assertThat(calls).as("every start was prompt: no deadline written").isEmpty();
    }

    @Test
    void until_an_attempt_has_finished_the_gate_opens_only_when_none_waits() {
        AtomicLong nanos = new AtomicLong(1_000_000_000L);
        Admission a = new Admission(store, DatabaseClock.of(clock, store, false, "t", s -> { }), "n", 64, nanos::get);
        a.start(4, () -> { });
        List<Admission.Ticket> tickets = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            tickets.add(a.enqueue(claimedNow()));
        }
        for (Admission.Ticket t : tickets.subList(0, 2)) {
            nanos.addAndGet(Duration.ofMillis(1).toNanos());
            assertThat(a.begin(t)).isTrue();
        }
        assertThat(a.gateOpen(Duration.ofMillis(50).toNanos())).as("1 waits, no attempt finished yet").isFalse();
        assertThat(a.begin(tickets.get(2))).isTrue();
        assertThat(a.gateOpen(Duration.ofMillis(50).toNanos())).as("none waits").isTrue();
    }

    @Test
    void the_start_that_keeps_the_deadline_is_the_one_a_duration_computes() {
        Instant completeBy = Instant.parse("2030-01-01T00:00:03.000000007Z");
        for (Duration within : List.of(Duration.ofNanos(1), Duration.ofNanos(19), Duration.ofMillis(7),
                Duration.ofMillis(999), Duration.ofSeconds(3), Duration.ofMillis(4_999), Duration.ofSeconds(5),
                Duration.ofSeconds(5).plusNanos(1), Duration.ofHours(2), Duration.ofDays(365 * 400))) {
            Duration tenth = within.dividedBy(10);
            Duration tolerance = tenth.compareTo(Admission.MAX_TOLERANCE) < 0 ? tenth : Admission.MAX_TOLERANCE;
            assertThat(Admission.tolerance(within)).as("tolerance of %s", within).isEqualTo(tolerance);
            assertThat(Admission.keepsDeadlineUntil(completeBy, within)).as("within %s", within)
                    .isEqualTo(completeBy.minus(within).plus(tolerance));
        }
    }
}
