package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.OperatorNote;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import dev.sas.testing.Drain;
import dev.sas.testing.ManualClock;
import org.junit.jupiter.api.Test;

/** The samples of docs/concepts.md and docs/operations.md on moving tasks to a new workflow version. */
class VersionsDocsTest {

    @Test
    void a_task_stuck_in_error_on_v1_is_moved_to_v2_and_completes_there() {
        String url = "jdbc:h2:mem:versions-docs;DB_CLOSE_DELAY=-1";
        Workflow<String> v1 = Workflow.builder("orders", Codec.string()).compensateOnFailure(false)
                .step("reserve", s -> s.execute(ctx -> "reserved " + ctx.input()))
                .step("charge", s -> s.execute(ctx -> {
                    throw new NonRetryableException("v1 sends the amount in cents twice");
                }))
                .step("ship", s -> s.execute(ctx -> "shipped"))
                .build();
        // tag::moves-from[]
        Workflow<String> v2 = Workflow.builder("orders", Codec.string())
                .version(2)
                .step("reserve", s -> s.execute(ctx -> "reserved " + ctx.input()))
                .step("charge-eur", s -> s.execute(ctx -> "charged " + ctx.input() + " EUR"))
                .step("ship", s -> s.execute(ctx -> "shipped"))
                .movesFrom(1, m -> m.step("charge", "charge-eur"))   // "reserve" and "ship" keep their names
                .build();
        // end::moves-from[]
        ManualClock clock = new ManualClock();
        try (JdbcStateStore store = JdbcStateStore.builder().url(url).build();
             SasRuntime oldNode = SasRuntime.builder().stateStore(store).workflow(v1).clock(clock)
                     .trustLocalClock().instanceId("old").build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(v2).clock(clock)
                     .trustLocalClock().instanceId("new").build()) {
            TaskId taskId = oldNode.client().submit(v1, "order-17", "12.50").id();
            Drain.untilIdle(oldNode);
            assertThat(oldNode.client().find(taskId).orElseThrow().status()).isEqualTo(TaskStatus.ERROR);

            // tag::move[]
            runtime.client().operations()
                    .moveVersion(taskId, 2, OperatorNote.of("alice", "v2 charges in euros"));
            // end::move[]

            Drain.untilIdle(runtime);
            TaskInfo done = runtime.client().find(taskId).orElseThrow();
            assertThat(done.status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(done.workflowVersion()).isEqualTo(2);
            assertThat(done.step("reserve").output()).isEqualTo("reserved 12.50");
            assertThat(done.step("charge-eur").output()).isEqualTo("charged 12.50 EUR");
            assertThat(runtime.client().events(taskId)).filteredOn(e -> e.type() == TaskEvent.Type.VERSION_MOVED)
                    .extracting(TaskEvent::message)
                    .containsExactly("moved from v1 step 'charge' to v2 step 'charge-eur' by alice: v2 charges in euros");
        }
    }
}
