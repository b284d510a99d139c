package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RuntimeBuilder;
import dev.sas.core.SasRuntime;
import dev.sas.core.StateStoreException;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.StateStore;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Final tasks past retention are deleted in bounded batches by the node holding the supervisor
 * lease, on a thread of their own, so a large purge never delays the recovery of expired claims.
 */
class RetentionTest {

    private static final Duration RETENTION = Duration.ofDays(7);

    private final ManualClock clock = new ManualClock();
    private final InMemoryStateStore real = new InMemoryStateStore();
    /** The {@code limit} of every {@code purge} call, in order. */
    private final List<Integer> purgeLimits = new CopyOnWriteArrayList<>();

    private final Workflow<String> wf = Workflow.builder("retention", Codec.string())
            .step("work", s -> s.execute(ctx -> {
                if (ctx.input().startsWith("fail")) {
                    throw new NonRetryableException("fails for good (test)");
                }
                return "done";
            }))
            .build();

    /** Delegates to {@link #real} and records the limit of each purge. */
    private StateStore recording() {
        return (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {StateStore.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("purge")) {
                        purgeLimits.add((Integer) args[1]);
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private RuntimeBuilder runtime(StateStore store) {
        return SasRuntime.builder().stateStore(store).clock(clock).workflow(wf).retention(RETENTION);
    }

    private List<TaskId> submit(SasRuntime sas, String prefix, int n) {
        List<TaskId> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(sas.client().submit(wf, prefix + "-" + i, prefix).id());
        }
        return ids;
    }

    private boolean exists(TaskId id) {
        return real.find(id).isPresent();
    }

    @Nested
    class WhatIsDeleted {

        @Test
        void only_final_tasks_older_than_retention_are_deleted() {
            SasRuntime sas = runtime(recording()).build();
            List<TaskId> old = submit(sas, "old", 3);
            List<TaskId> failed = submit(sas, "fail", 2);
            Drain.untilIdle(sas);
            clock.tick(RETENTION.minusMinutes(1));
            List<TaskId> young = submit(sas, "young", 2);
            Drain.untilIdle(sas);
            List<TaskId> pending = submit(sas, "pending", 2);
            clock.tick(Duration.ofMinutes(2));

            Drain.supervisorOnce(sas);

            assertThat(Drain.retentionOnce(sas)).isEqualTo(3);
            assertThat(Drain.retentionOnce(sas)).isZero();
            assertThat(old).noneMatch(RetentionTest.this::exists);
            assertThat(failed).allMatch(id -> real.find(id).orElseThrow().status() == TaskStatus.ERROR);
            assertThat(young).allMatch(id -> real.find(id).orElseThrow().status() == TaskStatus.PROCESSED);
            assertThat(pending).allMatch(id -> real.find(id).orElseThrow().status() == TaskStatus.PENDING);
        }

        @Test
        void a_backlog_larger_than_one_batch_is_deleted_in_several_bounded_batches() {
            SasRuntime sas = runtime(recording()).retentionBatchSize(2).build();
            List<TaskId> old = submit(sas, "old", 5);
            Drain.untilIdle(sas);
            clock.tick(RETENTION.plusSeconds(1));
            Drain.supervisorOnce(sas);

            assertThat(Drain.retentionOnce(sas)).isEqualTo(2);
            assertThat(Drain.retentionOnce(sas)).isEqualTo(2);
            assertThat(Drain.retentionOnce(sas)).isEqualTo(1);
            assertThat(Drain.retentionOnce(sas)).isZero();

            assertThat(purgeLimits).containsExactly(2, 2, 2, 2);
            assertThat(old).noneMatch(RetentionTest.this::exists);
        }

        @Test
        void the_supervisor_no_longer_purges() {
            SasRuntime sas = runtime(recording()).build();
            submit(sas, "old", 3);
            Drain.untilIdle(sas);
            clock.tick(RETENTION.plusSeconds(1));

            Drain.supervisorOnce(sas);
            Drain.supervisorOnce(sas);

            assertThat(purgeLimits).isEmpty();
        }
    }

    @Nested
    class WhoDeletes {

        @Test
        void only_the_runtime_holding_the_supervisor_lease_deletes() {
            SasRuntime leader = runtime(recording()).instanceId("leader").build();
            SasRuntime follower = runtime(recording()).instanceId("follower").build();
            List<TaskId> old = submit(leader, "old", 3);
            Drain.untilIdle(leader);
            clock.tick(RETENTION.plusSeconds(1));
            Drain.supervisorOnce(leader);
            Drain.supervisorOnce(follower);

            assertThat(Drain.retentionOnce(follower)).isZero();
            assertThat(purgeLimits).isEmpty();
            assertThat(old).allMatch(RetentionTest.this::exists);

            assertThat(Drain.retentionOnce(leader)).isEqualTo(3);
            assertThat(old).noneMatch(RetentionTest.this::exists);
        }

        @Test
        void a_runtime_that_never_took_the_supervisor_lease_deletes_nothing() {
            SasRuntime sas = runtime(recording()).build();
            List<TaskId> old = submit(sas, "old", 2);
            Drain.untilIdle(sas);
            clock.tick(RETENTION.plusSeconds(1));

            assertThat(Drain.retentionOnce(sas)).isZero();
            assertThat(old).allMatch(RetentionTest.this::exists);
        }

        @Test
        void a_leader_whose_lease_ran_out_without_renewal_deletes_nothing() {
            SasRuntime sas = runtime(recording()).build();
            List<TaskId> old = submit(sas, "old", 2);
            Drain.untilIdle(sas);
            clock.tick(RETENTION.plusSeconds(1));
            Drain.supervisorOnce(sas);
            clock.tick(Duration.ofMinutes(1)); // far past the lease (three supervisor intervals)

            assertThat(Drain.retentionOnce(sas)).isZero();
            assertThat(old).allMatch(RetentionTest.this::exists);
        }
    }

    @Nested
    class Settings {

        @Test
        void defaults_are_in_the_config() {
            SasRuntime sas = runtime(real).build();

            assertThat(sas.config().retentionBatchSize()).isEqualTo(SasRuntime.DEFAULT_RETENTION_BATCH_SIZE)
                    .isEqualTo(1_000);
            assertThat(sas.config().retentionMaxDeletesPerSecond())
                    .isEqualTo(SasRuntime.DEFAULT_RETENTION_MAX_DELETES_PER_SECOND).isEqualTo(5_000);
            assertThat(sas.config().retentionInterval()).isEqualTo(SasRuntime.DEFAULT_RETENTION_INTERVAL)
                    .isEqualTo(Duration.ofMinutes(1));
        }

        @Test
        void settings_given_are_in_the_config() {
            SasRuntime sas = runtime(real).retentionBatchSize(10).retentionMaxDeletesPerSecond(20)
                    .retentionInterval(Duration.ofSeconds(30)).build();

            assertThat(sas.config().retentionBatchSize()).isEqualTo(10);
            assertThat(sas.config().retentionMaxDeletesPerSecond()).isEqualTo(20);
            assertThat(sas.config().retentionInterval()).isEqualTo(Duration.ofSeconds(30));
        }

        @Test
        void bad_values_are_rejected_where_they_are_set() {
            RuntimeBuilder b = SasRuntime.builder();

            assertThatThrownBy(() -> b.retentionBatchSize(0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("retentionBatchSize must be at least 1, was 0");
            assertThatThrownBy(() -> b.retentionMaxDeletesPerSecond(-5)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("retentionMaxDeletesPerSecond must be at least 1, was -5");
            assertThatThrownBy(() -> b.retentionInterval(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("retentionInterval must be positive, was PT0S");
            assertThatThrownBy(() -> b.retentionInterval(null)).isInstanceOf(NullPointerException.class)
                    .hasMessage("retentionInterval must not be null");
        }

        @Test
        void run_retention_once_refuses_a_started_runtime() {
            try (SasRuntime sas = runtime(real).build().start()) {
                assertThatThrownBy(() -> Drain.retentionOnce(sas)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("started");
            }
        }
    }

    @Nested
    class OnItsOwnThread {

        @Test
        void an_expired_claim_is_recovered_while_a_huge_purge_is_still_running() throws Exception {
            CountDownLatch purgeStarted = new CountDownLatch(1);
            CountDownLatch releasePurge = new CountDownLatch(1);
            AtomicBoolean purgeReturned = new AtomicBoolean();
            AtomicInteger runs = new AtomicInteger();
            CountDownLatch never = new CountDownLatch(1);
            StateStore store = (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                        if (method.getName().equals("purge")) {
                            // A delete of a million rows: holds its thread until the test lets go.
                            purgeStarted.countDown();
                            try {
                                releasePurge.await();
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                throw new StateStoreException("purge interrupted (test)");
                            }
                            purgeReturned.set(true);
                            return 0;
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            Workflow<String> hangs = Workflow.builder("hangs-once", Codec.string())
                    .step("hangs-once", s -> s.execute(ctx -> {
                        if (runs.incrementAndGet() == 1) {
                            never.await(); // ended by the deadline's interrupt
                        }
                        return "done";
                    }).completeWithin(Duration.ofMillis(300)))
                    .build();
            try (SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(hangs)
                    .supervisorInterval(Duration.ofMillis(100)).retentionInterval(Duration.ofMillis(100))
                    .shutdownGrace(Duration.ofSeconds(1)).build().start()) {
                assertThat(purgeStarted.await(20, TimeUnit.SECONDS)).as("retention started a purge").isTrue();

                TaskId id = sas.client().submit(hangs, "k", "x").id();

                await().atMost(Duration.ofSeconds(20)).until(() -> sas.metrics().timeoutsRecovered() >= 1);
                assertThat(purgeReturned).as("the purge is still running").isFalse();
                await().atMost(Duration.ofSeconds(20))
                        .until(() -> real.find(id).orElseThrow().status() == TaskStatus.PROCESSED);
                assertThat(purgeReturned).isFalse();
            } finally {
                releasePurge.countDown();
            }
        }
    }
}
