package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.StateStoreException;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.StateStore;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The database goes away for a while: nothing is lost, nothing is recorded twice. */
class StoreOutageTest {

    private final AtomicBoolean down = new AtomicBoolean();

    /** Wraps a store so that every call fails while {@link #down} is set. */
    private StateStore flaky(StateStore real) {
        return (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {StateStore.class},
                (proxy, method, args) -> {
                    if (down.get() && !method.getName().equals("close") && !method.getName().equals("toString")) {
                        throw new StateStoreException(method.getName() + " failed: connection refused (injected)");
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void result_that_cannot_be_recorded_is_recovered_after_the_outage_and_recorded_once() {
        ManualClock clock = new ManualClock();
        InMemoryStateStore real = new InMemoryStateStore();
        StateStore store = flaky(real);
        AtomicInteger runs = new AtomicInteger();
        Workflow<String> wf = Workflow.builder("outage", Codec.string())
                .step("work", s -> s.execute(ctx -> {
                    runs.incrementAndGet();
                    down.set(runs.get() == 1); // the database dies while the first attempt runs
                    return "done-" + runs.get();
                }).completeWithin(Duration.ofSeconds(5)))
                .build();
        SasRuntime sas = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf).build();
        TaskId id = sas.client().submit(wf, "k", "x").id();

        assertThat(Drain.schedulerOnce(sas)).isEqualTo(1);
        assertThat(sas.metrics().storeFailures()).isEqualTo(1);
        assertThat(sas.inFlight()).isZero();
        assertThat(real.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSING);

        down.set(false);
        clock.tick(Duration.ofSeconds(6));
        assertThat(Drain.supervisorOnce(sas)).isEqualTo(1);
        clock.tick(Duration.ofSeconds(1));
        while (Drain.schedulerOnce(sas) > 0) {
            // drain
        }

        assertThat(real.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(real.find(id).orElseThrow().steps().get(0).output()).isEqualTo("done-2");
        assertThat(real.events(id).stream().filter(e -> e.type() == dev.sas.core.TaskEvent.Type.STEP_COMPLETED))
                .hasSize(1);
    }

    @Test
    void one_transition_the_store_refuses_does_not_hold_back_the_rest_of_its_batch() {
        InMemoryStateStore real = new InMemoryStateStore();
        StateStore picky = (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals("write")) {
                        List<?> transitions = (List<?>) args[0];
                        boolean poisoned = transitions.stream().anyMatch(t -> ((dev.sas.core.spi.Transition) t)
                                .events().stream().anyMatch(e -> "poison".equals(e.businessKey())));
                        if (poisoned) {
                            throw new StateStoreException("write failed: value too long for column (injected)");
                        }
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        Workflow<String> wf = Workflow.builder("poison", Codec.string())
                .step("only", s -> s.execute(ctx -> "ok").completeWithin(Duration.ofSeconds(30)))
                .build();
        List<TaskId> good = new ArrayList<>();
        try (SasRuntime sas = SasRuntime.builder().stateStore(picky).workflow(wf).schedulerThreads(1).claimBatchSize(64)
                .pollInterval(Duration.ofMillis(20)).build()) {
            TaskId poison = sas.client().submit(wf, "poison", "x").id();
            for (int i = 0; i < 50; i++) {
                good.add(sas.client().submit(wf, "good-" + i, "x").id());
            }
            sas.start();
            await().atMost(Duration.ofSeconds(10)).until(() ->
                    real.countByStatus().getOrDefault(TaskStatus.PROCESSED, 0L) == good.size());
            assertThat(real.find(poison).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSING);
        }
    }

    @Test
    void threaded_runtime_rides_out_an_outage_and_finishes_every_task() {
        InMemoryStateStore real = new InMemoryStateStore();
        StateStore store = flaky(real);
        Map<String, AtomicInteger> recorded = new ConcurrentHashMap<>();
        Workflow<String> wf = Workflow.builder("outage2", Codec.string())
                .step("a", s -> s.execute(ctx -> "a").completeWithin(Duration.ofSeconds(2)))
                .step("b", s -> s.execute(ctx -> "b").completeWithin(Duration.ofSeconds(2)))
                .build();
        List<TaskId> ids = new ArrayList<>();
        try (SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).pollInterval(Duration.ofMillis(50))
                .supervisorInterval(Duration.ofMillis(200)).onEvent(e -> {
                    if (e.type() == dev.sas.core.TaskEvent.Type.STEP_COMPLETED) {
                        recorded.computeIfAbsent(e.taskId() + "/" + e.stepName(), k -> new AtomicInteger())
                                .incrementAndGet();
                    }
                }).build()) {
            sas.start();
            for (int i = 0; i < 300; i++) {
                ids.add(sas.client().submit(wf, "k" + i, "x").id());
                if (i == 100) {
                    down.set(true);
                    Instant until = Instant.now().plusMillis(1500);
                    // keep submitting into the outage: those submits fail and are not counted
                    while (Instant.now().isBefore(until)) {
                        try {
                            sas.client().submit(wf, "lost-" + i, "x").id();
                        } catch (StateStoreException expected) {
                            break;
                        }
                    }
                    await().pollDelay(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(3)).until(() -> true);
                    down.set(false);
                }
            }
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> real.countByStatus().getOrDefault(TaskStatus.PROCESSED, 0L) == ids.size());
            assertThat(sas.metrics().storeFailures()).isPositive();
        }
        assertThat(real.countByStatus()).containsOnlyKeys(TaskStatus.PROCESSED);
        assertThat(recorded.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
        for (TaskId id : ids) {
            assertThat(real.events(id).stream().filter(e -> e.type() == dev.sas.core.TaskEvent.Type.PROCESSED)).hasSize(1);
        }
    }

}
