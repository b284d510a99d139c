package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.StateStoreException;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import dev.sas.testing.ScriptedAgent;
import dev.sas.core.spi.StateStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Nodes whose clocks are 30 s off the store's clock. The store here has a clock of its own (as a
 * database server does); every node follows it through a measured offset, so a fast node neither
 * takes the supervisor lease from a live holder nor recovers healthy claims, a slow node's claims
 * are not stolen, and a delayed task starts when the store's clock says so. Each scenario also runs
 * with {@code trustLocalClock()} (0.1's behaviour) to show that it is the fault it claims to be.
 */
class ClockSkewTest {

    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private static final Duration SKEW = Duration.ofSeconds(30);
    private static final Duration DEADLINE = Duration.ofSeconds(10);

    /** The store's clock: the authority. */
    private final ManualClock database = new ManualClock(T0);
    private final InMemoryStateStore store = new InMemoryStateStore(database);
    /** Whether the store's clock can be read; when false, reading it fails as an unreachable database would. */
    private final AtomicBoolean clockReadable = new AtomicBoolean(true);
    /** The last supervisor lease answer each instance got. */
    private final Map<String, Boolean> holdsLease = new ConcurrentHashMap<>();
    /** What the runtimes use: {@link #store}, observed. */
    private final StateStore observed = (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                if (method.getName().equals("currentTime") && !clockReadable.get()) {
                    throw new StateStoreException("currentTime failed: connection refused (injected)");
                }
                Object result;
                try {
                    result = method.invoke(store, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
                if (method.getName().equals("tryAcquireSupervisorLease")) {
                    holdsLease.put((String) args[0], (Boolean) result);
                }
                return result;
            });
    private final List<ManualClock> nodeClocks = new ArrayList<>();
    private final List<SasRuntime> runtimes = new ArrayList<>();

    @AfterEach
    void closeRuntimes() {
        runtimes.forEach(SasRuntime::close);
    }

    /** Real time passing: every clock moves on together. */
    private void elapse(Duration d) {
        database.tick(d);
        nodeClocks.forEach(c -> c.tick(d));
    }

    private ManualClock clockOff(Duration offset) {
        ManualClock c = new ManualClock(T0.plus(offset));
        nodeClocks.add(c);
        return c;
    }

    private SasRuntime node(String id, Duration offset, boolean trustLocalClock, Workflow<?> wf) {
        var b = SasRuntime.builder().stateStore(observed).clock(clockOff(offset)).instanceId(id).workflow(wf)
                .supervisorInterval(Duration.ofSeconds(1));
        if (trustLocalClock) {
            b.trustLocalClock();
        }
        SasRuntime r = b.build();
        runtimes.add(r);
        return r;
    }

    private static Workflow<String> oneCall(ScriptedAgent agent) {
        return Workflow.builder("skew", Codec.string())
                .step("call", s -> s.call(agent, ctx -> ctx.input()).completeWithin(DEADLINE))
                .build();
    }

    private static ScriptedAgent agent() {
        return new ScriptedAgent("payments", RetryPolicy.builder().maxAttempts(3).fixedBackoff(Duration.ofSeconds(1))
                .jitter(0).build());
    }

    @Test
    void a_node_30s_ahead_neither_takes_the_lease_nor_recovers_a_healthy_claim() {
        ScriptedAgent agent = agent().thenHang();
        Workflow<String> wf = oneCall(agent);
        SasRuntime honest = node("honest", Duration.ZERO, false, wf);
        SasRuntime fast = node("fast", SKEW, false, wf);
        TaskId id = honest.client().submit(wf, "order-1", "x").id();
        assertThat(Drain.supervisorOnce(honest)).isZero();
        assertThat(Drain.untilIdle(honest)).isEqualTo(1);
        elapse(Duration.ofSeconds(2));

        assertThat(Drain.supervisorOnce(fast)).as("claims the fast node recovered").isZero();
        assertThat(holdsLease).as("lease answers").containsEntry("honest", true).containsEntry("fast", false);
        assertThat(Drain.supervisorOnce(honest)).isZero();
        assertThat(holdsLease).containsEntry("honest", true);

        agent.hanging().get(0).complete("paid");
        TaskInfo info = store.find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.failureCount()).isZero();
        assertThat(store.events(id)).extracting(TaskEvent::type).doesNotContain(TaskEvent.Type.STEP_TIMED_OUT);
        assertThat(agent.calls()).hasSize(1);
        assertThat(fast.metrics().clockSkewMillis()).isEqualTo(-SKEW.toMillis());
        assertThat(honest.metrics().clockSkewMillis()).isZero();
    }

    @Test
    void trusting_a_clock_30s_ahead_steals_lease_and_claim_which_is_the_fault_the_store_clock_fixes() {
        ScriptedAgent agent = agent().thenHang().thenReply("second");
        Workflow<String> wf = oneCall(agent);
        SasRuntime honest = node("honest", Duration.ZERO, true, wf);
        SasRuntime fast = node("fast", SKEW, true, wf);
        TaskId id = honest.client().submit(wf, "order-1", "x").id();
        Drain.supervisorOnce(honest);
        Drain.untilIdle(honest);
        elapse(Duration.ofSeconds(2));

        assertThat(Drain.supervisorOnce(fast)).isEqualTo(1);
        assertThat(holdsLease).containsEntry("fast", true);
        Drain.supervisorOnce(honest);
        assertThat(holdsLease).as("the live holder lost its lease").containsEntry("honest", false);
        assertThat(store.find(id).orElseThrow().failureCount()).isEqualTo(1);
        assertThat(fast.metrics().clockSkewMillis()).as("nothing measured when the local clock is trusted").isZero();
    }

    @Test
    void a_node_30s_behind_keeps_its_claims() {
        ScriptedAgent agent = agent().thenHang();
        Workflow<String> wf = oneCall(agent);
        SasRuntime slow = node("slow", SKEW.negated(), false, wf);
        SasRuntime honest = node("honest", Duration.ZERO, false, wf);
        TaskId id = slow.client().submit(wf, "order-1", "x").id();
        assertThat(Drain.untilIdle(slow)).isEqualTo(1);
        assertThat(store.find(id).orElseThrow().completeBy()).isEqualTo(T0.plus(DEADLINE));
        elapse(Duration.ofSeconds(2));

        assertThat(Drain.supervisorOnce(honest)).isZero();
        agent.hanging().get(0).complete("paid");
        assertThat(store.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(slow.metrics().clockSkewMillis()).isEqualTo(SKEW.toMillis());
    }

    @Test
    void a_claim_that_really_expires_is_recovered_by_a_skewed_supervisor_on_the_store_clock() {
        ScriptedAgent agent = agent().thenHang().thenReply("second");
        Workflow<String> wf = oneCall(agent);
        SasRuntime honest = node("honest", Duration.ZERO, false, wf);
        SasRuntime fast = node("fast", SKEW, false, wf);
        TaskId id = honest.client().submit(wf, "order-1", "x").id();
        Drain.untilIdle(honest);

        elapse(DEADLINE.minusSeconds(1));
        assertThat(Drain.supervisorOnce(fast)).as("still within the deadline on the store's clock").isZero();
        elapse(Duration.ofSeconds(2));
        assertThat(Drain.supervisorOnce(fast)).isEqualTo(1);
        assertThat(store.find(id).orElseThrow().failureCount()).isEqualTo(1);
    }

    @Test
    void a_delayed_submit_from_a_fast_node_is_due_on_the_store_clock() {
        Workflow<String> wf = Workflow.builder("delayed", Codec.string())
                .step("only", s -> s.execute(ctx -> "done"))
                .build();
        SasRuntime fast = node("fast", SKEW, false, wf);
        SasRuntime worker = node("worker", SKEW.negated(), false, wf);
        TaskId id = fast.client().submit(wf, "order-1", "x",
                SubmitOptions.builder().delay(Duration.ofSeconds(20)).build()).id();
        assertThat(store.find(id).orElseThrow().nextAttemptAt()).isEqualTo(T0.plusSeconds(20));

        elapse(Duration.ofMillis(1_500));
        assertThat(Drain.untilIdle(worker)).isZero();
        assertThat(Drain.untilIdle(fast)).isZero();
        elapse(Duration.ofSeconds(18));
        assertThat(Drain.untilIdle(fast)).isZero();
        elapse(Duration.ofSeconds(1));
        assertThat(Drain.untilIdle(worker)).isEqualTo(1);
        assertThat(store.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
    }

    @Test
    void a_client_without_a_runtime_follows_the_store_clock_too() {
        Workflow<String> wf = Workflow.builder("delayed", Codec.string())
                .step("only", s -> s.execute(ctx -> "done"))
                .build();
        SasClient web = SasClient.builder().stateStore(observed).clock(clockOff(Duration.ofMinutes(5))).build();
        TaskId id = web.submit(wf, "order-1", "x", SubmitOptions.builder().delay(Duration.ofSeconds(20)).build()).id();
        assertThat(store.find(id).orElseThrow().nextAttemptAt()).isEqualTo(T0.plusSeconds(20));
        assertThat(store.find(id).orElseThrow().createdAt()).isEqualTo(T0);
    }

    @Test
    void a_node_whose_clock_steps_measures_again_before_it_acts() {
        ScriptedAgent agent = agent().thenHang();
        Workflow<String> wf = oneCall(agent);
        ManualClock honestClock = clockOff(Duration.ZERO);
        SasRuntime honest = SasRuntime.builder().stateStore(observed).clock(honestClock).instanceId("honest").workflow(wf)
                .build();
        runtimes.add(honest);
        SasRuntime other = node("other", Duration.ZERO, false, wf);
        TaskId id = other.client().submit(wf, "order-1", "x").id();
        Drain.untilIdle(other);
        assertThat(Drain.supervisorOnce(honest)).isZero();

        // NTP (or a VM resume) steps the supervisor's clock a minute forward: it must not trust
        // the old offset, or it would see the claim as expired.
        honestClock.tick(Duration.ofMinutes(1));
        assertThat(Drain.supervisorOnce(honest)).isZero();
        assertThat(honest.metrics().clockSkewMillis()).isEqualTo(-60_000);
        assertThat(store.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSING);
    }

    @Test
    void a_node_that_cannot_read_the_store_clock_claims_nothing_until_it_can() {
        Workflow<String> wf = Workflow.builder("later", Codec.string())
                .step("only", s -> s.execute(ctx -> "done"))
                .build();
        SasRuntime submitter = node("submitter", Duration.ZERO, false, wf);
        TaskId id = submitter.client().submit(wf, "order-1", "x").id();
        SasRuntime blind = node("blind", SKEW, false, wf);
        clockReadable.set(false);

        assertThatThrownBy(() -> Drain.schedulerOnce(blind)).isInstanceOf(StateStoreException.class)
                .hasMessageContaining("store's clock");
        assertThatThrownBy(() -> Drain.supervisorOnce(blind)).isInstanceOf(StateStoreException.class);
        assertThat(store.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
        assertThat(holdsLease).doesNotContainKey("blind");

        clockReadable.set(true);
        assertThat(Drain.untilIdle(blind)).isEqualTo(1);
        assertThat(store.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
    }
}
