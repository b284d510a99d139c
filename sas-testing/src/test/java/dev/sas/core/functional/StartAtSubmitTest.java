package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.StateStoreException;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.ClaimedSubmits;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.SubmitResult;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A runtime with room starts a task its own client submits without a claim: the store inserts the
 * task already claimed ({@code ClaimedSubmits.submitClaimed}) and the step starts after that one
 * commit. A loaded runtime leaves submits to its claims, and a claimed submit whose outcome the
 * node never hears is recovered like any other expired claim.
 */
class StartAtSubmitTest {

    private final InMemoryStateStore real = new InMemoryStateStore();
    private final AtomicInteger claimCalls = new AtomicInteger();
    /** Tasks that a claim returned. */
    private final Set<TaskId> claimedByClaim = ConcurrentHashMap.newKeySet();
    /** Calls of submitClaimed, duplicates included. */
    private final AtomicInteger claimedSubmits = new AtomicInteger();
    /** Tasks inserted claimed. */
    private final Set<TaskId> claimedAtSubmit = ConcurrentHashMap.newKeySet();
    /** When set, a claimed submit commits and then fails as if the connection died before the reply. */
    private final AtomicBoolean loseCommitReply = new AtomicBoolean();

    /** The in-memory store, counting claims and claimed submits. */
    private final StateStore store = (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                if (method.getName().equals("claimedSubmits")) {
                    ClaimedSubmits inner = real.claimedSubmits().orElseThrow();
                    return Optional.of((ClaimedSubmits) (task, received, instanceId) -> {
                        SubmitResult r = inner.submitClaimed(task, received, instanceId);
                        claimedSubmits.incrementAndGet();
                        if (r.created()) {
                            claimedAtSubmit.add(r.taskId());
                        }
                        if (loseCommitReply.get()) {
                            throw new StateStoreException("submit failed: connection reset (injected after the commit)");
                        }
                        return r;
                    });
                }
                Object result;
                try {
                    result = method.invoke(real, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
                if (method.getName().equals("claim")) {
                    for (Object c : (List<?>) result) {
                        claimedByClaim.add(((ClaimedTask) c).taskId());
                    }
                    claimCalls.incrementAndGet();
                }
                return result;
            });

    /** Waits until the claim loop has claimed twice: its first claim found nothing due, so it is idle. */
    private void awaitIdle() {
        int before = claimCalls.get();
        await().atMost(Duration.ofSeconds(20)).until(() -> claimCalls.get() >= before + 2);
    }

    @Test
    void an_idle_runtime_starts_its_own_submit_without_a_claim_and_history_is_complete() {
        List<TaskEvent> heard = new CopyOnWriteArrayList<>();
        Workflow<String> wf = Workflow.builder("start-at-submit", Codec.string())
                .step("only", s -> s.execute(ctx -> "done-" + ctx.input()))
                .build();
        try (SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).pollInterval(Duration.ofMillis(20))
                .onEvent(heard::add).build().start()) {
            awaitIdle();
            TaskId id = sas.client().submit(wf, "k", "x").id();

            await().atMost(Duration.ofSeconds(20))
                    .until(() -> real.find(id).orElseThrow().status() == TaskStatus.PROCESSED);

            assertThat(claimedAtSubmit).containsExactly(id);
            assertThat(claimedByClaim).isEmpty();
            assertThat(sas.metrics().claimed()).isEqualTo(1);
            List<TaskEvent.Type> order = List.of(TaskEvent.Type.RECEIVED, TaskEvent.Type.STEP_STARTED,
                    TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.PROCESSED);
            assertThat(real.events(id)).extracting(TaskEvent::type).containsExactlyElementsOf(order);
            await().atMost(Duration.ofSeconds(20)).until(() -> heard.size() >= order.size());
            assertThat(heard).extracting(TaskEvent::type).containsExactlyElementsOf(order);
            assertThat(real.find(id).orElseThrow().steps().get(0).output()).isEqualTo("done-x");
            await().atMost(Duration.ofSeconds(20)).until(() -> sas.inFlight() == 0);
        }
    }

