package dev.sas.testing.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Alert;
import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepRef;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskDocument;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Parallel steps ({@code Workflow.Builder.parallel}) on every store: the branches run as tasks of
 * their own, the step after the join reads every branch's output; a branch failing for good cancels
 * the branches still running, and the task compensates every completed step of every branch in
 * reverse order of completion, then the steps before the fork, each once. Driven by hand with a
 * {@link ManualClock}; timers in the branches set the order in which their steps complete. Subclass it
 * with a fresh store per test, as for {@link StateStoreContract}.
 */
public abstract class ParallelContract extends StoreTestSupport {

    private static final StepRef<Integer> RESERVED = StepRef.of("reserved", Codec.of(String::valueOf, Integer::valueOf));
    private static final Duration STEP = Duration.ofSeconds(30);
    private static final StepRef<Integer> OPENED = StepRef.of("opened", Codec.of(String::valueOf, Integer::valueOf));

    /** Time for every runtime and client. */
    protected final ManualClock clock = new ManualClock();
    private final List<String> ran = new CopyOnWriteArrayList<>();
    private final List<String> compensated = new CopyOnWriteArrayList<>();

    private SasRuntime runtime(Workflow<?> workflow) {
        return runtimeOn(clock, workflow);
    }

    private String run(String what) {
        ran.add(what);
        return what;
    }

    /** Lets {@code elapsed} pass, then runs what is due and delivers what ended, until nothing moves. */
    private static void advance(SasRuntime sas, ManualClock clock, Duration elapsed) {
        clock.tick(elapsed);
        for (int i = 0; i < 3; i++) {
            Drain.untilIdle(sas);
            Drain.supervisorOnce(sas);
        }
        Drain.untilIdle(sas);
    }

    private static List<TaskInfo> units(SasClient client, String workflowPrefix) {
        return client.list(TaskQuery.all()).stream().filter(t -> t.workflow().startsWith(workflowPrefix)).toList();
    }

    @Test
    void a_started_runtime_joins_the_branches_without_any_supervisor_pass() {
        Workflow<String> order = Workflow.builder("par-started", Codec.string())
                .parallel("fork", p -> p
                        .branch("stock", b -> b.step("pick", s -> s.execute(ctx -> run("pick " + ctx.input()))))
                        .branch("payment", b -> b.step("charge", s -> s.execute(ctx -> run("charge " + ctx.input())))))
                .step("ship", s -> s.execute(ctx -> run("ship " + ctx.output("payment").orElseThrow())))
                .build();
        // the first supervisor pass would come after an hour: the branches' ends are relayed at once
        SasRuntime sas = runtimeWith(Clock.systemUTC(), order, b -> b.supervisorInterval(Duration.ofHours(1)));
        sas.start();
        List<TaskId> ids = List.of(sas.client().submit(order, "order-1", "car").id(),
                sas.client().submit(order, "order-2", "bike").id());

        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> ids.stream()
                .allMatch(id -> sas.client().find(id).orElseThrow().status().isTerminal()));

