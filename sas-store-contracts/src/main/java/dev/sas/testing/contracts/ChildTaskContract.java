package dev.sas.testing.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepRef;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskDocument;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Child task steps ({@code StepBuilder.childTask}) on every store: the parent's step starts one
 * child task (however often the step is started), rests {@link TaskStatus#AWAITING_COMPLETION} with no
 * thread held, and is completed by the supervisor with the child's result once the child ends,
 * exactly once; a child's failure is the step's failure; cancelling the parent cancels the child.
 * Driven by hand with a {@link ManualClock}. Subclass it with a fresh store per test, as for
 * {@link StateStoreContract}.
 */
public abstract class ChildTaskContract extends StoreTestSupport {

    /** How long the parent's child step waits for its child. */
    protected static final Duration CHILD_DEADLINE = Duration.ofMinutes(10);
    /** Retries after 1 s, no jitter, 3 attempts. */
    protected static final RetryPolicy THREE_TRIES = RetryPolicy.builder().maxAttempts(3)
            .fixedBackoff(Duration.ofSeconds(1)).jitter(0).build();

    /** Time for every runtime and client. */
    protected final ManualClock clock = new ManualClock();
    private final List<SasRuntime> runtimes = new ArrayList<>();
    private final List<String> ran = new CopyOnWriteArrayList<>();
    private final List<String> compensated = new CopyOnWriteArrayList<>();

    @Override
    void beforeStoreIsDestroyed() {
        runtimes.forEach(SasRuntime::close);
    }

    private SasRuntime runtime(Workflow<?>... workflows) {
        return runtime("node-a", workflows);
    }

    private SasRuntime runtime(String instanceId, Workflow<?>... workflows) {
        var b = SasRuntime.builder().stateStore(store).clock(clock).trustLocalClock().instanceId(instanceId);
        for (Workflow<?> w : workflows) {
            b.workflow(w);
        }
        SasRuntime sas = b.build();
        runtimes.add(sas);
        return sas;
    }

    /** pack (records its run), then label: the child's result is the label. */
    private Workflow<String> shipping(String name, AtomicInteger failuresLeft, boolean failForGood) {
        return Workflow.builder(name, Codec.string())
                .step("pack", s -> s.retry(THREE_TRIES).execute(ctx -> {
                    ran.add(ctx.input() + ":pack");
                    if (failuresLeft.getAndDecrement() > 0) {
                        throw failForGood ? new NonRetryableException("no stock for " + ctx.input())
                                : new IllegalStateException("packing station busy");
                    }
                    return "packed " + ctx.input();
                }))
                .step("label", s -> s.execute(ctx -> "label for " + ctx.output("pack").orElseThrow()))
                .build();
    }

    private Workflow<String> shipping(String name) {
        return shipping(name, new AtomicInteger(), false);
    }

    /** reserve (compensated), ship (the child), invoice (reads the child's result). */
    private Workflow<String> order(String name, Workflow<String> child) {
        return Workflow.builder(name, Codec.string())
                .compensateOnFailure(true)
                .step("reserve", s -> s.execute(ctx -> "reserved " + ctx.input())
                        .compensateWith(ctx -> compensated.add(ctx.taskId() + ":reserve")))
                .step("ship", s -> s.childTask(child, ctx -> ctx.input() + "-parcel").completeWithin(CHILD_DEADLINE)
                        .retry(THREE_TRIES))
                .step("invoice", s -> s.execute(ctx -> "invoice, " + ctx.output("ship").orElseThrow()))
                .build();
    }

    private static TaskInfo child(SasClient client, Workflow<?> child) {
        List<TaskInfo> all = client.list(TaskQuery.all().withWorkflow(child.name()));
        assertThat(all).as("exactly one child task of " + child.name()).hasSize(1);
        return all.get(0);
    }

    private static long count(SasClient client, TaskId id, TaskEvent.Type type) {
        return Collections.frequency(client.events(id).stream().map(TaskEvent::type).toList(), type);
    }

    @Test
    void the_child_runs_and_its_result_completes_the_parents_step_once() {
        Workflow<String> ship = shipping("child-ship");
        Workflow<String> order = order("child-order", ship);
        SasRuntime sas = runtime(order, ship);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();

        while (Drain.schedulerOnce(sas) > 0) { // what runs, without relaying the child's end
            assertThat(sas.inFlight()).as("no thread waits for the child").isZero();
        }
        TaskInfo parent = client.find(id).orElseThrow();
        assertThat(parent.status()).as("the child ran; its end is not relayed yet").isEqualTo(TaskStatus.AWAITING_COMPLETION);
        TaskInfo child = child(client, ship);
        assertThat(child.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(child.businessKey()).contains(id.value()).contains("ship");

        Drain.untilIdle(sas); // relays the child's end at once, as a started runtime does: no supervisor pass

        parent = client.find(id).orElseThrow();
        assertThat(parent.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(parent.step("ship").status()).isEqualTo(StepStatus.COMPLETED);
        assertThat(parent.step("ship").output()).isEqualTo("label for packed car-parcel");
        assertThat(parent.step("invoice").output()).isEqualTo("invoice, label for packed car-parcel");
        assertThat(count(client, id, TaskEvent.Type.STEP_COMPLETED)).isEqualTo(3);
        assertThat(ran).containsExactly("car-parcel:pack");

        Drain.supervisorOnce(sas); // a repeated delivery changes nothing
        assertThat(count(client, id, TaskEvent.Type.STEP_COMPLETED)).isEqualTo(3);
        assertThat(client.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
    }

    @Test
    void a_node_gone_after_the_child_ended_loses_nothing_and_another_nodes_pass_delivers_the_end_once() {
        Workflow<String> ship = shipping("child-gone");
        Workflow<String> order = order("child-gone-order", ship);
        SasRuntime gone = runtime("node-gone", order, ship);
        TaskId id = gone.client().submit(order, "order-1", "car").id();
        while (Drain.schedulerOnce(gone) > 0) { // runs the child; the node is gone before it relays the end
        }
        assertThat(child(gone.client(), ship).status()).isEqualTo(TaskStatus.PROCESSED);
        gone.close(); // before any pass or relay delivered the child's end

        SasRuntime b = runtime("node-b", order);
        SasRuntime c = runtime("node-c", order);
        Drain.supervisorOnce(b);
        Drain.supervisorOnce(c); // not the leader, it relays too: the end is delivered already, nothing changes
        Drain.untilIdle(c);

        SasClient client = b.client();
        TaskInfo parent = client.find(id).orElseThrow();
        assertThat(parent.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(parent.step("ship").output()).isEqualTo("label for packed car-parcel");
        assertThat(count(client, id, TaskEvent.Type.COMPLETION_RECEIVED)).as("the end delivered once").isEqualTo(1);
        assertThat(count(client, id, TaskEvent.Type.STEP_COMPLETED)).isEqualTo(3);
        assertThat(ran).containsExactly("car-parcel:pack");
    }

    @Test
    void a_child_that_ended_on_a_node_without_the_parent_workflow_is_found_by_the_scan() {
        Workflow<String> ship = shipping("child-elsewhere");
        Workflow<String> order = order("child-elsewhere-order", ship);
        SasRuntime parents = runtime("node-parents", order);
        SasRuntime children = runtime("node-children", ship);
        TaskId id = parents.client().submit(order, "order-1", "car").id();
        Drain.untilIdle(parents);
        Drain.supervisorOnce(parents); // its first pass scans: the child has not run yet
        Drain.untilIdle(children);
        assertThat(child(parents.client(), ship).status()).isEqualTo(TaskStatus.PROCESSED);

        int passes = 0;
        while (parents.client().find(id).orElseThrow().status() == TaskStatus.AWAITING_COMPLETION && passes < 20) {
            Drain.supervisorOnce(parents);
            passes++;
        }
        Drain.untilIdle(parents);

        assertThat(passes).as("found by a scan within ten passes").isLessThanOrEqualTo(10);
        TaskInfo parent = parents.client().find(id).orElseThrow();
        assertThat(parent.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(parent.step("invoice").output()).isEqualTo("invoice, label for packed car-parcel");
        assertThat(count(parents.client(), id, TaskEvent.Type.COMPLETION_RECEIVED)).isEqualTo(1);
    }

    @Test
    void a_child_step_started_again_after_a_time_out_finds_the_same_child() {
        AtomicInteger busy = new AtomicInteger(1);
        Workflow<String> ship = shipping("child-again", busy, false);
        Workflow<String> order = order("child-again-order", ship);
        SasRuntime sas = runtime(order, ship);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();
        Drain.untilIdle(sas);
        assertThat(child(client, ship).status()).as("its first attempt failed; retried in 1 s")
                .isEqualTo(TaskStatus.PENDING);

        // the parent's step misses its deadline while the child waits for its retry: started again
        clock.tick(CHILD_DEADLINE.plusSeconds(1));
        assertThat(Drain.supervisorOnce(sas)).as("the parent's awaiting step timed out").isEqualTo(1);
        clock.tick(Duration.ofSeconds(2));
        Drain.untilIdle(sas);
        Drain.supervisorOnce(sas);
        Drain.untilIdle(sas);

        TaskInfo parent = client.find(id).orElseThrow();
        assertThat(parent.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(parent.step("ship").attempts()).as("the step was started twice").isEqualTo(2);
        assertThat(child(client, ship).status()).as("one child, however often the step started")
                .isEqualTo(TaskStatus.PROCESSED);
        assertThat(ran).containsExactly("car-parcel:pack", "car-parcel:pack");
        assertThat(count(client, id, TaskEvent.Type.STEP_COMPLETED)).isEqualTo(3);
    }

    @Test
    void a_failed_child_fails_the_step_for_good_and_the_parent_compensates() {
        Workflow<String> ship = shipping("child-fail", new AtomicInteger(1), true);
        Workflow<String> order = order("child-fail-order", ship);
        SasRuntime sas = runtime(order, ship);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();
        Drain.untilIdle(sas);
        TaskInfo child = child(client, ship);
        assertThat(child.status()).isIn(TaskStatus.ERROR, TaskStatus.COMPENSATED);

        Drain.supervisorOnce(sas);
        Drain.untilIdle(sas);

        TaskInfo parent = client.find(id).orElseThrow();
        assertThat(parent.status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(parent.step("ship").status()).isEqualTo(StepStatus.FAILED);
        assertThat(parent.step("ship").attempts()).as("a child's failure is not retried: the child would fail again")
                .isEqualTo(1);
        assertThat(parent.lastError()).contains(child.taskId().value()).contains("no stock for car-parcel");
        assertThat(compensated).containsExactly(id + ":reserve");
        assertThat(parent.step("invoice").status()).isEqualTo(StepStatus.PENDING);
        Drain.supervisorOnce(sas);
        Drain.untilIdle(sas);
        assertThat(compensated).as("compensated once").hasSize(1);
    }

    @Test
    void cancelling_the_parent_cancels_its_running_child() {
        AtomicInteger busy = new AtomicInteger(1);
        Workflow<String> ship = shipping("child-cancel", busy, false);
        Workflow<String> order = order("child-cancel-order", ship);
        SasRuntime sas = runtime(order, ship);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();
        Drain.untilIdle(sas);
        assertThat(client.find(id).orElseThrow().status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);
        TaskId childId = child(client, ship).taskId();

        assertThat(client.operations().cancel(id)).isTrue();
        Drain.untilIdle(sas);
        assertThat(client.find(id).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(compensated).containsExactly(id + ":reserve");
        clock.tick(Duration.ofSeconds(2));
        Drain.untilIdle(sas);
        assertThat(client.find(childId).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(ran).as("the child's retry never ran").containsExactly("car-parcel:pack");
        Drain.supervisorOnce(sas);
        Drain.untilIdle(sas);
        assertThat(client.find(id).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
    }

    @Test
    void a_runtime_without_completion_keys_runs_child_steps_and_documents_show_parent_and_child() {
        Workflow<String> ship = shipping("child-doc");
        Workflow<String> order = order("child-doc-order", ship);
        SasRuntime sas = runtime(order, ship);
        assertThat(sas.config().completionTokenKeys()).as("child steps need no reply keys").isNull();
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();
        Drain.untilIdle(sas);
        TaskInfo child = child(client, ship);

        List<Map<String, Object>> children = TaskDocument.children(client, client.find(id).orElseThrow());
        assertThat(children).hasSize(1);
        assertThat(children.get(0)).containsEntry("step", "ship").containsEntry("id", child.taskId().value())
                .containsEntry("workflow", "child-doc").containsEntry("status", "PROCESSED");
        Map<String, Object> childDoc = TaskDocument.detail(child, client.events(child.taskId()), false);
        assertThat(childDoc.get("parent")).isEqualTo(Map.of("id", id.value(), "step", "ship"));
        assertThat(TaskDocument.detail(client.find(id).orElseThrow(), List.of(), false).get("parent")).isNull();
        assertThat(TaskDocument.children(client, child)).isEmpty();
    }

    @Test
    void a_typed_child_step_decodes_the_childs_result_with_its_ref_and_fails_for_good_when_it_cannot() {
        StepRef<Integer> count = StepRef.of("count", Codec.<Integer>of(i -> Integer.toString(i), Integer::valueOf));
        Workflow<String> counting = Workflow.builder("child-count", Codec.string())
                .step("count", s -> s.execute(ctx -> ctx.input().startsWith("many") ? "many" : "" + ctx.input().length()))
                .build();
        Workflow<String> order = Workflow.builder("child-count-order", Codec.string())
                .step(count, s -> s.childTask(counting, ctx -> ctx.input()))
                .step("double", s -> s.execute(ctx -> "twice " + ctx.output(count) * 2))
                .build();
        SasRuntime sas = runtime(order, counting);
        SasClient client = sas.client();
        TaskId fine = client.submit(order, "order-1", "four").id();
        TaskId bad = client.submit(order, "order-2", "many things").id();
        Drain.untilIdle(sas);
        Drain.supervisorOnce(sas);
        Drain.untilIdle(sas);

        assertThat(client.find(fine).orElseThrow().step("double").output()).isEqualTo("twice 8");
        TaskInfo failed = client.find(bad).orElseThrow();
        assertThat(failed.status()).isIn(TaskStatus.ERROR, TaskStatus.COMPENSATED);
        assertThat(failed.step("count").status()).isEqualTo(StepStatus.FAILED);
        assertThat(failed.lastError()).contains("ended PROCESSED, but its result cannot be this step's output")
                .contains("NumberFormatException");
        Drain.supervisorOnce(sas);
        assertThat(client.find(bad).orElseThrow().step("count").attempts()).isEqualTo(1);
    }

    @Test
    void children_nest_their_results_come_up_and_cancelling_the_top_cancels_every_level() {
        AtomicInteger busy = new AtomicInteger();
        Workflow<String> leaf = shipping("child-leaf", busy, false);
        Workflow<String> middle = Workflow.builder("child-middle", Codec.string())
                .step("leaf", s -> s.childTask(leaf, ctx -> ctx.input() + "-leaf").completeWithin(CHILD_DEADLINE))
                .build();
        Workflow<String> top = Workflow.builder("child-top", Codec.string())
                .step("middle", s -> s.childTask(middle, ctx -> ctx.input()).completeWithin(CHILD_DEADLINE))
                .build();
        SasRuntime sas = runtime(top, middle, leaf);
        SasClient client = sas.client();
        TaskId done = client.submit(top, "order-1", "car").id();
        for (int pass = 0; pass < 3; pass++) {
            Drain.untilIdle(sas);
            Drain.supervisorOnce(sas);
        }
        Drain.untilIdle(sas);
        assertThat(client.find(done).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(client.find(done).orElseThrow().step("middle").output()).isEqualTo("label for packed car-leaf");

        busy.set(1);
        TaskId cancelled = client.submit(top, "order-2", "bike").id();
        Drain.untilIdle(sas);
        TaskInfo middleTask = client.find("child-middle", "sas-child:" + cancelled.value() + "/middle").orElseThrow();
        TaskInfo leafTask = client.find("child-leaf", "sas-child:" + middleTask.taskId().value() + "/leaf").orElseThrow();
        assertThat(middleTask.status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);
        assertThat(leafTask.status()).as("its first attempt failed; retried in 1 s").isEqualTo(TaskStatus.PENDING);

        assertThat(client.operations().cancel(cancelled)).isTrue();
        Drain.untilIdle(sas);
        clock.tick(Duration.ofSeconds(2));
        Drain.untilIdle(sas);

        assertThat(client.find(cancelled).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(client.find(middleTask.taskId()).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(client.find(leafTask.taskId()).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(ran).containsExactly("car-leaf:pack", "bike-leaf:pack");
    }

    @Test
    void a_child_step_is_one_kind_of_work() {
        Workflow<String> ship = shipping("child-kinds");
        assertThatThrownBy(() -> Workflow.builder("child-kinds-order", Codec.string())
                .step("ship", s -> s.childTask(ship, ctx -> ctx.input()).execute(ctx -> "x")).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("execute(...) and childTask(...)");
        assertThatThrownBy(() -> Workflow.builder("child-kinds-order", Codec.string())
                .step("ship", s -> s.childTask(null, ctx -> ctx.input())))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("child workflow must not be null");
        assertThatThrownBy(() -> Workflow.builder("child-kinds-order", Codec.string())
                .step("ship", s -> s.childTask(ship, null)))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("child input must not be null");
    }
}
