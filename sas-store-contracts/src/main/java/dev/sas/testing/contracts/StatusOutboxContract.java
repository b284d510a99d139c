package dev.sas.testing.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sas.core.StatusUpdate;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.ExpiredTask;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.StatusOutbox;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.SubmitResult;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WorkflowVersion;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The behaviour of every store's status outbox ({@link StatusOutbox}): every event of a task
 * with a status channel, whatever wrote it (submit, claim, a scheduler's or supervisor's transition,
 * parking, an operator), is pending on that channel in the order of the task's events until it is
 * acknowledged; nothing of a rolled-back transaction; none skipped when transactions commit out of
 * order; one consumer at a time. Subclass it like {@link StateStoreContract}; the in-memory store and
 * every JDBC database run it.
 */
public abstract class StatusOutboxContract extends StoreTestSupport {

    /** A fixed starting instant for every test. */
    protected static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private static final Set<WorkflowVersion> WF_V1 = Set.of(new WorkflowVersion("wf", 1));
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Duration LEASE = Duration.ofSeconds(10);
    private static final String CHANNEL = "replies";

    /**
     * Begins a host transaction the store can join, or returns null (the default) if it joins none:
     * the rolled-back submission test is then skipped.
     */
    protected StateStoreContract.HostTransaction beginHostTransaction() throws Exception {
        return null;
    }

    private StatusOutbox outbox() {
        return store.statusOutbox().orElseThrow(() -> new AssertionError(store + " keeps no status outbox"));
    }

    private TaskId submit(String key, String statusChannel) {
        return submit(key, statusChannel, null);
    }

    private TaskId submit(String key, String statusChannel, Object transaction) {
        TaskId id = TaskId.random();
        NewTask task = new NewTask(id, "wf", 1, key, 0, "input-" + key, statusChannel, "s0", TIMEOUT, T0, T0);
        SubmitResult r = store.submit(task, new TaskEvent(id, key, "wf", TaskEvent.Type.RECEIVED, -1, null, 0, T0,
                null), transaction);
        assertThat(r.created()).isTrue();
        return id;
    }

    private ClaimedTask claimOne(Instant now) {
        List<ClaimedTask> claimed = store.claim("node-a", 1, now, WF_V1);
        assertThat(claimed).hasSize(1);
        return claimed.get(0);
    }

    private static TaskEvent event(ClaimedTask c, TaskEvent.Type type, int step, Instant at) {
        return new TaskEvent(c.taskId(), c.businessKey(), c.workflow(), type, step, step < 0 ? null : "s" + step,
                c.attempt(), at, null);
    }

    private static Transition next(ClaimedTask c, Instant now) {
        return Transition.holder(c).unlessCancelRequested().at(1, "s1", TIMEOUT).attempt(1).failureCount(0)
                .recording(StepUpdate.completed(0, "s0", 1, "out", now, now))
                .events(event(c, TaskEvent.Type.STEP_COMPLETED, 0, now), event(c, TaskEvent.Type.STEP_STARTED, 1, now))
                .keepHolding(TaskStatus.PROCESSING);
    }

    private static Transition finish(ClaimedTask c, Instant now) {
        return Transition.holder(c.taskId(), c.lease(), TaskStatus.PROCESSING, 1).statusChannel(c.statusChannel())
                .at(1, "s1", TIMEOUT).attempt(1).recording(StepUpdate.completed(1, "s1", 1, "done", now, now))
                .events(event(c, TaskEvent.Type.STEP_COMPLETED, 1, now), event(c, TaskEvent.Type.PROCESSED, -1, now))
                .end(TaskStatus.PROCESSED);
    }

    private List<StatusUpdate> pending(String channel) {
        return outbox().pending(channel, 1_000);
    }

    private static List<TaskEvent> eventsOf(List<StatusUpdate> messages, TaskId id) {
        return messages.stream().filter(m -> m.taskId().equals(id)).map(StatusUpdate::event).toList();
    }

