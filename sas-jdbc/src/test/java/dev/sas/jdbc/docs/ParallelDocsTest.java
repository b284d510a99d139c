package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepRef;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import dev.sas.testing.Drain;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The sample of docs/workflow-shapes.md and docs/concepts.md: parallel branches with a join, on H2. */
class ParallelDocsTest {

    static final StepRef<String> ACCEPTED = StepRef.of("accept", Codec.string());
    static final StepRef<Integer> RESERVED = StepRef.of("reserved", Codec.of(String::valueOf, Integer::valueOf));
    static final StepRef<String> CHARGED = StepRef.of("charged", Codec.string());

    private final List<String> done = new CopyOnWriteArrayList<>();

    private int reserve(String order) {
        done.add("reserve " + order);
        return 3;
    }

    private String charge(String order) {
        if (order.startsWith("declined")) {
            throw new NonRetryableException("card declined for " + order);
        }
        done.add("charge " + order);
        return "receipt-" + order;
    }

    @Test
    void stock_and_payment_run_at_once_and_a_declined_card_releases_the_stock() {
        // tag::parallel[]
        Workflow<String> orders = Workflow.builder("orders", Codec.string())
                .step(ACCEPTED, s -> s.execute(ctx -> "accepted " + ctx.input()))
                .parallel("reserve-and-charge", p -> p
                        .branch("stock", b -> b
                                .step("check", s -> s.reads(ACCEPTED)   // a step before the fork
                                        .execute(ctx -> "in stock, " + ctx.output(ACCEPTED)))
                                .step(RESERVED, s -> s.execute(ctx -> reserve(ctx.input()))
                                        .compensateWith(ctx -> done.add("release " + ctx.input()))))
                        .branch("payment", b -> b
                                .step(CHARGED, s -> s.execute(ctx -> charge(ctx.input()))
                                        .compensateWith(ctx -> done.add("refund " + ctx.input())))))
                .step("ship", s -> s.reads(RESERVED, CHARGED)   // every branch's output, typed
                        .execute(ctx -> "ship " + ctx.output(RESERVED) + " items, paid by " + ctx.output(CHARGED)))
                .build();
        // end::parallel[]
        ManualClock clock = new ManualClock();
        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:parallel-docs;DB_CLOSE_DELAY=-1").build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders).clock(clock)
                     .trustLocalClock().build()) {
            TaskId paid = runtime.client().submit(orders, "o-1", "o-1").id();
            TaskId declined = runtime.client().submit(orders, "o-2", "declined-2").id();
            for (int i = 0; i < 4; i++) {
                Drain.untilIdle(runtime);
                Drain.supervisorOnce(runtime); // delivers the branches' ends: the join
            }

            TaskInfo ok = runtime.client().find(paid).orElseThrow();
            assertThat(ok.status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(ok.step("ship").output()).isEqualTo("ship 3 items, paid by receipt-o-1");
            assertThat(ok.step("reserve-and-charge").output()).isEqualTo("{\"stock\":\"3\",\"payment\":\"receipt-o-1\"}");
            assertThat(runtime.client().list(TaskQuery.all().withWorkflow("orders.reserve-and-charge.stock")))
                    .extracting(u -> runtime.client().find(u.taskId()).orElseThrow().step("check").output())
                    .containsExactlyInAnyOrder("in stock, accepted o-1", "in stock, accepted declined-2");
            assertThat(runtime.client().find(declined).orElseThrow().status()).isEqualTo(TaskStatus.COMPENSATED);
            assertThat(done).contains("release declined-2").doesNotContain("refund declined-2", "release o-1");
        }
    }
}
