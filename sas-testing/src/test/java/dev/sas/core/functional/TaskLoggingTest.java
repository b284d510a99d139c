package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.sas.core.Agent;
import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskLogging;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.InMemoryStateStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Log lines about a task carry its id in the MDC where users look for them: in an agent that hands
 * its call to an executor of its own ({@code CompletableFuture.supplyAsync}, as getting-started
 * shows), through {@link TaskLogging#propagating}, and on the {@code dev.sas.alerts} line.
 */
class TaskLoggingTest {
    private static final String AGENT_LOGGER = "test.agent";

    private final ListAppender<ILoggingEvent> lines = new ListAppender<>();
    private final List<Logger> watched = List.of((Logger) LoggerFactory.getLogger(AGENT_LOGGER),
            (Logger) LoggerFactory.getLogger("dev.sas.alerts"));

    TaskLoggingTest() {
        lines.list = new CopyOnWriteArrayList<>(); // appended from SAS's and the pool's threads
        lines.start();
        watched.forEach(l -> l.addAppender(lines));
    }

    @AfterEach
    void detach() {
        watched.forEach(l -> l.detachAppender(lines));
    }

    @Test
    void an_agent_on_the_common_pool_through_the_wrapper_logs_with_the_task() {
        Map<String, String> mdc = agentLineOn(TaskLogging.propagating(ForkJoinPool.commonPool()), "wrapped");

        assertThat(mdc).containsEntry(TaskLogging.WORKFLOW, "log-wrapped").containsEntry(TaskLogging.STEP, "0")
                .containsEntry(TaskLogging.ATTEMPT, "1").containsKey(TaskLogging.TASK_ID);
    }

    @Test
    void without_the_wrapper_the_common_pool_line_has_no_task() {
        // what the wrapper is for: the MDC belongs to the thread, and the pool's threads have none
        assertThat(agentLineOn(ForkJoinPool.commonPool(), "bare")).doesNotContainKey(TaskLogging.TASK_ID);
    }

    @Test
    void a_pooled_thread_gets_its_own_context_back_after_the_task() throws Exception {
        ExecutorService single = Executors.newSingleThreadExecutor();
        try {
            single.submit(() -> MDC.put("own", "kept")).get();
            agentLineOn(TaskLogging.propagating(single), "restore");

            assertThat(single.submit(() -> MDC.getCopyOfContextMap()).get())
                    .isEqualTo(Map.of("own", "kept"));
        } finally {
            single.shutdownNow();
        }
    }

    @Test
    void the_alert_line_carries_the_task_and_workflow() {
        Workflow<String> wf = Workflow.builder("log-alert", Codec.string())
                .step("fail", s -> s.execute(ctx -> {
                    throw new NonRetryableException("card declined");
                }))
                .build();
        try (SasRuntime runtime = SasRuntime.builder().stateStore(new InMemoryStateStore()).workflow(wf)
                .pollInterval(Duration.ofMillis(50)).build().start()) {
            TaskHandle task = runtime.client().submit(wf, "order-1", "x");
            assertThat(task.await(Duration.ofSeconds(30)).status()).isEqualTo(TaskStatus.ERROR);

            ILoggingEvent alert = line(e -> e.getLoggerName().equals("dev.sas.alerts"));
            assertThat(alert.getMDCPropertyMap()).containsEntry(TaskLogging.TASK_ID, task.id().value())
                    .containsEntry(TaskLogging.WORKFLOW, "log-alert").doesNotContainKey(TaskLogging.STEP);
        }
    }

    /** Runs a one-step task whose agent logs on {@code executor}; returns the MDC of that line. */
    private Map<String, String> agentLineOn(Executor executor, String name) {
        org.slf4j.Logger agentLog = LoggerFactory.getLogger(AGENT_LOGGER);
        Agent<String, String> mailer = Agent.of("mailer", request -> CompletableFuture.supplyAsync(() -> {
            agentLog.info("mailing {}", name);
            return "sent";
        }, executor));
        Workflow<String> wf = Workflow.builder("log-" + name, Codec.string())
                .step("mail", s -> s.call(mailer, ctx -> ctx.input()))
                .build();
        try (SasRuntime runtime = SasRuntime.builder().stateStore(new InMemoryStateStore()).workflow(wf)
                .pollInterval(Duration.ofMillis(50)).build().start()) {
            TaskHandle task = runtime.client().submit(wf, "k-" + name, "x");
            assertThat(task.await(Duration.ofSeconds(30)).status()).isEqualTo(TaskStatus.PROCESSED);
            Map<String, String> mdc = line(e -> e.getFormattedMessage().equals("mailing " + name)).getMDCPropertyMap();
            if (mdc.containsKey(TaskLogging.TASK_ID)) {
                assertThat(mdc.get(TaskLogging.TASK_ID)).isEqualTo(task.id().value());
            }
            return mdc;
        }
    }

    private ILoggingEvent line(Function<ILoggingEvent, Boolean> which) {
        await().atMost(Duration.ofSeconds(30)).until(() -> lines.list.stream().anyMatch(which::apply));
        return lines.list.stream().filter(which::apply).findFirst().orElseThrow();
    }
}