    private static List<Long> ids(List<StatusUpdate> messages) {
        return messages.stream().map(StatusUpdate::deliveryId).toList();
    }

    @Test
    void every_event_of_a_task_with_a_status_channel_is_pending_on_it_in_the_order_of_its_events() {
        TaskId id = submit("k1", CHANNEL);
        ClaimedTask c = claimOne(T0);
        Instant t1 = T0.plusSeconds(1);
        assertThat(store.write(List.of(next(c, t1)), t1)).allMatch(o -> o.isApplied());
        Instant t2 = T0.plusSeconds(2);
        assertThat(store.write(List.of(finish(c, t2)), t2)).allMatch(o -> o.isApplied());

        List<StatusUpdate> pending = pending(CHANNEL);
        assertThat(pending).extracting(StatusUpdate::event).containsExactlyElementsOf(store.events(id));
        assertThat(pending).extracting(StatusUpdate::status).containsExactly(TaskEvent.Type.RECEIVED,
                TaskEvent.Type.STEP_STARTED, TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.STEP_STARTED,
                TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.PROCESSED);
        assertThat(pending).allMatch(m -> m.channel().equals(CHANNEL));
        assertThat(ids(pending)).isSorted().doesNotHaveDuplicates();
        assertThat(pending.get(pending.size() - 1).isTerminal()).isTrue();
    }

    @Test
    void a_task_without_a_status_channel_writes_no_message_and_channels_are_kept_apart() {
        TaskId none = submit("none", null);
        TaskId mine = submit("mine", CHANNEL);
        TaskId other = submit("other", "other-replies");

        assertThat(pending(CHANNEL)).extracting(StatusUpdate::taskId).containsExactly(mine);
        assertThat(pending("other-replies")).extracting(StatusUpdate::taskId).containsExactly(other);
        assertThat(pending(CHANNEL)).noneMatch(m -> m.taskId().equals(none));
        assertThat(outbox().pending("nobody", 10)).isEmpty();
    }