    @Test
    void a_busy_runtime_leaves_further_submits_to_its_claims_and_a_duplicate_gives_its_room_back() {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        Workflow<String> wf = Workflow.builder("busy", Codec.string())
                .step("blocks", s -> s.execute(ctx -> {
                    runs.incrementAndGet();
                    release.await();
                    return "ok";
                }))
                .build();
        try (SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).schedulerThreads(4)
                .pollInterval(Duration.ofMillis(20)).build().start()) {
            awaitIdle();
            TaskId first = sas.client().submit(wf, "k0", "x").id();
            assertThat(claimedAtSubmit).containsExactly(first);
            assertThat(sas.inFlight()).isEqualTo(1);

            // one task in flight: these are claimed
            List<TaskId> later = new ArrayList<>();
            for (int i = 1; i < 4; i++) {
                later.add(sas.client().submit(wf, "k" + i, "x").id());
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> runs.get() == 4);
            assertThat(claimedAtSubmit).containsExactly(first);
            assertThat(claimedByClaim).containsExactlyInAnyOrderElementsOf(later);

            release.countDown();
            await().atMost(Duration.ofSeconds(20)).until(() ->
                    real.countByStatus().getOrDefault(TaskStatus.PROCESSED, 0L) == 4);
            await().atMost(Duration.ofSeconds(20)).until(() -> sas.inFlight() == 0);

            // idle again (once the interval since the last start has passed): a duplicate is tried
            // as a claimed submit, creates nothing and gives its room back
            int tries = claimedSubmits.get();
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(10)).until(() -> {
                assertThat(sas.client().submit(wf, "k0", "x").created()).isFalse();
                return claimedSubmits.get() > tries;
            });
            assertThat(sas.inFlight()).isZero();
            assertThat(runs).hasValue(4);
        }
    }

    @Test
    void a_claimed_submit_whose_commit_reply_was_lost_is_recovered_after_its_deadline_and_runs_once() {
        ManualClock clock = new ManualClock();
        AtomicInteger runs = new AtomicInteger();
        Workflow<String> wf = Workflow.builder("lost-reply", Codec.string())
                .step("work", s -> s.execute(ctx -> {
                    runs.incrementAndGet();
                    return "ran-" + ctx.attempt();
                }).completeWithin(Duration.ofSeconds(30)))
                .build();
        try (SasRuntime sas = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf)
                .pollInterval(Duration.ofMillis(20)).supervisorInterval(Duration.ofMillis(50)).build().start()) {
            awaitIdle();
            loseCommitReply.set(true);
            assertThatThrownBy(() -> sas.client().submit(wf, "k", "x")).isInstanceOf(StateStoreException.class);
            loseCommitReply.set(false);
            TaskId id = real.findByBusinessKey(wf.name(), "k").orElseThrow();
            assertThat(claimedAtSubmit).containsExactly(id);
            assertThat(sas.inFlight()).as("the reservation is given back").isZero();
            assertThat(real.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSING);
            assertThat(runs).as("nobody runs it before its deadline").hasValue(0);

            clock.tick(Duration.ofSeconds(31));
            await().atMost(Duration.ofSeconds(20)).until(() -> real.events(id).stream()
                    .anyMatch(e -> e.type() == TaskEvent.Type.STEP_TIMED_OUT));
            clock.tick(Duration.ofMinutes(10)); // past the retry backoff
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> real.find(id).orElseThrow().status() == TaskStatus.PROCESSED);

            assertThat(runs).hasValue(1);
            assertThat(real.find(id).orElseThrow().steps().get(0).output()).isEqualTo("ran-2");
            assertThat(real.events(id)).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.RECEIVED,
                    TaskEvent.Type.STEP_STARTED, TaskEvent.Type.STEP_TIMED_OUT, TaskEvent.Type.STEP_STARTED,
                    TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.PROCESSED);
        }
    }
}
