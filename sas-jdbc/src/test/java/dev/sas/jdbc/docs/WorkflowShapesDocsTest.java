package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskDocument;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskResult;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The workflow shapes shown in docs/workflow-shapes.md, compiled and run. */
class WorkflowShapesDocsTest {

    // tag::child-task[]
    Workflow<String> shipping = Workflow.builder("shipping", Codec.string())
            .step("pack", s -> s.execute(ctx -> "parcel for " + ctx.input()))
            .step("label", s -> s.execute(ctx -> "label on " + ctx.output("pack").orElseThrow()))
            .build();

    Workflow<String> orders = Workflow.builder("orders", Codec.string())
            .step("reserve", s -> s.execute(ctx -> "reserved " + ctx.input()))
            .step("ship", s -> s
                    .childTask(shipping, ctx -> ctx.input())      // the child's input, from this task
                    .completeWithin(Duration.ofHours(2)))         // how long to wait for the child
            .step("invoice", s -> s.execute(ctx -> "invoice: " + ctx.output("ship").orElseThrow()))
            .build();
    // end::child-task[]

    @Test
    void an_order_ships_through_its_child_task_and_invoices_with_the_childs_result() {
        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:shapes-docs;DB_CLOSE_DELAY=-1").build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders).workflow(shipping)
                     .supervisorInterval(Duration.ofMillis(200)).build().start()) {
            TaskHandle order = runtime.client().submit(orders, "order-42", "a car");

            TaskResult result = order.await(Duration.ofSeconds(60));

            assertThat(result.status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(result.info().step("invoice").output()).isEqualTo("invoice: label on parcel for a car");
            List<Map<String, Object>> children = TaskDocument.children(runtime.client(), result.info());
            assertThat(children).singleElement().satisfies(c -> assertThat(c).containsEntry("step", "ship")
                    .containsEntry("workflow", "shipping").containsEntry("status", "PROCESSED"));
        }
    }
}
