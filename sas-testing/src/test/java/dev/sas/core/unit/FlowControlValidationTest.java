package dev.sas.core.unit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Agent;
import dev.sas.core.CircuitBreaker;
import dev.sas.core.Codec;
import dev.sas.core.FlowControl;
import dev.sas.core.SasRuntime;
import dev.sas.core.Workflow;
import dev.sas.core.spi.StateStore;
import dev.sas.testing.InMemoryStateStore;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Flow control is refused where it is configured, naming the setting and the value; combinations at build(). */
class FlowControlValidationTest {

    private static Agent<String, String> agent(String name, FlowControl flow) {
        return Agent.builder(name).flowControl(flow).call(r -> CompletableFuture.completedFuture("ok"));
    }

    private static Workflow<String> workflow(String name, Agent<String, String> agent) {
        return Workflow.builder(name, Codec.string()).step("call", s -> s.call(agent, ctx -> ctx.input())).build();
    }

    @Test
    void flow_control_settings_are_checked_where_they_are_set() {
        assertThatThrownBy(() -> FlowControl.builder().maxConcurrentCalls(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxConcurrentCalls must be at least 1, was 0");
        assertThatThrownBy(() -> FlowControl.builder().maxCallsPerSecond(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxCallsPerSecond must be a positive number, was 0.0");
        assertThatThrownBy(() -> FlowControl.builder().maxCallsPerSecond(Double.NaN))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxCallsPerSecond");
        assertThatThrownBy(() -> FlowControl.builder().burst(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("burst must be at least 1, was 0");
        assertThatThrownBy(() -> FlowControl.builder().endpoints())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one endpoint");
        assertThatThrownBy(() -> FlowControl.builder().endpoints("eu", "eu"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'eu' appears twice");
        assertThatThrownBy(() -> FlowControl.builder().endpoints("eu west"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("endpoint name").hasMessageContaining("eu west");
        assertThatThrownBy(() -> FlowControl.builder().permitLease(Duration.ofMillis(500)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("permitLease must be at least PT1S, was PT0.5S");
        assertThatThrownBy(() -> FlowControl.builder().circuitBreaker(null))
                .isInstanceOf(NullPointerException.class).hasMessage("circuitBreaker must not be null");
    }

    @Test
    void flow_control_combinations_are_checked_at_build() {
        assertThatThrownBy(() -> FlowControl.builder().burst(5).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("burst (5) needs maxCallsPerSecond");
        assertThatThrownBy(() -> FlowControl.builder().endpoints("eu", "us").build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("endpoints [eu, us] need a circuitBreaker");
        FlowControl built = FlowControl.builder().maxCallsPerSecond(50).build();
        assertThat(built.burst()).as("a tenth of a second's worth").isEqualTo(5);
        assertThat(built.endpoints()).containsExactly(FlowControl.DEFAULT_ENDPOINT);
        assertThat(FlowControl.none().isLimited()).isFalse();
    }

    @Test
    void a_reused_builder_never_changes_what_it_built() {
        FlowControl.Builder b = FlowControl.builder().maxConcurrentCalls(3).endpoints("a", "b");
        FlowControl first = b.build();
        b.maxConcurrentCalls(9).endpoints("c");
        assertThat(first.maxConcurrentCalls()).isEqualTo(3);
        assertThat(first.endpoints()).containsExactly("a", "b");
    }

    @Test
    void circuit_breaker_settings_are_checked_where_they_are_set_and_at_build() {
        assertThatThrownBy(() -> CircuitBreaker.builder().consecutiveFailures(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("consecutiveFailures must be at least 1, was 0");
        assertThatThrownBy(() -> CircuitBreaker.builder().failureRate(0, 10))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("failureRate percent must be 1 to 100, was 0");
        assertThatThrownBy(() -> CircuitBreaker.builder().failureRate(50, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("failureRate minimumCalls must be at least 1, was 0");
        assertThatThrownBy(() -> CircuitBreaker.builder().openFor(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("openFor must be positive, was PT0S");
        assertThatThrownBy(() -> CircuitBreaker.builder().window(null))
                .isInstanceOf(NullPointerException.class).hasMessage("window must not be null");
        assertThatThrownBy(() -> CircuitBreaker.builder().halfOpenProbes(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("halfOpenProbes must be at least 1, was 0");
        assertThatThrownBy(() -> CircuitBreaker.builder().noConsecutiveFailures().noFailureRate().build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("noConsecutiveFailures() and noFailureRate()");
        assertThat(CircuitBreaker.defaults()).isEqualTo(new CircuitBreaker(5, 50, 10, Duration.ofSeconds(30),
                Duration.ofSeconds(30), 1));
    }

    @Test
    void agent_builder_checks_its_name_and_settings() {
        assertThatThrownBy(() -> Agent.builder("bad name")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("agent name");
        assertThatThrownBy(() -> Agent.builder("a").flowControl(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("agent 'a': flowControl must not be null");
        assertThatThrownBy(() -> Agent.builder("a").call(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("agent 'a': call must not be null");
        assertThat(Agent.of("plain", r -> CompletableFuture.completedFuture("x")).flowControl()).isEqualTo(FlowControl.none());
    }

    @Test
    void a_runtime_refuses_two_agents_of_one_name_with_different_flow_controls_naming_both_places() {
        Workflow<String> a = workflow("wf-a", agent("payments", FlowControl.builder().maxConcurrentCalls(5).build()));
        Workflow<String> b = workflow("wf-b", agent("payments", FlowControl.builder().maxConcurrentCalls(6).build()));
        assertThatThrownBy(() -> SasRuntime.builder().stateStore(new InMemoryStateStore()).workflow(a).workflow(b).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("agent 'payments' has two different flow controls")
                .hasMessageContaining("workflow 'wf-a' version 1 step 'call'")
                .hasMessageContaining("workflow 'wf-b' version 1 step 'call'");
        Workflow<String> same = workflow("wf-c", agent("payments", FlowControl.builder().maxConcurrentCalls(5).build()));
        assertThat(SasRuntime.builder().stateStore(new InMemoryStateStore()).workflow(a).workflow(same).build())
                .as("equal flow controls are one agent's").isNotNull();
    }

    @Test
    void a_runtime_refuses_flow_control_on_a_store_that_cannot_keep_it() {
        StateStore plain = (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {StateStore.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "toString" -> "PlainStore";
                    default -> {
                        if (method.isDefault()) {
                            yield java.lang.reflect.InvocationHandler.invokeDefault(proxy, method, args);
                        }
                        throw new UnsupportedOperationException(method.getName());
                    }
                });
        Workflow<String> wf = workflow("wf", agent("payments", FlowControl.builder().maxConcurrentCalls(5).build()));
        assertThatThrownBy(() -> SasRuntime.builder().stateStore(plain).workflow(wf).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("agent 'payments' has flow control").hasMessageContaining("PlainStore does not");
        Workflow<String> unlimited = workflow("wf", agent("payments", FlowControl.none()));
        assertThat(SasRuntime.builder().stateStore(plain).workflow(unlimited).build()).isNotNull();
    }
}
