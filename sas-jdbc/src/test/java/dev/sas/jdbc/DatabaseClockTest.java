package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sas.core.Codec;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.internal.Dialects;
import dev.sas.testing.Drain;
import dev.sas.testing.ScriptedAgent;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The database clock is the authority: nodes whose clocks are five minutes off the database's
 * submit, claim and supervise on the database's time. Runs on embedded H2 (whose clock is the
 * JVM's system clock, not a runtime's) and on every configured database server.
 */
class DatabaseClockTest {

    private static final Duration FIVE_MINUTES = Duration.ofMinutes(5);
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private final List<SasRuntime> runtimes = new ArrayList<>();
    private TestDb db;
    private String url;
    private String prefix;
    private JdbcStateStore store;

    private void open(TestDb which) {
        db = which;
        url = which.url();
        prefix = SchemaPool.pooled(which) ? SchemaPool.take(which, url) : TestDb.randomPrefix();
        store = TestDb.builder(url, prefix).build();
    }

    @AfterEach
    void close() {
        runtimes.forEach(SasRuntime::close);
        if (store != null) {
            store.close();
            if (SchemaPool.pooled(db)) {
                SchemaPool.give(db, url, prefix);
            } else {
                db.drop(url, prefix);
            }
        }
    }

    private SasRuntime node(String id, Duration offset, Workflow<?> wf) {
        SasRuntime r = SasRuntime.builder().stateStore(store).instanceId(id).workflow(wf)
                .clock(Clock.offset(Clock.systemUTC(), offset)).build();
        runtimes.add(r);
        return r;
    }

    private Instant databaseNow() {
        return store.currentTime().orElseThrow();
    }

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"H2_MEMORY", "POSTGRES", "MARIADB"})
    void a_server_reports_its_time_and_it_moves_forward(TestDb which) {
        open(which);
        Instant first = databaseNow();
        Instant second = databaseNow();
        assertThat(second).isAfterOrEqualTo(first);
        // The server runs on this machine: its clock and the JVM's agree to well within a minute.
        assertThat(Duration.between(Clock.systemUTC().instant(), first).abs()).isLessThan(Duration.ofMinutes(1));
    }

    @Test
    void embedded_h2_reports_its_engine_clock_which_is_the_jvms_not_a_runtimes() {
        open(TestDb.H2_MEMORY);
        Instant first = databaseNow();
        assertThat(databaseNow()).isAfterOrEqualTo(first);
        assertThat(Duration.between(Clock.systemUTC().instant(), first).abs()).isLessThan(Duration.ofMinutes(1));
        assertThat(Dialects.isInProcess("jdbc:h2:mem:x")).isTrue();
        assertThat(Dialects.isInProcess("jdbc:h2:file:./x;AUTO_SERVER=TRUE")).isFalse();
        assertThat(Dialects.isInProcess("jdbc:h2:tcp://127.0.0.1/x")).isFalse();
        assertThat(Dialects.isInProcess("jdbc:postgresql://127.0.0.1/test")).isFalse();
    }

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"H2_MEMORY", "POSTGRES", "MARIADB"})
    void a_delayed_submit_from_a_node_five_minutes_ahead_is_due_on_the_database_clock(TestDb which) {
        open(which);
        Workflow<String> wf = Workflow.builder("delayed", Codec.string())
                .step("only", s -> s.execute(ctx -> "done"))
                .build();
        SasRuntime fast = node("fast", FIVE_MINUTES, wf);
        Instant before = databaseNow();
        TaskId id = fast.client().submit(wf, "order-1", "x",
                SubmitOptions.builder().delay(Duration.ofMinutes(1)).build()).id();
        Instant after = databaseNow();

        TaskInfo info = store.find(id).orElseThrow();
        // Without the database clock both would be five minutes late.
        assertThat(info.createdAt()).isBetween(before.minusSeconds(1), after.plusSeconds(1));
        assertThat(info.nextAttemptAt()).isBetween(before.plus(Duration.ofMinutes(1)).minusSeconds(1),
                after.plus(Duration.ofMinutes(1)).plusSeconds(1));
        assertThat(Drain.untilIdle(fast)).as("not due yet on the database clock").isZero();
        assertThat(fast.metrics().clockSkewMillis()).isCloseTo(-FIVE_MINUTES.toMillis(), within(2_000L));
    }

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"H2_MEMORY", "POSTGRES", "MARIADB"})
    void nodes_five_minutes_either_side_neither_steal_claims_nor_run_a_step_twice(TestDb which) {
        open(which);
        ScriptedAgent agent = new ScriptedAgent("payments", RetryPolicy.builder().maxAttempts(3).build()).thenHang();
        Workflow<String> wf = Workflow.builder("skewed", Codec.string())
                .step("call", s -> s.call(agent, ctx -> ctx.input()).completeWithin(DEADLINE))
                .build();
        SasRuntime slow = node("slow", FIVE_MINUTES.negated(), wf);
        SasRuntime fast = node("fast", FIVE_MINUTES, wf);
        TaskId id = slow.client().submit(wf, "order-1", "x").id();
        assertThat(Drain.untilIdle(slow)).isEqualTo(1);
        Instant completeBy = store.find(id).orElseThrow().completeBy();
        assertThat(Duration.between(databaseNow(), completeBy)).as("deadline on the database clock")
                .isBetween(DEADLINE.minusSeconds(5), DEADLINE.plusSeconds(1));

        assertThat(Drain.supervisorOnce(fast)).as("claims the fast node recovered").isZero();
        assertThat(Drain.untilIdle(fast)).as("tasks the fast node claimed").isZero();
        assertThat(agent.calls()).hasSize(1);

        agent.hanging().get(0).complete("paid");
        TaskInfo info = store.find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.failureCount()).isZero();
        assertThat(slow.metrics().clockSkewMillis()).isCloseTo(FIVE_MINUTES.toMillis(), within(2_000L));
        assertThat(fast.metrics().clockSkewMillis()).isCloseTo(-FIVE_MINUTES.toMillis(), within(2_000L));
    }

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"H2_MEMORY", "POSTGRES", "MARIADB"})
    void a_runtime_told_to_trust_its_clock_never_reads_the_database_clock(TestDb which) {
        open(which);
        assumeTrue(store.currentTime().isPresent());
        Workflow<String> wf = Workflow.builder("trusted", Codec.string())
                .step("only", s -> s.execute(ctx -> "done"))
                .build();
        SasRuntime trusting = SasRuntime.builder().stateStore(store).workflow(wf).trustLocalClock()
                .clock(Clock.offset(Clock.systemUTC(), FIVE_MINUTES)).build();
        runtimes.add(trusting);
        Instant before = databaseNow();
        TaskId id = trusting.client().submit(wf, "order-1", "x").id();
        assertThat(Duration.between(before, store.find(id).orElseThrow().createdAt()))
                .isGreaterThan(FIVE_MINUTES.minusSeconds(5));
        assertThat(trusting.metrics().clockSkewMillis()).isZero();
    }
}
