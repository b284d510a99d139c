package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Agent;
import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.StateStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Issue 28's workload with DEFAULT runtime settings (4 scheduler threads, maxInFlight 256, claim
 * batch 64): a backlog of healthy 150 ms steps with {@code completeWithin(3 s)}, far more tasks
 * than threads. A deadline runs only while its step runs, so every task is PROCESSED with no
 * time-out, no retry (attempt 1 for every step) and no ERROR, counted from the store's events.
 * Before admission matched capacity, one runtime claimed 256 tasks it could start 4 at a time and
 * the supervisor "recovered" hundreds of healthy ones.
 */
class SlowStepBacklogTest {
    private static final Logger log = LoggerFactory.getLogger(SlowStepBacklogTest.class);
    private static final Duration STEP = Duration.ofMillis(150);
    private static final Duration COMPLETE_WITHIN = Duration.ofSeconds(3);
    /**
     * Tasks of one runtime: issue 28's workload, 600 (212 of them ended in ERROR on 0.2). More than
     * {@code maxInFlight} (256), so a runtime that claimed all it may hold would leave its last
     * claims waiting 256 x 150 ms / 4 threads = 9.6 s for a thread, three deadlines.
     */
    private static final int BACKLOG = 600;
    /** Agent calls: past the agent's 8 threads and {@code maxInFlight}, at half the time. */
    private static final int AGENT_BACKLOG = 300;
    private static final Duration PROCESSED_WITHIN = Duration.ofMinutes(3);

    @Test
    void h2_one_runtime_600_slow_steps_end_processed_without_time_outs_retries_or_errors() {
        oneRuntime(TestDb.H2_MEMORY);
    }

    @Test
    void postgres_one_runtime_600_slow_steps_end_processed_without_time_outs_retries_or_errors() {
        oneRuntime(TestDb.POSTGRES);
    }

    @Test
    void mariadb_one_runtime_600_slow_steps_end_processed_without_time_outs_retries_or_errors() {
        oneRuntime(TestDb.MARIADB);
    }

    @Test
    void h2_two_runtimes_two_slow_steps_end_processed_without_time_outs_retries_or_errors() {
        twoRuntimes(TestDb.H2_MEMORY);
    }

    @Test
    void postgres_two_runtimes_two_slow_steps_end_processed_without_time_outs_retries_or_errors() {
        twoRuntimes(TestDb.POSTGRES);
    }

    @Test
    void mariadb_two_runtimes_two_slow_steps_end_processed_without_time_outs_retries_or_errors() {
        twoRuntimes(TestDb.MARIADB);
    }

