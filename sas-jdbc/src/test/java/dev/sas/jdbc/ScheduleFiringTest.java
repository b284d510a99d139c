package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.MissedFires;
import dev.sas.core.SasRuntime;
import dev.sas.core.Schedule;
import dev.sas.core.ScheduleInfo;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * Recurring schedules fired through the SQL store: three runtimes, each with its own pool (three
 * nodes), one stopped midway while it leads, submit exactly one task per fire time of a schedule
 * firing every second for 60 s of manual time; and a started runtime fires on the database's own
 * clock (a few seconds of real time).
 */
class ScheduleFiringTest {

    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private static final Duration LONGEST_MISSED_AFTER = Schedule.MAX_MISSED_AFTER.minusSeconds(1);
    private static final Workflow<String> RECONCILE = Workflow.builder("reconcile", Codec.string())
            .step("run", s -> s.execute(ctx -> "reconciled " + ctx.input()))
            .build();

    private static List<String> keys(SasRuntime node) {
        return node.client().list(TaskQuery.all().withWorkflow("reconcile").withLimit(TaskQuery.MAX_LIMIT)).stream()
                .map(TaskInfo::businessKey).sorted().toList();
    }

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"H2_MEMORY", "POSTGRES", "MARIADB"})
    void every_second_for_60_s_on_3_nodes_one_stopped_midway_gives_exactly_one_task_per_fire_time(TestDb db) {
        String url = db.url();
        String prefix = TestDb.randomPrefix();
        ManualClock clock = new ManualClock(T0);
        List<JdbcStateStore> stores = new ArrayList<>();
        List<SasRuntime> live = new ArrayList<>();
        try {
            for (String id : List.of("a", "b", "c")) {
                JdbcStateStore store = TestDb.builder(url, prefix).maxPoolSize(4).build();
                stores.add(store);
                SasRuntime node = SasRuntime.builder().stateStore(store).clock(clock).trustLocalClock().instanceId(id)
                        .workflow(RECONCILE).build();
                live.add(node);
                // the longest missed-fire text a schedule stores (nothing is that late here)
                node.client().schedules().register(Schedule.named("tick").every(Duration.ofSeconds(1))
                        .submits(RECONCILE, "all").missedFires(MissedFires.runEach(MissedFires.MAX_RUN_EACH))
                        .missedAfter(LONGEST_MISSED_AFTER).build());
            }
            for (int second = 1; second <= 60; second++) {
                clock.tick(Duration.ofSeconds(1));
                live.forEach(Drain::supervisorOnce);
                live.forEach(Drain::untilIdle);
                if (second == 25) {
                    SasRuntime leader = live.stream().filter(n -> n.status().supervisorLeader()).findFirst()
                            .orElseThrow();
                    leader.close(); // keeps its lease until it expires, as a killed node would
                    live.remove(leader);
                }
            }

            List<String> expected = new ArrayList<>();
            for (int k = 1; k <= 60; k++) {
                expected.add("tick@" + T0.plusSeconds(k));
            }
            assertThat(keys(live.get(0))).containsExactlyElementsOf(expected.stream().sorted().toList());
            assertThat(live.get(0).client().countByStatus().get(TaskStatus.PROCESSED)).isEqualTo(60L);
            ScheduleInfo info = live.get(0).client().schedules().find("tick").orElseThrow();
            assertThat(info.lastFireTime()).isEqualTo(T0.plusSeconds(60));
            assertThat(info.updatedAt()).as("registered by three nodes, written once").isEqualTo(T0);
            assertThat(info.missedFires()).isEqualTo(MissedFires.runEach(MissedFires.MAX_RUN_EACH));
            assertThat(info.missedAfter()).isEqualTo(LONGEST_MISSED_AFTER);
        } finally {
            live.forEach(SasRuntime::close);
            stores.forEach(JdbcStateStore::close);
            db.drop(url, prefix);
        }
    }

    @Test
    void a_started_runtime_fires_on_the_database_clock() {
        String url = TestDb.H2_MEMORY.url();
        String prefix = TestDb.randomPrefix();
        try (JdbcStateStore store = TestDb.builder(url, prefix).build();
                SasRuntime node = SasRuntime.builder().stateStore(store).workflow(RECONCILE)
                        .supervisorInterval(Duration.ofMillis(200)).build()) {
            ScheduleInfo registered = node.client().schedules().register(Schedule.named("tick")
                    .every(Duration.ofSeconds(1)).submits(RECONCILE, "all").build());
            node.start();

            await().atMost(Duration.ofSeconds(60)).until(() -> keys(node).size() >= 2);
            List<String> keys = keys(node);
            for (int k = 0; k < keys.size(); k++) {
                assertThat(keys.get(k)).isEqualTo("tick@" + registered.registeredAt().plusSeconds(k + 1L));
            }
        } finally {
            TestDb.H2_MEMORY.drop(url, prefix);
        }
    }
}
