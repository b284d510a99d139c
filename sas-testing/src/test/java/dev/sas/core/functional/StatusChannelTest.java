package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.StatusChannel;
import dev.sas.core.StatusConsumer;
import dev.sas.core.StatusUpdate;
import dev.sas.core.SasClient;
import dev.sas.core.SasException;
import dev.sas.core.SasRuntime;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.Workflow;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.StatusOutbox;
import dev.sas.core.spi.StateStore;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Status channels as the application sees them: status messages reach the node that registered the
 * channel whichever node made the transition, exactly as the store recorded them, at least once
 * with delivery ids, across a consumer's restart and a failing handler; unknown channels are refused
 * at submit or counted. Driven by hand on a manual clock.
 */
class StatusChannelTest {

    private final InMemoryStateStore store = new InMemoryStateStore();
    private final ManualClock clock = new ManualClock();
    private final Workflow<String> wf = Workflow.builder("greet", Codec.string())
            .step("hello", s -> s.execute(ctx -> "hello " + ctx.input()))
            .step("shout", s -> s.execute(ctx -> ctx.input().toUpperCase()))
            .build();

    private SasRuntime worker() {
        return SasRuntime.builder().stateStore(store).clock(clock).instanceId("worker").workflow(wf).build();
    }

    private StatusConsumer consumer(String id, StatusChannel channel) {
        return StatusConsumer.builder().stateStore(store).clock(clock).consumerId(id).channel(channel).build();
    }

    private static SubmitOptions statusChannel(String channel) {
        return SubmitOptions.builder().statusChannel(channel).build();
    }

    private static int drainReplies(StatusConsumer consumer) {
        int total = 0;
        for (int n = Drain.statusUpdatesOnce(consumer); n > 0; n = Drain.statusUpdatesOnce(consumer)) {
            total += n;
        }
        return total;
    }

    @Nested
    class Delivery {

        @Test
        void a_node_that_only_submits_hears_every_event_of_a_task_another_node_ran_exactly_as_recorded() {
            List<StatusUpdate> heard = new CopyOnWriteArrayList<>();
            StatusConsumer web = consumer("web-1", StatusChannel.of("web-replies", heard::addAll));
            Drain.statusUpdatesOnce(web); // registers the channel in the store
            SasClient client = SasClient.builder().stateStore(store).clock(clock).build();
            SasRuntime worker = worker();

            TaskId id = client.submit(wf, "g-1", "ann", statusChannel("web-replies")).id();
            Drain.untilIdle(worker);
            drainReplies(web);

            assertThat(heard).extracting(StatusUpdate::event).containsExactlyElementsOf(client.events(id));
            assertThat(heard).extracting(StatusUpdate::status).startsWith(TaskEvent.Type.RECEIVED)
                    .endsWith(TaskEvent.Type.PROCESSED);
            assertThat(heard).extracting(StatusUpdate::deliveryId).isSorted().doesNotHaveDuplicates();
            assertThat(heard).allMatch(m -> m.channel().equals("web-replies"));
            assertThat(worker.metrics().statusChannelUnknown()).isZero();
            assertThat(web.metrics().statusUpdatesDelivered()).isEqualTo(heard.size());
        }

        @Test
        void the_node_that_records_the_transitions_delivers_each_message_once_from_the_outbox_only() {
            List<TaskEvent> heard = new ArrayList<>();
            SasRuntime runtime = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf)
                    .statusChannel("mine", heard::add).build();

            TaskId id = runtime.client().submit(wf, "g-1", "bob", statusChannel("mine")).id();
            Drain.untilIdle(runtime);
            assertThat(heard).as("nothing is delivered on the transition's own path").isEmpty();
            while (Drain.statusUpdatesOnce(runtime) > 0) {
                // drain
            }

            assertThat(heard).containsExactlyElementsOf(runtime.client().events(id));
            assertThat(store.statusOutbox().orElseThrow().pending("mine", 10)).isEmpty();
        }

