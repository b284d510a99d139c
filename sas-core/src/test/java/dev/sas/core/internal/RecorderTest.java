package dev.sas.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.StateStoreException;
import dev.sas.core.StoreUnavailableException;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The recorder's batches when the store fails on some transitions of a batch and not on others. */
class RecorderTest {

    private static final Instant NOW = Instant.parse("2030-01-01T00:00:00Z");
    private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

    private final Map<TaskId, Recorder.Result> results = new ConcurrentHashMap<>();
    private final Map<TaskId, String> refusals = new ConcurrentHashMap<>();
    private Recorder recorder;

    @AfterEach
    void stop() throws InterruptedException {
        if (recorder != null) {
            recorder.stop(5_000);
        }
    }

    private static Transition finish(TaskId id) {
        return Transition.holder(id, 1, TaskStatus.PROCESSING, 0).at(0, "only", Duration.ofSeconds(30)).attempt(1)
                .end(TaskStatus.PROCESSED);
    }

    private void write(TaskId id) {
        recorder.write(finish(id), NOW.plusSeconds(3600), (result, refusal, at) -> {
            results.put(id, result);
            if (refusal != null) {
                refusals.put(id, refusal);
            }
        });
    }

    @Test
    void two_poison_transitions_in_front_of_a_batch_neither_defer_nor_fail_the_rest() throws Exception {
        Set<TaskId> poison = Set.of(TaskId.random(), TaskId.random());
        CountDownLatch firstWriteHeld = new CountDownLatch(1);
        CountDownLatch queued = new CountDownLatch(1);
        // A store that throws for any write holding a poison transition (as a driver does for a row it
        // cannot encode) and holds its first write until the test has queued the rest.
        StateStore store = (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                    if (!method.getName().equals("write")) {
                        throw new UnsupportedOperationException(method.getName());
                    }
                    @SuppressWarnings("unchecked")
                    List<Transition> ts = (List<Transition>) args[0];
                    if (firstWriteHeld.getCount() > 0) {
                        firstWriteHeld.countDown();
                        queued.await(30, TimeUnit.SECONDS);
                    }
                    if (ts.stream().anyMatch(t -> poison.contains(t.taskId()))) {
                        throw new StateStoreException("write failed: invalid byte sequence (injected)");
                    }
                    return ts.stream().map(t -> WriteOutcome.APPLIED).toList();
                });
        recorder = new Recorder(store, CLOCK, new Metrics(), 64);
        recorder.start(1);
        TaskId opener = TaskId.random();
        write(opener);
        assertThat(firstWriteHeld.await(30, TimeUnit.SECONDS)).isTrue();
        // The next batch: the two poison transitions first, then twenty good ones.
        poison.forEach(this::write);
        List<TaskId> good = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            TaskId id = TaskId.random();
            good.add(id);
            write(id);
        }
        queued.countDown();

        await().atMost(Duration.ofSeconds(30)).until(() -> results.size() == 23);
        assertThat(results.get(opener)).isEqualTo(Recorder.Result.APPLIED);
        assertThat(good).allSatisfy(id -> assertThat(results.get(id)).isEqualTo(Recorder.Result.APPLIED));
        assertThat(poison).allSatisfy(id -> {
            assertThat(results.get(id)).isEqualTo(Recorder.Result.REFUSED);
            assertThat(refusals.get(id)).contains("invalid byte sequence (injected)");
        });
    }

    @Test
    void a_transition_the_store_was_unavailable_for_while_it_wrote_others_is_retried_never_refused() throws Exception {
        TaskId unlucky = TaskId.random();
        AtomicInteger unluckyFailures = new AtomicInteger();
        CountDownLatch firstWriteHeld = new CountDownLatch(1);
        CountDownLatch queued = new CountDownLatch(1);
        // A failover as one pool sees it: the writes holding one transition keep landing on
        // connections to the old primary (unavailable) while the others reach the new one; then it
        // gets through too.
        StateStore store = (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                    @SuppressWarnings("unchecked")
                    List<Transition> ts = (List<Transition>) args[0];
                    if (firstWriteHeld.getCount() > 0) {
                        firstWriteHeld.countDown();
                        queued.await(30, TimeUnit.SECONDS);
                    }
                    if (ts.stream().anyMatch(t -> t.taskId().equals(unlucky)) && unluckyFailures.incrementAndGet() <= 4) {
                        throw new StoreUnavailableException("write failed: terminating connection due to administrator"
                                + " command (injected)", null);
                    }
                    return ts.stream().map(t -> WriteOutcome.APPLIED).toList();
                });
        recorder = new Recorder(store, CLOCK, new Metrics(), 64);
        recorder.start(1);
        TaskId opener = TaskId.random();
        write(opener);
        assertThat(firstWriteHeld.await(30, TimeUnit.SECONDS)).isTrue();
        List<TaskId> others = new ArrayList<>();
        write(unlucky);
        for (int i = 0; i < 5; i++) {
            TaskId id = TaskId.random();
            others.add(id);
            write(id);
        }
        queued.countDown();

        await().atMost(Duration.ofSeconds(30)).until(() -> results.size() == 7);
        assertThat(results.get(unlucky)).isEqualTo(Recorder.Result.APPLIED);
        assertThat(unluckyFailures.get()).as("failed alone while the others were written, then retried")
                .isGreaterThanOrEqualTo(3);
        assertThat(others).allSatisfy(id -> assertThat(results.get(id)).isEqualTo(Recorder.Result.APPLIED));
        assertThat(refusals).isEmpty();
    }

    @Test
    void a_replay_the_store_recognises_as_applied_is_reported_applied() {
        TaskId id = TaskId.random();
        StateStore store = (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {StateStore.class}, (proxy, method, args) -> List.of(WriteOutcome.APPLIED_ALREADY));
        recorder = new Recorder(store, CLOCK, new Metrics(), 64);

        write(id);

        assertThat(results).containsEntry(id, Recorder.Result.APPLIED);
    }
}
