package dev.sas.testing;

import dev.sas.core.SasRuntime;
import dev.sas.core.StatusConsumer;
import dev.sas.core.internal.RuntimeDriver;
import java.time.Duration;
import java.util.Objects;

/**
 * Drives a runtime that was not started, on the calling thread, so a test decides when the
 * Scheduler and Supervisor run and what time it is (with a {@link ManualClock}).
 *
 * <pre>{@code
 * SasRuntime runtime = SasRuntime.builder().stateStore(new InMemoryStateStore()).clock(clock)
 *         .workflow(orders).build();                 // not started
 * TaskHandle order = runtime.client().submit(orders, "o-1", input);
 * Drain.untilIdle(runtime);                          // runs every step that is due now
 * Drain.afterTime(runtime, clock, Duration.ofMinutes(1)); // a minute later: time-outs, retries
 * }</pre>
 *
 * <p>Not thread-safe: one test thread drives one runtime.
 */
public final class Drain {
    /** Most scheduler passes {@link #untilIdle} makes before it decides the work never ends. */
    public static final int MAX_PASSES = 10_000;

    private Drain() {
    }

    /**
     * Runs scheduler passes until one claims nothing: every task due now runs as far as it can
     * (agent replies that complete on other threads continue there). After each pass, the ends of
     * child tasks, parallel branches and fan-out elements are relayed as a started runtime relays
     * them at once: a join completes, and the next element of a fan-out lane goes on, without a
     * supervisor pass.
     *
     * @return how many tasks were claimed in all
     * @throws NullPointerException if {@code runtime} is null
     * @throws IllegalStateException if the runtime was started or closed, or if it still claims
     *     work after {@value #MAX_PASSES} passes (a workflow that never ends)
     */
    public static int untilIdle(SasRuntime runtime) {
        Objects.requireNonNull(runtime, "runtime must not be null");
        int claimed = 0;
        RuntimeDriver.Passes passes = RuntimeDriver.of(runtime);
        for (int pass = 0; pass < MAX_PASSES; pass++) {
            int n = passes.scheduler();
            int relayed = passes.relay(); // after every pass, as a started runtime relays at once
            if (n == 0 && relayed == 0) {
                return claimed;
            }
            claimed += n;
        }
        throw new IllegalStateException("runtime " + runtime.instanceId() + " still claims work after " + MAX_PASSES
                + " passes; does a step keep rescheduling itself without the clock moving?");
    }

    /**
     * Moves the clock on by {@code elapsed}, runs one supervisor pass (expired claims are
     * recovered) and then drains the scheduler.
     *
     * @return how many tasks were claimed
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code elapsed} is negative
     * @throws IllegalStateException as for {@link #untilIdle}
     */
    public static int afterTime(SasRuntime runtime, ManualClock clock, Duration elapsed) {
        Objects.requireNonNull(runtime, "runtime must not be null");
        Objects.requireNonNull(clock, "clock must not be null");
        clock.tick(elapsed);
        supervisorOnce(runtime);
        return untilIdle(runtime);
    }

    /**
     * Claims one batch of due tasks and runs them on the calling thread, each as far as it goes
     * (agent replies that are not ready continue on the thread that completes them); the store and
     * clock decide what is due.
     *
     * @return how many tasks were claimed
     * @throws NullPointerException if {@code runtime} is null
     * @throws IllegalStateException if the runtime was started or closed
     */
    public static int schedulerOnce(SasRuntime runtime) {
        return RuntimeDriver.of(runtime).scheduler();
    }

    /**
     * Runs one supervisor pass on the calling thread: takes the supervisor lease if it is free and
     * recovers expired claims.
     *
     * @return how many expired claims were recovered (0 if another instance holds the supervisor lease)
     * @throws NullPointerException if {@code runtime} is null
     * @throws IllegalStateException if the runtime was started or closed
     */
    public static int supervisorOnce(SasRuntime runtime) {
        return RuntimeDriver.of(runtime).supervisor();
    }

    /**
     * Runs one retention batch on the calling thread: if the runtime holds the supervisor lease
     * (taken by {@link #supervisorOnce}), deletes at most its {@code retentionBatchSize} final tasks
     * past retention.
     *
     * @return how many tasks were deleted (0 if the runtime does not hold the supervisor lease)
     * @throws NullPointerException if {@code runtime} is null
     * @throws IllegalStateException if the runtime was started or closed
     */
    public static int retentionOnce(SasRuntime runtime) {
        return RuntimeDriver.of(runtime).retention();
    }

    /**
     * Delivers one batch of each status channel of the runtime on the calling thread (taking the
     * channel's lease if free).
     *
     * @return how many status updates were delivered
     * @throws NullPointerException if {@code runtime} is null
     * @throws IllegalStateException if the runtime was started or closed
     * @throws dev.sas.core.SasException if a channel's handler threw (its batch stays pending)
     */
    public static int statusUpdatesOnce(SasRuntime runtime) {
        return RuntimeDriver.of(runtime).statusUpdates();
    }

    /**
     * Delivers one batch of each channel of a status consumer that was not started, on the calling
     * thread (registering its channels, and taking a channel's lease if free).
     *
     * @return how many status updates were delivered
     * @throws NullPointerException if {@code consumer} is null
     * @throws IllegalStateException if the consumer was started or closed
     * @throws dev.sas.core.SasException if a channel's handler threw (its batch stays pending)
     */
    public static int statusUpdatesOnce(StatusConsumer consumer) {
        return RuntimeDriver.consumerOnce(consumer);
    }
}