        @Test
        void a_handler_that_fails_gets_the_same_messages_again_with_the_same_delivery_ids() {
            List<List<Long>> attempts = new ArrayList<>();
            AtomicInteger failuresLeft = new AtomicInteger(2);
            List<StatusUpdate> delivered = new ArrayList<>();
            StatusConsumer web = consumer("web-1", StatusChannel.of("web-replies", batch -> {
                attempts.add(batch.stream().map(StatusUpdate::deliveryId).toList());
                if (failuresLeft.getAndDecrement() > 0) {
                    throw new java.io.IOException("broker unreachable");
                }
                delivered.addAll(batch);
            }));
            Drain.statusUpdatesOnce(web);
            SasClient client = SasClient.builder().stateStore(store).clock(clock).build();
            TaskId id = client.submit(wf, "g-1", "cy", statusChannel("web-replies")).id();
            Drain.untilIdle(worker());

            assertThatThrownBy(() -> Drain.statusUpdatesOnce(web)).isInstanceOf(SasException.class).hasMessageContaining("web-replies")
                    .hasMessageContaining("broker unreachable");
            assertThatThrownBy(() -> Drain.statusUpdatesOnce(web)).isInstanceOf(SasException.class);
            drainReplies(web);

            assertThat(attempts).hasSizeGreaterThanOrEqualTo(3);
            assertThat(attempts.get(1)).isEqualTo(attempts.get(0));
            assertThat(attempts.get(2)).isEqualTo(attempts.get(0));
            assertThat(delivered).extracting(StatusUpdate::event).containsExactlyElementsOf(client.events(id));
        }

        @Test
        void a_listener_that_throws_is_counted_and_its_message_is_not_repeated() {
            List<TaskEvent> heard = new ArrayList<>();
            StatusConsumer web = StatusConsumer.builder().stateStore(store).clock(clock).consumerId("web-1")
                    .channel("web-replies", e -> {
                        heard.add(e);
                        if (e.type() == TaskEvent.Type.RECEIVED) {
                            throw new IllegalStateException("listener bug");
                        }
                    }).build();
            Drain.statusUpdatesOnce(web);
            SasClient client = SasClient.builder().stateStore(store).clock(clock).build();
            TaskId id = client.submit(wf, "g-1", "dee", statusChannel("web-replies")).id();
            Drain.untilIdle(worker());

            drainReplies(web);

            assertThat(heard).containsExactlyElementsOf(client.events(id));
            assertThat(web.metrics().listenerFailures()).isEqualTo(1);
        }

        @Test
        void a_consumer_restarted_with_the_same_id_goes_on_where_it_stopped_and_loses_nothing() {
            List<StatusUpdate> first = new ArrayList<>();
            StatusChannel.Builder channel = StatusChannel.builder("web-replies").batchSize(2);
            StatusConsumer before = consumer("web-1", channel.handler(first::addAll).build());
            Drain.statusUpdatesOnce(before);
            SasClient client = SasClient.builder().stateStore(store).clock(clock).build();
            TaskId id = client.submit(wf, "g-1", "eve", statusChannel("web-replies")).id();
            Drain.untilIdle(worker());
            assertThat(Drain.statusUpdatesOnce(before)).isEqualTo(2);
            // the node dies without closing: its lease is still held, under the same id

            List<StatusUpdate> second = new ArrayList<>();
            StatusConsumer after = consumer("web-1", channel.handler(second::addAll).build());
            drainReplies(after);

            List<StatusUpdate> all = new ArrayList<>(first);
            all.addAll(second);
            assertThat(all).extracting(StatusUpdate::event).containsExactlyElementsOf(client.events(id));
            assertThat(second).extracting(StatusUpdate::deliveryId).doesNotContainAnyElementsOf(
                    first.stream().map(StatusUpdate::deliveryId).toList());
        }

