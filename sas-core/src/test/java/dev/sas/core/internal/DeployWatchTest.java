package dev.sas.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.spi.DueBacklog;
import dev.sas.core.spi.StateStore;
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

    /** Only what the watch calls; anything else fails the test. */
    private final Set<WorkflowVersion> live = new HashSet<>();
    private final List<DueBacklog> backlog = new ArrayList<>();
    private final List<String> calls = new ArrayList<>();
    private final StateStore store = (StateStore) Proxy.newProxyInstance(StateStore.class.getClassLoader(),
            new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                calls.add(method.getName());
                switch (method.getName()) {
                    case "advertise":
                        return null;
                    case "runnableByLiveNodes":
                        return Set.copyOf(live);
                    case "dueBacklog":
                        Instant cutoff = (Instant) args[0];
                        return backlog.stream().filter(b -> !b.dueSince().isAfter(cutoff)).toList();
                    default:
                        throw new AssertionError("unexpected call " + method.getName());
                }
            });

    private final DeployWatch watch = new DeployWatch(store, "node-1", Set.of(V1), Duration.ofSeconds(3),
            Duration.ofMinutes(5));

    @Test
    void tasks_due_past_the_grace_period_that_no_live_runtime_advertises_are_reported() {
        live.add(V1);
        backlog.add(new DueBacklog(V1, 7, T0));
        backlog.add(new DueBacklog(V2, 3, T0));
        watch.advertise(T0);

        assertThat(watch.checkIfDue(T0.plus(Duration.ofMinutes(6)))).extracting(DueBacklog::workflowVersion)
                .containsExactly(V2);
    }

    @Test
    void nothing_is_reported_within_the_grace_period_or_while_a_live_runtime_can_run_the_tasks() {
        backlog.add(new DueBacklog(V2, 3, T0));
        watch.advertise(T0);
        assertThat(watch.checkIfDue(T0.plus(Duration.ofMinutes(4)))).isEmpty();

        live.add(V2);
        assertThat(watch.checkIfDue(T0.plus(Duration.ofMinutes(10)))).isEmpty();
    }

    @Test
    void no_verdict_before_peers_had_one_advertisement_time_to_live_to_advertise() {
        backlog.add(new DueBacklog(V2, 3, T0.minus(Duration.ofHours(1))));
        assertThat(watch.checkIfDue(T0)).as("before this runtime advertised").isEmpty();
        watch.advertise(T0);
        assertThat(watch.checkIfDue(T0.plusSeconds(10))).isEmpty();
        assertThat(watch.checkIfDue(T0.plusSeconds(31))).hasSize(1);
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
        assertThat(calls).containsExactly("dueBacklog", "dueBacklog");
    }
}
