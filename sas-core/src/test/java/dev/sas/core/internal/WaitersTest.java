package dev.sas.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.TaskId;
import dev.sas.core.spi.StoreSignals;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The wake-up of threads waiting for a task: a hint ends a wait that would otherwise last a day. */
class WaitersTest {

    private static final long A_DAY = TimeUnit.DAYS.toNanos(1);

    /** Signals recorded by hand: what the store's listener would push. */
    private static final class FakeSignals implements StoreSignals {
        final List<Consumer<String>> finished = new ArrayList<>();
        final List<TaskId> watched = new ArrayList<>();
        boolean connected = true;

        @Override
        public Subscription subscribe(Topic topic, Consumer<String> listener) {
            if (topic == Topic.TASK_FINISHED) {
                finished.add(listener);
            }
            return () -> finished.remove(listener);
        }

        @Override
        public void watch(TaskId taskId) {
            watched.add(taskId);
        }

        @Override
        public boolean connected() {
            return connected;
        }

        void send(String payload) {
            finished.forEach(l -> l.accept(payload));
        }
    }

    /** A thread that registers for {@code id} and waits a day; the future completes when it wakes. */
    private static CompletableFuture<Void> waitFor(Waiters waiters, TaskId id) {
        CompletableFuture<Waiters.Waiter> registered = new CompletableFuture<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            Waiters.Waiter w = waiters.register(id);
            registered.complete(w);
            w.await(A_DAY);
            done.complete(null);
        });
        t.setDaemon(true);
        t.start();
        registered.join();
        return done;
    }

    @Test
    void the_end_of_the_task_recorded_on_this_node_wakes_its_waiters_and_no_other() throws Exception {
        Waiters waiters = new Waiters(null);
        TaskId mine = TaskId.random();
        CompletableFuture<Waiters.Waiter> registered = new CompletableFuture<>();
        CompletableFuture<Void> woken = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            Waiters.Waiter w = waiters.register(mine);
            registered.complete(w);
            w.await(A_DAY);
            woken.complete(null);
        });
        t.setDaemon(true);
        t.start();
        Waiters.Waiter w = registered.get(10, TimeUnit.SECONDS);
        assertThat(w.pushed()).as("no store hints").isFalse();

        waiters.finished(TaskId.random());
        waiters.finished(mine);

        woken.get(10, TimeUnit.SECONDS);
        w.close();
    }

    @Test
    void a_store_hint_wakes_the_waiter_after_the_store_was_asked_to_watch_the_task() throws Exception {
        FakeSignals signals = new FakeSignals();
        Waiters waiters = new Waiters(signals);
        TaskId id = TaskId.random();
        CompletableFuture<Waiters.Waiter> registered = new CompletableFuture<>();
        CompletableFuture<Void> woken = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            Waiters.Waiter w = waiters.register(id);
            registered.complete(w);
            w.await(A_DAY);
            woken.complete(null);
        });
        t.setDaemon(true);
        t.start();
        Waiters.Waiter w = registered.get(10, TimeUnit.SECONDS);
        assertThat(w.pushed()).isTrue();
        assertThat(signals.watched).containsExactly(id);

        signals.send(id.value());

        woken.get(10, TimeUnit.SECONDS);
    }

    @Test
    void hints_that_may_have_been_missed_wake_every_waiter_to_look_again() {
        FakeSignals signals = new FakeSignals();
        Waiters waiters = new Waiters(signals);
        List<CompletableFuture<Void>> woken = new ArrayList<>();
        List<Waiters.Waiter> ws = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            CompletableFuture<Waiters.Waiter> registered = new CompletableFuture<>();
            CompletableFuture<Void> done = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                Waiters.Waiter w = waiters.register(TaskId.random());
                registered.complete(w);
                w.await(A_DAY);
                done.complete(null);
            });
            t.setDaemon(true);
            t.start();
            ws.add(registered.join());
            woken.add(done);
        }

        signals.send(null);

        await().atMost(Duration.ofSeconds(10)).until(() -> woken.stream().allMatch(CompletableFuture::isDone));
    }

    @Test
    @Timeout(30)
    void a_waiter_woken_before_it_parked_does_not_park_and_a_closed_one_is_not_woken_any_more() {
        Waiters waiters = new Waiters(null);
        TaskId id = TaskId.random();
        Waiters.Waiter w = waiters.register(id);
        waiters.finished(id);
        // on this thread: the wake-up came first, so the wait returns at once instead of lasting a day
        w.await(A_DAY);
        w.close();
        waiters.finished(id);
        CompletableFuture<Void> waiting = waitFor(waiters, id);
        waiters.finished(TaskId.random());
        assertThat(waiting).as("another task's end").isNotDone();
        waiters.finished(id);
        assertThat(waiting).succeedsWithin(Duration.ofSeconds(10));
    }
}
