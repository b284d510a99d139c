package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Rolling deploys: runtimes sharing one store register different workflow versions for a while. A
 * runtime claims only what it has registered, so nothing is parked because it met the wrong node
 * first; a task no live runtime can run is parked after the grace period and runs by itself once a
 * runtime that has its definition starts, while one a live runtime can run is never parked.
 */
class RollingDeployTest {

    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    private final ManualClock clock = new ManualClock(T0);
    private final InMemoryStateStore store = new InMemoryStateStore();

    private static Workflow<String> orders(int version) {
        return Workflow.builder("orders", Codec.string()).version(version)
                .step("reserve", s -> s.execute(ctx -> "reserved-v" + version + "-" + ctx.input()))
                .step("ship", s -> s.execute(ctx -> ctx.output("reserve").orElseThrow() + "-shipped"))
                .build();
    }

    private SasRuntime node(String id, Workflow<?>... workflows) {
        var b = SasRuntime.builder().stateStore(store).clock(clock).instanceId(id);
        for (Workflow<?> w : workflows) {
            b.workflow(w);
        }
        return b.build();
    }

    /**
     * Lets {@code total} pass in 10 s steps (well inside an advertisement's 30 s time-to-live), each
     * step one supervisor pass of every node in order (the first takes the lease) and a drain of
     * each node's scheduler.
     */
    private void pass(Duration total, SasRuntime... nodes) {
        for (Duration d = Duration.ZERO; d.compareTo(total) < 0; d = d.plusSeconds(10)) {
            clock.tick(Duration.ofSeconds(10));
            for (SasRuntime n : nodes) {
                Drain.supervisorOnce(n);
            }
            for (SasRuntime n : nodes) {
                Drain.untilIdle(n);
            }
        }
    }

    private long count(TaskStatus status) {
        return store.countByStatus().getOrDefault(status, 0L);
    }

    @Test
    void an_old_node_without_v2_claims_none_of_its_tasks_and_the_new_node_runs_them_all() {
        Workflow<String> v1 = orders(1);
        Workflow<String> v2 = orders(2);
        SasRuntime oldNode = node("old", v1);
        SasRuntime newNode = node("new", v1, v2);
        List<TaskId> ids = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ids.add(newNode.client().submit(v2, "v2-" + i, "o" + i).id());
        }

