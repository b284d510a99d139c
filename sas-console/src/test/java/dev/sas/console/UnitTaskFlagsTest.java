package dev.sas.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.UnitTaskException;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A unit task's {@code can} flags (a failed parallel branch) say what {@code OperationsClient} does:
 * no resubmit or cancel on its own once its parent's step has ended.
 */
class UnitTaskFlagsTest {

    private static final String TOKEN = "s3cret-operator-token-0123456789";

    @Test
    void a_failed_branch_of_a_compensated_task_shows_neither_resubmit_nor_cancel() throws Exception {
        Workflow<String> order = Workflow.builder("flags", Codec.string())
                .parallel("fork", p -> p
                        .branch("stock", b -> b.step("pick", s -> s.execute(ctx -> "picked")))
                        .branch("payment", b -> b.step("charge", s -> s.execute(ctx -> {
                            throw new NonRetryableException("card declined");
                        }))))
                .build();
        try (SasRuntime runtime = SasRuntime.builder().stateStore(new InMemoryStateStore()).clock(new ManualClock())
                .workflow(order).build()) {
            SasClient client = runtime.client();
            TaskId id = client.submit(order, "order-1", "car").id();
            for (int i = 0; i < 3; i++) {
                Drain.untilIdle(runtime);
                Drain.supervisorOnce(runtime);
            }
            assertThat(client.find(id).orElseThrow().status()).isEqualTo(TaskStatus.COMPENSATED);
            TaskInfo payment = client.list(TaskQuery.all().withWorkflow("flags.fork.payment")).get(0);
            assertThat(payment.status()).isEqualTo(TaskStatus.ERROR);
            assertThatThrownBy(() -> client.operations().resubmit(payment.taskId()))
                    .isInstanceOf(UnitTaskException.class);

            SasConsole console = SasConsole.builder().client(client).actionToken(TOKEN).build();
            JsonNode can = task(console, payment.taskId()).get("can");
            assertThat(can.get("resubmit").asBoolean()).as("OperationsClient refuses it").isFalse();
            assertThat(can.get("cancel").asBoolean()).as("OperationsClient refuses it").isFalse();
            assertThat(task(console, id).get("can").get("resubmit").asBoolean()).as("COMPENSATED").isFalse();
        }
    }

    private static JsonNode task(SasConsole console, TaskId id) throws Exception {
        ConsoleResponse r = console.handle(ConsoleRequest.of("GET", "/api/tasks/" + id.value(), null,
                Map.of("Host", "127.0.0.1:8089")));
        assertThat(r.status()).isEqualTo(200);
        return new ObjectMapper().readTree(r.bodyText());
    }
}
