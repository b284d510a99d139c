package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepRef;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskResult;
import dev.sas.core.TaskStatus;
import dev.sas.core.TaskTimeoutException;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class ClientTest {

    private static final StepRef<String> TRIM = StepRef.of("trim");
    private static final StepRef<Integer> LENGTH = StepRef.of("length", Codec.of(String::valueOf, Integer::valueOf));

    private final InMemoryStateStore store = new InMemoryStateStore();
    private final ManualClock clock = new ManualClock();

    private static Workflow<String> lengths(String name) {
        return Workflow.builder(name, Codec.string())
                .step(TRIM, s -> s.execute(ctx -> ctx.input().trim()))
                .step(LENGTH, s -> s.reads(TRIM).execute(ctx -> ctx.output(TRIM).length()))
                .build();
    }

    private SasRuntime manualRuntime(Workflow<?>... workflows) {
        var b = SasRuntime.builder().stateStore(store).clock(clock).instanceId("worker");
        for (Workflow<?> w : workflows) {
            b.workflow(w);
        }
        return b.build();
    }

    private static void drain(SasRuntime runtime) {
        Drain.untilIdle(runtime);
    }

    @Nested
    class A_client_without_threads {

        @Test
        void submits_and_a_separate_runtime_runs_the_task_and_the_handle_returns_its_typed_result() {
            Workflow<String> wf = lengths("lengths");
            SasClient client = SasClient.builder().stateStore(store).build();
            java.util.Set<Thread> before = Thread.getAllStackTraces().keySet();

            TaskHandle handle = client.submit(wf, "k-1", "  hello  ");

            assertThat(Thread.getAllStackTraces().keySet()).as("a client starts no threads")
                    .filteredOn(t -> !before.contains(t) && t.getName().matches("sas-(scheduler|timer|events|supervisor|agent).*")).isEmpty();
            assertThat(handle.created()).isTrue();
            assertThat(handle.info().status()).isEqualTo(TaskStatus.PENDING);
            try (SasRuntime worker = SasRuntime.builder().stateStore(store).workflow(lengths("lengths")).build()
                    .start()) {
                TaskResult result = handle.await(Duration.ofSeconds(30));
                assertThat(result.status()).isEqualTo(TaskStatus.PROCESSED);
                assertThat(result.isProcessed()).isTrue();
                assertThat(result.output(LENGTH)).contains(5);
                assertThat(result.output(TRIM)).contains("hello");
                assertThat(worker.metrics().claimed()).isEqualTo(1);
            }
        }

        @Test
        void finds_tasks_by_business_key_and_shows_steps_not_started_yet() {
            Workflow<String> wf = lengths("lengths");
            SasClient client = SasClient.builder().stateStore(store).build();
            TaskHandle h = client.submit(wf, "k-2", "x");

            var found = client.find("lengths", "k-2").orElseThrow();
            assertThat(found.taskId()).isEqualTo(h.id());
            assertThat(found.steps()).extracting(s -> s.name()).containsExactly("trim", "length");
            assertThat(client.find("lengths", "nope")).isEmpty();
            assertThat(client.submit(wf, "k-2", "other").id()).as("same key: the first task").isEqualTo(h.id());
        }
    }

    @Nested
    class Await {

        @Test
        void returns_every_terminal_state_not_only_processed() {
            AtomicBoolean fail = new AtomicBoolean(true);
            Workflow<String> saga = Workflow.builder("saga", Codec.string())
                    .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> { }))
                    .step("charge", s -> s.execute(ctx -> {
                        if (fail.get()) {
                            throw new NonRetryableException("card declined");
                        }
                        return "c";
                    }))
                    .build();
            Workflow<String> plain = Workflow.builder("plain", Codec.string()).compensateOnFailure(false)
                    .step("only", s -> s.execute(ctx -> {
                        throw new NonRetryableException("bad input");
                    }))
                    .build();
            SasRuntime runtime = manualRuntime(saga, plain);
            SasClient client = runtime.client();
            TaskHandle compensated = client.submit(saga, "c", "x");
            TaskHandle error = client.submit(plain, "e", "x");
            TaskHandle cancelled = client.submit(saga, "x", "x");
            assertThat(cancelled.cancel()).isTrue();
            drain(runtime);

            assertThat(compensated.await(Duration.ZERO).status()).isEqualTo(TaskStatus.COMPENSATED);
            TaskResult failed = error.await(Duration.ZERO);
            assertThat(failed.status()).isEqualTo(TaskStatus.ERROR);
            assertThat(failed.error()).hasValueSatisfying(e -> assertThat(e).contains("bad input"));
            assertThat(cancelled.await(Duration.ZERO).status()).isEqualTo(TaskStatus.CANCELLED);
        }

        @Test
        void cancel_of_a_task_waiting_for_its_delay_or_its_retry_time_does_not_wait_for_it() {
            AtomicInteger charges = new AtomicInteger();
            Workflow<String> saga = Workflow.builder("saga-wait", Codec.string())
                    .step("reserve", s -> s.execute(ctx -> "r").compensateWith(ctx -> { }))
                    .step("charge", s -> s.execute(ctx -> {
                        charges.incrementAndGet();
                        throw new IllegalStateException("card service busy");
                    }).retry(RetryPolicy.builder().maxAttempts(5).fixedBackoff(Duration.ofHours(1)).jitter(0).build()))
                    .build();
            SasRuntime runtime = manualRuntime(saga);
            SasClient client = runtime.client();
            TaskHandle delayed = client.submit(saga, "delayed", "x",
                    SubmitOptions.builder().delay(Duration.ofHours(1)).build());
            TaskHandle retrying = client.submit(saga, "retrying", "x");
            drain(runtime);
            assertThat(charges).as("one attempt, the retry an hour away").hasValue(1);
            assertThat(client.find(retrying.id()).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);

            assertThat(delayed.cancel()).isTrue();
            assertThat(retrying.cancel()).isTrue();
            drain(runtime); // the manual clock has not moved: neither the delay nor the retry time is over

            assertThat(delayed.await(Duration.ZERO).status()).isEqualTo(TaskStatus.CANCELLED);
            assertThat(retrying.await(Duration.ZERO).status()).isEqualTo(TaskStatus.CANCELLED);
            assertThat(charges).as("the retry was not made").hasValue(1);
            assertThat(client.events(delayed.id())).extracting(TaskEvent::type)
                    .as("cancelled before any step ran").doesNotContain(TaskEvent.Type.STEP_COMPLETED);
        }

        @Test
        void gives_up_with_the_task_and_its_state_named_and_the_task_goes_on() {
            Workflow<String> wf = lengths("lengths");
            SasRuntime runtime = manualRuntime(wf);
            TaskHandle h = runtime.client().submit(wf, "slow", "x");

            assertThatThrownBy(() -> h.await(Duration.ofMillis(20)))
                    .isInstanceOfSatisfying(TaskTimeoutException.class, e -> {
                        assertThat(e.taskId()).isEqualTo(h.id());
                        assertThat(e.lastSeen()).isEqualTo(TaskStatus.PENDING);
                    })
                    .hasMessageContaining(h.id().value()).hasMessageContaining("PENDING");
            drain(runtime);
            assertThat(h.await(Duration.ZERO).isProcessed()).isTrue();
        }
    }

    @Nested
    class Batches_and_bulk_actions {

        @Test
        void submit_all_creates_one_task_per_key_and_returns_existing_ones_for_duplicates() {
            Workflow<String> wf = lengths("lengths");
            SasRuntime runtime = manualRuntime(wf);
            SasClient client = runtime.client();
            TaskHandle existing = client.submit(wf, "b", "old");
            Map<String, String> inputs = new LinkedHashMap<>();
            inputs.put("a", "aa");
            inputs.put("b", "bbb");
            inputs.put("c", "c");

            List<TaskHandle> handles = client.submitAll(wf, inputs);

            assertThat(handles).extracting(TaskHandle::created).containsExactly(true, false, true);
            assertThat(handles.get(1).id()).isEqualTo(existing.id());
            drain(runtime);
            assertThat(handles).allSatisfy(h -> assertThat(h.await(Duration.ZERO).isProcessed()).isTrue());
            assertThat(handles.get(0).await(Duration.ZERO).output(LENGTH)).contains(2);
            assertThat(client.countByStatus().get(TaskStatus.PROCESSED)).isEqualTo(3L);
        }

        @Test
        void submit_all_writes_nothing_when_one_input_is_bad_and_names_its_key() {
            Workflow<String> wf = lengths("lengths");
            SasClient client = SasClient.builder().stateStore(store).build();
            Map<String, String> inputs = new LinkedHashMap<>();
            inputs.put("good", "x");
            inputs.put("blank", " ");

            assertThatThrownBy(() -> client.submitAll(wf, inputs)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'blank'");
            assertThat(client.countByStatus().values().stream().mapToLong(Long::longValue).sum()).isZero();
        }

        @Test
        void business_keys_a_database_would_alter_are_refused_naming_the_position() {
            Workflow<String> wf = lengths("lengths");
            SasClient client = SasClient.builder().stateStore(store).build();

            assertThatThrownBy(() -> client.submit(wf, "ab\uD800c", "x")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("unpaired surrogate U+D800 at index 2").hasMessageContaining("'lengths'");
            assertThatThrownBy(() -> client.submit(wf, "\uDC00", "x")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("U+DC00 at index 0");
            assertThatThrownBy(() -> client.submit(wf, "k\uD83D", "x")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("U+D83D at index 1");
            assertThatThrownBy(() -> client.submit(wf, "a\u0000b", "x")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("NUL character U+0000 at index 1");
            assertThat(client.countByStatus().values().stream().mapToLong(Long::longValue).sum()).isZero();
            // a paired surrogate (an emoji) is a valid key
            assertThat(client.submit(wf, "k\uD83D\uDE00", "x").created()).isTrue();
        }

        @Test
        void inputs_a_database_would_alter_or_refuse_are_refused_at_submit_naming_the_position() {
            Workflow<String> wf = lengths("inputs");
            SasClient client = SasClient.builder().stateStore(store).build();

            assertThatThrownBy(() -> client.submit(wf, "k1", "ab\u0000")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("input for workflow 'inputs' business key 'k1'")
                    .hasMessageContaining("NUL character U+0000 at index 2").hasMessageContaining("codec");
            assertThatThrownBy(() -> client.submitAll(wf, java.util.Map.of("k2", "fine", "k3", "x\uDC00")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("business key 'k3'")
                    .hasMessageContaining("unpaired surrogate U+DC00 at index 1");
            assertThat(client.countByStatus().values().stream().mapToLong(Long::longValue).sum()).isZero();
            assertThat(client.submit(wf, "k4", "emoji \uD83D\uDE00").created()).isTrue();
        }

        @Test
        void resubmit_all_resubmits_only_the_error_tasks_of_that_workflow() {
            AtomicBoolean broken = new AtomicBoolean(true);
            Workflow<String> flaky = Workflow.builder("flaky", Codec.string()).compensateOnFailure(false)
                    .step("call", s -> s.execute(ctx -> {
                        if (broken.get()) {
                            throw new NonRetryableException("service down");
                        }
                        return "ok";
                    }))
                    .build();
            Workflow<String> other = Workflow.builder("other", Codec.string()).compensateOnFailure(false)
                    .step("call", s -> s.execute(ctx -> {
                        throw new NonRetryableException("always");
                    }))
                    .build();
            SasRuntime runtime = manualRuntime(flaky, other);
            SasClient client = runtime.client();
            Map<String, String> inputs = new LinkedHashMap<>();
            for (int i = 0; i < 7; i++) {
                inputs.put("k" + i, "x");
            }
            List<TaskHandle> handles = client.submitAll(flaky, inputs);
            TaskHandle otherTask = client.submit(other, "o", "x");
            drain(runtime);
            assertThat(client.countByStatus().get(TaskStatus.ERROR)).isEqualTo(8L);
            assertThat(client.countByWorkflow()).containsOnlyKeys("flaky", "other");
            assertThat(client.countByWorkflow().get("flaky")).as("every state present").hasSize(TaskStatus.values().length)
                    .containsEntry(TaskStatus.ERROR, 7L).containsEntry(TaskStatus.PENDING, 0L);

            broken.set(false);
            assertThat(client.operations().resubmitAll("flaky")).isEqualTo(7);
            drain(runtime);

            assertThat(handles).allSatisfy(h -> assertThat(h.await(Duration.ZERO).isProcessed()).isTrue());
            assertThat(otherTask.await(Duration.ZERO).status()).isEqualTo(TaskStatus.ERROR);
            assertThat(client.operations().resubmitAll("flaky")).as("nothing left in ERROR").isZero();
        }
    }
}
