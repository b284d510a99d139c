package dev.sas.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.CircuitBreaker;
import dev.sas.core.FlowControl;
import dev.sas.core.internal.FlowPolicy.Admission;
import dev.sas.core.internal.FlowPolicy.Completion;
import dev.sas.core.internal.FlowPolicy.Granted;
import dev.sas.core.internal.FlowPolicy.Held;
import dev.sas.core.internal.FlowPolicy.Outcome;
import dev.sas.core.internal.FlowPolicy.Reason;
import dev.sas.core.spi.GateChange;
import dev.sas.core.spi.GateState;
import dev.sas.core.spi.GateView;
import dev.sas.core.spi.Permit;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The flow-control policy as a pure function of a gate's state and the time, applied to a gate kept here. */
class FlowPolicyTest {
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    /** One gate, changed the way a store changes it: expired permits dropped, then the decision written. */
    static final class Gate {
        GateState state;
        final List<Permit> permits = new ArrayList<>();
        int ids;

        <T> T apply(Instant now, Function<GateView, GateChange<T>> decide) {
            permits.removeIf(p -> !p.expiresAt().isAfter(now));
            GateView v = new GateView("payments/default", state != null ? state : GateState.initial(now), state != null,
                    permits.size(), (int) permits.stream().filter(Permit::probe).count());
            GateChange<T> c = decide.apply(v);
            if (c.state() != null) {
                state = c.state();
            }
            if (c.take() != null) {
                permits.add(c.take());
            }
            if (c.giveBack() != null) {
                permits.removeIf(p -> p.id().equals(c.giveBack()));
            }
            return c.result();
        }

        Admission admit(FlowControl fc, Instant now) {
            String id = "p" + ids++;
            return apply(now, v -> FlowPolicy.admit(v, fc, now, id, "node-1", true, now));
        }

        Permit grant(FlowControl fc, Instant now) {
            Admission a = admit(fc, now);
            assertThat(a).as("admitted at %s", now).isInstanceOf(Granted.class);
            return ((Granted) a).permit();
        }

        Held hold(FlowControl fc, Instant now) {
            Admission a = admit(fc, now);
            assertThat(a).as("held at %s", now).isInstanceOf(Held.class);
            return (Held) a;
        }

        Completion finish(FlowControl fc, Instant now, Permit p, Outcome outcome) {
            return apply(now, v -> FlowPolicy.complete(v, fc, now, p, outcome, outcome == Outcome.FAILURE ? "503" : null,
                    true));
        }
    }

    private final Gate gate = new Gate();

    @Nested
    class Capacity {
        private final FlowControl fc = FlowControl.builder().maxConcurrentCalls(2).build();

        @Test
        void grants_up_to_the_limit_then_holds_until_a_permit_is_given_back() {
            Permit a = gate.grant(fc, T0);
            gate.grant(fc, T0);
            Held held = gate.hold(fc, T0);
            assertThat(held.reason()).isEqualTo(Reason.CAPACITY);
            assertThat(held.message()).startsWith("waiting for agent capacity: agent 'payments' endpoint 'default'"
                    + " has 2 of 2 calls in flight");
            assertThat(held.retryAt()).as("by itself, unless woken sooner").isEqualTo(T0.plus(FlowPolicy.CAPACITY_WAIT));
            assertThat(gate.state.heldUntil()).isEqualTo(held.retryAt());

            gate.finish(fc, T0.plusMillis(40), a, Outcome.SUCCESS);
            gate.grant(fc, T0.plusMillis(40));
        }

        @Test
        void a_permit_not_renewed_stops_counting_when_its_lease_ends() {
            gate.grant(fc, T0);
            gate.grant(fc, T0);
            gate.hold(fc, T0.plus(fc.permitLease()).minusMillis(1));
            gate.grant(fc, T0.plus(fc.permitLease()));
        }

