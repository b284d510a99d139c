package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.RuntimeStatus;
import dev.sas.core.SasRuntime;
import dev.sas.core.Workflow;
import dev.sas.testing.InMemoryStateStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link SasRuntime#status()}: what a health check reads. */
class RuntimeStatusTest {

    private static final Workflow<String> WF = Workflow.builder("status", Codec.string())
            .step("only", s -> s.execute(ctx -> "done"))
            .build();

    @Test
    void a_started_runtime_reports_its_claims_and_the_supervisor_lease_and_a_closed_one_does_not_run() {
        InMemoryStateStore store = new InMemoryStateStore();
        SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(WF).pollInterval(Duration.ofMillis(50))
                .supervisorInterval(Duration.ofMillis(100)).build();
        RuntimeStatus before = runtime.status();
        assertThat(before.running()).isFalse();
        assertThat(before.lastClaimPoll()).isNull();
        assertThat(before.supervisorLeader()).isFalse();

        runtime.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> runtime.status().lastClaimPoll() != null
                && runtime.status().supervisorLeader());
        RuntimeStatus running = runtime.status();
        assertThat(running.running()).isTrue();
        assertThat(running.instanceId()).isEqualTo(runtime.instanceId());
        assertThat(running.maxInFlight()).isEqualTo(SasRuntime.DEFAULT_MAX_IN_FLIGHT);

        runtime.close();
        assertThat(runtime.status().running()).isFalse();
        assertThat(runtime.status().supervisorLeader()).as("the lease is given up at close").isFalse();
    }

    @Test
    void a_second_runtime_on_the_same_store_does_not_lead_while_the_first_holds_the_lease() {
        InMemoryStateStore store = new InMemoryStateStore();
        try (SasRuntime first = SasRuntime.builder().stateStore(store).workflow(WF)
                .supervisorInterval(Duration.ofMillis(100)).build().start()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> first.status().supervisorLeader());
            try (SasRuntime second = SasRuntime.builder().stateStore(store).workflow(WF)
                    .supervisorInterval(Duration.ofMillis(100)).build().start()) {
                await().atMost(Duration.ofSeconds(30)).until(() -> second.status().lastClaimPoll() != null);
                assertThat(second.status().supervisorLeader()).isFalse();
                assertThat(first.status().supervisorLeader()).isTrue();
            }
        }
    }
}
