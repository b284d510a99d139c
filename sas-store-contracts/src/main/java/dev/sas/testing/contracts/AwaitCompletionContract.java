package dev.sas.testing.contracts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.CompletionOutcome;
import dev.sas.core.CompletionRequest;
import dev.sas.core.CompletionTokenKeys;
import dev.sas.core.RetryPolicy;
import dev.sas.core.RuntimeBuilder;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepRef;
import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.Transition;
import dev.sas.testing.Drain;
import dev.sas.testing.ManualClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * What steps that await completion ({@code awaitCompletion}) do on every store: the request is sent,
 * the task waits {@link TaskStatus#AWAITING_COMPLETION} with no runtime holding it, and a completion through
 * {@link dev.sas.core.StepCompletionClient#complete} or {@link dev.sas.core.StepCompletionClient#fail} (here from a client with no runtime)
 * completes or fails the step, fenced by the attempt's lease and bounded by its deadline: late,
 * stale and duplicate completions change nothing (test names say "reply" for a completion, as
 * docs/failure-modes.md cites them). Driven by hand with a {@link ManualClock}. Subclass it
 * with a fresh store per test, as for {@link StateStoreContract}.
 */
public abstract class AwaitCompletionContract extends StoreTestSupport {

    /** The approval step's deadline. */
    protected static final Duration DEADLINE = Duration.ofDays(7);
    /** Retries after 1 s, no jitter, 3 attempts. */
    protected static final RetryPolicy THREE_TRIES = RetryPolicy.builder().maxAttempts(3)
            .fixedBackoff(Duration.ofSeconds(1)).jitter(0).build();

    /** The key every runtime and client here signs and checks reply tokens with, unless a test says otherwise. */
    protected static final byte[] KEY_1 = key("key one");
    /** The key a rotation brings in. */
    protected static final byte[] KEY_2 = key("key two");
    /** Current key {@code k1}. */
    protected static final CompletionTokenKeys KEYS = CompletionTokenKeys.builder().currentKey("k1", KEY_1).build();

    /** Time for every runtime and client. */
    protected final ManualClock clock = new ManualClock();
    private final List<SasRuntime> runtimes = new ArrayList<>();
    /** Every request sent, in order. */
    private final List<Sent> sent = new CopyOnWriteArrayList<>();
    private final List<String> compensated = new CopyOnWriteArrayList<>();

    /** One request as the step sent it. */
    private record Sent(TaskId taskId, String step, int attempt, String idempotencyKey, String token) {
    }

    @Override
    void beforeStoreIsDestroyed() {
        runtimes.forEach(SasRuntime::close);
    }

    private SasRuntime runtime(Workflow<?>... workflows) {
        return runtime(KEYS, workflows);
    }

    private SasRuntime runtime(CompletionTokenKeys keys, Workflow<?>... workflows) {
        RuntimeBuilder b = SasRuntime.builder().stateStore(store).clock(clock).trustLocalClock().instanceId("node-a")
                .completionTokenKeys(keys);
        for (Workflow<?> w : workflows) {
            b.workflow(w);
        }
        SasRuntime sas = b.build();
        runtimes.add(sas);
        return sas;
    }

    /** A client with no runtime, as a webhook handler in another process would hold. */
    private SasClient bareClient(Workflow<?>... workflows) {
        return bareClient(KEYS, workflows);
    }

    private SasClient bareClient(CompletionTokenKeys keys, Workflow<?>... workflows) {
        SasClient.Builder b = SasClient.builder().stateStore(store).clock(clock).trustLocalClock().completionTokenKeys(keys);
        for (Workflow<?> w : workflows) {
            b.workflow(w);
        }
        return b.build();
    }

    private <I> CompletionRequest<I> recording() {
        return (ctx, token) -> sent.add(new Sent(ctx.taskId(), ctx.stepName(), ctx.attempt(), ctx.idempotencyKey(),
                token));
    }

    /** approve (awaits a reply, compensated), then ship. */
    private Workflow<String> approval(String name, CompletionRequest<String> request) {
        return Workflow.builder(name, Codec.string())
                .step("approve", s -> s.awaitCompletion(request).completeWithin(DEADLINE).retry(THREE_TRIES).maxTimeouts(2)
                        .compensateWith(ctx -> compensated.add(ctx.taskId() + ":" + ctx.stepName())))
                .step("ship", s -> s.execute(ctx -> "shipped " + ctx.output("approve").orElse("?")))
                .build();
    }

    private Workflow<String> approval(String name) {
        return approval(name, recording());
    }

    private Sent lastSent(TaskId id) {
        List<Sent> mine = sent.stream().filter(s -> s.taskId().equals(id)).toList();
        assertThat(mine).as("requests sent for " + id).isNotEmpty();
        return mine.get(mine.size() - 1);
    }

    private static List<TaskEvent.Type> types(SasClient client, TaskId id) {
        return client.events(id).stream().map(TaskEvent::type).toList();
    }

    private static long count(List<TaskEvent.Type> types, TaskEvent.Type type) {
        return Collections.frequency(types, type);
    }

    // ------------------------------------------------------------------ awaiting

    @Test
    void the_request_is_sent_and_the_task_awaits_its_reply_held_by_nobody() {
        Workflow<String> wf = approval("await-basic");
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();

        Drain.untilIdle(sas);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);
        assertThat(info.status().isTerminal()).isFalse();
        assertThat(info.lockedBy()).isEqualTo(Transition.AWAITING_COMPLETION_HOLDER);
        assertThat(info.completeBy()).isEqualTo(clock.instant().plus(DEADLINE));
        assertThat(sas.inFlight()).as("no scheduler holds an awaiting task").isZero();
        assertThat(sent).hasSize(1);
        assertThat(lastSent(id).token()).as("URL-safe: base64url, a dot, a base64url signature")
                .matches("[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}");
        assertThat(types(sas.client(), id)).endsWith(TaskEvent.Type.STEP_STARTED, TaskEvent.Type.COMPLETION_AWAITED);
        assertThat(sas.client().countByStatus()).containsEntry(TaskStatus.AWAITING_COMPLETION, 1L);
        assertThat(Drain.supervisorOnce(sas)).as("not expired before its deadline").isZero();
        assertThat(Drain.untilIdle(sas)).as("an awaiting task is not claimed").isZero();
    }

    @Test
    void complete_step_from_a_client_without_runtime_completes_it_and_the_next_step_runs() {
        Workflow<String> wf = approval("await-complete");
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);
        clock.tick(Duration.ofDays(6));

        CompletionOutcome outcome = bareClient(wf).stepCompletion().complete(lastSent(id).token(), "approved by ann");

        assertThat(outcome).isEqualTo(CompletionOutcome.COMPLETED);
        assertThat(outcome.accepted()).isTrue();
        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(info.lockedBy()).isNull();
        assertThat(info.step("approve").status()).isEqualTo(StepStatus.COMPLETED);
        assertThat(info.step("approve").output()).isEqualTo("approved by ann");
        Drain.untilIdle(sas);
        info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("ship").output()).isEqualTo("shipped approved by ann");
        List<TaskEvent.Type> types = types(sas.client(), id);
        assertThat(count(types, TaskEvent.Type.COMPLETION_RECEIVED)).isEqualTo(1);
        assertThat(count(types, TaskEvent.Type.STEP_COMPLETED)).isEqualTo(2);
        assertThat(sent).hasSize(1);
    }

    @Test
    void a_typed_step_takes_a_reply_of_its_type_encoded_with_its_codec() {
        StepRef<Integer> amount = StepRef.of("amount", Codec.<Integer>of(i -> Integer.toString(i), text -> Integer.valueOf(text)));
        Workflow<String> wf = Workflow.builder("await-typed", Codec.string())
                .step(amount, s -> s.awaitCompletion(recording()).completeWithin(DEADLINE))
                .step("double", s -> s.execute(ctx -> String.valueOf(ctx.output(amount) * 2)))
                .build();
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "quote-1", "q").id();
        Drain.untilIdle(sas);

        assertThat(bareClient(wf).stepCompletion().complete(lastSent(id).token(), 21)).isEqualTo(CompletionOutcome.COMPLETED);
        Drain.untilIdle(sas);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("double").output()).isEqualTo("42");
    }

    @Test
    void the_last_step_completed_by_a_reply_ends_the_task_and_wakes_await() {
        Workflow<String> wf = Workflow.builder("await-last", Codec.string())
                .step("approve", s -> s.awaitCompletion(recording()).completeWithin(DEADLINE))
                .build();
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);

        assertThat(sas.client().stepCompletion().completeEncoded(lastSent(id).token(), "ok")).isEqualTo(CompletionOutcome.COMPLETED);

        assertThat(sas.client().handle(id).await(Duration.ofSeconds(30)).status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(sas.metrics().tasksProcessed()).isEqualTo(1);
    }

    // ------------------------------------------------------------------ failures

    @Test
    void a_retryable_failure_is_retried_and_the_request_sent_again_with_the_same_idempotency_key() {
        Workflow<String> wf = approval("await-fail");
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);
        Sent first = lastSent(id);

        assertThat(bareClient(wf).stepCompletion().fail(first.token(), "mail server down")).isEqualTo(CompletionOutcome.FAILED);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(info.lastError()).contains("mail server down");
        assertThat(Drain.afterTime(sas, clock, Duration.ofSeconds(1))).isEqualTo(1);
        Sent second = lastSent(id);
        assertThat(second.attempt()).isEqualTo(2);
        assertThat(second.idempotencyKey()).isEqualTo(first.idempotencyKey());
        assertThat(second.token()).isNotEqualTo(first.token());
        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);
        assertThat(bareClient(wf).stepCompletion().complete(first.token(), "another answer to the failed attempt"))
                .as("that attempt was answered").isEqualTo(CompletionOutcome.ALREADY_COMPLETED);
        assertThat(bareClient(wf).stepCompletion().complete(second.token(), "ok")).isEqualTo(CompletionOutcome.COMPLETED);
        Drain.untilIdle(sas);
        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
    }

    @Test
    void a_failure_that_must_not_be_retried_fails_the_step_and_compensates_nothing_it_did_not_apply() {
        Workflow<String> wf = Workflow.builder("await-refused", Codec.string())
                .step("approve", s -> s.awaitCompletion(recording()).completeWithin(DEADLINE).retry(THREE_TRIES))
                .step("ship", s -> s.execute(ctx -> "shipped"))
                .build();
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);

        assertThat(bareClient(wf).stepCompletion().fail(lastSent(id).token(), "rejected by ann", false))
                .isEqualTo(CompletionOutcome.FAILED);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.ERROR);
        assertThat(info.step("approve").status()).isEqualTo(StepStatus.FAILED);
        assertThat(info.lastError()).contains("rejected by ann");
        assertThat(sent).hasSize(1);
        assertThat(types(sas.client(), id)).contains(TaskEvent.Type.COMPLETION_RECEIVED, TaskEvent.Type.STEP_FAILED,
                TaskEvent.Type.ERROR);
    }

    @Test
    void a_failure_for_good_of_a_compensated_workflow_is_compensated_by_a_scheduler() {
        Workflow<String> wf = Workflow.builder("await-refused-comp", Codec.string())
                .step("reserve", s -> s.execute(ctx -> "reserved").compensateWith(ctx -> compensated.add("reserve")))
                .step("approve", s -> s.awaitCompletion(recording()).completeWithin(DEADLINE))
                .compensateOnFailure(true)
                .build();
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);

        assertThat(bareClient(wf).stepCompletion().fail(lastSent(id).token(), "rejected", false)).isEqualTo(CompletionOutcome.FAILED);
        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.COMPENSATING);
        Drain.untilIdle(sas);

        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(compensated).containsExactly("reserve");
    }

    // ------------------------------------------------------------------ late, stale, duplicate

    @Test
    void a_reply_after_the_deadline_is_late_changes_nothing_and_is_counted() {
        Workflow<String> wf = approval("await-late");
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);
        TaskInfo before = sas.client().find(id).orElseThrow();
        int events = sas.client().events(id).size();
        clock.tick(DEADLINE.plusMillis(1));

        assertThat(sas.client().stepCompletion().complete(lastSent(id).token(), "approved")).isEqualTo(CompletionOutcome.LATE);

        TaskInfo after = sas.client().find(id).orElseThrow();
        assertThat(after.status()).as("the supervisor has not recovered it yet").isEqualTo(TaskStatus.AWAITING_COMPLETION);
        assertThat(after.lease()).isEqualTo(before.lease());
        assertThat(after.lockedBy()).isEqualTo(before.lockedBy());
        assertThat(after.steps()).extracting(TaskInfo.StepInfo::output).containsOnlyNulls();
        assertThat(sas.client().events(id)).as("no event").hasSize(events);
        assertThat(sas.metrics().lateCompletions()).isEqualTo(1);
        assertThat(bareClient(wf).stepCompletion().fail(lastSent(id).token(), "x")).isEqualTo(CompletionOutcome.LATE);
    }

    @Test
    void the_supervisor_times_out_an_awaiting_step_and_the_request_is_sent_again_old_replies_are_stale() {
        Workflow<String> wf = approval("await-timeout");
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);
        Sent first = lastSent(id);

        clock.tick(DEADLINE.plusSeconds(1));
        assertThat(Drain.supervisorOnce(sas)).isEqualTo(1);
        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(info.failureCount()).isEqualTo(1);
        assertThat(info.lastError()).contains("got no reply by its deadline");
        assertThat(sas.client().stepCompletion().complete(first.token(), "approved")).as("state moved on, same lease")
                .isEqualTo(CompletionOutcome.STALE);

        Drain.afterTime(sas, clock, Duration.ofSeconds(1));
        Sent second = lastSent(id);
        assertThat(second.attempt()).isEqualTo(2);
        assertThat(second.idempotencyKey()).isEqualTo(first.idempotencyKey());
        assertThat(sas.client().stepCompletion().complete(first.token(), "approved")).as("lease moved on")
                .isEqualTo(CompletionOutcome.STALE);
        assertThat(sas.metrics().staleCompletions()).isEqualTo(2);
        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);

        // maxTimeouts(2): a second time-out fails the step; its request went out, so it is compensated
        clock.tick(DEADLINE.plusSeconds(1));
        assertThat(Drain.supervisorOnce(sas)).isEqualTo(1);
        Drain.untilIdle(sas);
        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.COMPENSATED);
        assertThat(compensated).containsExactly(id + ":approve");
        assertThat(sas.client().stepCompletion().complete(second.token(), "approved")).isEqualTo(CompletionOutcome.STALE);
        assertThat(types(sas.client(), id)).doesNotContain(TaskEvent.Type.COMPLETION_RECEIVED);
    }

    @Test
    void a_duplicate_reply_is_recognised_and_changes_nothing() {
        Workflow<String> wf = approval("await-dup");
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);
        String token = lastSent(id).token();

        assertThat(bareClient(wf).stepCompletion().complete(token, "first")).isEqualTo(CompletionOutcome.COMPLETED);
        assertThat(bareClient(wf).stepCompletion().complete(token, "second")).isEqualTo(CompletionOutcome.ALREADY_COMPLETED);
        Drain.untilIdle(sas);
        assertThat(bareClient(wf).stepCompletion().fail(token, "third")).as("after the task finished too")
                .isEqualTo(CompletionOutcome.ALREADY_COMPLETED);

        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("approve").output()).isEqualTo("first");
        assertThat(count(types(sas.client(), id), TaskEvent.Type.COMPLETION_RECEIVED)).isEqualTo(1);
    }

    // ------------------------------------------------------------------ the reply that comes first

    @Test
    void a_reply_that_arrives_while_the_request_is_being_sent_is_kept_and_applied() {
        Map<TaskId, CompletionOutcome> outcomes = new ConcurrentHashMap<>();
        AtomicReference<Workflow<String>> holder = new AtomicReference<>();
        Workflow<String> wf = approval("await-first", (ctx, token) -> {
            sent.add(new Sent(ctx.taskId(), ctx.stepName(), ctx.attempt(), ctx.idempotencyKey(), token));
            // the agent answers before send returns: the task is still PROCESSING under this lease
            outcomes.put(ctx.taskId(), bareClient(holder.get()).stepCompletion().complete(token, "instant"));
        });
        holder.set(wf);
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();

        Drain.untilIdle(sas);

        assertThat(outcomes).containsEntry(id, CompletionOutcome.COMPLETED);
        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(info.step("ship").output()).isEqualTo("shipped instant");
        List<TaskEvent.Type> types = types(sas.client(), id);
        assertThat(types).doesNotContain(TaskEvent.Type.COMPLETION_AWAITED);
        assertThat(count(types, TaskEvent.Type.COMPLETION_RECEIVED)).isEqualTo(1);
        assertThat(count(types, TaskEvent.Type.STEP_COMPLETED)).isEqualTo(2);
        assertThat(bareClient(wf).stepCompletion().complete(lastSent(id).token(), "again"))
                .isEqualTo(CompletionOutcome.ALREADY_COMPLETED);
    }

    @Test
    void replies_racing_the_awaiting_transition_from_other_threads_complete_each_task_exactly_once()
            throws Exception {
        int tasks = 20;
        ExecutorService repliers = Executors.newFixedThreadPool(4);
        List<Future<CompletionOutcome>> replies = new CopyOnWriteArrayList<>();
        try {
            AtomicReference<Workflow<String>> holder = new AtomicReference<>();
            Workflow<String> wf = approval("await-race", (ctx, token) -> {
                sent.add(new Sent(ctx.taskId(), ctx.stepName(), ctx.attempt(), ctx.idempotencyKey(), token));
                SasClient replier = bareClient(holder.get());
                replies.add(repliers.submit(() -> replier.stepCompletion().complete(token, "ok " + ctx.businessKey())));
            });
            holder.set(wf);
            SasRuntime sas = runtime(wf);
            List<TaskId> ids = new ArrayList<>();
            for (int i = 0; i < tasks; i++) {
                ids.add(sas.client().submit(wf, "order-" + i, "car").id());
            }

            Drain.untilIdle(sas);
            await().atMost(60, TimeUnit.SECONDS).until(() -> replies.size() == tasks
                    && replies.stream().allMatch(Future::isDone));
            Drain.untilIdle(sas);

            for (Future<CompletionOutcome> f : replies) {
                assertThat(f.get()).isEqualTo(CompletionOutcome.COMPLETED);
            }
            for (int i = 0; i < tasks; i++) {
                TaskId id = ids.get(i);
                TaskInfo info = sas.client().find(id).orElseThrow();
                assertThat(info.status()).as(id.toString()).isEqualTo(TaskStatus.PROCESSED);
                assertThat(info.step("ship").output()).isEqualTo("shipped ok order-" + i);
                List<TaskEvent.Type> types = types(sas.client(), id);
                assertThat(count(types, TaskEvent.Type.COMPLETION_RECEIVED)).isEqualTo(1);
                assertThat(count(types, TaskEvent.Type.STEP_COMPLETED)).isEqualTo(2);
            }
            assertThat(sent).hasSize(tasks);
        } finally {
            repliers.shutdownNow();
        }
    }

    // ------------------------------------------------------------------ cancel

    @Test
    void cancel_of_an_awaiting_task_is_prompt_and_compensates_the_sent_request_once_it_can_no_longer_be_applied() {
        // the request went out (onto a queue whose worker died, say, and whose redelivered request runs later):
        // the cancel is prompt (the task stops awaiting, completions are STALE), and the compensation waits until
        // the request's deadline has passed, so that the refund comes after a late charge
        List<String> ledger = new CopyOnWriteArrayList<>();
        Workflow<String> wf = Workflow.builder("await-cancel", Codec.string())
                .step("approve", s -> s.awaitCompletion(recording()).completeWithin(Duration.ofMinutes(5))
                        .retry(THREE_TRIES).compensateWith(ctx -> {
                            compensated.add(ctx.taskId() + ":" + ctx.stepName());
                            ledger.add("refund");
                        }))
                .step("ship", s -> s.execute(ctx -> "shipped"))
                .build();
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);
        Instant sentAt = clock.instant();

        assertThat(sas.client().operations().cancel(id)).isTrue();
        TaskInfo info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).as("no claim to wait for").isEqualTo(TaskStatus.PENDING);
        assertThat(info.lockedBy()).isNull();
        assertThat(sas.client().stepCompletion().complete(lastSent(id).token(), "approved")).isEqualTo(CompletionOutcome.STALE);
        Drain.untilIdle(sas);
        info = sas.client().find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.COMPENSATING);
        assertThat(info.lastError()).contains("may still be applied until " + sentAt.plus(Duration.ofMinutes(5)).plusSeconds(1));
        assertThat(compensated).as("nothing compensated while the request may still be applied").isEmpty();

        clock.tick(Duration.ofMinutes(4));
        Drain.untilIdle(sas);
        Drain.supervisorOnce(sas);
        Drain.untilIdle(sas);
        assertThat(compensated).as("not before the request's deadline").isEmpty();
        ledger.add("charge applied late"); // the redelivered request, within its deadline
        clock.tick(Duration.ofMinutes(1).plusSeconds(2));
        Drain.untilIdle(sas);

        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(compensated).containsExactly(id + ":approve");
        assertThat(ledger).as("the refund comes after the late charge").containsExactly("charge applied late", "refund");
        assertThat(sas.client().stepCompletion().complete(lastSent(id).token(), "approved")).isEqualTo(CompletionOutcome.STALE);
        assertThat(sent).hasSize(1);
    }

    @Test
    void cancel_of_an_awaiting_step_without_a_compensation_ends_the_task_at_once() {
        // a human approval with a week to answer and nothing to undo: nothing to wait for
        Workflow<String> wf = Workflow.builder("await-cancel-plain", Codec.string())
                .step("approve", s -> s.awaitCompletion(recording()).completeWithin(DEADLINE))
                .step("ship", s -> s.execute(ctx -> "shipped"))
                .build();
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);

        assertThat(sas.client().operations().cancel(id)).isTrue();
        Drain.untilIdle(sas);
        assertThat(sas.client().find(id).orElseThrow().status()).isEqualTo(TaskStatus.CANCELLED);
        assertThat(sas.client().stepCompletion().complete(lastSent(id).token(), "approved")).isEqualTo(CompletionOutcome.STALE);
    }

    // ------------------------------------------------------------------ bad input

    @Test
    void bad_tokens_and_wrong_steps_are_refused_clearly() {
        Workflow<String> wf = approval("await-bad");
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);
        SasClient client = sas.client();
        String token = lastSent(id).token();

        assertThatThrownBy(() -> client.stepCompletion().complete(null, "x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("replyToken must not be null");
        assertThatThrownBy(() -> client.stepCompletion().fail(" ", "x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("replyToken must not be blank");
        assertThat(client.stepCompletion().complete("not-a-token", "x")).isEqualTo(CompletionOutcome.INVALID_TOKEN);
        assertThat(client.stepCompletion().complete(signed(KEY_1, "k1", 0, 1, TaskId.random().value()), "x"))
                .isEqualTo(CompletionOutcome.NOT_FOUND);
        assertThatThrownBy(() -> client.stepCompletion().complete(signed(KEY_1, "k1", 1, 1, id.value()), "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("step 'ship'")
                .hasMessageContaining("does not await a reply");
        assertThatThrownBy(() -> SasClient.builder().stateStore(store).clock(clock).trustLocalClock()
                .completionTokenKeys(KEYS).build().stepCompletion().complete(token, "x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not know");
        assertThatThrownBy(() -> client.stepCompletion().complete(token, 42)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot be encoded");
        assertThat(client.find(id).orElseThrow().status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);
    }

    // ------------------------------------------------------------------ signed tokens

    /** Two tasks awaiting approval on a runtime signing with {@link #KEYS}. */
    private TaskId[] twoAwaiting(SasRuntime sas, Workflow<String> wf) {
        TaskId a = sas.client().submit(wf, "order-a", "car").id();
        TaskId b = sas.client().submit(wf, "order-b", "boat").id();
        Drain.untilIdle(sas);
        assertThat(sas.client().find(a).orElseThrow().status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);
        assertThat(sas.client().find(b).orElseThrow().status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);
        return new TaskId[] {a, b};
    }

    private void assertStillAwaiting(SasClient client, TaskId id) {
        TaskInfo info = client.find(id).orElseThrow();
        assertThat(info.status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);
        assertThat(info.steps()).extracting(TaskInfo.StepInfo::output).containsOnlyNulls();
        assertThat(types(client, id)).doesNotContain(TaskEvent.Type.COMPLETION_RECEIVED);
    }

    @Test
    void a_token_with_another_tasks_id_is_refused_and_that_task_keeps_awaiting() {
        Workflow<String> wf = approval("token-forged-task");
        SasRuntime sas = runtime(wf);
        TaskId[] ids = twoAwaiting(sas, wf);
        String mine = lastSent(ids[0]).token();

        String forged = altered(mine, 4, ids[1].value());
        assertThat(sas.client().stepCompletion().complete(forged, "approved by mallory")).isEqualTo(CompletionOutcome.INVALID_TOKEN);
        assertThat(bareClient(wf).stepCompletion().fail(forged, "rejected by mallory", false)).isEqualTo(CompletionOutcome.INVALID_TOKEN);
        String lease = Long.toString(sas.client().find(ids[1]).orElseThrow().lease());
        assertThat(sas.client().stepCompletion().complete(unsigned(ids[1].value(), 0, Long.parseLong(lease)), "approved by mallory"))
                .as("the unsigned format 1 of earlier builds").isEqualTo(CompletionOutcome.INVALID_TOKEN);

        assertStillAwaiting(sas.client(), ids[1]);
        assertThat(sas.metrics().invalidCompletionTokens()).as("counted by the runtime's client").isEqualTo(2);
        assertThat(sas.client().stepCompletion().complete(lastSent(ids[1]).token(), "approved by ann"))
                .isEqualTo(CompletionOutcome.COMPLETED);
        assertThat(sas.client().stepCompletion().complete(mine, "approved by ann")).isEqualTo(CompletionOutcome.COMPLETED);
    }

    @Test
    void a_token_with_an_altered_attempt_or_step_is_refused() {
        Workflow<String> wf = approval("token-altered");
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);
        String token = lastSent(id).token();
        long lease = Long.parseLong(field(token, 3));

        assertThat(sas.client().stepCompletion().complete(altered(token, 3, Long.toString(lease + 1)), "x"))
                .isEqualTo(CompletionOutcome.INVALID_TOKEN);
        assertThat(sas.client().stepCompletion().complete(altered(token, 3, Long.toString(lease - 1)), "x"))
                .isEqualTo(CompletionOutcome.INVALID_TOKEN);
        assertThat(sas.client().stepCompletion().complete(altered(token, 2, "1"), "x")).isEqualTo(CompletionOutcome.INVALID_TOKEN);
        assertThat(sas.client().stepCompletion().complete(altered(token, 1, "k2"), "x")).isEqualTo(CompletionOutcome.INVALID_TOKEN);
        assertThat(sas.client().stepCompletion().complete(altered(token, 0, "3"), "x")).isEqualTo(CompletionOutcome.INVALID_TOKEN);
        char last = token.charAt(token.length() - 1);
        assertThat(sas.client().stepCompletion().complete(token.substring(0, token.length() - 1) + (last == 'A' ? 'B' : 'A'), "x"))
                .as("one character of the signature changed").isEqualTo(CompletionOutcome.INVALID_TOKEN);

        assertStillAwaiting(sas.client(), id);
        assertThat(sas.metrics().invalidCompletionTokens()).isEqualTo(6);
        assertThat(sas.client().stepCompletion().complete(token, "ok")).isEqualTo(CompletionOutcome.COMPLETED);
    }

    @Test
    void a_truncated_token_is_refused() {
        Workflow<String> wf = approval("token-truncated");
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);
        String token = lastSent(id).token();
        int dot = token.indexOf('.');

        for (String cut : List.of(token.substring(0, token.length() - 1), token.substring(0, token.length() - 4),
                token.substring(0, dot + 1), token.substring(0, dot), token.substring(1), token + "A")) {
            assertThat(sas.client().stepCompletion().complete(cut, "x")).as(cut).isEqualTo(CompletionOutcome.INVALID_TOKEN);
        }
        assertStillAwaiting(sas.client(), id);
        assertThat(sas.metrics().invalidCompletionTokens()).isEqualTo(6);
    }

    @Test
    void a_token_signed_with_a_key_of_the_same_id_but_other_bytes_is_refused() {
        Workflow<String> wf = approval("token-wrong-key");
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);
        String token = lastSent(id).token();
        CompletionTokenKeys otherBytes = CompletionTokenKeys.builder().currentKey("k1", KEY_2).build();

        assertThat(bareClient(otherBytes, wf).stepCompletion().complete(token, "x")).isEqualTo(CompletionOutcome.INVALID_TOKEN);
        assertThat(sas.client().stepCompletion().complete(signed(KEY_2, "k1", 0, Long.parseLong(field(token, 3)), id.value()), "x"))
                .isEqualTo(CompletionOutcome.INVALID_TOKEN);
        assertStillAwaiting(sas.client(), id);
        assertThat(bareClient(wf).stepCompletion().complete(token, "ok")).isEqualTo(CompletionOutcome.COMPLETED);
    }

    @Test
    void after_a_rotation_old_tokens_are_accepted_while_their_key_is_a_previous_key_and_refused_after() {
        Workflow<String> wf = approval("token-rotation");
        SasRuntime before = runtime(wf);
        TaskId[] ids = twoAwaiting(before, wf);
        String oldA = lastSent(ids[0]).token();
        String oldB = lastSent(ids[1]).token();
        CompletionTokenKeys rotated = CompletionTokenKeys.builder().currentKey("k2", KEY_2).previousKey("k1", KEY_1).build();
        CompletionTokenKeys k1Removed = CompletionTokenKeys.builder().currentKey("k2", KEY_2).build();

        assertThat(bareClient(rotated, wf).stepCompletion().complete(oldA, "approved")).as("k1 is a previous key")
                .isEqualTo(CompletionOutcome.COMPLETED);
        assertThat(bareClient(k1Removed, wf).stepCompletion().complete(oldB, "approved")).as("k1 was removed")
                .isEqualTo(CompletionOutcome.INVALID_TOKEN);
        assertStillAwaiting(before.client(), ids[1]);

        before.close();
        SasRuntime after = runtime(rotated, wf);
        TaskId c = after.client().submit(wf, "order-c", "bike").id();
        Drain.untilIdle(after);
        String newC = lastSent(c).token();
        assertThat(field(newC, 1)).as("new tokens are signed with the current key").isEqualTo("k2");
        assertThat(bareClient(KEYS, wf).stepCompletion().complete(newC, "approved")).as("a node that still has only k1")
                .isEqualTo(CompletionOutcome.INVALID_TOKEN);
        assertThat(bareClient(k1Removed, wf).stepCompletion().complete(newC, "approved")).isEqualTo(CompletionOutcome.COMPLETED);
    }

    @Test
    void unsigned_tokens_of_format_1_are_accepted_only_when_the_keys_opt_in_for_an_upgrade() {
        Workflow<String> wf = approval("token-upgrade");
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "order-1", "car").id();
        Drain.untilIdle(sas);
        String old = unsigned(id.value(), 0, sas.client().find(id).orElseThrow().lease());
        CompletionTokenKeys upgrading = CompletionTokenKeys.builder().currentKey("k1", KEY_1).acceptUnsignedTokens().build();

        assertThat(bareClient(wf).stepCompletion().complete(old, "approved")).isEqualTo(CompletionOutcome.INVALID_TOKEN);
        assertThat(bareClient(upgrading, wf).stepCompletion().complete(unsigned(id.value() + "\0", 0, 1), "x"))
                .as("a task id no database can hold is not found, not a store failure")
                .isEqualTo(CompletionOutcome.NOT_FOUND);
        assertThat(bareClient(upgrading, wf).stepCompletion().complete(old, "approved")).isEqualTo(CompletionOutcome.COMPLETED);
    }

    @Test
    void without_keys_a_runtime_with_an_awaiting_step_is_not_built_and_a_client_cannot_complete_steps() {
        Workflow<String> wf = approval("token-none");
        assertThatThrownBy(() -> SasRuntime.builder().stateStore(store).workflow(wf).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("step 'approve'")
                .hasMessageContaining("completionTokenKeys");
        SasClient noKeys = SasClient.builder().stateStore(store).workflow(wf).build();
        assertThatThrownBy(() -> noKeys.stepCompletion().complete(signed(KEY_1, "k1", 0, 1, TaskId.random().value()), "x"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("no reply token keys");
    }

    @Test
    void an_encoded_reply_the_steps_codec_cannot_decode_is_refused_with_its_reason() {
        StepRef<Integer> amount = StepRef.of("amount", Codec.<Integer>of(i -> Integer.toString(i), Integer::valueOf));
        Workflow<String> wf = Workflow.builder("await-undecodable", Codec.string())
                .step(amount, s -> s.awaitCompletion(recording()).completeWithin(DEADLINE))
                .step("double", s -> s.execute(ctx -> String.valueOf(ctx.output(amount) * 2)))
                .build();
        SasRuntime sas = runtime(wf);
        TaskId id = sas.client().submit(wf, "quote-1", "q").id();
        Drain.untilIdle(sas);
        String token = lastSent(id).token();

        assertThatThrownBy(() -> bareClient(wf).stepCompletion().completeEncoded(token, "twenty-one"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("step 'amount'")
                .hasMessageContaining("cannot be decoded").hasMessageContaining("NumberFormatException")
                .hasCauseInstanceOf(NumberFormatException.class);
        assertStillAwaiting(sas.client(), id);
        assertThat(bareClient(wf).stepCompletion().completeEncoded(token, "21")).isEqualTo(CompletionOutcome.COMPLETED);
        Drain.untilIdle(sas);
        assertThat(sas.client().find(id).orElseThrow().step("double").output()).isEqualTo("42");
    }

    /** An unsigned token of format 1 (before tokens were signed): {@code base64url(1:step:lease:taskId)}. */
    private static String unsigned(String taskId, int step, long lease) {
        return b64(("1:" + step + ":" + lease + ":" + taskId).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A signed token made outside SAS, as its documented-as-opaque format is: {@code
     * base64url(2:keyId:step:lease:taskId)}, a dot, {@code base64url(HMAC-SHA256)} of those bytes.
     */
    private static String signed(byte[] key, String keyId, int step, long lease, String taskId) {
        byte[] body = ("2:" + keyId + ":" + step + ":" + lease + ":" + taskId).getBytes(StandardCharsets.UTF_8);
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return b64(body) + "." + b64(mac.doFinal(body));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code token} with field {@code index} of its signed body (0 version, 1 key id, 2 step, 3 lease, 4 task id) replaced, its signature kept. */
    private static String altered(String token, int index, String value) {
        int dot = token.indexOf('.');
        assertThat(dot).as("a signed token has a signature").isPositive();
        String[] fields = new String(Base64.getUrlDecoder().decode(token.substring(0, dot)), StandardCharsets.UTF_8)
                .split(":", 5);
        fields[index] = value;
        return b64(String.join(":", fields).getBytes(StandardCharsets.UTF_8)) + token.substring(dot);
    }

    /** Field {@code index} of {@code token}'s body. */
    private static String field(String token, int index) {
        String body = token.substring(0, token.indexOf('.'));
        return new String(Base64.getUrlDecoder().decode(body), StandardCharsets.UTF_8).split(":", 5)[index];
    }

    private static String b64(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** 32 bytes derived from {@code label}: a fixed key for tests. */
    private static byte[] key(String label) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(label.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