        assertThat(ids).allSatisfy(id -> assertThat(sas.client().find(id).orElseThrow().status())
                .isEqualTo(TaskStatus.PROCESSED));
        assertThat(ran).containsExactlyInAnyOrder("pick car", "charge car", "ship charge car", "pick bike",
                "charge bike", "ship charge bike");
    }

    @Test
    void the_step_after_the_join_reads_every_branchs_output_by_name_and_by_ref() {
        Workflow<String> order = Workflow.builder("par-join", Codec.string())
                .step("accept", s -> s.execute(ctx -> run("accept " + ctx.input())))
                .parallel("reserve-and-charge", p -> p
                        .branch("stock", b -> b
                                .step("pick", s -> s.execute(ctx -> run("pick " + ctx.input())))
                                .step(RESERVED, s -> s.execute(ctx -> {
                                    run("reserve " + ctx.input());
                                    return 7;
                                })))
                        .branch("payment", b -> b.step("charge", s -> s.execute(ctx -> run("charge " + ctx.input())))))
                .step("ship", s -> s.reads(RESERVED).execute(ctx -> run("ship " + ctx.output(RESERVED) + " after "
                        + ctx.output("payment").orElseThrow())))
                .build();
        SasRuntime sas = runtime(order);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();

        Drain.untilIdle(sas); // no supervisor pass: the branches' ends are relayed to the join at once

        TaskInfo task = client.find(id).orElseThrow();
        assertThat(task.status()).as("joined without a supervisor pass").isEqualTo(TaskStatus.PROCESSED);
        List<TaskInfo> units = units(client, "par-join.reserve-and-charge.");
        assertThat(units).hasSize(2).allMatch(u -> u.status() == TaskStatus.PROCESSED);
        assertThat(task.step("reserve-and-charge").output())
                .isEqualTo("{\"stock\":\"7\",\"payment\":\"charge car\"}");
        assertThat(task.step("ship").output()).isEqualTo("ship 7 after charge car");
        assertThat(ran).containsExactlyInAnyOrder("accept car", "pick car", "reserve car", "charge car",
                "ship 7 after charge car");

        List<Map<String, Object>> children = TaskDocument.children(client, task);
        assertThat(children).extracting(c -> c.get("branch")).containsExactly("stock", "payment");
        assertThat(children).extracting(c -> c.get("step")).containsOnly("reserve-and-charge");
        assertThat(children).extracting(c -> c.get("status")).containsOnly("PROCESSED");

        advance(sas, clock, Duration.ofMinutes(1)); // a repeated delivery changes nothing
        assertThat(ran).hasSize(5);
    }

    @Test
    void a_branch_failing_for_good_cancels_the_other_and_completed_steps_are_compensated_latest_first_once() {
        Workflow<String> order = Workflow.builder("par-fail", Codec.string())
                .step("accept", s -> s.execute(ctx -> run("accept")).compensateWith(ctx -> compensated.add("accept")))
                .parallel("fork", p -> p
                        .branch("stock", b -> b
                                .step("pick", s -> s.execute(ctx -> run("pick")).compensateWith(ctx -> compensated.add("pick")))
                                .timer("stock-wait", t -> t.waitFor(STEP.multipliedBy(4)))
                                .step("hold", s -> s.execute(ctx -> run("hold")).compensateWith(ctx -> compensated.add("hold"))))
                        .branch("payment", b -> b
                                .timer("pay-wait", t -> t.waitFor(STEP.multipliedBy(2)))
                                .step("authorize", s -> s.execute(ctx -> run("authorize"))
                                        .compensateWith(ctx -> compensated.add("authorize")))
                                .timer("pay-wait-more", t -> t.waitFor(STEP.multipliedBy(4)))
                                .step("charge", s -> s.execute(ctx -> {
                                    run("charge");
                                    throw new NonRetryableException("card declined");
                                }).compensateWith(ctx -> compensated.add("charge"))))
                        .branch("notify", b -> b
                                .timer("notify-wait", t -> t.waitFor(STEP))
                                .step("prepare", s -> s.execute(ctx -> run("prepare"))
                                        .compensateWith(ctx -> compensated.add("prepare")))
                                .timer("notify-later", t -> t.waitFor(Duration.ofDays(1)))
                                .step("send", s -> s.execute(ctx -> run("send")).compensateWith(ctx -> compensated.add("send")))))
                .step("ship", s -> s.execute(ctx -> run("ship")))
                .build();
        SasRuntime sas = runtime(order);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();

        // pick at 0 s, prepare at 30 s, authorize at 60 s, hold at 120 s, charge fails at 180 s
        advance(sas, clock, Duration.ZERO);
        for (int i = 0; i < 6; i++) {
            advance(sas, clock, STEP);
        }
        advance(sas, clock, Duration.ZERO);

        TaskInfo task = client.find(id).orElseThrow();
        assertThat(ran).containsExactly("accept", "pick", "prepare", "authorize", "hold", "charge");
        assertThat(task.status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(task.step("fork").status()).isEqualTo(StepStatus.FAILED);
        assertThat(task.lastError()).contains("card declined");
        assertThat(compensated).as("every completed branch step, latest completion first, then the steps before")
                .containsExactly("hold", "authorize", "prepare", "pick", "accept");
        TaskInfo notify = units(client, "par-fail.fork.notify").get(0);
        assertThat(notify.status()).as("the branch still waiting was cancelled").isEqualTo(TaskStatus.CANCELLED);
        assertThat(units(client, "par-fail.fork.payment").get(0).status()).isEqualTo(TaskStatus.ERROR);

        advance(sas, clock, Duration.ofDays(2));
        assertThat(compensated).as("each once").hasSize(5);
        assertThat(ran).doesNotContain("send", "ship");
    }

    @Test
    void cancelling_the_task_cancels_its_running_branches_and_compensates_their_completed_steps_latest_first() {
        Workflow<String> order = Workflow.builder("par-cancel", Codec.string())
                .step("accept", s -> s.execute(ctx -> run("accept")).compensateWith(ctx -> compensated.add("accept")))
                .parallel("fork", p -> p
                        .branch("stock", b -> b
                                .step("pick", s -> s.execute(ctx -> run("pick")).compensateWith(ctx -> compensated.add("pick")))
                                .timer("stock-wait", t -> t.waitFor(Duration.ofDays(1)))
                                .step("hold", s -> s.execute(ctx -> run("hold")).compensateWith(ctx -> compensated.add("hold"))))
                        .branch("payment", b -> b
                                .timer("pay-wait", t -> t.waitFor(STEP))
                                .step("authorize", s -> s.execute(ctx -> run("authorize"))
                                        .compensateWith(ctx -> compensated.add("authorize")))
                                .timer("pay-wait-more", t -> t.waitFor(Duration.ofDays(1)))
                                .step("charge", s -> s.execute(ctx -> run("charge")))))
                .build();
        SasRuntime sas = runtime(order);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();
        advance(sas, clock, Duration.ZERO);
        advance(sas, clock, STEP);
        assertThat(ran).containsExactly("accept", "pick", "authorize");

        assertThat(client.operations().cancel(id)).isTrue();
        for (int i = 0; i < 5; i++) {
            advance(sas, clock, Duration.ofSeconds(10));
        }

        TaskInfo task = client.find(id).orElseThrow();
        assertThat(task.status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(units(client, "par-cancel.fork.")).hasSize(2).allMatch(u -> u.status() == TaskStatus.CANCELLED);
        assertThat(compensated).containsExactly("authorize", "pick", "accept");
        advance(sas, clock, Duration.ofDays(2));
        assertThat(compensated).as("each once").hasSize(3);
        assertThat(ran).doesNotContain("hold", "charge");
    }

    @Test
    void cancelling_the_task_compensates_a_branch_step_whose_request_was_sent_and_never_answered() {
        // the outcome of the awaiting step is unknown (its request went out, e.g. onto a queue whose worker
        // died and whose redelivered request is applied later, before its deadline): it is compensated like
        // any unknown outcome, and not before its deadline, so that the refund comes after a late charge
        List<String> ledger = new CopyOnWriteArrayList<>();
        Workflow<String> order = Workflow.builder("par-await", Codec.string())
                .parallel("fork", p -> p
                        .branch("stock", b -> b
                                .step("pick", s -> s.execute(ctx -> run("pick")).compensateWith(ctx -> compensated.add("pick"))))
                        .branch("payment", b -> b
                                .step("charge", s -> s.awaitCompletion((ctx, token) -> run("charge-requested"))
                                        .completeWithin(Duration.ofMinutes(5))
                                        .compensateWith(ctx -> {
                                            compensated.add("charge");
                                            ledger.add("refund");
                                        }))))
                .build();
        SasRuntime sas = runtime(order);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();
        advance(sas, clock, Duration.ZERO);
        assertThat(ran).containsExactlyInAnyOrder("pick", "charge-requested");

        assertThat(client.operations().cancel(id)).isTrue();
        for (int i = 0; i < 6; i++) {
            advance(sas, clock, Duration.ofSeconds(10));
        }
        assertThat(compensated).as("nothing compensated while the charge may still be applied").isEmpty();
        assertThat(client.find(id).orElseThrow().status()).isEqualTo(TaskStatus.COMPENSATING);
        chargeAppliedLateThenRefunded(sas, id, ledger, TaskStatus.CANCELLED); // the redelivered request
    }

    /**
     * A pick and, in parallel, a charge requested from outside whose every send fails (a broker's
     * confirm timed out: the request may still be queued), {@code attempts} sends {@code backoff}
     * apart, due within 5 minutes; its refund is written to {@code ledger}.
     */
    private Workflow<String> sendsFail(String name, int attempts, Duration backoff, List<String> ledger) {
        return Workflow.builder(name, Codec.string())
                .parallel("fork", p -> p
                        .branch("stock", b -> b
                                .step("pick", s -> s.execute(ctx -> run("pick")).compensateWith(ctx -> compensated.add("pick"))))
                        .branch("payment", b -> b
                                .step("charge", s -> s.awaitCompletion((ctx, token) -> {
                                    run("charge-requested");
                                    throw new IllegalStateException("the broker's confirm timed out");
                                })
                                        .completeWithin(Duration.ofMinutes(5))
                                        .retry(RetryPolicy.builder().maxAttempts(attempts).backoff(backoff, backoff, 1.0)
                                                .build())
                                        .compensateWith(ctx -> {
                                            compensated.add("charge");
                                            ledger.add("refund");
                                        }))))
                .build();
    }

    @Test
    void cancelling_the_task_while_a_branch_retries_a_failed_send_compensates_it_once_the_request_can_no_longer_be_applied() {
        // the send of the awaiting step failed (a broker's confirm timed out): the request may still be queued
        // and applied before its deadline, so the cancel during the retry's backoff waits for that deadline,
        // as a chain's cancel does (one rule for both)
        List<String> ledger = new CopyOnWriteArrayList<>();
        Workflow<String> order = sendsFail("par-send-failed", 3, Duration.ofMinutes(10), ledger);
        SasRuntime sas = runtime(order);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();
        advance(sas, clock, Duration.ZERO);
        assertThat(ran).containsExactlyInAnyOrder("pick", "charge-requested");

        assertThat(client.operations().cancel(id)).isTrue();
        for (int i = 0; i < 6; i++) {
            advance(sas, clock, Duration.ofSeconds(10));
        }
        assertThat(compensated).as("nothing compensated while the queued charge may still be applied").isEmpty();
        chargeAppliedLateThenRefunded(sas, id, ledger, TaskStatus.CANCELLED);
        assertThat(ran).as("no second send after the cancel").containsExactlyInAnyOrder("pick", "charge-requested");
    }

    @Test
    void a_branch_out_of_retries_on_failed_sends_is_compensated_once_its_last_request_can_no_longer_be_applied() {
        // every send of the awaiting step failed (the broker's confirm timed out), so the branch fails for good and
        // the task compensates; the last request may still be queued and applied before its deadline, so its
        // refund waits for that deadline (the parent's rule for a unit's step is the chain's: one rule)
        List<String> ledger = new CopyOnWriteArrayList<>();
        Workflow<String> order = sendsFail("par-sends-failed", 2, Duration.ofMinutes(1), ledger);
        SasRuntime sas = runtime(order);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();
        advance(sas, clock, Duration.ZERO);
        advance(sas, clock, Duration.ofSeconds(90)); // the backoff, with its jitter
        assertThat(ran).containsExactlyInAnyOrder("pick", "charge-requested", "charge-requested");
        for (int i = 0; i < 6; i++) {
            advance(sas, clock, Duration.ofSeconds(10));
        }
        assertThat(units(client, "par-sends-failed.fork.payment").get(0).status()).isEqualTo(TaskStatus.ERROR);
        assertThat(compensated).as("nothing compensated while the last queued charge may still be applied").isEmpty();
        chargeAppliedLateThenRefunded(sas, id, ledger, TaskStatus.COMPENSATED);
    }

    /**
     * The charge's queued request is applied late (within its deadline), then time passes: the task
     * ends {@code end}, the charge and the pick compensated once each, the refund after the charge.
     */
    private void chargeAppliedLateThenRefunded(SasRuntime sas, TaskId id, List<String> ledger, TaskStatus end) {
        ledger.add("charge applied late");
        for (int i = 0; i < 12; i++) {
            advance(sas, clock, Duration.ofSeconds(30));
        }
        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(end);
        assertThat(compensated).as("the charge of unknown outcome is compensated too, and the pick")
                .containsExactlyInAnyOrder("charge", "pick");
        assertThat(ledger).as("the refund comes after the late charge").containsExactly("charge applied late", "refund");
        advance(sas, clock, Duration.ofDays(2));
        assertThat(compensated).as("each once").hasSize(2);
    }

    @Test
    void a_branch_step_out_of_retries_on_errors_that_may_have_applied_is_compensated_as_in_a_chain() {
        // a lost reply or a reset connection: the charge may have gone through, so it is compensated (a chain
        // compensates its failing step the same way); a definite refusal is not (see the card declined above)
        Workflow<String> order = Workflow.builder("par-exhausted", Codec.string())
                .parallel("fork", p -> p
                        .branch("stock", b -> b
                                .step("pick", s -> s.execute(ctx -> run("pick")).compensateWith(ctx -> compensated.add("pick"))))
                        .branch("payment", b -> b
                                .timer("pay-wait", t -> t.waitFor(STEP))
                                .step("charge", s -> s.execute(ctx -> {
                                    run("charge");
                                    throw new IllegalStateException("connection reset");
                                }).retry(RetryPolicy.builder().maxAttempts(2)
                                        .backoff(Duration.ofSeconds(1), Duration.ofSeconds(1), 1.0).build())
                                        .compensateWith(ctx -> compensated.add("charge")))))
                .build();
        SasRuntime sas = runtime(order);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();
        advance(sas, clock, Duration.ZERO);
        for (int i = 0; i < 4; i++) {
            advance(sas, clock, STEP);
        }

        TaskInfo task = client.find(id).orElseThrow();
        assertThat(ran).containsExactly("pick", "charge", "charge");
        assertThat(units(client, "par-exhausted.fork.payment").get(0).status()).isEqualTo(TaskStatus.ERROR);
        assertThat(task.status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(compensated).as("the charge that may have applied, latest first, then the pick")
                .containsExactly("charge", "pick");
        advance(sas, clock, Duration.ofDays(2));
        assertThat(compensated).as("each once").hasSize(2);
    }

    @Test
    void a_failed_branch_of_a_compensated_task_is_not_resubmitted_or_cancelled_on_its_own() {
        Workflow<String> order = parallelThatFails("par-ended", true);
        SasRuntime sas = runtime(order);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();
        advance(sas, clock, Duration.ZERO);
        advance(sas, clock, Duration.ZERO);
        assertThat(client.find(id).orElseThrow().status()).isEqualTo(TaskStatus.COMPENSATED);
        TaskInfo payment = units(client, "par-ended.fork.payment").get(0);
        assertThat(payment.status()).isEqualTo(TaskStatus.ERROR);

        assertThatThrownBy(() -> client.operations().resubmit(payment.taskId()))
                .isInstanceOfSatisfying(UnitTaskException.class, e -> assertThat(e.parentId()).isEqualTo(id))
                .hasMessageContaining("cannot resubmit task " + payment.taskId() + " on its own")
                .hasMessageContaining("step 'fork' of task " + id)
                .hasMessageContaining("COMPENSATED");
        assertThat(client.operations().resubmitAll("par-ended.fork.payment")).as("resubmit errors skips it").isZero();
        assertThatThrownBy(() -> client.operations().cancel(payment.taskId())).isInstanceOf(UnitTaskException.class)
                .hasMessageContaining("cannot cancel task " + payment.taskId());
        advance(sas, clock, Duration.ofMinutes(5));

        assertThat(client.find(payment.taskId()).orElseThrow().status()).isEqualTo(TaskStatus.ERROR);
        assertThat(ran).as("nothing ran again").containsExactlyInAnyOrder("pick", "charge");
        assertThat(compensated).containsExactly("pick");
    }

    @Test
    void a_failed_branch_of_a_task_in_error_is_resubmitted_through_its_parent_only() {
        Workflow<String> order = parallelThatFails("par-error", false);
        SasRuntime sas = runtime(order);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();
        advance(sas, clock, Duration.ZERO);
        advance(sas, clock, Duration.ZERO);
        assertThat(client.find(id).orElseThrow().status()).isEqualTo(TaskStatus.ERROR);
        TaskInfo payment = units(client, "par-error.fork.payment").get(0);

        assertThatThrownBy(() -> client.operations().resubmit(payment.taskId())).isInstanceOf(UnitTaskException.class)
                .hasMessageContaining("Resubmit task " + id + " instead");
        assertThat(ran).containsExactlyInAnyOrder("pick", "charge");

        client.operations().resubmit(id);
        advance(sas, clock, Duration.ZERO);
        advance(sas, clock, Duration.ZERO);
        assertThat(ran).as("the parent's step started its failed branch again, and only that one")
                .containsExactlyInAnyOrder("pick", "charge", "charge");
        assertThat(client.find(id).orElseThrow().status()).isEqualTo(TaskStatus.ERROR);
    }

    @Test
    void a_branch_may_be_cancelled_on_its_own_while_its_parallel_step_runs() {
        Workflow<String> order = Workflow.builder("par-running", Codec.string())
                .parallel("fork", p -> p
                        .branch("stock", b -> b
                                .step("pick", s -> s.execute(ctx -> run("pick")).compensateWith(ctx -> compensated.add("pick"))))
                        .branch("payment", b -> b
                                .timer("pay-wait", t -> t.waitFor(Duration.ofDays(1)))
                                .step("charge", s -> s.execute(ctx -> run("charge")))))
                .build();
        SasRuntime sas = runtime(order);
        SasClient client = sas.client();
        TaskId id = client.submit(order, "order-1", "car").id();
        advance(sas, clock, Duration.ZERO);
        TaskInfo payment = units(client, "par-running.fork.payment").get(0);

        assertThat(client.operations().cancel(payment.taskId())).isTrue();
        for (int i = 0; i < 3; i++) {
            advance(sas, clock, Duration.ofSeconds(10));
        }

        assertThat(client.find(payment.taskId()).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(client.find(id).orElseThrow().status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(compensated).containsExactly("pick");
        assertThat(ran).doesNotContain("charge");
    }

    @Test
    void branch_steps_read_a_typed_output_of_a_step_before_the_fork_also_when_retried_on_another_node() {
        // node-a opens the order, forks, and its payment branch fails once (transient); node-b, a fresh
        // runtime with its own build of the workflow, runs the retry: the order id comes from the store
        SasRuntime a = runtime(preforkOrder(true));
        TaskId id = a.client().submit(preforkOrder(true), "order-1", "car").id();
        Drain.untilIdle(a);
        assertThat(ran).containsExactlyInAnyOrder("open car", "reserve car for 42", "charge fails on node-a");
        assertThat(a.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);

        SasRuntime b = runtimeWith(clock, preforkOrder(false), s -> s.instanceId("node-b"));
        advance(b, clock, STEP);

        TaskInfo task = b.client().find(id).orElseThrow();
        assertThat(task.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(ran).containsExactlyInAnyOrder("open car", "reserve car for 42", "charge fails on node-a",
                "charge car for 42 on node-b");
        assertThat(task.step("ship").output()).isEqualTo("ship 42: reserve car for 42, charge car for 42 on node-b");
    }

    @Test
    void a_branch_steps_compensation_reads_a_step_before_the_fork() {
        Workflow<String> order = Workflow.builder("par-prefork-comp", Codec.string())
                .step(OPENED, s -> s.execute(ctx -> 42))
                .parallel("fork", p -> p
                        .branch("stock", b -> b.step("pick", s -> s.reads(OPENED).execute(ctx -> run("pick"))
                                .compensateWith(ctx -> compensated.add("unpick order " + ctx.output(OPENED)))))
                        .branch("payment", b -> b.step("charge", s -> s.execute(ctx -> {
                            throw new NonRetryableException("card declined");
                        }))))
                .build();
        SasRuntime sas = runtime(order);
        TaskId id = sas.client().submit(order, "order-1", "car").id();
        advance(sas, clock, Duration.ZERO);
        advance(sas, clock, STEP);

        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(compensated).containsExactly("unpick order 42");
    }

    @Test
    void a_failed_and_a_cancelled_branch_count_no_error_and_no_compensation_of_their_own_only_the_parents_end() {
        Workflow<String> order = Workflow.builder("par-metrics", Codec.string())
                .parallel("fork", p -> p
                        .branch("stock", b -> b.step("pick", s -> s.execute(ctx -> run("pick"))
                                .compensateWith(ctx -> compensated.add("unpick"))))
                        .branch("payment", b -> b.step("charge", s -> s.execute(ctx -> {
                            throw new NonRetryableException("card declined");
                        })))
                        .branch("wait", b -> b.timer("later", t -> t.waitFor(Duration.ofDays(1)))))
                .build();
        SasRuntime sas = runtime(order);
        TaskId id = sas.client().submit(order, "order-1", "car").id();
        advance(sas, clock, Duration.ZERO);
        for (int i = 0; i < 3; i++) {
            advance(sas, clock, STEP);
        }

        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(units(sas.client(), "par-metrics.fork.payment").get(0).status()).isEqualTo(TaskStatus.ERROR);
        assertThat(units(sas.client(), "par-metrics.fork.wait").get(0).status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(sas.metrics().errors()).as("the failed branch is the parent step's failure").isZero();
        assertThat(sas.metrics().compensated()).as("the order, not its cancelled branch").isEqualTo(1);
    }

    /** Opens order 42, then reserves and charges it in two branches that read it; the charge fails on node-a. */
    private Workflow<String> preforkOrder(boolean onNodeA) {
        return Workflow.builder("par-prefork", Codec.string())
                .step(OPENED, s -> s.execute(ctx -> {
                    run("open " + ctx.input());
                    return 42;
                }))
                .parallel("reserve-and-charge", p -> p
                        .branch("stock", b -> b.step("reserve", s -> s.reads(OPENED)
                                .execute(ctx -> run("reserve " + ctx.input() + " for " + ctx.output(OPENED)))))
                        .branch("payment", b -> b.step("charge", s -> s.reads(OPENED).execute(ctx -> {
                            if (onNodeA) {
                                run("charge fails on node-a");
                                throw new IllegalStateException("connection reset");
                            }
                            return run("charge " + ctx.input() + " for " + ctx.output(OPENED) + " on node-b");
                        }).retry(RetryPolicy.builder().maxAttempts(3)
                                .backoff(Duration.ofSeconds(1), Duration.ofSeconds(1), 1.0).build()))))
                .step("ship", s -> s.reads(OPENED).execute(ctx -> "ship " + ctx.output(OPENED) + ": "
                        + ctx.output("stock").orElseThrow() + ", " + ctx.output("payment").orElseThrow()))
                .build();
    }

    @Test
    void a_failed_branch_raises_no_alert_of_its_own_its_parent_alerts_if_it_ends_in_error() {
        List<Alert> alerts = new CopyOnWriteArrayList<>();
        Workflow<String> compensating = parallelThatFails("par-alert-c", true);
        Workflow<String> failing = parallelThatFails("par-alert-e", false);
        SasRuntime sas = runtimeOn(clock, compensating, alerts::add);
        SasRuntime other = runtimeOn(clock, failing, alerts::add);
        TaskId compensated = sas.client().submit(compensating, "order-1", "car").id();
        TaskId failed = other.client().submit(failing, "order-2", "car").id();
        for (int i = 0; i < 2; i++) {
            advance(sas, clock, Duration.ZERO);
            advance(other, clock, Duration.ZERO);
        }

        assertThat(sas.client().find(compensated).orElseThrow().status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(other.client().find(failed).orElseThrow().status()).isEqualTo(TaskStatus.ERROR);
        assertThat(alerts).as("one alert, the parent's; none for a branch, as none for a chain's failing step")
                .singleElement().satisfies(a -> {
                    assertThat(a.taskId()).isEqualTo(failed);
                    assertThat(a.status()).isEqualTo(TaskStatus.ERROR);
                    assertThat(a.message()).contains("card declined");
                });
    }

    /** A fork whose payment branch is refused at once (a declined card) after the stock branch picked. */
    private Workflow<String> parallelThatFails(String name, boolean compensateOnFailure) {
        return Workflow.builder(name, Codec.string())
                .parallel("fork", p -> p
                        .branch("stock", b -> b
                                .step("pick", s -> s.execute(ctx -> run("pick")).compensateWith(ctx -> compensated.add("pick"))))
                        .branch("payment", b -> b
                                .step("charge", s -> s.execute(ctx -> {
                                    run("charge");
                                    throw new NonRetryableException("card declined");
                                }).compensateWith(ctx -> compensated.add("charge")))))
                .compensateOnFailure(compensateOnFailure)
                .build();
    }
}
