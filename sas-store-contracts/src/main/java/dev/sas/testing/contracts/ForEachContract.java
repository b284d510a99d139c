package dev.sas.testing.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.ForEachFailure;
import dev.sas.core.ForEachResults;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepRef;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.UnitTaskException;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.ManualClock;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Dynamic fan-out ({@code Workflow.Builder.forEach}) on every store: one step run once per element of
 * a list computed from the input, at most K at once, joined in list order; a partial failure per
 * {@link ForEachFailure} policy. Driven by hand with a {@link ManualClock}: each round runs what is
 * due ({@link Drain#untilIdle}, which also relays each element's end: the next element of its lane
 * goes on and the step joins) and one supervisor pass; and once by a started runtime whose
 * supervisor never runs. Subclass it with a fresh store per test, as for {@link StateStoreContract}.
 */
public abstract class ForEachContract extends StoreTestSupport {

    /** Time for every runtime here. */
    protected final ManualClock clock = new ManualClock();
    /** How many times each element's step ran, by element. */
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    /** The compensations that ran, in order. */
    private final List<String> compensated = new CopyOnWriteArrayList<>();

    /** Elements that ran before the element K places before them in their lane had ended. */
    private final List<String> laneViolations = new CopyOnWriteArrayList<>();
    private volatile SasRuntime current;

    private SasRuntime runtime(Workflow<?> workflow) {
        current = runtimeOn(clock, workflow);
        return current;
    }

    /**
     * Checks, as element {@code index} runs, that the element K before it in its lane has ended: so no
     * two elements of one lane run at once, and at most K (one per lane) do.
     */
    private void checkLane(String workflow, String businessKey, int k) {
        int hash = businessKey.lastIndexOf('#');
        int index = Integer.parseInt(businessKey.substring(hash + 1));
        if (index >= k) {
            String before = businessKey.substring(0, hash + 1) + (index - k);
            TaskInfo unit = current.client().find(workflow + ".ship-parcels.each", before).orElse(null);
            if (unit == null || !unit.status().isTerminal()) {
                laneViolations.add(businessKey + " ran while " + before + " was " + (unit == null ? "missing"
                        : unit.status()));
            }
        }
    }

    /** The input "n" is n elements "p0".."p(n-1)". */
    private static List<String> parcels(String input) {
        return IntStream.range(0, Integer.parseInt(input)).mapToObj(i -> "p" + i).toList();
    }

    private Workflow<String> shipping(String name, int concurrency, ForEachFailure policy) {
        return Workflow.builder(name, Codec.string())
                .step("pack", s -> s.execute(ctx -> "packed " + ctx.input())
                        .compensateWith(ctx -> compensated.add("unpack")))
                .forEach("ship-parcels", Codec.string(), ctx -> parcels(ctx.input()), each -> each
                        .step("ship", s -> s.execute(ctx -> {
                            checkLane(name, ctx.businessKey(), concurrency);
                            runs.computeIfAbsent(ctx.input(), k -> new AtomicInteger()).incrementAndGet();
                            if (ctx.input().equals(failingParcel)) {
                                throw new NonRetryableException("no courier for " + ctx.input());
                            }
                            return "shipped " + ctx.input();
                        }).compensateWith(ctx -> compensated.add("recall " + ctx.input())))
                        .concurrency(concurrency)
                        .onFailure(policy))
                .step("invoice", s -> s.execute(ctx -> "invoice for "
                        + ForEachResults.of(ctx.output("ship-parcels").orElseThrow()).size() + " parcels"))
                .build();
    }

    /** The element whose step fails for good. */
    private volatile String failingParcel = "none";

    /** Rounds of (run what is due, one supervisor pass, a second on the clock) until the task is final. */
    private int runUntilFinal(SasRuntime sas, TaskId id, int maxRounds) {
        for (int round = 1; round <= maxRounds; round++) {
            Drain.untilIdle(sas);
            Drain.supervisorOnce(sas);
            clock.tick(Duration.ofSeconds(1));
            if (sas.client().find(id).orElseThrow().status().isTerminal()) {
                Drain.untilIdle(sas);
                return round;
            }
        }
        throw new AssertionError("task " + id + " not final after " + maxRounds + " rounds: "
                + sas.client().find(id).orElseThrow());
    }

    private static List<TaskInfo> units(SasRuntime sas, Workflow<?> wf) {
        return sas.client().list(TaskQuery.all().withWorkflow(wf.name() + ".ship-parcels.each")
                .withLimit(TaskQuery.MAX_LIMIT));
    }

    private static final StepRef<Integer> OPENED = StepRef.of("opened", Codec.of(String::valueOf, Integer::valueOf));

    /** Opens order 42, then ships each parcel of it; on node-a, parcel p1's step fails once (transient). */
    private Workflow<String> preforkShipping(boolean onNodeA) {
        return Workflow.builder("for-each-prefork", Codec.string())
                .step(OPENED, s -> s.execute(ctx -> 42))
                .forEach("ship-parcels", Codec.string(), ctx -> parcels(ctx.input()), each -> each
                        .step("ship", s -> s.reads(OPENED).execute(ctx -> {
                            if (onNodeA && ctx.input().equals("p1")) {
                                throw new IllegalStateException("connection reset");
                            }
                            return ctx.input() + " of order " + ctx.output(OPENED) + (onNodeA ? "" : " on node-b");
                        }).retry(RetryPolicy.builder().maxAttempts(3)
                                .backoff(Duration.ofSeconds(1), Duration.ofSeconds(1), 1.0).build()))
                        .concurrency(2))
                .build();
    }

    @Test
    void an_element_step_reads_a_typed_output_of_a_step_before_the_fork_also_when_retried_on_another_node() {
        SasRuntime a = runtime(preforkShipping(true));
        TaskId id = a.client().submit(preforkShipping(true), "order-1", "3").id();
        Drain.untilIdle(a);
        Drain.supervisorOnce(a);
        Drain.untilIdle(a);
        assertThat(a.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);

        // node-b, a fresh runtime with its own build of the workflow, runs p1's retry: the value comes from the store
        SasRuntime b = runtimeWith(clock, preforkShipping(false), s -> s.instanceId("node-b"));
        current = b;
        runUntilFinal(b, id, 20);

        TaskInfo info = b.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(ForEachResults.of(info.step("ship-parcels").output()).outputs(Codec.string()))
                .containsExactly("p0 of order 42", "p1 of order 42 on node-b", "p2 of order 42");
    }

    @Test
    void a_fan_out_of_1000_elements_with_concurrency_16_runs_every_element_once_and_joins_them_in_order() {
        Workflow<String> wf = shipping("for-each-1000", 16, ForEachFailure.FAIL_AND_COMPENSATE_ALL);
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "1000").id();

        Drain.untilIdle(sas);
        assertThat(units(sas, wf)).hasSize(1000);

        assertThat(runUntilFinal(sas, id, 2_000)).as("the lanes and the join need no supervisor pass").isEqualTo(1);
        assertThat(laneViolations).as("no element ran before the one K before it in its lane had ended").isEmpty();

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(runs).hasSize(1000);
        assertThat(runs.values()).as("every element ran exactly once").allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
        ForEachResults results = ForEachResults.of(info.step("ship-parcels").output());
        assertThat(results.outputs(Codec.string())).containsExactlyElementsOf(
                IntStream.range(0, 1000).mapToObj(i -> "shipped p" + i).toList());
        assertThat(info.step("invoice").output()).isEqualTo("invoice for 1000 parcels");
        assertThat(units(sas, wf)).allSatisfy(u -> assertThat(u.status()).isEqualTo(TaskStatus.PROCESSED));
        assertThat(compensated).isEmpty();
    }

    @Test
    void at_most_k_elements_run_at_once_and_each_lane_goes_on_when_its_element_ends() {
        Workflow<String> wf = shipping("for-each-lanes", 3, ForEachFailure.FAIL_AND_COMPENSATE_ALL);
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "7").id();

        // no supervisor pass: each element's end lets the next of its lane go on, the last ones' the join
        Drain.untilIdle(sas);

        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(runs).hasSize(7).allSatisfy((k, n) -> assertThat(n.get()).isEqualTo(1));
        assertThat(laneViolations).as("no element ran before the one K before it in its lane had ended").isEmpty();
    }

    @Test
    void a_started_runtime_moves_lanes_on_and_joins_without_any_supervisor_pass() {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostRunning = new AtomicInteger();
        Workflow<String> wf = Workflow.builder("for-each-started", Codec.string())
                .forEach("ship-parcels", Codec.string(), ctx -> parcels(ctx.input()), each -> each
                        .step("ship", s -> s.execute(ctx -> {
                            mostRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
                            checkLane("for-each-started", ctx.businessKey(), 3);
                            runs.computeIfAbsent(ctx.input(), k -> new AtomicInteger()).incrementAndGet();
                            running.decrementAndGet();
                            return "shipped " + ctx.input();
                        }))
                        .concurrency(3))
                .build();
        // the first supervisor pass would come after an hour: every lane and the join go on by the relay
        SasRuntime sas = runtimeWith(Clock.systemUTC(), wf, b -> b.supervisorInterval(Duration.ofHours(1))
                .schedulerThreads(8));
        current = sas;
        sas.start();
        TaskId id = sas.client().submit(wf, "order-1", "30").id();

        Awaitility.await().atMost(Duration.ofSeconds(60))
                .until(() -> sas.client().find(id).orElseThrow().status().isTerminal());

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(ForEachResults.of(info.step("ship-parcels").output()).size()).isEqualTo(30);
        assertThat(runs).hasSize(30).allSatisfy((k, n) -> assertThat(n.get()).isEqualTo(1));
        assertThat(laneViolations).as("no element ran before the one K before it in its lane had ended").isEmpty();
        assertThat(mostRunning.get()).as("never more than K elements at once").isLessThanOrEqualTo(3);
    }

    @Test
    void a_lanes_next_element_that_comes_to_its_slot_after_the_one_before_it_ended_goes_on_without_a_pass() {
        // claims of one task at a time: element i ends while element i + K is still pending
        Workflow<String> wf = shipping("for-each-late-slot", 3, ForEachFailure.FAIL_AND_COMPENSATE_ALL);
        SasRuntime sas = runtimeWith(clock, wf, b -> b.claimBatchSize(1));
        current = sas;
        TaskId id = sas.client().submit(wf, "order-1", "12").id();

        Drain.untilIdle(sas); // no supervisor pass

        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(runs).hasSize(12).allSatisfy((k, n) -> assertThat(n.get()).isEqualTo(1));
        assertThat(laneViolations).as("no element ran before the one K before it in its lane had ended").isEmpty();
    }

    @Test
    void a_started_runtime_joins_an_empty_list_without_any_supervisor_pass() {
        Workflow<String> wf = shipping("for-each-started-empty", 4, ForEachFailure.FAIL_AND_COMPENSATE_ALL);
        SasRuntime sas = runtimeWith(Clock.systemUTC(), wf, b -> b.supervisorInterval(Duration.ofHours(1)));
        sas.start();
        TaskId id = sas.client().submit(wf, "order-1", "0").id();

        Awaitility.await().atMost(Duration.ofSeconds(60))
                .until(() -> sas.client().find(id).orElseThrow().status().isTerminal());

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("invoice").output()).isEqualTo("invoice for 0 parcels");
    }

    @Test
    void an_empty_list_joins_to_no_results_and_the_task_goes_on() {
        Workflow<String> wf = shipping("for-each-empty", 4, ForEachFailure.FAIL_AND_COMPENSATE_ALL);
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "0").id();

        runUntilFinal(sas, id, 20);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("invoice").output()).isEqualTo("invoice for 0 parcels");
        assertThat(runs).isEmpty();
    }

    @Test
    void with_fail_and_compensate_all_a_failed_element_cancels_the_rest_and_every_completed_element_is_compensated_once() {
        failingParcel = "p5";
        Workflow<String> wf = shipping("for-each-fail", 4, ForEachFailure.FAIL_AND_COMPENSATE_ALL);
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "40").id();

        runUntilFinal(sas, id, 200);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(info.lastError()).contains("no courier for p5");
        List<String> shipped = runs.keySet().stream().filter(p -> !p.equals("p5")).sorted().toList();
        assertThat(runs.size()).as("the elements after the failure never started").isLessThan(40);
        assertThat(runs.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
        List<String> recalls = compensated.stream().filter(c -> c.startsWith("recall ")).toList();
        assertThat(recalls).as("every element that shipped is recalled once, the failed one not")
                .containsExactlyInAnyOrderElementsOf(shipped.stream().map(p -> "recall " + p).toList())
                .doesNotHaveDuplicates();
        assertThat(compensated).as("then the step before the fan-out").last().isEqualTo("unpack");
        assertThat(Collections.frequency(compensated, "unpack")).isEqualTo(1);
        assertThat(units(sas, wf)).allSatisfy(u -> assertThat(u.status().isTerminal()).isTrue());
    }

    @Test
    void with_collect_failures_every_element_runs_and_the_join_holds_each_output_or_error_in_order() {
        failingParcel = "p2";
        Workflow<String> wf = shipping("for-each-collect", 2, ForEachFailure.COLLECT_FAILURES);
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "6").id();

        runUntilFinal(sas, id, 50);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(runs).hasSize(6).allSatisfy((k, n) -> assertThat(n.get()).isEqualTo(1));
        ForEachResults results = ForEachResults.of(info.step("ship-parcels").output());
        assertThat(results.size()).isEqualTo(6);
        assertThat(results.failures()).singleElement().satisfies(f -> {
            assertThat(f.index()).isEqualTo(2);
            assertThat(f.error()).contains("no courier for p2");
        });
        assertThat(results.elements()).extracting(ForEachResults.Element::output)
                .containsExactly("shipped p0", "shipped p1", null, "shipped p3", "shipped p4", "shipped p5");
        assertThat(info.step("invoice").output()).isEqualTo("invoice for 6 parcels");
        assertThat(compensated).isEmpty();

        // the failed element stays ERROR; the task has finished with it, so it is not run again on its own
        TaskInfo failed = units(sas, wf).stream().filter(u -> u.status() == TaskStatus.ERROR).findFirst().orElseThrow();
        assertThatThrownBy(() -> sas.client().operations().resubmit(failed.taskId()))
                .isInstanceOf(UnitTaskException.class).hasMessageContaining("step 'ship-parcels' of task " + id);
        assertThat(sas.client().operations().resubmitAll(failed.workflow())).isZero();
        assertThat(runs).allSatisfy((k, n) -> assertThat(n.get()).isEqualTo(1));
    }
}
