package dev.sas.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class AdaptivePollTest {

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final AtomicBoolean pushed = new AtomicBoolean();
    private final AdaptivePoll poll = new AdaptivePoll(Duration.ofMillis(500), Duration.ofMillis(20), pushed::get,
            nanos::get);

    private void pass(Duration d) {
        nanos.addAndGet(d.toNanos());
    }

    @Test
    void an_idle_loop_polls_at_the_idle_interval() {
        assertThat(poll.nextWaitMillis(false)).isEqualTo(500);
        pass(Duration.ofMinutes(1));
        assertThat(poll.nextWaitMillis(false)).isEqualTo(500);
    }

    @Test
    void a_loop_that_found_work_polls_at_the_busy_interval_for_two_seconds_then_backs_off_to_idle() {
        assertThat(poll.nextWaitMillis(true)).isEqualTo(20);
        pass(Duration.ofMillis(1_900));
        assertThat(poll.nextWaitMillis(false)).as("still within the busy window").isEqualTo(20);
        pass(Duration.ofMillis(200));
        assertThat(poll.nextWaitMillis(false)).isEqualTo(40);
        assertThat(poll.nextWaitMillis(false)).isEqualTo(80);
        assertThat(poll.nextWaitMillis(false)).isEqualTo(160);
        assertThat(poll.nextWaitMillis(false)).isEqualTo(320);
        assertThat(poll.nextWaitMillis(false)).isEqualTo(500);
        assertThat(poll.nextWaitMillis(false)).isEqualTo(500);
        assertThat(poll.nextWaitMillis(true)).as("work again").isEqualTo(20);
    }

    @Test
    void where_the_store_pushes_hints_the_loop_always_waits_the_idle_interval() {
        pushed.set(true);
        assertThat(poll.nextWaitMillis(true)).isEqualTo(500);
        pushed.set(false);
        assertThat(poll.nextWaitMillis(false)).as("hints lost: back to adaptive").isEqualTo(20);
    }

    @Test
    void a_busy_interval_longer_than_the_idle_one_is_the_idle_one() {
        AdaptivePoll p = new AdaptivePoll(Duration.ofMillis(10), Duration.ofMillis(20), () -> false, nanos::get);
        assertThat(p.nextWaitMillis(true)).isEqualTo(10);
    }
}
