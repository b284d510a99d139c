package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.StatusChannel;
import dev.sas.core.StatusConsumer;
import dev.sas.core.StatusUpdate;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.StoreSignals;
import dev.sas.core.spi.StoreSignals.Topic;
import dev.sas.core.spi.WorkflowVersion;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL's wake-up hints between nodes: two stores on one database stand for two nodes. A hint
 * comes with the commit of the transaction it is about, never from one that rolled back, and the
 * listener comes back after its connection is killed, telling its subscribers to look again.
 */
class PostgresSignalsTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private String url;
    private String prefix;
    private JdbcStateStore nodeA;
    private JdbcStateStore nodeB;

    @BeforeEach
    void twoNodes() {
        url = TestDb.POSTGRES.url();
        prefix = SchemaPool.take(TestDb.POSTGRES, url);
        nodeA = TestDb.builder(url, prefix).poolName("signals-a-" + prefix).build();
        nodeB = TestDb.builder(url, prefix).poolName("signals-b-" + prefix).build();
    }

    @AfterEach
    void drop() {
        if (nodeA == null) {
            return; // skipped: no PostgreSQL URL
        }
        nodeA.close();
        nodeB.close();
        SchemaPool.give(TestDb.POSTGRES, url, prefix);
    }

    /** Subscribes on node B and waits until its listening connection is up. */
    private List<String> listen(Topic topic) {
        List<String> heard = new CopyOnWriteArrayList<>();
        StoreSignals signals = nodeB.signals().orElseThrow();
        signals.subscribe(topic, p -> heard.add(p == null ? "<look again>" : p));
        await().atMost(WAIT).until(signals::connected);
        return heard;
    }

    private static NewTask task(String key, String statusChannel, Instant due) {
        return new NewTask(TaskId.random(), "wf", 1, key, 0, "in", statusChannel, "s0", Duration.ofSeconds(30), due, due);
    }

    private static TaskEvent received(NewTask t) {
        return new TaskEvent(t.taskId(), t.businessKey(), "wf", TaskEvent.Type.RECEIVED, -1, null, 0, t.createdAt(), null);
    }

    @Test
    void a_submit_on_one_node_wakes_the_other_with_its_commit_and_a_rolled_back_one_never_does() throws Exception {
        List<String> heard = listen(Topic.TASKS_DUE);
        heard.clear();
        try (Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            NewTask rolledBack = task("k1", null, Instant.now());
            nodeA.submit(rolledBack, received(rolledBack), c);
            c.rollback();
            NewTask committed = task("k2", null, Instant.now());
            nodeA.submit(committed, received(committed), c);
            assertThat(heard).as("not before the commit").isEmpty();
            c.commit();
        }

        await().atMost(WAIT).until(() -> !heard.isEmpty());
        // hints arrive in commit order, so the one of the committed submit came alone
        assertThat(heard).containsExactly("");
    }

    @Test
    void a_task_released_for_a_retry_wakes_other_nodes_with_its_due_time() {
        NewTask t = task("k1", null, Instant.now());
        nodeA.submit(t, received(t), null);
        ClaimedTask c = nodeA.claim("node-a", 1, Instant.now(), Set.of(new WorkflowVersion("wf", 1))).get(0);
        List<String> heard = listen(Topic.TASKS_DUE);
        heard.clear();
        Instant retryAt = Instant.now().plusSeconds(5);

        assertThat(nodeA.write(List.of(Tasks.retry(c, retryAt)), Instant.now())).allMatch(o -> o.isApplied());

        await().atMost(WAIT).until(() -> heard.contains(Long.toString(retryAt.toEpochMilli())));
    }

    @Test
    void the_end_of_a_task_a_node_watches_is_signalled_to_it_and_others_end_quietly() {
        List<String> heard = listen(Topic.TASK_FINISHED);
        NewTask quiet = task("quiet", null, Instant.now());
        NewTask watched = task("watched", null, Instant.now());
        nodeA.submit(quiet, received(quiet), null);
        nodeA.submit(watched, received(watched), null);
        nodeB.signals().orElseThrow().watch(watched.taskId());

        for (ClaimedTask c : nodeA.claim("node-a", 2, Instant.now(), Set.of(new WorkflowVersion("wf", 1)))) {
            assertThat(nodeA.write(List.of(Tasks.finish(c, Instant.now())), Instant.now())).allMatch(o -> o.isApplied());
        }

        await().atMost(WAIT).until(() -> heard.contains(watched.taskId().value()));
        assertThat(heard).doesNotContain(quiet.taskId().value());
    }

    @Test
    void new_reply_messages_signal_their_channel() {
        List<String> heard = listen(Topic.STATUS_UPDATES);
        NewTask t = task("k1", "web-replies", Instant.now());

        nodeA.submit(t, received(t), null);

        await().atMost(WAIT).until(() -> heard.contains("web-replies"));
    }

    @Test
    void the_listener_reconnects_after_its_connection_is_killed_and_tells_subscribers_to_look_again() throws Exception {
        List<String> heard = listen(Topic.TASKS_DUE);
        heard.clear();

        assertThat(TestDb.killPostgresConnections(url, "signals-b-" + prefix)).isPositive();

        await().atMost(WAIT).until(() -> heard.contains("<look again>"));
        heard.clear();
        NewTask t = task("after", null, Instant.now());
        nodeA.submit(t, received(t), null);
        await().atMost(WAIT).until(() -> heard.contains(""));
    }

    /**
     * Two nodes at work: a client-only node submits with a status channel it consumes, a worker node
     * runs the task; the worker is woken by the submit's hint, the client's handle by the hint of the
     * task's end, and the client's channel by the hints of its messages.
     */
    @Test
    void a_client_node_hears_a_task_another_node_ran_and_its_handle_returns_its_result() {
        Workflow<String> wf = Workflow.builder("greet", Codec.string())
                .step("hello", s -> s.execute(ctx -> "hello " + ctx.input())).build();
        List<StatusUpdate> heard = new CopyOnWriteArrayList<>();
        try (StatusConsumer replies = StatusConsumer.builder().stateStore(nodeA).consumerId("web")
                .channel(StatusChannel.of("web-replies", heard::addAll)).build().start();
             SasRuntime worker = SasRuntime.builder().stateStore(nodeB).workflow(wf)
                     .pollInterval(Duration.ofSeconds(30)).build().start()) {
            SasClient client = SasClient.builder().stateStore(nodeA).build();
            TaskHandle handle = client.submit(wf, "g-1", "ann", SubmitOptions.builder().statusChannel("web-replies").build());

            assertThat(handle.await(WAIT).status()).isEqualTo(TaskStatus.PROCESSED);
            await().atMost(WAIT).until(() -> heard.stream().anyMatch(StatusUpdate::isTerminal));
            assertThat(heard).extracting(StatusUpdate::event).containsExactlyElementsOf(client.events(handle.id()));
            assertThat(worker.metrics().claimed()).isEqualTo(1);
        }
    }

    /**
     * A store sends at most one submit hint per 2 ms; submits close behind one that sent it are
     * found by the follow-up looks of the woken node. With a 60 s poll, only hints and follow-ups can
     * start these tasks within the wait.
     */
    @Test
    void submits_close_together_share_a_hint_and_every_one_still_starts_on_the_other_node() {
        Workflow<String> wf = Workflow.builder("burst", Codec.string())
                .step("noop", s -> s.execute(ctx -> null)).build();
        List<String> heard = listen(Topic.TASKS_DUE);
        try (SasRuntime worker = SasRuntime.builder().stateStore(nodeB).workflow(wf)
                .pollInterval(Duration.ofSeconds(60)).build().start()) {
            SasClient client = SasClient.builder().stateStore(nodeA).build();
            heard.clear();
            List<TaskHandle> handles = new java.util.ArrayList<>();
            for (int i = 0; i < 30; i++) {
                handles.add(client.submit(wf, "b-" + i, "x"));
            }

            await().atMost(WAIT).until(() -> worker.metrics().claimed() == 30);
            for (TaskHandle h : handles) {
                assertThat(h.await(WAIT).status()).isEqualTo(TaskStatus.PROCESSED);
            }
            assertThat(heard).as("hints of the submits").isNotEmpty().hasSizeLessThanOrEqualTo(30);
        }
    }
}
