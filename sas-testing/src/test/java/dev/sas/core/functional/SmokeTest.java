package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.InMemoryStateStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SmokeTest {

    @Test
    void threaded_runtime_processes_two_step_tasks() {
        Workflow<String> wf = Workflow.builder("greet", Codec.string())
                .step("a", s -> s.execute(ctx -> "A-" + ctx.input()))
                .step("b", s -> s.execute(ctx -> ctx.output("a").orElseThrow() + "-B"))
                .build();
        InMemoryStateStore store = new InMemoryStateStore();
        try (SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).build().start()) {
            List<TaskId> ids = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                ids.add(sas.client().submit(wf, "k" + i, "in" + i).id());
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> sas.client().countByStatus().get(TaskStatus.PROCESSED) == 200);
            assertThat(sas.client().find(ids.get(7)).orElseThrow().step("b").output()).isEqualTo("A-in7-B");
        }
    }
}
