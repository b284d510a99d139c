package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.InMemoryStateStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ConcurrencyTest {

    @Test
    void two_runtimes_with_eight_threads_each_process_every_task_exactly_once() throws Exception {
        Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();
        Map<String, String> runBy = new ConcurrentHashMap<>();
        Workflow<String> wf = Workflow.builder("race", Codec.string())
                .step("a", s -> s.execute(ctx -> {
                    executions.computeIfAbsent(ctx.taskId() + "/a", k -> new AtomicInteger()).incrementAndGet();
                    return "a";
                }))
                .step("b", s -> s.execute(ctx -> {
                    executions.computeIfAbsent(ctx.taskId() + "/b", k -> new AtomicInteger()).incrementAndGet();
                    runBy.put(ctx.taskId().value(), Thread.currentThread().getName());
                    return "b";
                }))
                .build();
        InMemoryStateStore store = new InMemoryStateStore();
        int tasks = 2_000;
        try (SasRuntime one = runtime(store, wf, "one"); SasRuntime two = runtime(store, wf, "two")) {
            one.start();
            two.start();
            // Submit from 4 threads to both runtimes at once, with duplicate keys mixed in.
            ExecutorService submitters = Executors.newFixedThreadPool(4);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int offset = t;
                futures.add(submitters.submit(() -> {
                    go.await();
                    for (int i = offset; i < tasks; i += 2) {
                        (i % 2 == 0 ? one : two).client().submit(wf, "k" + i, "in" + i);
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
            submitters.shutdown();

            await().atMost(Duration.ofSeconds(60))
                    .until(() -> one.client().countByStatus().get(TaskStatus.PROCESSED) == tasks);

            assertThat(one.client().countByStatus().get(TaskStatus.PROCESSED)).isEqualTo(tasks);
            assertThat(executions).hasSize(2 * tasks);
            assertThat(executions.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
            assertThat(one.metrics().claimed() + two.metrics().claimed()).isEqualTo(tasks);
            assertThat(one.metrics().claimed()).as("both runtimes took part").isPositive();
            assertThat(two.metrics().claimed()).as("both runtimes took part").isPositive();
            assertThat(one.metrics().staleRejected() + two.metrics().staleRejected()).isZero();
            assertThat(runBy.values()).allSatisfy(name -> assertThat(name).startsWith("sas-scheduler-"));
        }
    }

    private static SasRuntime runtime(InMemoryStateStore store, Workflow<String> wf, String id) {
        return SasRuntime.builder().stateStore(store).workflow(wf).instanceId(id).schedulerThreads(8)
                .claimBatchSize(16).maxInFlight(64).pollInterval(Duration.ofMillis(20)).build();
    }
}