        assertThat(Drain.untilIdle(oldNode)).as("tasks the old node claimed").isZero();
        assertThat(count(TaskStatus.PENDING)).isEqualTo(20);
        assertThat(count(TaskStatus.ERROR)).isZero();
        for (TaskId id : ids) {
            assertThat(store.events(id)).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.RECEIVED);
        }

        assertThat(Drain.untilIdle(newNode)).isEqualTo(20);
        assertThat(count(TaskStatus.PROCESSED)).isEqualTo(20);
        assertThat(store.find(ids.get(3)).orElseThrow().step("ship").output()).isEqualTo("reserved-v2-o3-shipped");
    }

    @Test
    void a_rolling_deploy_of_fifty_tasks_over_mixed_versions_parks_none() {
        Workflow<String> v1 = orders(1);
        Workflow<String> v2 = orders(2);
        // three nodes on v1; one at a time is replaced by a node with v1 and v2, which at once
        // submits v2 tasks while the v1 nodes still submit and claim v1 tasks
        List<SasRuntime> nodes = new ArrayList<>(List.of(node("a-v1", v1), node("b-v1", v1), node("c-v1", v1)));
        int submitted = 0;
        for (int replaced = 0; replaced < 3; replaced++) {
            nodes.set(replaced, node((char) ('a' + replaced) + "-v2", v1, v2));
            for (int i = 0; i < 50 / 3 + 1 && submitted < 50; i++, submitted++) {
                SasRuntime submitter = nodes.get(submitted % 3);
                boolean hasV2 = submitter.instanceId().endsWith("-v2");
                submitter.client().submit(hasV2 ? v2 : v1, "t-" + submitted, "o" + submitted);
            }
            // the not yet upgraded nodes drain first: they take only what they can run
            for (int n = 2; n >= 0; n--) {
                Drain.untilIdle(nodes.get(n));
                assertThat(count(TaskStatus.ERROR)).as("parked after node %s drained", nodes.get(n)).isZero();
            }
            clock.tick(Duration.ofSeconds(10));
        }

        assertThat(submitted).isEqualTo(50);
        Map<TaskStatus, Long> counts = store.countByStatus();
        assertThat(counts.getOrDefault(TaskStatus.PROCESSED, 0L)).isEqualTo(50);
        assertThat(counts.getOrDefault(TaskStatus.ERROR, 0L)).isZero();
    }

    @Test
    void a_task_no_live_runtime_can_run_is_parked_after_the_grace_period_and_runs_by_itself_once_its_definition_returns() {
        Workflow<String> v1 = orders(1);
        Workflow<String> v2 = orders(2);
        // the only v2 node submits and goes away before it runs anything (a rolled-back deploy)
        TaskId id = node("new", v1, v2).client().submit(v2, "orphan", "o").id();
        SasRuntime oldNode = node("old", v1);
        List<TaskEvent> heard = new ArrayList<>();
        SasRuntime listening = SasRuntime.builder().stateStore(store).clock(clock).instanceId("listening")
                .workflow(v1).onEvent(heard::add).build();
        Drain.supervisorOnce(listening); // the active supervisor from here on

        pass(Duration.ofMinutes(4), listening, oldNode);
        assertThat(store.find(id).orElseThrow().status()).as("within the grace period").isEqualTo(TaskStatus.PENDING);
        pass(Duration.ofMinutes(26), listening, oldNode);

        TaskInfo parked = store.find(id).orElseThrow();
        assertThat(parked.status()).isEqualTo(TaskStatus.PARKED);
        assertThat(parked.lastError()).contains("no live runtime has registered workflow 'orders' version 2 for PT5M",
                "due since " + T0, "runs by itself");
        assertThat(store.events(id)).extracting(TaskEvent::type)
                .containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.PARKED);
        assertThat(heard).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.PARKED);
        assertThat(oldNode.client().countByStatus()).containsEntry(TaskStatus.PARKED, 1L);
        assertThat(oldNode.client().list(TaskQuery.all().withStatus(TaskStatus.PARKED))).extracting(TaskInfo::taskId)
                .containsExactly(id);

        SasRuntime redeployed = node("new-again", v1, v2);
        Drain.supervisorOnce(redeployed); // advertises v2; 'listening' stays the active supervisor
        assertThat(Drain.untilIdle(redeployed)).as("still parked until the supervisor's next check").isZero();
        // the supervisor checks once a minute; the runtime must not need to drain for it
        for (int i = 0; i < 6; i++) {
            clock.tick(Duration.ofSeconds(10));
            Drain.supervisorOnce(listening);
            Drain.supervisorOnce(redeployed);
        }
        assertThat(heard).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.PARKED, TaskEvent.Type.UNPARKED);
        assertThat(store.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);

        assertThat(Drain.untilIdle(redeployed)).isEqualTo(1);
        assertThat(store.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(store.events(id)).extracting(TaskEvent::type).doesNotContain(TaskEvent.Type.ERROR)
                .containsSubsequence(TaskEvent.Type.PARKED, TaskEvent.Type.UNPARKED, TaskEvent.Type.PROCESSED);
    }

    @Test
    void a_task_a_live_peer_can_run_is_never_parked_however_long_it_waits() {
        Workflow<String> v1 = orders(1);
        Workflow<String> v2 = orders(2);
        SasRuntime oldNode = node("old", v1);
        SasRuntime busyNewNode = node("new", v1, v2); // alive, advertising v2, but never gets to claim
        TaskId id = busyNewNode.client().submit(v2, "waits", "o").id();

        for (int step = 0; step < 180; step++) { // 30 minutes
            clock.tick(Duration.ofSeconds(10));
            Drain.supervisorOnce(oldNode);
            Drain.supervisorOnce(busyNewNode);
            Drain.untilIdle(oldNode);
        }

        assertThat(store.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
        assertThat(store.events(id)).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.RECEIVED);
        assertThat(Drain.untilIdle(busyNewNode)).isEqualTo(1);
    }

    @Test
    void a_started_runtime_with_its_supervisor_disabled_still_advertises_what_it_runs_and_withdraws_it_at_close() {
        Workflow<String> v2 = orders(2);
        SasRuntime workerOnly = SasRuntime.builder().stateStore(store).clock(clock).instanceId("worker-only")
                .workflow(v2).supervisorEnabled(false).supervisorInterval(Duration.ofMillis(50)).build();
        try {
            workerOnly.start();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> store.deployments().orElseThrow().runnableByLiveNodes(clock.instant())
                            .contains(new WorkflowVersion("orders", 2)));
        } finally {
            workerOnly.close();
        }
        assertThat(store.deployments().orElseThrow().runnableByLiveNodes(clock.instant())).isEmpty();
    }
}
