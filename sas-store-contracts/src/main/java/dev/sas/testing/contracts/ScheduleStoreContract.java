package dev.sas.testing.contracts;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.ScheduleSpec;
import dev.sas.core.spi.ScheduleStore;
import dev.sas.core.spi.ScheduleStore.Registration;
import dev.sas.core.spi.StoredSchedule;
import dev.sas.core.spi.SubmitResult;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The behaviour of every store's recurring schedules ({@link ScheduleStore}): a registration creates
 * a schedule once, however many nodes register it at once, and a repeated one writes nothing; a
 * changed definition replaces the old one and keeps the schedule's state; the last fire time moves
 * only by compare-and-set; pausing and resuming; and the task of one fire time is created once (the
 * business key that exactly-once firing rests on). Subclass it like {@link StateStoreContract}; the
 * in-memory store and every JDBC database run it.
 */
public abstract class ScheduleStoreContract extends StoreTestSupport {

    /** A fixed starting instant for every test. */
    protected static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    private ScheduleStore schedules() {
        return store.schedules().orElseThrow(() -> new AssertionError(store + " keeps no schedules"));
    }

    private static ScheduleSpec spec(String name, String trigger) {
        return new ScheduleSpec(name, "wf", 1, "{\"all\":true}", 3, "s0", Duration.ofSeconds(30), trigger,
                trigger.startsWith("cron:") ? "Europe/Berlin" : null, "RUN_ONCE");
    }

    @Test
    void a_registration_creates_the_schedule_unpaused_from_now_and_a_repeat_writes_nothing() {
        Instant at = T0.plusMillis(123);
        assertThat(schedules().register(spec("nightly", "cron:0 2 * * *"), at)).isEqualTo(Registration.CREATED);
        assertThat(schedules().register(spec("nightly", "cron:0 2 * * *"), at.plusSeconds(5)))
                .isEqualTo(Registration.UNCHANGED);

        StoredSchedule s = schedules().find("nightly").orElseThrow();
        assertThat(s.spec()).isEqualTo(spec("nightly", "cron:0 2 * * *"));
        assertThat(s.paused()).isFalse();
        assertThat(s.lastFireTime()).isEqualTo(at);
        assertThat(s.registeredAt()).isEqualTo(at);
        assertThat(s.updatedAt()).as("a repeat writes nothing").isEqualTo(at);
        assertThat(schedules().find("other")).isEmpty();
    }

    @Test
    void a_changed_definition_replaces_the_old_one_and_keeps_paused_state_and_last_fire_time() {
        schedules().register(spec("every", "every:PT1S"), T0);
        schedules().advance("every", T0, T0.plusSeconds(7), T0.plusSeconds(7));
        schedules().setPaused("every", true, T0.plusSeconds(8));

        ScheduleSpec changed = spec("every", "every:PT5S");
        assertThat(schedules().register(changed, T0.plusSeconds(9))).isEqualTo(Registration.UPDATED);

        StoredSchedule s = schedules().find("every").orElseThrow();
        assertThat(s.spec()).isEqualTo(changed);
        assertThat(s.paused()).isTrue();
        assertThat(s.lastFireTime()).isEqualTo(T0.plusSeconds(7));
        assertThat(s.registeredAt()).isEqualTo(T0);
        assertThat(s.updatedAt()).isEqualTo(T0.plusSeconds(9));
    }