        @Test
        void another_node_takes_over_a_channel_once_the_lease_of_its_dead_consumer_expired() {
            List<StatusUpdate> heardByB = new ArrayList<>();
            StatusChannel.Builder channel = StatusChannel.builder("shared").leaseTime(Duration.ofSeconds(5));
            StatusConsumer a = consumer("node-a", channel.handler(batch -> { }).build());
            StatusConsumer b = consumer("node-b", channel.handler(heardByB::addAll).build());
            Drain.statusUpdatesOnce(a);
            SasClient client = SasClient.builder().stateStore(store).clock(clock).build();
            client.submit(wf, "g-1", "fay", statusChannel("shared"));
            // node-a dies holding the lease

            assertThat(Drain.statusUpdatesOnce(b)).as("node-a's lease holds").isZero();
            clock.tick(Duration.ofSeconds(6));
            assertThat(drainReplies(b)).isEqualTo(1);
            assertThat(heardByB).extracting(StatusUpdate::status).containsExactly(TaskEvent.Type.RECEIVED);
        }
    }

    @Nested
    class Unknown_channels {

        @Test
        void a_submit_naming_a_channel_no_node_registered_is_refused_with_a_clear_error() {
            SasClient client = SasClient.builder().stateStore(store).clock(clock).build();

            assertThatThrownBy(() -> client.submit(wf, "g-1", "gus", statusChannel("nobody-listens")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("status channel 'nobody-listens' is not registered")
                    .hasMessageContaining("StatusConsumer");
            assertThatThrownBy(() -> client.submitAll(wf, java.util.Map.of("g-2", "x"), statusChannel("nobody-listens")))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(client.find("greet", "g-1")).as("nothing was written").isEmpty();
        }

        @Test
        void a_channel_registered_by_another_node_or_by_this_runtime_is_accepted() {
            Drain.statusUpdatesOnce(consumer("web-1", StatusChannel.of("web-replies", batch -> { })));
            SasClient client = SasClient.builder().stateStore(store).clock(clock).build();
            assertThat(client.submit(wf, "g-1", "hal", statusChannel("web-replies")).created()).isTrue();

            SasRuntime notStarted = SasRuntime.builder().stateStore(store).clock(clock).workflow(wf)
                    .statusChannel("own", e -> { }).build();
            assertThat(notStarted.client().submit(wf, "g-2", "ida", statusChannel("own")).created())
                    .as("its own channel, before it registered it in the store").isTrue();
        }

        @Test
        void events_for_a_channel_nobody_registered_are_counted_and_kept_until_one_registers() {
            // a task whose channel no node registered (submitted by an older client, say)
            TaskId id = TaskId.random();
            store.submit(new NewTask(id, "greet", 1, "g-1", 0, "jo", "ghost", "hello", Duration.ofSeconds(30),
                    clock.instant(), clock.instant()), new TaskEvent(id, "g-1", "greet", TaskEvent.Type.RECEIVED, -1,
                    null, 0, clock.instant(), null), null);
            SasRuntime worker = worker();
            Drain.untilIdle(worker);
            int recordedByWorker = store.events(id).size() - 1;

            assertThat(worker.metrics().statusChannelUnknown()).isEqualTo(recordedByWorker);

            List<StatusUpdate> heard = new ArrayList<>();
            drainReplies(consumer("late", StatusChannel.of("ghost", heard::addAll)));
            assertThat(heard).extracting(StatusUpdate::event).containsExactlyElementsOf(store.events(id));
        }

        @Test
        void a_store_that_keeps_no_outbox_refuses_reply_channels() {
            StateStore plain = (StateStore) Proxy.newProxyInstance(StateStore.class.getClassLoader(),
                    new Class<?>[] {StateStore.class}, (proxy, method, args) -> switch (method.getName()) {
                        case "statusOutbox", "signals", "currentTime" -> Optional.empty();
                        case "toString" -> "plain store";
                        default -> method.invoke(store, args);
                    });
            SasClient client = SasClient.builder().stateStore(plain).clock(clock).build();

            assertThatThrownBy(() -> client.submit(wf, "g-1", "kim", statusChannel("web-replies")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keeps no status channels");
            assertThatThrownBy(() -> SasRuntime.builder().stateStore(plain).workflow(wf).statusChannel("x", e -> { })
                    .build()).isInstanceOf(IllegalStateException.class).hasMessageContaining("keeps no status channels");
            assertThatThrownBy(() -> StatusConsumer.builder().stateStore(plain).channel("x", e -> { }).build())
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("keeps no status channels");
            assertThat(store.statusOutbox()).get().isInstanceOf(StatusOutbox.class);
        }
    }
}
