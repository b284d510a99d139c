package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import dev.sas.testing.Drain;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The samples of docs/workflow-shapes.md and docs/concepts.md: a conditional step and durable timers. */
class ConditionalAndTimerDocsTest {

    /** An order: its id, how it is paid and when its invoice is due. */
    record Order(String id, String paymentMethod, Instant dueAt) {
        static final Codec<Order> CODEC = Codec.of(o -> o.id() + ";" + o.paymentMethod() + ";" + o.dueAt(), text -> {
            String[] f = text.split(";");
            return new Order(f[0], f[1], Instant.parse(f[2]));
        });
    }

    private final List<String> done = new CopyOnWriteArrayList<>();

    private String reserve(String id) {
        done.add("reserve " + id);
        return "reserved " + id;
    }

    private String charge(String id) {
        done.add("charge " + id);
        return "charged " + id;
    }

    private String ship(String id) {
        if (id.startsWith("lost")) {
            throw new NonRetryableException("no courier for " + id);
        }
        return "shipped " + id;
    }

    @Test
    void a_card_order_is_charged_a_cash_order_skips_the_charge_and_never_refunds_it() {
        // tag::conditional[]
        Workflow<Order> orders = Workflow.builder("orders", Order.CODEC)
                .step("reserve", s -> s.execute(ctx -> reserve(ctx.input().id()))
                        .compensateWith(ctx -> done.add("release " + ctx.input().id())))
                .step("charge-card", s -> s.when(ctx -> ctx.input().paymentMethod().equals("card")) // else SKIPPED
                        .execute(ctx -> charge(ctx.input().id()))
                        .compensateWith(ctx -> done.add("refund " + ctx.input().id()))) // never for a skipped step
                .step("ship", s -> s.execute(ctx -> ship(ctx.input().id())))
                .build();
        // end::conditional[]
        ManualClock clock = new ManualClock();
        Instant due = clock.instant().plus(Duration.ofDays(14));
        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:shapes-when-docs;DB_CLOSE_DELAY=-1").build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders).clock(clock)
                     .trustLocalClock().build()) {
            TaskId card = runtime.client().submit(orders, "o-1", new Order("o-1", "card", due)).id();
            TaskId cash = runtime.client().submit(orders, "o-2", new Order("o-2", "cash", due)).id();
            TaskId lost = runtime.client().submit(orders, "lost-3", new Order("lost-3", "cash", due)).id();

            Drain.untilIdle(runtime);

            assertThat(runtime.client().find(card).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
            TaskInfo cashInfo = runtime.client().find(cash).orElseThrow();
            assertThat(cashInfo.status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(cashInfo.step("charge-card").status()).isEqualTo(StepStatus.SKIPPED);
            assertThat(runtime.client().find(lost).orElseThrow().status()).isEqualTo(TaskStatus.COMPENSATED);
            assertThat(done).contains("charge o-1", "release lost-3")
                    .doesNotContain("charge o-2", "charge lost-3", "refund lost-3");
        }
    }

    @Test
    void reminders_wait_two_days_and_until_the_due_date_on_the_database_clock() {
        // tag::timer[]
        Workflow<Order> reminders = Workflow.builder("payment-reminders", Order.CODEC)
                .step("send-invoice", s -> s.execute(ctx -> "invoice for " + ctx.input().id()))
                .timer("remind-after", t -> t.waitFor(Duration.ofDays(2)))       // holds no thread, no slot
                .step("remind", s -> s.execute(ctx -> "reminder for " + ctx.input().id()))
                .timer("until-due", t -> t.waitUntil(ctx -> ctx.input().dueAt())) // an instant from the input
                .step("escalate", s -> s.execute(ctx -> "escalated " + ctx.input().id()))
                .build();
        // end::timer[]
        ManualClock clock = new ManualClock();
        Instant due = clock.instant().plus(Duration.ofDays(14));
        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:shapes-timer-docs;DB_CLOSE_DELAY=-1").build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(reminders).clock(clock)
                     .trustLocalClock().build()) {
            TaskId id = runtime.client().submit(reminders, "o-1", new Order("o-1", "card", due)).id();

            Drain.untilIdle(runtime);
            TaskInfo info = runtime.client().find(id).orElseThrow();
            assertThat(info.status()).isEqualTo(TaskStatus.WAITING);
            assertThat(info.nextAttemptAt()).isEqualTo(clock.instant().plus(Duration.ofDays(2)));
            assertThat(runtime.inFlight()).isZero();

            Drain.afterTime(runtime, clock, Duration.ofDays(2));
            info = runtime.client().find(id).orElseThrow();
            assertThat(info.step("remind").status()).isEqualTo(StepStatus.COMPLETED);
            assertThat(info.status()).isEqualTo(TaskStatus.WAITING);
            assertThat(info.nextAttemptAt()).isEqualTo(due);

            Drain.afterTime(runtime, clock, Duration.ofDays(12));
            info = runtime.client().find(id).orElseThrow();
            assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(info.step("escalate").output()).isEqualTo("escalated o-1");
        }
    }
}
