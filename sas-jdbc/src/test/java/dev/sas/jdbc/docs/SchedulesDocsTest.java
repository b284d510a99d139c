package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.MissedFires;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.SasSchedules;
import dev.sas.core.Schedule;
import dev.sas.core.ScheduleInfo;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import dev.sas.testing.Drain;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The samples of docs/schedules.md: a nightly reconciliation at 02:00 in the shop's time zone. */
class SchedulesDocsTest {

    @Test
    void a_nightly_schedule_runs_at_two_in_berlin_and_operators_pause_trigger_and_resume_it() {
        String url = "jdbc:h2:mem:schedules-docs;DB_CLOSE_DELAY=-1";
        Workflow<String> reconcile = Workflow.builder("reconcile", Codec.string())
                .step("compare-ledgers", s -> s.execute(ctx -> "reconciled " + ctx.input()))
                .build();
        ManualClock clock = new ManualClock(Instant.parse("2030-01-01T00:30:00Z")); // 01:30 in Berlin
        List<String> lines = new ArrayList<>();
        try (JdbcStateStore store = JdbcStateStore.builder().url(url).build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(reconcile).clock(clock)
                     .trustLocalClock().build()) {
            // tag::schedule[]
            Schedule nightly = Schedule.named("nightly-reconciliation")
                    .cron("0 2 * * *", ZoneId.of("Europe/Berlin"))     // 02:00 in the shop's time zone
                    .submits(reconcile, "all-warehouses")
                    .missedFires(MissedFires.runOnce())                 // after an outage: once, not per night
                    .build();
            runtime.client().schedules().register(nightly);            // every node may do this at start
            // end::schedule[]

            clock.tick(Duration.ofMinutes(31)); // 02:01 in Berlin
            Drain.supervisorOnce(runtime);
            Drain.untilIdle(runtime);
            SasClient client = runtime.client();
            TaskHandle night = client.handle(client.find("reconcile",
                    "nightly-reconciliation@2030-01-01T01:00:00Z").orElseThrow().taskId());
            assertThat(night.info().status()).isEqualTo(TaskStatus.PROCESSED);

            // tag::operate[]
            SasSchedules schedules = client.schedules();
            for (ScheduleInfo s : schedules.list()) {
                lines.add(s.name() + (s.paused() ? " paused" : " next " + s.nextFireTime()));
            }
            schedules.pause("nightly-reconciliation");
            TaskHandle now = schedules.trigger("nightly-reconciliation"); // once now, paused or not
            schedules.resume("nightly-reconciliation");                   // from now on; no catching up
            // end::operate[]

            Drain.untilIdle(runtime);
            assertThat(lines).containsExactly("nightly-reconciliation next 2030-01-02T01:00:00Z");
            assertThat(now.info().status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(schedules.find("nightly-reconciliation").orElseThrow().paused()).isFalse();
        }
    }

    @Test
    void a_nightly_export_runs_twenty_minutes_late_but_not_an_hour_late() {
        Workflow<String> export = Workflow.builder("export", Codec.string())
                .step("write-files", s -> s.execute(ctx -> "exported " + ctx.input()))
                .build();
        ManualClock clock = new ManualClock(Instant.parse("2030-01-01T02:30:00Z"));
        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:schedules-docs-late;DB_CLOSE_DELAY=-1")
                .build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(export).clock(clock)
                     .trustLocalClock().build()) {
            // tag::missed-after[]
            Schedule nightly = Schedule.named("nightly-export")
                    .cron("0 3 * * *", ZoneId.of("UTC"))
                    .submits(export, "all")
                    .missedAfter(Duration.ofMinutes(30))    // a deploy that took 20 min still runs tonight's export
                    .missedFires(MissedFires.skip())        // one later than that waits for tomorrow
                    .build();
            // end::missed-after[]
            runtime.client().schedules().register(nightly);

            clock.tick(Duration.ofMinutes(50)); // 03:20: 20 min late
            Drain.supervisorOnce(runtime);
            clock.tick(Duration.ofHours(24).plusMinutes(40)); // the next night at 04:00: an hour late
            Drain.supervisorOnce(runtime);
            Drain.untilIdle(runtime);

            SasClient client = runtime.client();
            assertThat(client.find("export", "nightly-export@2030-01-01T03:00:00Z")).as("20 min late: run")
                    .hasValueSatisfying(t -> assertThat(t.status()).isEqualTo(TaskStatus.PROCESSED));
            assertThat(client.find("export", "nightly-export@2030-01-02T03:00:00Z")).as("an hour late: skipped")
                    .isEmpty();
            assertThat(runtime.metrics().scheduleFiresSkipped()).isEqualTo(1);
        }
    }
}