        @Test
        void a_permit_counts_until_a_lease_past_its_calls_deadline_without_any_renewal() {
            Instant completeBy = T0.plusSeconds(60);
            String[] ids = {"long-1", "long-2"};
            for (String id : ids) {
                Admission a = gate.apply(T0, v -> FlowPolicy.admit(v, fc, T0, id, "starved-node", true, completeBy));
                assertThat(((Granted) a).permit().expiresAt()).isEqualTo(completeBy.plus(fc.permitLease()));
            }
            // the holder never renews (starved or dead): no other call goes while either call may still run
            gate.hold(fc, T0.plus(fc.permitLease()).plusSeconds(1));
            gate.hold(fc, completeBy.plus(fc.permitLease()).minusMillis(1));
            gate.grant(fc, completeBy.plus(fc.permitLease()));
        }

        @Test
        void a_permit_given_back_while_a_task_may_wait_wakes_one_and_none_once_nobody_can_wait() {
            Permit a = gate.grant(fc, T0);
            Permit b = gate.grant(fc, T0);
            gate.hold(fc, T0);
            assertThat(gate.finish(fc, T0.plusMillis(50), a, Outcome.SUCCESS).wake()).isEqualTo(1);

            Instant later = T0.plus(FlowPolicy.CAPACITY_WAIT); // the held call came again by itself
            assertThat(gate.finish(fc, later, b, Outcome.SUCCESS).wake()).isZero();
        }

        @Test
        void the_average_hold_time_is_kept() {
            Permit a = gate.grant(fc, T0);
            gate.finish(fc, T0.plusSeconds(2), a, Outcome.SUCCESS);
            assertThat(gate.state.avgHoldMillis()).isEqualTo(2_000);
            Permit b = gate.grant(fc, T0.plusSeconds(2));
            gate.finish(fc, T0.plusSeconds(3), b, Outcome.SUCCESS);
            assertThat(gate.state.avgHoldMillis()).isEqualTo((2_000 * 7 + 1_000) / 8);
        }
    }

    @Nested
    class RateLimit {

        @Test
        void calls_start_one_interval_apart_after_the_burst() {
            FlowControl fc = FlowControl.builder().maxCallsPerSecond(10).burst(3).build();
            gate.grant(fc, T0);
            gate.grant(fc, T0);
            gate.grant(fc, T0);
            Held held = gate.hold(fc, T0);
            assertThat(held.reason()).isEqualTo(Reason.RATE);
            assertThat(held.earliest()).isEqualTo(T0.plusMillis(100));
            gate.hold(fc, T0.plusMillis(99));
            gate.grant(fc, T0.plusMillis(100));
            gate.hold(fc, T0.plusMillis(150));
            gate.grant(fc, T0.plusMillis(200));
        }

        @Test
        void calls_held_by_the_rate_queue_one_interval_apart_and_never_further_than_the_longest_wait() {
            FlowControl fc = FlowControl.builder().maxCallsPerSecond(10).build();
            gate.grant(fc, T0);
            Instant first = gate.hold(fc, T0).retryAt();
            Instant second = gate.hold(fc, T0).retryAt();
            assertThat(first).isEqualTo(T0.plusMillis(100));
            assertThat(Duration.between(first, second)).isEqualTo(Duration.ofMillis(100));
            Instant last = T0;
            for (int i = 0; i < 2_000; i++) {
                last = gate.hold(fc, T0).retryAt();
            }
            assertThat(last).isEqualTo(T0.plus(FlowPolicy.MAX_WAIT));
        }

        @Test
        void no_window_of_one_second_holds_more_than_the_rate_and_the_burst() {
            FlowControl fc = FlowControl.builder().maxCallsPerSecond(50).burst(5).build();
            List<Instant> granted = new ArrayList<>();
            for (int ms = 0; ms < 20_000; ms += 3) {
                Instant now = T0.plusMillis(ms);
                if (gate.admit(fc, now) instanceof Granted g) {
                    granted.add(now);
                    gate.finish(fc, now, g.permit(), Outcome.SUCCESS);
                }
            }
            for (Instant t : granted) {
                long inWindow = granted.stream().filter(x -> !x.isBefore(t) && x.isBefore(t.plusSeconds(1))).count();
                assertThat(inWindow).isLessThanOrEqualTo(50 + 5 - 1);
            }
            assertThat(granted.size()).as("50/s over 20 s, within 1 %").isBetween(990, 1005);
        }
    }

