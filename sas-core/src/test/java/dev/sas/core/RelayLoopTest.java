package dev.sas.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** The relay's thread: wakes run the delivery, a failing run does not end it, stop ends it without an interrupt. */
class RelayLoopTest {

    @Test
    void a_wake_runs_the_delivery_on_the_relay_thread_and_a_delivery_that_completed_a_step_wakes_the_scheduler() {
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger schedulerWakes = new AtomicInteger();
        RelayLoop loop = new RelayLoop(() -> {
            runs.incrementAndGet();
            return 1;
        }, schedulerWakes::incrementAndGet, "node-a");
        loop.start();
        try {
            loop.wake();
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> schedulerWakes.get() >= 1);
            assertThat(runs.get()).isGreaterThanOrEqualTo(1);
        } finally {
            stop(loop);
        }
    }

    @Test
    void a_delivery_that_throws_does_not_end_the_thread() {
        AtomicInteger runs = new AtomicInteger();
        RelayLoop loop = new RelayLoop(() -> {
            if (runs.incrementAndGet() == 1) {
                throw new IllegalStateException("poison hint");
            }
            return 0;
        }, () -> { }, "node-a");
        loop.start();
        try {
            loop.wake();
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> runs.get() >= 1);
            loop.wake();
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> runs.get() >= 2);
        } finally {
            stop(loop);
        }
    }

    @Test
    void stop_ends_the_thread_without_interrupting_a_run() throws Exception {
        AtomicInteger interruptedRuns = new AtomicInteger();
        RelayLoop loop = new RelayLoop(() -> {
            if (Thread.currentThread().isInterrupted()) {
                interruptedRuns.incrementAndGet();
            }
            return 0;
        }, () -> { }, "node-a");
        loop.start();
        assertThat(loop.running()).isTrue();
        loop.wake();
        loop.stop(30_000);

        assertThat(loop.running()).isFalse();
        assertThat(interruptedRuns.get()).isZero();
    }

    private static void stop(RelayLoop loop) {
        try {
            loop.stop(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