    @Test
    void pending_returns_the_oldest_messages_up_to_the_limit() {
        List<TaskId> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(submit("k" + i, CHANNEL));
        }
        assertThat(outbox().pending(CHANNEL, 3)).extracting(StatusUpdate::taskId).containsExactlyElementsOf(
                ids.subList(0, 3));
    }

    @Test
    void acknowledged_messages_are_never_pending_again_and_the_others_stay_in_order() {
        for (int i = 0; i < 5; i++) {
            submit("k" + i, CHANNEL);
        }
        outbox().tryAcquire(CHANNEL, "consumer-1", T0, LEASE);
        List<StatusUpdate> all = pending(CHANNEL);
        List<Long> acked = List.of(all.get(1).deliveryId(), all.get(3).deliveryId());

        assertThat(outbox().acknowledge(CHANNEL, "consumer-1", acked, T0)).isTrue();

        assertThat(ids(pending(CHANNEL))).containsExactly(all.get(0).deliveryId(), all.get(2).deliveryId(),
                all.get(4).deliveryId());
        // acknowledging again (a consumer repeating itself after a lost answer) changes nothing
        assertThat(outbox().acknowledge(CHANNEL, "consumer-1", acked, T0)).isTrue();
        assertThat(pending(CHANNEL)).hasSize(3);
    }

    @Test
    void one_consumer_holds_a_channel_until_it_releases_it_or_its_lease_expires() {
        StatusOutbox o = outbox();
        assertThat(o.tryAcquire(CHANNEL, "a", T0, LEASE)).isTrue();
        assertThat(o.tryAcquire(CHANNEL, "b", T0.plusSeconds(5), LEASE)).isFalse();
        assertThat(o.tryAcquire(CHANNEL, "a", T0.plusSeconds(5), LEASE)).as("the holder renews").isTrue();
        assertThat(o.tryAcquire(CHANNEL, "b", T0.plusSeconds(14), LEASE)).as("renewed until 15 s").isFalse();
        assertThat(o.tryAcquire(CHANNEL, "b", T0.plusSeconds(16), LEASE)).as("expired").isTrue();
        assertThat(o.tryAcquire(CHANNEL, "a", T0.plusSeconds(17), LEASE)).isFalse();

        o.release(CHANNEL, "a");
        assertThat(o.tryAcquire(CHANNEL, "c", T0.plusSeconds(17), LEASE)).as("a did not hold it").isFalse();
        o.release(CHANNEL, "b");
        assertThat(o.tryAcquire(CHANNEL, "c", T0.plusSeconds(17), LEASE)).as("released").isTrue();
    }

    @Test
    void a_consumer_that_lost_its_lease_learns_it_when_it_acknowledges_and_its_messages_are_still_forgotten() {
        submit("k", CHANNEL);
        StatusOutbox o = outbox();
        assertThat(o.tryAcquire(CHANNEL, "a", T0, LEASE)).isTrue();
        List<StatusUpdate> batch = pending(CHANNEL);
        assertThat(o.tryAcquire(CHANNEL, "b", T0.plusSeconds(11), LEASE)).isTrue();

        assertThat(o.acknowledge(CHANNEL, "a", ids(batch), T0.plusSeconds(12))).isFalse();
        assertThat(pending(CHANNEL)).as("delivered at least once: not again").isEmpty();
    }

    @Test
    void registered_channels_are_listed_and_registering_again_or_at_once_from_many_nodes_is_harmless()
            throws Exception {
        StatusOutbox o = outbox();
        assertThat(o.channels()).doesNotContain(CHANNEL);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                done.add(pool.submit(() -> o.register(CHANNEL, T0)));
            }
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        o.register("other-replies", T0);
        assertThat(o.channels()).contains(CHANNEL, "other-replies");
        assertThat(o.tryAcquire("taken-first", "a", T0, LEASE)).as("taking a channel registers it").isTrue();
        assertThat(o.channels()).contains("taken-first");
    }

    @Test
    void a_submission_rolled_back_with_the_host_transaction_leaves_no_message() throws Exception {
        StateStoreContract.HostTransaction tx = beginHostTransaction();
        assumeTrue(tx != null, "this store joins no host transaction");
        TaskId committed;
        try (tx) {
            submit("rolled-back", CHANNEL, tx.transaction());
            tx.rollback();
            committed = submit("committed", CHANNEL, tx.transaction());
            tx.commit();
        }
        assertThat(pending(CHANNEL)).extracting(StatusUpdate::taskId).containsExactly(committed);
    }

    @Test
    void recoveries_parking_cancels_and_resubmits_reach_the_channel_too() {
        TaskId id = submit("k", CHANNEL);
        claimOne(T0);
        Instant later = T0.plus(TIMEOUT).plusSeconds(1);
        ExpiredTask e = store.findExpired(later, 10).get(0);
        assertThat(e.statusChannel()).isEqualTo(CHANNEL);
        Transition failed = Transition.expired(e).at(0, "s0", TIMEOUT).attempt(1).failureCount(1).lastError("late")
                .recording(StepUpdate.failed(0, "s0", 1, "late", null, later))
                .events(new TaskEvent(id, "k", "wf", TaskEvent.Type.STEP_TIMED_OUT, 0, "s0", 1, later, "late"),
                        new TaskEvent(id, "k", "wf", TaskEvent.Type.ERROR, -1, null, 1, later, "late"))
                .end(TaskStatus.ERROR);
        assertThat(store.write(List.of(failed), later)).allMatch(o -> o.isApplied());
        Instant t2 = later.plusSeconds(1);
        assertThat(store.resubmit(id, t2, new TaskEvent(id, "k", "wf", TaskEvent.Type.RESUBMITTED, 0, "s0", 0, t2,
                null))).isTrue();
        Instant t3 = t2.plusSeconds(1);
        WorkflowVersion v1 = new WorkflowVersion("wf", 1);
        assertThat(store.deployments().orElseThrow().park(v1, t3, t3, "no runtime", 10)).hasSize(1);
        assertThat(store.requestCancel(id, t3, new TaskEvent(id, "k", "wf", TaskEvent.Type.CANCEL_REQUESTED, 0,
                "s0", 0, t3, null))).isTrue();
        assertThat(store.deployments().orElseThrow().unpark(Set.of(v1), t3, "runtime back", 10)).hasSize(1);

        List<TaskEvent> delivered = eventsOf(pending(CHANNEL), id);
        assertThat(delivered).containsExactlyElementsOf(store.events(id));
        assertThat(delivered).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.RECEIVED,
                TaskEvent.Type.STEP_STARTED, TaskEvent.Type.STEP_TIMED_OUT, TaskEvent.Type.ERROR,
                TaskEvent.Type.RESUBMITTED, TaskEvent.Type.PARKED, TaskEvent.Type.CANCEL_REQUESTED,
                TaskEvent.Type.UNPARKED);
        assertThat(store.find(id).orElseThrow().steps()).extracting(s -> s.status()).contains(StepStatus.FAILED);
    }

    /**
     * Many writers commit tasks' transitions while a consumer drains the channel: transactions commit
     * out of the order of their delivery ids, and still every message is delivered, exactly once here
     * (one consumer acknowledging), and each task's in order.
     */
    @Test
    void messages_committed_out_of_order_by_concurrent_writers_are_all_delivered_each_task_in_order()
            throws Exception {
        int writers = 4;
        int tasksPerWriter = 15;
        StatusOutbox o = outbox();
        assertThat(o.tryAcquire(CHANNEL, "consumer", T0, Duration.ofHours(1))).isTrue();
        Map<TaskId, List<Long>> seen = new ConcurrentHashMap<>();
        Map<TaskId, List<TaskEvent.Type>> types = new ConcurrentHashMap<>();
        AtomicBoolean writing = new AtomicBoolean(true);
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        Set<TaskId> submitted = ConcurrentHashMap.newKeySet();
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < tasksPerWriter; i++) {
                        TaskId id = submit("w" + writer + "-" + i, CHANNEL);
                        submitted.add(id);
                        List<ClaimedTask> mine = store.claim("node-" + writer, 1, T0, WF_V1);
                        for (ClaimedTask c : mine) {
                            Instant now = T0.plusSeconds(1);
                            store.write(List.of(next(c, now)), now);
                            store.write(List.of(finish(c, now)), now);
                        }
                    }
                    return null;
                }));
            }
            Future<?> consumer = Executors.newSingleThreadExecutor().submit(() -> {
                while (true) {
                    boolean last = !writing.get();
                    List<StatusUpdate> batch = o.pending(CHANNEL, 7);
                    for (StatusUpdate m : batch) {
                        seen.computeIfAbsent(m.taskId(), k -> new ArrayList<>()).add(m.deliveryId());
                        types.computeIfAbsent(m.taskId(), k -> new ArrayList<>()).add(m.status());
                    }
                    if (!batch.isEmpty()) {
                        o.acknowledge(CHANNEL, "consumer", ids(batch), T0);
                    } else if (last) {
                        return null;
                    }
                }
            });
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
            writing.set(false);
            consumer.get(120, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }

        assertThat(seen.keySet()).containsExactlyInAnyOrderElementsOf(submitted);
        for (TaskId id : submitted) {
            List<TaskEvent.Type> expected = store.events(id).stream().map(TaskEvent::type).toList();
            assertThat(types.get(id)).as("task %s", id).containsExactlyElementsOf(expected);
            assertThat(seen.get(id)).as("task %s", id).isSorted().doesNotHaveDuplicates();
        }
        assertThat(submitted).as("some tasks ran through").anyMatch(id -> types.get(id).size() == 6);
        assertThat(pending(CHANNEL)).isEmpty();
    }
}
