package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The code shown in README.md and docs/getting-started.md, compiled and run. */
class GettingStartedTest {

    @Test
    void a_two_step_workflow_runs_on_embedded_h2() {
        // tag::getting-started[]
        Workflow<String> greet = Workflow.builder("greet", Codec.string())
                .step("hello", s -> s.execute(ctx -> "hello " + ctx.input()))
                .step("shout", s -> s.execute(ctx -> ctx.output("hello").orElseThrow().toUpperCase())
                        .completeWithin(Duration.ofSeconds(5)))
                .build();

        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:demo;DB_CLOSE_DELAY=-1").build();
             SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(greet).build().start()) {
            TaskId id = sas.client().submit(greet, "greeting-1", "world").id();

            await().atMost(Duration.ofSeconds(10))
                    .until(() -> sas.client().find(id).orElseThrow().status() == TaskStatus.PROCESSED);
            TaskInfo info = sas.client().find(id).orElseThrow();
            System.out.println(info.step("shout").output()); // HELLO WORLD
            // end::getting-started[]
            assertThat(info.step("shout").output()).isEqualTo("HELLO WORLD");
            assertThat(sas.client().events(id)).extracting(e -> e.type().name())
                    .containsExactly("RECEIVED", "STEP_STARTED", "STEP_COMPLETED", "STEP_STARTED", "STEP_COMPLETED",
                            "PROCESSED");
        }
    }
}
