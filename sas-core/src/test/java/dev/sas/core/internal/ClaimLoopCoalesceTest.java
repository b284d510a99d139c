package dev.sas.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.WorkflowVersion;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Claims that coalesce: a runtime with nothing in flight claims a submitted task at once, while a
 * loaded one gathers a trickle of submits into one claim per {@link ClaimLoop#COALESCE} instead of
 * one claim per task. Time for the interval comes from a manual clock, so the outcome does not
 * depend on how fast the machine runs the loop. Only an idle loop takes room for a task its
 * client starts at submit.
 */
class ClaimLoopCoalesceTest {

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final ConcurrentLinkedQueue<ClaimedTask> due = new ConcurrentLinkedQueue<>();
    /** Tasks per claim that found any, in order. */
    private final List<Integer> claims = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private ClaimLoop loop;
    private Thread thread;

    private final StateStore store = (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                if (method.getName().equals("claim")) {
                    int want = (Integer) args[1];
                    List<ClaimedTask> out = new ArrayList<>();
                    for (ClaimedTask t; out.size() < want && (t = due.poll()) != null; ) {
                        out.add(t);
                    }
                    if (!out.isEmpty()) {
                        claims.add(out.size());
                    }
                    return out;
                }
                if (method.getName().equals("toString")) {
                    return "claim-only store";
                }
                throw new UnsupportedOperationException(method.getName());
            });

    @AfterEach
    void stop() throws InterruptedException {
        if (loop != null) {
            loop.stop();
            thread.join(10_000);
        }
        timer.shutdownNow();
    }

    private void start() {
        Clock fixed = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
        DatabaseClock clock = DatabaseClock.of(fixed, store, false, "test", skew -> { });
        AdaptivePoll poll = new AdaptivePoll(Duration.ofSeconds(30), Duration.ofSeconds(30), () -> true);
        // claim batch 64: from 4 tasks in flight a wake-up coalesces; claimed tasks stay in flight
        loop = new ClaimLoop(store, clock, "node-a", Set.of(new WorkflowVersion("wf", 1)), new Metrics(), 64, 256,
                Duration.ofSeconds(30), poll, task -> { }, nanos::get);
        loop.start(timer);
        thread = new Thread(loop::run, "claim-loop-test");
        thread.setDaemon(true);
        thread.start();
    }

    private void submit(int n) {
        for (int i = 0; i < n; i++) {
            due.add(new ClaimedTask(TaskId.random(), "wf", 1, "k", TaskStatus.PROCESSING, 1, 0, 1, 0,
                    Instant.parse("2026-01-01T00:01:00Z"), false, "in", null, Instant.parse("2026-01-01T00:00:00Z"),
                    List.of()));
            loop.wakeUp();
        }
    }

    @Test
    void an_idle_loop_claims_at_once_and_a_loaded_one_gathers_a_trickle_into_one_claim() {
        start();
        submit(1);
        await().atMost(Duration.ofSeconds(20)).until(() -> claims.size() == 1);
        assertThat(claims).as("idle: the task is claimed without the clock moving").containsExactly(1);

        submit(3);
        await().atMost(Duration.ofSeconds(20)).until(() -> loop.inFlight() == 4);

        // loaded (4 in flight), and the clock has not moved since the last claim started: twenty
        // wake-ups in a row, one per submitted task, all wait for the interval to pass
        int claimsBefore = claims.size();
        submit(20);
        assertThat(claims).as("no claim before the interval has passed").hasSize(claimsBefore);

        nanos.addAndGet(ClaimLoop.COALESCE.toNanos());
        await().atMost(Duration.ofSeconds(20)).until(due::isEmpty);
        assertThat(claims.subList(claimsBefore, claims.size())).as("the trickle, in one claim").containsExactly(20);
        assertThat(loop.inFlight()).isEqualTo(24);
    }

    @Test
    void only_an_idle_loop_takes_room_for_a_task_its_client_starts_at_submit() {
        WorkflowVersion wf = new WorkflowVersion("wf", 1);
        start();
        // its first claim found nothing due; from then on an idle loop takes the room
        await().atMost(Duration.ofSeconds(20)).until(() -> loop.reserve(wf));
        assertThat(loop.inFlight()).isEqualTo(1);
        assertThat(loop.reserve(wf)).as("a task in flight").isFalse();
        loop.release();
        assertThat(loop.reserve(wf)).as("a task started within the interval").isFalse();
        assertThat(loop.reserve(new WorkflowVersion("other", 1))).as("a workflow it does not run").isFalse();

        nanos.addAndGet(ClaimLoop.IDLE_GAP.toNanos());
        assertThat(loop.reserve(wf)).as("idle again").isTrue();
        loop.release();

        nanos.addAndGet(ClaimLoop.IDLE_GAP.toNanos());
        submit(1);
        await().atMost(Duration.ofSeconds(20)).until(() -> claims.size() == 1);
        nanos.addAndGet(ClaimLoop.IDLE_GAP.toNanos());
        assertThat(loop.reserve(wf)).as("a claimed task in flight").isFalse();
        assertThat(loop.inFlight()).isEqualTo(1);
    }

    @Test
    void a_loop_that_is_not_running_takes_no_room() {
        Clock fixed = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
        ClaimLoop stopped = new ClaimLoop(store, DatabaseClock.of(fixed, store, false, "test", skew -> { }), "node-a",
                Set.of(new WorkflowVersion("wf", 1)), new Metrics(), 64, 256, Duration.ofSeconds(30),
                new AdaptivePoll(Duration.ofSeconds(30), Duration.ofSeconds(30), () -> true), task -> { }, nanos::get);
        assertThat(stopped.reserve(new WorkflowVersion("wf", 1))).isFalse();
        assertThat(stopped.inFlight()).isZero();
    }
}
