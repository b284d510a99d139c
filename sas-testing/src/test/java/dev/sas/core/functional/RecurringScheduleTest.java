package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.MissedFires;
import dev.sas.core.SasRuntime;
import dev.sas.core.Schedule;
import dev.sas.core.ScheduleInfo;
import dev.sas.core.ScheduleNotFoundException;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.internal.ScheduleFirer;
import dev.sas.core.internal.Metrics;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Recurring schedules through runtimes on a store whose clock is the authority (as a database's),
 * driven by hand on a manual clock: one task per fire time across nodes, nodes stopping and
 * restarting, missed fires, daylight-saving time, pause, resume and trigger, and clear errors.
 */
class RecurringScheduleTest {

    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private static final Workflow<String> RECONCILE = Workflow.builder("reconcile", Codec.string())
            .step("run", s -> s.execute(ctx -> "reconciled " + ctx.input()))
            .build();

    private final ManualClock clock = new ManualClock(T0);
    private final InMemoryStateStore store = new InMemoryStateStore(clock);
    private final List<SasRuntime> nodes = new ArrayList<>();

    @AfterEach
    void close() {
        nodes.forEach(SasRuntime::close);
    }

    private SasRuntime node(String id) {
        SasRuntime n = SasRuntime.builder().stateStore(store).clock(clock).instanceId(id).workflow(RECONCILE).build();
        nodes.add(n);
        return n;
    }

    private static Schedule everySecond() {
        return Schedule.named("tick").every(Duration.ofSeconds(1)).submits(RECONCILE, "all").build();
    }

    /** Moves the clock by {@code step} {@code times} times, each time one supervisor pass and a drain of every node. */
    private void run(int times, Duration step, List<SasRuntime> live) {
        for (int i = 0; i < times; i++) {
            clock.tick(step);
            live.forEach(Drain::supervisorOnce);
            live.forEach(Drain::untilIdle);
        }
    }

    private List<String> keys() {
        return store.list(TaskQuery.all().withWorkflow("reconcile").withLimit(TaskQuery.MAX_LIMIT)).stream()
                .map(TaskInfo::businessKey).sorted().toList();
    }

    private static List<String> fireKeys(String schedule, Instant from, Duration step, int count) {
        List<String> keys = new ArrayList<>();
        for (int k = 1; k <= count; k++) {
            keys.add(ScheduleFirer.businessKey(schedule, from.plus(step.multipliedBy(k))));
        }
        return keys.stream().sorted().toList();
    }

    @Nested
    class AcrossNodes {

        @Test
        void every_second_for_60_s_on_3_runtimes_one_stopped_midway_gives_exactly_one_task_per_fire_time() {
            SasRuntime a = node("a");
            SasRuntime b = node("b");
            SasRuntime c = node("c");
            for (SasRuntime n : List.of(a, b, c)) {
                n.client().schedules().register(everySecond());
            }
            assertThat(a.client().schedules().find("tick").orElseThrow().updatedAt())
                    .as("registering again on b and c wrote nothing").isEqualTo(T0);
            List<SasRuntime> live = new ArrayList<>(List.of(a, b, c));

            run(20, Duration.ofSeconds(1), live);
            SasRuntime leader = live.stream().filter(n -> n.status().supervisorLeader()).findFirst().orElseThrow();
            leader.close(); // stopped holding the lease: the others take over once it expires
            live.remove(leader);
            run(40, Duration.ofSeconds(1), live);

            assertThat(keys()).hasSize(60).doesNotHaveDuplicates()
                    .containsExactlyElementsOf(fireKeys("tick", T0, Duration.ofSeconds(1), 60));
            assertThat(nodes.stream().mapToLong(n -> n.metrics().scheduleFires()).sum())
                    .as("each fire time counted once, by the node that submitted it").isEqualTo(60);
            assertThat(store.countByStatus().get(TaskStatus.PROCESSED)).isEqualTo(60L);
        }

        @Test
        void two_nodes_firing_at_once_submit_each_fire_time_once_because_the_key_is_unique() throws Exception {
            node("a").client().schedules().register(everySecond());
            clock.tick(Duration.ofSeconds(30));
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                CountDownLatch start = new CountDownLatch(1);
                List<Future<Integer>> created = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    ScheduleFirer firer = new ScheduleFirer(store.schedules().orElseThrow(), store, "n" + i, new Metrics(), e -> { });
                    created.add(pool.submit(() -> {
                        start.await();
                        return firer.fireDue(clock.instant());
                    }));
                }
                start.countDown();
                int total = 0;
                for (Future<Integer> f : created) {
                    total += f.get(60, TimeUnit.SECONDS);
                }
                assertThat(total).isEqualTo(30);
            } finally {
                pool.shutdownNow();
            }
            assertThat(keys()).containsExactlyElementsOf(fireKeys("tick", T0, Duration.ofSeconds(1), 30));
        }

        @Test
        void when_every_node_restarts_firing_goes_on_from_the_last_fire_time_without_repeats() {
            SasRuntime first = node("first");
            first.client().schedules().register(everySecond());
            run(5, Duration.ofSeconds(1), List.of(first));
            first.close();
            nodes.clear();

            clock.tick(Duration.ofSeconds(30)); // every node down for 30 s: late, not missed
            SasRuntime second = node("second");
            second.client().schedules().register(everySecond());
            run(1, Duration.ofSeconds(1), List.of(second)); // the old lease expired long ago

            assertThat(keys()).containsExactlyElementsOf(fireKeys("tick", T0, Duration.ofSeconds(1), 36));
        }
    }

    @Nested
    class MissedFireTimes {

        private List<String> afterOutage(MissedFires policy) {
            return afterOutage(Schedule.named("minutely").every(Duration.ofMinutes(1)).submits(RECONCILE, "x")
                    .missedFires(policy));
        }

        private List<String> afterOutage(Schedule.Builder schedule) {
            SasRuntime n = node("n");
            n.client().schedules().register(schedule.build());
            clock.tick(Duration.ofSeconds(630)); // down from T0 to T0 + 10.5 min: 1..9 min missed, 10 min late
            Drain.supervisorOnce(n);
            Drain.untilIdle(n);
            return keys();
        }

        private List<String> at(int... minutes) {
            List<String> keys = new ArrayList<>();
            for (int m : minutes) {
                keys.add(ScheduleFirer.businessKey("minutely", T0.plus(Duration.ofMinutes(m))));
            }
            return keys.stream().sorted().toList();
        }

        @Test
        void skip_drops_the_missed_fire_times_and_runs_the_late_one() {
            assertThat(afterOutage(MissedFires.skip())).containsExactlyElementsOf(at(10));
            assertThat(nodes.get(0).metrics().scheduleFires()).as("the late fire time run").isEqualTo(1);
            assertThat(nodes.get(0).metrics().scheduleFiresSkipped()).as("1..9 min dropped").isEqualTo(9);
        }

        @Test
        void run_once_runs_the_latest_missed_fire_time_once() {
            assertThat(afterOutage(MissedFires.runOnce())).containsExactlyElementsOf(at(9, 10));
        }

        @Test
        void run_each_runs_the_latest_n_missed_fire_times() {
            assertThat(afterOutage(MissedFires.runEach(3))).containsExactlyElementsOf(at(7, 8, 9, 10));
        }

        @Test
        void run_each_with_room_for_all_runs_every_missed_fire_time_once() {
            assertThat(afterOutage(MissedFires.runEach(100)))
                    .containsExactlyElementsOf(at(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
            clock.tick(Duration.ofSeconds(20)); // T0 + 10:50, before the next fire time
            Drain.supervisorOnce(nodes.get(0));
            assertThat(keys()).as("the next pass repeats none").hasSize(10);
        }

        @Test
        void a_longer_missed_after_submits_fire_times_that_late_as_usual_whatever_the_policy() {
            Schedule.Builder lenient = Schedule.named("minutely").every(Duration.ofMinutes(1)).submits(RECONCILE, "x")
                    .missedFires(MissedFires.skip()).missedAfter(Duration.ofMinutes(5));
            assertThat(afterOutage(lenient)).as("1..5 min more than 5 min late: skipped; 6..10 min on time")
                    .containsExactlyElementsOf(at(6, 7, 8, 9, 10));
            assertThat(nodes.get(0).metrics().scheduleFiresSkipped()).isEqualTo(5);
            assertThat(nodes.get(0).client().schedules().find("minutely").orElseThrow().missedAfter())
                    .isEqualTo(Duration.ofMinutes(5));
        }

        @Test
        void a_shorter_missed_after_counts_a_fire_time_late_by_more_as_missed() {
            SasRuntime n = node("n");
            n.client().schedules().register(Schedule.named("minutely").every(Duration.ofMinutes(1))
                    .submits(RECONCILE, "x").missedFires(MissedFires.skip()).missedAfter(Duration.ofSeconds(10)).build());
            clock.tick(Duration.ofSeconds(75)); // the 1 min fire time is 15 s late
            Drain.supervisorOnce(n);
            assertThat(keys()).as("skipped: later than 10 s").isEmpty();
            assertThat(n.metrics().scheduleFiresSkipped()).isEqualTo(1);
            clock.tick(Duration.ofSeconds(50)); // 2:05, the 2 min fire time 5 s late
            Drain.supervisorOnce(n);
            assertThat(keys()).containsExactlyElementsOf(at(2));
        }
    }

    @Nested
    class DaylightSavingTime {
        private final ZoneId berlin = ZoneId.of("Europe/Berlin");

        private List<String> firedBetween(String cron, Instant from, Instant to) {
            clock.set(from);
            SasRuntime n = node("n");
            n.client().schedules().register(Schedule.named("dst").cron(cron, berlin).submits(RECONCILE, "x").build());
            while (clock.instant().isBefore(to)) {
                run(1, Duration.ofMinutes(15), List.of(n));
            }
            return keys();
        }

        @Test
        void a_time_in_the_spring_forward_gap_does_not_fire_that_day() {
            // 2026-03-29 02:00 -> 03:00 in Berlin: 02:30 does not exist that day
            assertThat(firedBetween("30 2 * * *", Instant.parse("2026-03-27T12:00:00Z"),
                    Instant.parse("2026-03-31T12:00:00Z"))).containsExactly(
                            "dst@2026-03-28T01:30:00Z", "dst@2026-03-30T00:30:00Z", "dst@2026-03-31T00:30:00Z");
        }

        @Test
        void a_daily_time_in_the_repeated_hour_fires_once_at_its_first_occurrence() {
            // 2026-10-25 03:00 -> 02:00 in Berlin: 02:30 happens twice (00:30Z and 01:30Z)
            assertThat(firedBetween("30 2 * * *", Instant.parse("2026-10-24T12:00:00Z"),
                    Instant.parse("2026-10-26T12:00:00Z"))).containsExactly(
                            "dst@2026-10-25T00:30:00Z", "dst@2026-10-26T01:30:00Z");
        }

        @Test
        void an_hourly_schedule_fires_in_both_runs_of_the_repeated_hour() {
            assertThat(firedBetween("0 * * * *", Instant.parse("2026-10-24T23:30:00Z"),
                    Instant.parse("2026-10-25T03:10:00Z"))).containsExactly(
                            "dst@2026-10-25T00:00:00Z", "dst@2026-10-25T01:00:00Z", "dst@2026-10-25T02:00:00Z",
                            "dst@2026-10-25T03:00:00Z");
        }
    }

    @Nested
    class Operations {

        @Test
        void paused_fire_times_are_not_run_resuming_goes_on_from_then_and_trigger_runs_one_now() {
            SasRuntime n = node("n");
            n.client().schedules().register(everySecond());
            run(3, Duration.ofSeconds(1), List.of(n));
            n.client().schedules().pause("tick");
            run(5, Duration.ofSeconds(1), List.of(n));
            assertThat(keys()).hasSize(3);
            assertThat(n.client().schedules().find("tick").orElseThrow().paused()).isTrue();

            TaskHandle triggered = n.client().schedules().trigger("tick");
            Drain.untilIdle(n);
            assertThat(triggered.created()).isTrue();
            assertThat(n.client().find(triggered.id()).orElseThrow().businessKey())
                    .isEqualTo("tick@triggered-" + T0.plusSeconds(8));
            assertThat(n.client().find(triggered.id()).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);

            n.client().schedules().resume("tick");
            run(2, Duration.ofSeconds(1), List.of(n));
            assertThat(keys()).containsExactlyInAnyOrder("tick@" + T0.plusSeconds(1), "tick@" + T0.plusSeconds(2),
                    "tick@" + T0.plusSeconds(3), "tick@triggered-" + T0.plusSeconds(8), "tick@" + T0.plusSeconds(9),
                    "tick@" + T0.plusSeconds(10));
        }

        @Test
        void schedules_are_listed_with_their_next_fire_time_and_unknown_names_are_refused() {
            SasRuntime n = node("n");
            n.client().schedules().register(everySecond());
            n.client().schedules().register(Schedule.named("nightly").cron("0 2 * * *", ZoneId.of("Europe/Berlin"))
                    .submits(RECONCILE, "all").missedFires(MissedFires.skip()).build());

            List<ScheduleInfo> all = n.client().schedules().list();
            assertThat(all).extracting(ScheduleInfo::name).containsExactly("nightly", "tick");
            ScheduleInfo nightly = all.get(0);
            assertThat(nightly.trigger()).isEqualTo("cron:0 2 * * *");
            assertThat(nightly.zone()).isEqualTo("Europe/Berlin");
            assertThat(nightly.missedFires()).isEqualTo(MissedFires.skip());
            assertThat(nightly.nextFireTime()).isEqualTo(Instant.parse("2030-01-01T01:00:00Z"));
            assertThat(all.get(1).nextFireTime()).isEqualTo(T0.plusSeconds(1));

            assertThatThrownBy(() -> n.client().schedules().pause("nope")).isInstanceOf(ScheduleNotFoundException.class)
                    .hasMessageContaining("'nope'");
            assertThatThrownBy(() -> n.client().schedules().trigger("nope"))
                    .isInstanceOf(ScheduleNotFoundException.class);
            assertThat(n.client().schedules().remove("tick")).isTrue();
            assertThat(n.client().schedules().list()).extracting(ScheduleInfo::name).containsExactly("nightly");
        }
    }

    @Nested
    class Validation {

        @Test
        void a_bad_cron_expression_is_refused_at_build_saying_what_is_wrong() {
            assertThatThrownBy(() -> Schedule.named("bad").cron("61 * * * *", ZoneId.of("UTC")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("schedule 'bad'")
                    .hasMessageContaining("'61 * * * *'")
                    .hasMessageContaining("61 not in range")
                    .hasMessageContaining("use 5 fields");
            assertThatThrownBy(() -> Schedule.named("bad").cron("* * *", ZoneId.of("UTC")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("has 3 fields");
        }

        @Test
        void missing_or_conflicting_settings_are_refused_at_build_naming_them() {
            assertThatThrownBy(() -> Schedule.named("s").submits(RECONCILE, "x").build())
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("cron(expression, zone)");
            assertThatThrownBy(() -> Schedule.named("s").every(Duration.ofSeconds(5)).build())
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("submits(workflow, input)");
            assertThatThrownBy(() -> Schedule.named("s").every(Duration.ofSeconds(5)).cron("0 2 * * *", ZoneId.of("UTC"))
                    .submits(RECONCILE, "x").build())
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("both cron (0 2 * * *) and every (PT5S)");
            assertThatThrownBy(() -> Schedule.named("s").every(Duration.ofMillis(500)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least PT1S");
            assertThatThrownBy(() -> Schedule.named("has space"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schedule name 'has space'");
            assertThatThrownBy(() -> MissedFires.runEach(0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("was 0");
            assertThatThrownBy(() -> Schedule.named("s").missedAfter(Duration.ofMillis(500)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("schedule 's': missedAfter must be whole seconds between PT1S and PT24H, was PT0.5S");
            assertThatThrownBy(() -> Schedule.named("s").missedAfter(Duration.ofHours(25)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("was PT25H");
            assertThatThrownBy(() -> Schedule.named("s").missedAfter(Duration.ofMillis(1500)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("was PT1.5S");
            assertThatThrownBy(() -> Schedule.named("s").missedAfter(null))
                    .isInstanceOf(NullPointerException.class).hasMessage("schedule 's': missedAfter must not be null");
        }

        @Test
        void a_store_without_schedules_refuses_them_naming_the_store_and_its_runtimes_still_supervise() {
            dev.sas.core.spi.StateStore plain = (dev.sas.core.spi.StateStore) java.lang.reflect.Proxy.newProxyInstance(
                    dev.sas.core.spi.StateStore.class.getClassLoader(),
                    new Class<?>[] {dev.sas.core.spi.StateStore.class}, (proxy, method, args) -> {
                        if (method.getName().equals("schedules")) {
                            return java.util.Optional.empty();
                        }
                        try {
                            return method.invoke(store, args);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            SasRuntime n = SasRuntime.builder().stateStore(plain).clock(clock).workflow(RECONCILE).build();
            nodes.add(n);

            assertThatThrownBy(() -> n.client().schedules().register(everySecond()))
                    .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("keeps no recurring schedules");
            clock.tick(Duration.ofSeconds(1));
            assertThat(Drain.supervisorOnce(n)).isZero();
            assertThat(n.status().supervisorLeader()).isTrue();
        }

        @Test
        void the_longest_missed_after_fits_the_stores_column_and_the_default_is_stored_as_before_the_setting() {
            Schedule longest = Schedule.named("s").every(Duration.ofSeconds(5)).submits(RECONCILE, "x")
                    .missedFires(MissedFires.runEach(MissedFires.MAX_RUN_EACH))
                    .missedAfter(Schedule.MAX_MISSED_AFTER.minusSeconds(1)).build();
            assertThat(longest.spec().missedFires()).isEqualTo("RUN_EACH:1000;after=PT23H59M59S")
                    .hasSizeLessThanOrEqualTo(32); // missed_fires VARCHAR(32)
            Schedule plain = Schedule.named("s").every(Duration.ofSeconds(5)).submits(RECONCILE, "x").build();
            assertThat(plain.spec().missedFires()).isEqualTo("RUN_ONCE");
            assertThat(plain.missedAfter()).isEqualTo(Schedule.DEFAULT_MISSED_AFTER).isEqualTo(Duration.ofMinutes(1));
        }

        @Test
        void a_built_schedule_does_not_change_when_its_builder_is_reused() {
            Schedule.Builder b = Schedule.named("s").every(Duration.ofSeconds(5)).submits(RECONCILE, "x");
            Schedule first = b.build();
            b.every(Duration.ofSeconds(9));
            assertThat(first.trigger()).isEqualTo("every:PT5S");
            assertThat(b.build().trigger()).isEqualTo("every:PT9S");
        }
    }
}