    /**
     * A step that calls an agent hands the call to the agent's executor (8 threads by default) and
     * frees its step thread at once; the call's deadline starts when an agent thread takes it.
     */
    @Test
    void h2_agent_calls_waiting_for_an_agent_thread_end_processed_without_time_outs_retries_or_errors() {
        Agent<String, String> slowService = Agent.of("slow-service", request -> {
            try {
                return CompletableFuture.completedFuture(slow()); // a blocking client on the agent's thread
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return CompletableFuture.failedFuture(e);
            }
        });
        Workflow<String> wf = Workflow.builder("slow-agent", Codec.string())
                .step("call", s -> s.call(slowService, ctx -> ctx.input()).completeWithin(COMPLETE_WITHIN))
                .build();
        try (JdbcStateStore store = TestDb.builder(TestDb.H2_MEMORY.url(), TestDb.randomPrefix()).build();
                SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(wf).instanceId("node-1").build()) {
            runtime.start();
XX, store, tasks, 1);
        }
    }

    private void oneRuntime(TestDb db) {
        String url = db.url();
        Workflow<String> wf = Workflow.builder("slow-one", Codec.string())
                .step("work", s -> s.execute(ctx -> slow()).completeWithin(COMPLETE_WITHIN))
                .build();
        String prefix = TestDb.randomPrefix();
        try (JdbcStateStore store = TestDb.builder(url, prefix).build();
                SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(wf).instanceId("node-1").build()) {
            runtime.start();
            List<TaskHandle> tasks = runtime.client().submitAll(wf, inputs(AGENT_BACKLOG));
            awaitProcessed(store, tasks.size());
            assertHealthy(db + " one runtime", store, tasks, 1);
        } finally {
            db.drop(url, prefix);
        }
    }

    private void twoRuntimes(TestDb db) {
        String url = db == TestDb.H2_MEMORY ? db.url() + ";DB_CLOSE_DELAY=-1" : db.url();
        String prefix = TestDb.randomPrefix();
        Workflow<String> wf = Workflow.builder("slow-two", Codec.string())
                .step("first", s -> s.execute(ctx -> slow()).completeWithin(COMPLETE_WITHIN))
                .step("second", s -> s.execute(ctx -> slow()).completeWithin(COMPLETE_WITHIN))
                .build();
        try (JdbcStateStore storeA = TestDb.builder(url, prefix).build();
                JdbcStateStore storeB = TestDb.builder(url, prefix).build();
                SasRuntime a = SasRuntime.builder().stateStore(storeA).workflow(wf).instanceId("node-a").build();
                SasRuntime b = SasRuntime.builder().stateStore(storeB).workflow(wf).instanceId("node-b").build()) {
            a.start();
            b.start();
            List<TaskHandle> tasks = a.client().submitAll(wf, inputs(300));
            awaitProcessed(storeA, tasks.size());
            assertHealthy(db + " two runtimes", storeA, tasks, 2);
            assertThat(a.metrics().claimed()).as("node-a took part").isPositive();
            assertThat(b.metrics().claimed()).as("node-b took part").isPositive();
        } finally {
            db.drop(url, prefix);
        }
    }

    private static String slow() throws InterruptedException {
        Thread.sleep(STEP.toMillis()); // the workload: a healthy step that takes 150 ms
        return "ok";
    }

    private static Map<String, String> inputs(int n) {
        Map<String, String> inputs = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            inputs.put("k-" + i, "in-" + i);
        }
        return inputs;
    }

    private static void awaitProcessed(StateStore store, int n) {
        await().atMost(PROCESSED_WITHIN).pollInterval(Duration.ofMillis(250)).until(() -> {
            Map<TaskStatus, Long> counts = store.countByStatus();
            long done = 0;
            for (Map.Entry<TaskStatus, Long> e : counts.entrySet()) {
                if (e.getKey().isFinal() || e.getKey() == TaskStatus.ERROR) {
                    done += e.getValue();
                }
            }
            return done == n;
        });
    }

    /** From the store's events: every task PROCESSED, no time-out, every step started once, no ERROR. */
    private static void assertHealthy(String what, StateStore store, List<TaskHandle> tasks, int steps) {
        int timeouts = 0;
        int retries = 0;
        int errors = 0;
        List<String> notProcessed = new ArrayList<>();
        for (TaskHandle t : tasks) {
            List<TaskEvent> events = store.events(t.id());
            for (TaskEvent e : events) {
                switch (e.type()) {
                    case STEP_TIMED_OUT -> timeouts++;
                    case STEP_STARTED -> retries += e.attempt() > 1 ? 1 : 0;
                    case STEP_RETRYING -> retries++;
                    case ERROR, COMPENSATING -> errors++;
                    default -> { }
                }
            }
            if (events.stream().filter(e -> e.type() == TaskEvent.Type.STEP_COMPLETED).count() != steps
                    || events.stream().noneMatch(e -> e.type() == TaskEvent.Type.PROCESSED)) {
                notProcessed.add(t.id().value());
            }
        }
        Map<TaskStatus, Long> counts = store.countByStatus();
        String summary = what + ": " + tasks.size() + " tasks, states " + counts + ", " + timeouts + " time-outs, "
                + retries + " retries, " + errors + " errors";
        log.info(summary);
        assertThat(counts.getOrDefault(TaskStatus.PROCESSED, 0L)).as(summary + "; PROCESSED").isEqualTo(tasks.size());
        assertThat(timeouts).as(summary + "; time-outs recovered").isZero();
        assertThat(retries).as(summary + "; retries (a step started more than once)").isZero();
        assertThat(errors).as(summary + "; ERROR or compensation").isZero();
        assertThat(notProcessed).as(summary + "; tasks without all steps completed once").isEmpty();
    }
}
