package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskId;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/** Every line logged while SAS works on a task, the step's own included, carries its id and step in the MDC. */
class TaskLogContextTest {

    @Test
    void a_step_sees_its_task_and_step_in_the_logging_context_and_nothing_leaks_afterwards() {
        List<String> seen = new CopyOnWriteArrayList<>();
        Workflow<String> wf = Workflow.builder("mdc", Codec.string())
                .step("first", s -> s.execute(ctx -> {
                    seen.add(MDC.get("sas.taskId") + "/" + MDC.get("sas.step"));
                    return "one";
                }))
                .step("second", s -> s.execute(ctx -> {
                    seen.add(MDC.get("sas.taskId") + "/" + MDC.get("sas.step"));
                    return "two";
                }))
                .build();
        try (SasRuntime runtime = SasRuntime.builder().stateStore(new InMemoryStateStore()).clock(new ManualClock())
                .workflow(wf).build()) {
            TaskId id = runtime.client().submit(wf, "k", "x").id();
            Drain.untilIdle(runtime);
            assertThat(seen).containsExactly(id.value() + "/0", id.value() + "/1");
            assertThat(MDC.get("sas.taskId")).as("cleared after the work").isNull();
        }
    }
}
