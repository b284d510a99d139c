package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.sas.core.Agent;
import dev.sas.core.Codec;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskResult;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.InMemoryStateStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * A step whose agent replies on the agent's own thread ({@code sas-agent-<name>-N}): the agent's
 * code and SAS's log line about the step's result (on whichever thread handles it) both carry the
 * task in the MDC.
 */
class AgentThreadLogContextTest {

    @Test
    void a_result_completed_on_an_agent_thread_is_logged_with_the_task_workflow_step_and_attempt() {
        List<String> seenByAgent = new CopyOnWriteArrayList<>();
        AtomicInteger calls = new AtomicInteger();
        Agent<String, String> payments = Agent.of("payments", RetryPolicy.builder().maxAttempts(2)
                .fixedBackoff(Duration.ofMillis(10)).build(), req -> {
                    seenByAgent.add(Thread.currentThread().getName() + " " + MDC.get("sas.taskId") + " "
                            + MDC.get("sas.workflow") + " " + MDC.get("sas.step") + " " + MDC.get("sas.attempt"));
                    return calls.incrementAndGet() == 1
                            ? CompletableFuture.failedFuture(new IllegalStateException("declined, try again"))
                            : CompletableFuture.completedFuture("paid");
                });
        Workflow<String> wf = Workflow.builder("mdc-agent", Codec.string())
                .step("charge", s -> s.call(payments, ctx -> "req"))
                .build();
        Logger runner = (Logger) LoggerFactory.getLogger("dev.sas.core.internal.AttemptRunner");
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        runner.addAppender(lines);
        try (SasRuntime runtime = SasRuntime.builder().stateStore(new InMemoryStateStore()).workflow(wf)
                .pollInterval(Duration.ofMillis(50)).build().start()) {
            TaskHandle task = runtime.client().submit(wf, "order-1", "x");
            TaskResult result = task.await(Duration.ofSeconds(30));
            assertThat(result.status()).isEqualTo(TaskStatus.PROCESSED);

            String id = task.id().value();
            assertThat(seenByAgent).hasSize(2).allSatisfy(line -> assertThat(line).matches(
                    "sas-agent-payments-\\d+ " + id + " mdc-agent 0 [12]"));
            await().atMost(Duration.ofSeconds(30)).until(() -> lines.list.stream()
                    .anyMatch(e -> e.getFormattedMessage().contains("failed")));
            ILoggingEvent retry = lines.list.stream().filter(e -> e.getFormattedMessage().contains("failed"))
                    .findFirst().orElseThrow();
            // logged on the thread that completed the agent's stage, or, when it was complete before
            // the runner attached its callback (a fast agent on a loaded machine), on the scheduler's
            assertThat(retry.getThreadName()).matches("sas-(agent-payments|scheduler)-\\d+");
            assertThat(retry.getMDCPropertyMap()).containsAllEntriesOf(Map.of("sas.taskId", id,
                    "sas.workflow", "mdc-agent", "sas.step", "0", "sas.attempt", "1"));
        } finally {
            runner.detachAppender(lines);
        }
    }
}
