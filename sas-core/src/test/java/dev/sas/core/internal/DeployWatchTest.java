package dev.sas.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.spi.DueBacklog;
import dev.sas.core.spi.RecordedEvent;
import dev.sas.core.spi.DeploymentStore;
import dev.sas.core.spi.WorkflowVersion;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DeployWatchTest {
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private static final WorkflowVersion V1 = new WorkflowVersion("orders", 1);
    private static final WorkflowVersion V2 = new WorkflowVersion("orders", 2);
    private static final int BATCH = 10;

    /** Only what the watch calls; anything else fails the test. */
    private final Set<WorkflowVersion> live = new HashSet<>();
    private final List<DueBacklog> backlog = new ArrayList<>();
    private final List<String> calls = new ArrayList<>();
    /** How many tasks each park call finds to park (the store parks at most the limit). */
    private int parkable = 3;
    private int parkedVersionTasks = 0;
    private final List<Object[]> parkCalls = new ArrayList<>();
    private final DeploymentStore store = (DeploymentStore) Proxy.newProxyInstance(
            DeploymentStore.class.getClassLoader(), new Class<?>[] {DeploymentStore.class}, (proxy, method, args) -> {
                calls.add(method.getName());
                switch (method.getName()) {
                    case "advertise":
                        return null;
                    case "runnableByLiveNodes":
                        return Set.copyOf(live);
                    case "dueBacklog":
                        Instant cutoff = (Instant) args[0];
                        return backlog.stream().filter(b -> !b.dueSince().isAfter(cutoff)).toList();
                    case "park":
                        parkCalls.add(args);
                        int n = Math.min(parkable, (int) args[4]);
                        parkable -= n;
                        parkedVersionTasks += n;
                        return events(n, TaskEvent.Type.PARKED);
                    case "unpark":
                        @SuppressWarnings("unchecked") Set<WorkflowVersion> versions = (Set<WorkflowVersion>) args[0];
                        int m = versions.contains(V2) ? Math.min(parkedVersionTasks, (int) args[3]) : 0;
                        parkedVersionTasks -= m;
                        return events(m, TaskEvent.Type.UNPARKED);
                    default:
                        throw new AssertionError("unexpected call " + method.getName());
                }
            });

    private final DeployWatch watch = new DeployWatch(store, "node-1", Set.of(V1), Duration.ofSeconds(3),
            Duration.ofMinutes(5), BATCH);

    private static List<RecordedEvent> events(int n, TaskEvent.Type type) {
        List<RecordedEvent> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new RecordedEvent(new TaskEvent(TaskId.random(), "k" + i, "orders", type, 0, "reserve", 0, T0,
                    "m"), null));
        }
        return out;
    }

    @Test
    void tasks_due_past_the_grace_period_that_no_live_runtime_advertises_are_parked_with_a_reason_naming_the_version() {
        live.add(V1);
        backlog.add(new DueBacklog(V1, 7, T0));
        backlog.add(new DueBacklog(V2, 3, T0));
        watch.advertise(T0);

        DeployWatch.Check check = watch.checkIfDue(T0.plus(Duration.ofMinutes(6)));

        assertThat(check.unrunnable()).extracting(DueBacklog::workflowVersion).containsExactly(V2);
        assertThat(check.parked()).hasSize(3);
        assertThat(parkCalls).hasSize(1);
        Object[] call = parkCalls.get(0);
        assertThat(call[0]).isEqualTo(V2);
        assertThat(call[1]).as("only tasks due longer than the grace period").isEqualTo(T0.plus(Duration.ofMinutes(1)));
        assertThat((String) call[3]).contains("workflow 'orders' version 2", "PT5M", "due since " + T0,
                "runs by itself");
    }

    @Test
    void nothing_is_parked_within_the_grace_period_or_while_a_live_runtime_can_run_the_tasks() {
        backlog.add(new DueBacklog(V2, 3, T0));
        watch.advertise(T0);
        assertThat(watch.checkIfDue(T0.plus(Duration.ofMinutes(4))).unrunnable()).isEmpty();

        live.add(V2);
        assertThat(watch.checkIfDue(T0.plus(Duration.ofMinutes(10))).unrunnable()).isEmpty();
        assertThat(parkCalls).isEmpty();
    }

    @Test
    void no_verdict_before_peers_had_one_advertisement_time_to_live_to_advertise() {
        backlog.add(new DueBacklog(V2, 3, T0.minus(Duration.ofHours(1))));
        assertThat(watch.checkIfDue(T0)).as("before this runtime advertised").isEqualTo(DeployWatch.Check.NONE);
        watch.advertise(T0);
        assertThat(watch.checkIfDue(T0.plusSeconds(10)).unrunnable()).isEmpty();
        assertThat(parkCalls).isEmpty();
        assertThat(watch.checkIfDue(T0.plusSeconds(31)).unrunnable()).hasSize(1);
        assertThat(parkCalls).hasSize(1);
    }

    @Test
    void the_check_runs_at_most_once_a_minute_and_the_advertisement_is_renewed_at_half_its_time_to_live() {
        watch.advertise(T0);
        watch.advertise(T0.plusSeconds(5));
        watch.advertise(T0.plusSeconds(15));
        assertThat(calls).containsExactly("advertise", "advertise");

        calls.clear();
        watch.checkIfDue(T0.plusSeconds(40));
        watch.checkIfDue(T0.plusSeconds(70));
        watch.checkIfDue(T0.plusSeconds(101));
        assertThat(calls).filteredOn("dueBacklog"::equals).hasSize(2);
    }

    @Test
    void a_large_backlog_is_parked_one_batch_per_pass_and_the_next_pass_goes_on_at_once() {
        backlog.add(new DueBacklog(V2, 25, T0));
        parkable = 25;
        watch.advertise(T0);
        Instant t = T0.plus(Duration.ofMinutes(6));

        assertThat(watch.checkIfDue(t).parked()).hasSize(BATCH);
        assertThat(watch.checkIfDue(t.plusSeconds(1)).parked()).as("next pass, not a minute later").hasSize(BATCH);
        assertThat(watch.checkIfDue(t.plusSeconds(2)).parked()).hasSize(5);
        assertThat(watch.checkIfDue(t.plusSeconds(3)).parked()).as("done: back to once a minute").isEmpty();
        assertThat(parkCalls).hasSize(3);
    }

    @Test
    void parked_tasks_are_unparked_once_a_live_runtime_advertises_their_version_even_before_a_verdict_is_allowed() {
        backlog.add(new DueBacklog(V2, 3, T0));
        watch.advertise(T0);
        Instant t = T0.plus(Duration.ofMinutes(6));
        assertThat(watch.checkIfDue(t).parked()).hasSize(3);
        backlog.clear();

        live.add(V2);
        DeployWatch.Check check = watch.checkIfDue(t.plus(Duration.ofMinutes(1)));
        assertThat(check.unparked()).hasSize(3);
        assertThat(check.unparked()).extracting(e -> e.event().type()).containsOnly(TaskEvent.Type.UNPARKED);

        // a supervisor that just took over unparks at once; only parking waits for peers to advertise
        DeployWatch fresh = new DeployWatch(store, "node-2", Set.of(V1), Duration.ofSeconds(3), Duration.ofMinutes(5),
                BATCH);
        parkedVersionTasks = 2;
        fresh.advertise(t);
        assertThat(fresh.checkIfDue(t.plusSeconds(1)).unparked()).hasSize(2);
    }
}
