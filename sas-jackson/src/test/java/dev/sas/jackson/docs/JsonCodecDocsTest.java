package dev.sas.jackson.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.SasRuntime;
import dev.sas.core.StepRef;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jackson.JsonCodec;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The code shown in docs/json.md, compiled and run. */
class JsonCodecDocsTest {

    // tag::types[]
    record Item(String sku, int quantity, BigDecimal price) {}

    record Order(String orderId, String customerId, List<Item> items, Instant placedAt) {
        BigDecimal total() {
            return items.stream().map(i -> i.price().multiply(BigDecimal.valueOf(i.quantity())))
                    .reduce(BigDecimal.ZERO, BigDecimal::add);
        }
    }

    record Invoice(String invoiceId, BigDecimal amount) {}
    // end::types[]

    @Test
    void an_order_workflow_keeps_its_input_and_a_step_output_as_json() {
        InMemoryStateStore store = new InMemoryStateStore();
        // tag::workflow[]
        StepRef<Invoice> invoice = StepRef.of("invoice", JsonCodec.of(Invoice.class));
        Workflow<Order> orders = Workflow.builder("orders", JsonCodec.of(Order.class))
                .version(1)
                .step(invoice, s -> s.execute(ctx -> new Invoice("inv-" + ctx.input().orderId(), ctx.input().total())))
                .build();

        SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders).build(); // a test drives it
        TaskHandle order = runtime.client().submit(orders, "order-42", new Order("42", "c-7",
                List.of(new Item("book", 2, new BigDecimal("12.50"))), Instant.parse("2024-05-01T10:15:30Z")));
        Drain.untilIdle(runtime); // a started runtime runs it on its own

        Invoice result = order.await(Duration.ZERO).output(invoice).orElseThrow(); // Invoice[invoiceId=inv-42, ...]
        String json = order.info().step("invoice").output(); // {"invoiceId":"inv-42","amount":25.00}
        // end::workflow[]
        assertThat(order.info().status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(json).isEqualTo("{\"invoiceId\":\"inv-42\",\"amount\":25.00}");
        assertThat(result).isEqualTo(new Invoice("inv-42", new BigDecimal("25.00")));
    }

    @Test
    void an_input_written_by_a_newer_version_with_an_added_field_still_decodes() {
        // tag::evolution[]
        // Written by a newer release whose Order has a "giftWrap" field this release does not know:
        String stored = "{\"orderId\":\"42\",\"customerId\":\"c-7\",\"items\":[],"
                + "\"placedAt\":\"2024-05-01T10:15:30Z\",\"giftWrap\":true}";

        Order order = JsonCodec.of(Order.class).decode(stored); // the unknown field is ignored
        // end::evolution[]
        assertThat(order).isEqualTo(new Order("42", "c-7", List.of(), Instant.parse("2024-05-01T10:15:30Z")));
    }
}
