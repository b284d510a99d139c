package dev.sas.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.spi.StateStore;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The offset to the store's clock is measured again as soon as the node's clock steps, before any
 * time is read from it: a deadline computed right after a jump is on the store's time.
 */
class DatabaseClockTest {

    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    /** Real time, as the monotonic timer sees it. */
    private final AtomicLong nanos = new AtomicLong();
    /** The store's clock: real time. */
    private final AtomicReference<Instant> database = new AtomicReference<>(T0);
    /** The node's clock: real time plus whatever the test sets it to. */
    private final AtomicReference<Instant> node = new AtomicReference<>(T0);
    private final AtomicInteger reads = new AtomicInteger();
    private final java.util.concurrent.atomic.AtomicBoolean readable = new java.util.concurrent.atomic.AtomicBoolean(true);
    private final StateStore store = (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                if (method.getName().equals("currentTime")) {
                    reads.incrementAndGet();
                    if (!readable.get()) {
                        throw new dev.sas.core.StateStoreException("connection refused (injected)");
                    }
                    return Optional.of(database.get());
                }
                throw new UnsupportedOperationException(method.getName());
            });
    private final Clock nodeClock = new Clock() {
        @Override
        public Instant instant() {
            return node.get();
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    };

    private void elapse(Duration d) {
        nanos.addAndGet(d.toNanos());
        database.updateAndGet(t -> t.plus(d));
        node.updateAndGet(t -> t.plus(d));
    }

    private DatabaseClock clock() {
        DatabaseClock c = DatabaseClock.of(nodeClock, store, "test", skew -> { }, nanos::get);
        c.ensureFresh();
        return c;
    }

    @Test
    void a_step_of_the_node_clock_either_way_is_measured_away_before_the_next_reading() {
        DatabaseClock clock = clock();
        elapse(Duration.ofSeconds(1));
        assertThat(clock.instant()).isEqualTo(T0.plusSeconds(1));

        node.updateAndGet(t -> t.minus(Duration.ofMinutes(5)));
        assertThat(clock.instant()).as("right after a step back").isEqualTo(database.get());
        elapse(Duration.ofSeconds(2));
        node.updateAndGet(t -> t.plus(Duration.ofMinutes(5)));
        assertThat(clock.instant()).as("right after a step forward").isEqualTo(database.get());
        assertThat(clock.offset()).isZero();
    }

    @Test
    void steps_just_inside_and_outside_the_tolerance_and_one_of_centuries() {
        DatabaseClock clock = clock();
        int before = reads.get();
        node.updateAndGet(t -> t.plus(DatabaseClock.STEP_TOLERANCE));
        assertThat(clock.instant()).as("a step of exactly the tolerance is no step")
                .isEqualTo(T0.plus(DatabaseClock.STEP_TOLERANCE));
        assertThat(reads.get()).as("not measured again").isEqualTo(before);

        node.updateAndGet(t -> t.plusNanos(1));
        assertThat(clock.instant()).as("one nanosecond more is a step: measured away").isEqualTo(database.get());
        assertThat(reads.get()).isGreaterThan(before);

        node.updateAndGet(t -> t.plus(Duration.ofDays(365L * 300)));
        assertThat(clock.instant()).as("a step of three centuries").isEqualTo(database.get());
        node.updateAndGet(t -> t.minus(Duration.ofDays(365L * 600)));
        assertThat(clock.instant()).as("and back past where it was").isEqualTo(database.get());
    }

    @Test
    void a_step_while_the_store_cannot_be_read_is_bridged_by_the_monotonic_timer() {
        DatabaseClock clock = clock();
        elapse(Duration.ofSeconds(1));
        readable.set(false);
        node.updateAndGet(t -> t.minus(Duration.ofMinutes(5)));
        assertThat(clock.instant()).as("right after a step back").isEqualTo(database.get());
        elapse(Duration.ofSeconds(2));
        assertThat(clock.instant()).isEqualTo(database.get());
        node.updateAndGet(t -> t.plus(Duration.ofMinutes(10)));
        assertThat(clock.instant()).as("after a step forward").isEqualTo(database.get());

        readable.set(true);
        elapse(DatabaseClock.STEP_TOLERANCE.multipliedBy(2));
        assertThat(clock.instant()).isEqualTo(database.get());
        assertThat(clock.offset()).as("measured again once readable").isEqualTo(Duration.ofMinutes(-5));
    }

    @Test
    void a_clock_that_only_ages_is_not_measured_at_every_reading() {
        DatabaseClock clock = clock();
        int first = reads.get();
        for (int i = 0; i < 40; i++) {
            elapse(Duration.ofMillis(100));
            assertThat(clock.instant()).isEqualTo(database.get());
        }
        assertThat(reads.get() - first).as("store clock reads in 4 s without a step").isZero();
        elapse(DatabaseClock.REFRESH_EVERY);
        clock.instant();
        assertThat(reads.get() - first).as("measured again once old").isPositive();
    }

    @Test
    void a_node_five_minutes_ahead_reads_the_store_time() {
        node.set(T0.plus(Duration.ofMinutes(5)));
        DatabaseClock clock = clock();
        assertThat(clock.instant()).isEqualTo(T0);
        assertThat(clock.offset()).isEqualTo(Duration.ofMinutes(-5));
    }
}
