package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.InMemoryStateStore;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A claim the supervisor recovers comes due after its retry backoff; the supervisor then wakes
 * the scheduler at that instant, so the retry does not wait for the next poll.
 */
class RecoveryWakeUpTest {

    @Test
    void recovered_task_is_claimed_again_when_its_backoff_ends_not_at_the_next_poll() {
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch never = new CountDownLatch(1);
        Workflow<String> wf = Workflow.builder("recovery-wake-up", Codec.string())
                .step("hangs-once", s -> s.execute(ctx -> {
                    if (runs.incrementAndGet() == 1) {
                        // Hangs past its deadline; the deadline's interrupt ends it, and its result is rejected.
                        never.await();
                    }
                    return "done-" + ctx.attempt();
                })
                        // 2 s: the retry must be recorded within one deadline, or it is recovered too (runs 3)
                        .completeWithin(Duration.ofSeconds(2))
                        // Long enough that a wake-up at the moment of recovery finds nothing due yet.
                        .retry(RetryPolicy.builder().fixedBackoff(Duration.ofMillis(500)).jitter(0).build()))
                .build();
        InMemoryStateStore store = new InMemoryStateStore();
        // A poll never comes during the test: only a local wake-up can make the scheduler claim again.
        try (SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).pollInterval(Duration.ofHours(1))
                .supervisorInterval(Duration.ofMillis(100)).shutdownGrace(Duration.ofSeconds(1)).build().start()) {
            TaskId id = sas.client().submit(wf, "k", "x").id();

            await().atMost(Duration.ofSeconds(30))
                    .until(() -> store.find(id).orElseThrow().status() == TaskStatus.PROCESSED);

            assertThat(runs).hasValue(2);
            assertThat(sas.metrics().timeoutsRecovered()).isEqualTo(1);
            assertThat(store.events(id)).filteredOn(e -> e.type() == TaskEvent.Type.STEP_TIMED_OUT).hasSize(1);
            assertThat(store.events(id)).filteredOn(e -> e.type() == TaskEvent.Type.STEP_STARTED)
                    .extracting(TaskEvent::attempt).containsExactly(1, 2);
            assertThat(store.find(id).orElseThrow().steps().get(0).output()).isEqualTo("done-2");
        }
    }
}