    @Nested
    class Breaker {
        private final CircuitBreaker cb = CircuitBreaker.builder().consecutiveFailures(3).failureRate(50, 6)
                .window(Duration.ofSeconds(10)).openFor(Duration.ofSeconds(30)).halfOpenProbes(2).build();
        private final FlowControl fc = FlowControl.builder().circuitBreaker(cb).build();

        private Completion call(Instant now, Outcome outcome) {
            return gate.finish(fc, now, gate.grant(fc, now), outcome);
        }

        @Test
        void consecutive_failures_open_it_and_a_success_in_between_starts_the_count_again() {
            call(T0, Outcome.FAILURE);
            call(T0, Outcome.FAILURE);
            call(T0, Outcome.SUCCESS);
            call(T0, Outcome.FAILURE);
            assertThat(call(T0, Outcome.FAILURE).breaker()).isEqualTo(CircuitBreaker.State.CLOSED);
            Completion third = call(T0.plusSeconds(1), Outcome.FAILURE);
            assertThat(third.opened()).isTrue();
            assertThat(third.breaker()).isEqualTo(CircuitBreaker.State.OPEN);
            assertThat(third.retryAt()).as("after the cool-down, spread over at most 2 s")
                    .isBetween(T0.plusSeconds(31), T0.plusSeconds(33));
            assertThat(third.message()).contains("is open until " + T0.plusSeconds(31))
                    .contains("after 3 failures in a row").contains("last failure: 503");
        }

        @Test
        void the_failure_rate_counts_only_once_the_window_has_its_minimum_calls() {
            FlowControl rateOnly = FlowControl.builder().circuitBreaker(CircuitBreaker.builder().noConsecutiveFailures()
                    .failureRate(50, 6).window(Duration.ofSeconds(10)).build()).build();
            for (int i = 0; i < 5; i++) {
                assertThat(gate.finish(rateOnly, T0, gate.grant(rateOnly, T0), Outcome.FAILURE).opened())
                        .as("100 %% of %d calls, fewer than 6", i + 1).isFalse();
            }
            assertThat(gate.finish(rateOnly, T0, gate.grant(rateOnly, T0), Outcome.FAILURE).opened()).isTrue();

            Gate other = new Gate();
            Outcome[] outcomes = {Outcome.SUCCESS, Outcome.SUCCESS, Outcome.SUCCESS, Outcome.SUCCESS, Outcome.FAILURE,
                Outcome.FAILURE, Outcome.FAILURE};
            for (Outcome o : outcomes) {
                assertThat(other.finish(rateOnly, T0, other.grant(rateOnly, T0), o).opened()).as("at most 3 of 7").isFalse();
            }
            assertThat(other.finish(rateOnly, T0, other.grant(rateOnly, T0), Outcome.FAILURE).opened())
                    .as("4 of 8 failed: 50 %").isTrue();
        }

        @Test
        void the_window_starts_again_when_it_is_over() {
            FlowControl rateOnly = FlowControl.builder().circuitBreaker(CircuitBreaker.builder().noConsecutiveFailures()
                    .failureRate(50, 4).window(Duration.ofSeconds(10)).build()).build();
            for (int i = 0; i < 3; i++) {
                gate.finish(rateOnly, T0, gate.grant(rateOnly, T0), Outcome.FAILURE);
            }
            Instant later = T0.plusSeconds(10);
            assertThat(gate.finish(rateOnly, later, gate.grant(rateOnly, later), Outcome.FAILURE).opened())
                    .as("a new window: 1 call").isFalse();
            assertThat(gate.state.windowCalls()).isEqualTo(1);
        }

