package dev.sas.core.unit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.CompletionTokenKeys;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.SasSettings;
import dev.sas.core.StatusChannel;
import dev.sas.core.StatusConsumer;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskEvent;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** One {@link SasSettings} given to a client, a runtime and a status consumer. */
class SasSettingsTest {

    private static final CompletionTokenKeys KEYS = CompletionTokenKeys.builder()
            .currentKey("k1", "0123456789abcdef0123456789abcdef".getBytes()).build();
    private final InMemoryStateStore store = new InMemoryStateStore();
    private final ManualClock clock = new ManualClock();
    private final Workflow<String> greet = Workflow.builder("greet", Codec.string())
            .step("hello", s -> s.execute(ctx -> "hello " + ctx.input())).build();

    @Test
    void the_client_the_runtime_and_the_consumer_built_from_one_settings_share_store_clock_and_limits() {
        SasSettings settings = SasSettings.builder().stateStore(store).clock(clock).trustLocalClock()
                .maxPayloadBytes(1000).completionTokenKeys(KEYS).build();
        SasClient client = SasClient.builder().settings(settings).build();
        SasRuntime runtime = SasRuntime.builder().settings(settings).workflow(greet).build();

        assertThat(client.settings()).isEqualTo(settings);
        assertThat(runtime.client().settings()).isEqualTo(settings);
        assertThat(runtime.config().maxPayloadBytes()).isEqualTo(1000);
        assertThat(runtime.config().completionTokenKeys()).isSameAs(KEYS);
        assertThatThrownBy(() -> client.submit(greet, "big", "x".repeat(1001)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1000");

        List<TaskEvent.Type> heard = new ArrayList<>();
        StatusConsumer consumer = StatusConsumer.builder().settings(client.settings())
                .channel(StatusChannel.of("web", batch -> batch.forEach(u -> heard.add(u.status())))).build();
        Drain.statusUpdatesOnce(consumer); // registers the channel
        client.submit(greet, "g-1", "ann", SubmitOptions.builder().statusChannel("web").build());
        Drain.untilIdle(runtime);
        Drain.statusUpdatesOnce(consumer);
        assertThat(heard).contains(TaskEvent.Type.RECEIVED, TaskEvent.Type.PROCESSED);
    }

    @Test
    void a_setter_after_settings_overrides_that_one_setting_for_that_builder_only() {
        SasSettings settings = SasSettings.builder().stateStore(store).clock(clock).maxPayloadBytes(1000).build();
        SasClient client = SasClient.builder().settings(settings).maxPayloadBytes(2000).build();
        assertThat(client.settings().maxPayloadBytes()).isEqualTo(2000);
        assertThat(client.settings().clock()).isSameAs(clock);
        assertThat(settings.maxPayloadBytes()).isEqualTo(1000);
    }

    @Test
    void settings_are_checked_where_set_and_at_build() {
        assertThatThrownBy(() -> SasSettings.builder().build()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("stateStore");
        assertThatThrownBy(() -> SasSettings.builder().maxPayloadBytes(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxPayloadBytes must be at least 1, was 0");
        assertThatThrownBy(() -> SasSettings.builder().clock(null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("clock");
        assertThatThrownBy(() -> SasClient.builder().settings(null)).isInstanceOf(NullPointerException.class);
    }
}
