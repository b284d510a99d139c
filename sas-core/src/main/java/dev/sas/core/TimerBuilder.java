package dev.sas.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Configures a durable timer step, inside {@link Workflow.Builder#timer(String, java.util.function.Consumer)}:
 * the task waits for a duration ({@link #waitFor}) or until an instant computed from its input and
 * earlier outputs ({@link #waitUntil}), on the database's clock. While it waits the task is held by
 * no node and uses no thread and no in-flight slot: it rests {@link TaskStatus#WAITING}, due when
 * the timer fires, and an operator can cancel it at once. When a scheduler claims it at or after
 * that instant, the step completes without calling anything; its output is the instant it fired at
 * (ISO-8601). Set exactly one of {@link #waitFor} and {@link #waitUntil}. Not thread-safe.
 *
 * <pre>{@code
 * .timer("remind-after", t -> t.waitFor(Duration.ofDays(2)))
 * .timer("until-due", t -> t.waitUntil(ctx -> ctx.input().dueAt()))
 * }</pre>
 *
 * @param <I> the workflow's input type
 */
public final class TimerBuilder<I> {

    private final String name;
    private Duration waitFor;
    private Function<StepContext<I>, Instant> waitUntil;
    private Predicate<StepContext<I>> condition;

    TimerBuilder(String name) {
        this.name = name;
    }

    /**
     * Waits {@code duration} from when the timer step comes up (database time), e.g.
     * {@code Duration.ofDays(2)}.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if not positive
     */
    public TimerBuilder<I> waitFor(Duration duration) {
        Objects.requireNonNull(duration, "timer '" + name + "': waitFor must not be null");
        if (duration.isZero() || duration.isNegative()) {
            throw new IllegalArgumentException("timer '" + name + "': waitFor must be positive, was " + duration);
        }
        this.waitFor = duration;
        return this;
    }

    /**
     * Waits until the instant {@code until} computes from the input and earlier outputs when the
     * timer step comes up (on a scheduler thread; keep it quick and free of side effects). An instant
     * already past fires at once. A function that throws or returns null fails the attempt (the
     * default retry policy decides).
     *
     * @throws NullPointerException if null
     */
    public TimerBuilder<I> waitUntil(Function<StepContext<I>, Instant> until) {
        this.waitUntil = Objects.requireNonNull(until, "timer '" + name + "': waitUntil must not be null");
        return this;
    }

    /**
     * Starts the timer only when {@code condition} holds; otherwise it is skipped like any
     * conditional step ({@link AbstractStepBuilder#when}).
     *
     * @throws NullPointerException if null
     */
    public TimerBuilder<I> when(Predicate<StepContext<I>> condition) {
        this.condition = Objects.requireNonNull(condition, "timer '" + name + "': when condition must not be null");
        return this;
    }

    StepDefinition<I> build(int index) {
        if (waitFor == null && waitUntil == null) {
            throw new IllegalStateException("timer '" + name + "' has no time: set waitFor(...) or waitUntil(...)");
        }
        if (waitFor != null && waitUntil != null) {
            throw new IllegalStateException("timer '" + name + "' sets both waitFor(" + waitFor
                    + ") and waitUntil(...); choose one");
        }
        StepBuilder<I> step = new StepBuilder<>(name);
        step.timer = new StepTimer<>(waitFor, waitUntil);
        step.condition = condition;
        return step.build(index);
    }
}