        @Test
        void open_holds_every_call_until_the_cool_down_ends_then_lets_probes_through() {
            for (int i = 0; i < 3; i++) {
                call(T0, Outcome.FAILURE);
            }
            Held held = gate.hold(fc, T0.plusSeconds(29));
            assertThat(held.reason()).isEqualTo(Reason.BREAKER_OPEN);
            assertThat(held.retryAt()).isBetween(T0.plusSeconds(30), T0.plusSeconds(32));
            assertThat(held.message()).startsWith("waiting for agent health: the circuit breaker of agent 'payments'"
                    + " endpoint 'default' is open until " + T0.plusSeconds(30));

            Instant after = T0.plusSeconds(30);
            Admission first = gate.admit(fc, after);
            assertThat(first).isInstanceOfSatisfying(Granted.class, g -> {
                assertThat(g.permit().probe()).isTrue();
                assertThat(g.halfOpened()).isTrue();
            });
            assertThat(gate.state.breaker()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
            Permit second = gate.grant(fc, after);
            assertThat(second.probe()).isTrue();
            Held third = gate.hold(fc, after);
            assertThat(third.reason()).isEqualTo(Reason.BREAKER_PROBING);
            assertThat(third.message()).contains("is half-open, probing with 2 calls");

            assertThat(gate.finish(fc, after, ((Granted) first).permit(), Outcome.SUCCESS).closed()).isFalse();
            Completion closing = gate.finish(fc, after, second, Outcome.SUCCESS);
            assertThat(closing.closed()).isTrue();
            assertThat(closing.wake()).as("the tasks held while it was open or probing go on")
                    .isEqualTo(FlowPolicy.WAKE_ON_CLOSE);
            assertThat(closing.breaker()).isEqualTo(CircuitBreaker.State.CLOSED);
            assertThat(gate.state.consecutiveFailures()).isZero();
            gate.grant(fc, after);
        }

        @Test
        void a_failed_probe_opens_it_again_for_a_full_cool_down() {
            for (int i = 0; i < 3; i++) {
                call(T0, Outcome.FAILURE);
            }
            Instant after = T0.plusSeconds(30);
            Permit probe = gate.grant(fc, after);
            Completion failed = gate.finish(fc, after.plusSeconds(1), probe, Outcome.FAILURE);
            assertThat(failed.opened()).isTrue();
            assertThat(failed.holdsBack()).isTrue();
            assertThat(gate.state.openUntil()).isEqualTo(after.plusSeconds(31));
            gate.hold(fc, after.plusSeconds(30));
        }

        @Test
        void a_straggler_finishing_while_half_open_counts_for_nothing_but_waits() {
            Permit straggler = gate.grant(fc, T0);
            for (int i = 0; i < 3; i++) {
                call(T0, Outcome.FAILURE);
            }
            Instant after = T0.plusSeconds(30);
            gate.grant(fc, after); // the probe
            Completion c = gate.finish(fc, after, straggler, Outcome.FAILURE);
            assertThat(c.breaker()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
            assertThat(c.opened()).isFalse();
            assertThat(c.holdsBack()).isTrue();
        }

        @Test
        void a_reset_closes_it_and_clears_the_counts() {
            for (int i = 0; i < 3; i++) {
                call(T0, Outcome.FAILURE);
            }
            Boolean existed = gate.apply(T0.plusSeconds(1), v -> FlowPolicy.reset(v, T0.plusSeconds(1)));
            assertThat(existed).isTrue();
            assertThat(gate.state.breaker()).isEqualTo(CircuitBreaker.State.CLOSED);
            assertThat(gate.state.consecutiveFailures()).isZero();
            gate.grant(fc, T0.plusSeconds(1));
        }

        @Test
        void an_outcome_counted_at_the_deadline_is_not_counted_again_when_the_call_ends() {
            Permit p = gate.grant(fc, T0);
            gate.apply(T0, v -> FlowPolicy.complete(v, fc, T0, p, Outcome.FAILURE, "no reply", false));
            assertThat(gate.permits).as("the permit stays until the call ends").hasSize(1);
            gate.finish(fc, T0.plusSeconds(1), p, Outcome.NONE);
            assertThat(gate.permits).isEmpty();
            assertThat(gate.state.consecutiveFailures()).isEqualTo(1);
        }
    }

    @Test
    void the_status_splits_the_gate_into_agent_and_endpoint() {
        GateView v = new GateView("payments/eu-west", GateState.initial(T0), true, 3, 0);
        assertThat(FlowPolicy.status(v)).satisfies(s -> {
            assertThat(s.agent()).isEqualTo("payments");
            assertThat(s.endpoint()).isEqualTo("eu-west");
            assertThat(s.callsInFlight()).isEqualTo(3);
            assertThat(s.openUntil()).isNull();
        });
    }
}
