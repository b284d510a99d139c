package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepRef;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskResult;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The code shown in README.md and docs/getting-started.md, compiled and run. */
class GettingStartedTest {

    @Test
    void a_two_step_workflow_runs_on_embedded_h2() {
        // tag::getting-started[]
        StepRef<String> hello = StepRef.of("hello");
        StepRef<String> shout = StepRef.of("shout");
        Workflow<String> greet = Workflow.builder("greet", Codec.string())
                .step(hello, s -> s.execute(ctx -> "hello " + ctx.input()))
                .step(shout, s -> s.reads(hello).execute(ctx -> ctx.output(hello).toUpperCase())
                        .completeWithin(Duration.ofSeconds(5)))
                .build();

        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:demo;DB_CLOSE_DELAY=-1").build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(greet).build().start()) {
            TaskHandle greeting = runtime.client().submit(greet, "greeting-1", "world");

            TaskResult result = greeting.await(Duration.ofSeconds(10));
            System.out.println(result.output(shout).orElseThrow()); // HELLO WORLD
            // end::getting-started[]
            assertThat(result.output(shout)).contains("HELLO WORLD");
            assertThat(runtime.client().events(greeting.id())).extracting(e -> e.type().name())
                    .containsExactly("RECEIVED", "STEP_STARTED", "STEP_COMPLETED", "STEP_STARTED", "STEP_COMPLETED",
                            "PROCESSED");
        }
    }
}