    @Test
    void many_nodes_registering_the_same_schedule_at_once_create_it_once() throws Exception {
        int nodes = 8;
        ExecutorService pool = Executors.newFixedThreadPool(nodes);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Registration>> results = new ArrayList<>();
            for (int i = 0; i < nodes; i++) {
                Callable<Registration> register = () -> {
                    start.await();
                    return schedules().register(spec("shared", "every:PT1M"), T0);
                };
                results.add(pool.submit(register));
            }
            start.countDown();
            List<Registration> outcomes = new ArrayList<>();
            for (Future<Registration> f : results) {
                outcomes.add(f.get(60, TimeUnit.SECONDS));
            }
            assertThat(outcomes).containsOnlyOnce(Registration.CREATED)
                    .filteredOn(r -> r != Registration.CREATED).containsOnly(Registration.UNCHANGED);
            assertThat(schedules().schedules()).extracting(StoredSchedule::name).containsExactly("shared");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void the_last_fire_time_moves_only_from_the_expected_one() {
        schedules().register(spec("s", "every:PT1S"), T0);

        assertThat(schedules().advance("s", T0, T0.plusSeconds(3), T0.plusSeconds(3))).isTrue();
        assertThat(schedules().advance("s", T0, T0.plusSeconds(4), T0.plusSeconds(4)))
                .as("another node moved it first").isFalse();
        assertThat(schedules().find("s").orElseThrow().lastFireTime()).isEqualTo(T0.plusSeconds(3));
        assertThat(schedules().advance("missing", T0, T0.plusSeconds(1), T0.plusSeconds(1))).isFalse();
    }

    @Test
    void resuming_a_paused_schedule_starts_it_from_now_and_repeats_change_nothing() {
        schedules().register(spec("s", "every:PT1S"), T0);

        assertThat(schedules().setPaused("s", true, T0.plusSeconds(2))).isTrue();
        assertThat(schedules().setPaused("s", true, T0.plusSeconds(3))).isTrue();
        StoredSchedule paused = schedules().find("s").orElseThrow();
        assertThat(paused.paused()).isTrue();
        assertThat(paused.lastFireTime()).isEqualTo(T0);
        assertThat(paused.updatedAt()).isEqualTo(T0.plusSeconds(2));

        assertThat(schedules().setPaused("s", false, T0.plusSeconds(60))).isTrue();
        StoredSchedule resumed = schedules().find("s").orElseThrow();
        assertThat(resumed.paused()).isFalse();
        assertThat(resumed.lastFireTime()).as("fire times while paused are not due").isEqualTo(T0.plusSeconds(60));

        assertThat(schedules().setPaused("s", false, T0.plusSeconds(70))).isTrue();
        assertThat(schedules().find("s").orElseThrow().lastFireTime()).isEqualTo(T0.plusSeconds(60));
        assertThat(schedules().setPaused("missing", true, T0)).isFalse();
    }

    @Test
    void schedules_are_listed_by_name_and_removed_by_name() {
        schedules().register(spec("b", "every:PT1S"), T0);
        schedules().register(spec("a", "cron:*/5 * * * * *"), T0);
        schedules().register(spec("c", "every:PT1H"), T0);

        assertThat(schedules().schedules()).extracting(StoredSchedule::name).containsExactly("a", "b", "c");
        assertThat(schedules().remove("b")).isTrue();
        assertThat(schedules().remove("b")).isFalse();
        assertThat(schedules().schedules()).extracting(StoredSchedule::name).containsExactly("a", "c");
    }

    @Test
    void times_are_kept_to_the_millisecond() {
        Instant at = T0.plusNanos(123_456_789);
        schedules().register(spec("s", "every:PT1S"), at);
        schedules().advance("s", T0.plusMillis(123), T0.plusNanos(5_000_999_999L), at);

        StoredSchedule s = schedules().find("s").orElseThrow();
        assertThat(s.registeredAt()).isEqualTo(T0.plusMillis(123));
        assertThat(s.lastFireTime()).isEqualTo(T0.plusMillis(5_000));
    }

    @Test
    void the_task_of_one_fire_time_is_created_once_whoever_submits_it() {
        String key = "nightly@" + T0.plusSeconds(7200);
        List<SubmitResult> first = submit(key, key);
        SubmitResult again = submit(key).get(0);

        assertThat(first.get(0).created()).isTrue();
        assertThat(first.get(1).created()).isFalse();
        assertThat(again.created()).isFalse();
        assertThat(again.taskId()).isEqualTo(first.get(0).taskId());
    }

    private List<SubmitResult> submit(String... keys) {
        List<NewTask> tasks = new ArrayList<>();
        List<TaskEvent> received = new ArrayList<>();
        for (String key : keys) {
            TaskId id = TaskId.random();
            tasks.add(new NewTask(id, "wf", 1, key, 0, "in", null, "s0", Duration.ofSeconds(30), T0, T0));
            received.add(new TaskEvent(id, key, "wf", TaskEvent.Type.RECEIVED, -1, null, 0, T0, null));
        }
        return store.submitAll(tasks, received, null);
    }
}
