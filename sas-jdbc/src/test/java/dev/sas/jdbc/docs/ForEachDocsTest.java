package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.ForEachFailure;
import dev.sas.core.ForEachResults;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskResult;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The fan-out sample of docs/workflow-shapes.md and docs/concepts.md, compiled and run on H2. */
class ForEachDocsTest {

    private final Set<String> shipped = ConcurrentHashMap.newKeySet();

    private static List<String> parcels(String order) {
        return IntStream.range(0, 10).mapToObj(i -> order + "/parcel-" + i).toList();
    }

    private String ship(String parcel, String idempotencyKey) {
        shipped.add(parcel);
        return "tracking " + parcel.hashCode();
    }

    private void recall(String parcel) {
        shipped.remove(parcel);
    }

    // tag::for-each[]
    Workflow<String> orders = Workflow.builder("parcel-orders", Codec.string())
            .step("pack", s -> s.execute(ctx -> "packed " + ctx.input()))
            .forEach("ship-parcels", Codec.string(), ctx -> parcels(ctx.input()), each -> each
                    .step("ship", s -> s
                            .execute(ctx -> ship(ctx.input(), ctx.idempotencyKey())) // ctx.input(): one parcel
                            .completeWithin(Duration.ofMinutes(2))                   // each parcel's own deadline
                            .compensateWith(ctx -> recall(ctx.input())))
                    .concurrency(3)                                    // at most 3 parcels at once
                    .onFailure(ForEachFailure.FAIL_AND_COMPENSATE_ALL)) // or COLLECT_FAILURES
            .step("invoice", s -> s.execute(ctx -> {
                ForEachResults shipments = ForEachResults.of(ctx.output("ship-parcels").orElseThrow());
                return "invoice with " + shipments.outputs(Codec.string());      // in the list's order
            }))
            .build();
    // end::for-each[]

    @Test
    void every_parcel_ships_once_and_the_invoice_lists_them_in_order() {
        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:for-each-docs;DB_CLOSE_DELAY=-1").build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders)
                     .supervisorInterval(Duration.ofMillis(200)).build().start()) {
            TaskHandle order = runtime.client().submit(orders, "order-42", "o42");

            TaskResult result = order.await(Duration.ofSeconds(120));

            assertThat(result.status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(shipped).hasSize(10);
            assertThat(result.info().step("invoice").output()).startsWith("invoice with [tracking ")
                    .contains(String.valueOf("o42/parcel-0".hashCode()));
        }
    }
}
