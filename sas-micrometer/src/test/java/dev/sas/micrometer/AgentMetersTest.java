package dev.sas.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Agent;
import dev.sas.core.CircuitBreaker;
import dev.sas.core.Codec;
import dev.sas.core.FlowControl;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.Workflow;
import dev.sas.testing.Drain;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The agents' flow control in the registry: breaker state and calls in flight per endpoint, held-back calls. */
class AgentMetersTest {

    private final ManualClock clock = new ManualClock();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void an_open_breaker_its_failures_and_the_calls_held_back_show_per_agent_endpoint() {
        Agent<String, String> payments = Agent.builder("payments")
                .retryPolicy(RetryPolicy.builder().maxAttempts(3).fixedBackoff(Duration.ofSeconds(1)).jitter(0).build())
                .flowControl(FlowControl.builder().maxConcurrentCalls(2).endpoints("eu", "us")
                        .circuitBreaker(CircuitBreaker.builder().consecutiveFailures(1).noFailureRate()
                                .openFor(Duration.ofMinutes(10)).build()).build())
                .call(req -> req.endpoint().equals("eu")
                        ? CompletableFuture.failedFuture(new IllegalStateException("503 from eu"))
                        : new CompletableFuture<>()); // us: a call that stays in flight
        Workflow<String> payouts = Workflow.builder("payouts", Codec.string())
                .step("pay", s -> s.call(payments, ctx -> ctx.input()).completeWithin(Duration.ofMinutes(5)))
                .build();
        SasRuntime runtime = SasRuntime.builder().stateStore(new InMemoryStateStore()).clock(clock)
                .workflow(payouts).build();
        // read the store at every scrape here; the default reads it at most every 30 s
        SasMicrometer.builder(registry).storeRefresh(Duration.ofNanos(1)).build().bind(runtime);
        assertThat(gauge("sas.agent.breaker.state", "eu")).as("not written yet: closed").isZero();

        runtime.client().submit(payouts, "payout-1", "p-1");
        Drain.schedulerOnce(runtime);                 // eu fails: its breaker opens
        clock.tick(Duration.ofSeconds(2));
        Drain.schedulerOnce(runtime);                 // the retry goes to us and stays in flight

        assertThat(gauge("sas.agent.breaker.state", "eu")).as("open").isEqualTo(2);
        assertThat(gauge("sas.agent.failures.in.window", "eu")).isEqualTo(1);
        assertThat(gauge("sas.agent.breaker.state", "us")).isZero();
        assertThat(gauge("sas.agent.calls.in.flight", "us")).isEqualTo(1);
        assertThat(registry.get("sas.agent.breakers.opened").functionCounter().count()).isEqualTo(1);
    }

    private double gauge(String name, String endpoint) {
        return registry.get(name).tags("agent", "payments", "endpoint", endpoint).gauge().value();
    }
}
