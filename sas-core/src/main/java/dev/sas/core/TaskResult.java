package dev.sas.core;

import java.util.Objects;
import java.util.Optional;

/**
 * A task that reached a terminal state, as {@link TaskHandle#await} returns it: its state, its
 * last error, and the decoded outputs of its steps. Immutable.
 *
 * @param info the task and its steps as stored
 */
public record TaskResult(TaskInfo info) {

    /** @throws NullPointerException if {@code info} is null */
    public TaskResult {
        Objects.requireNonNull(info, "info must not be null");
    }

    /** The task. */
    public TaskId taskId() {
        return info.taskId();
    }

    /** The terminal state: PROCESSED, ERROR, COMPENSATED, COMPENSATION_FAILED or CANCELLED. */
    public TaskStatus status() {
        return info.status();
    }

    /** True when every step completed. */
    public boolean isProcessed() {
        return info.status() == TaskStatus.PROCESSED;
    }

    /** The last error recorded (why the task failed, timed out or was cancelled), if any. */
    public Optional<String> error() {
        return Optional.ofNullable(info.lastError());
    }

    /**
     * The recorded output of the step {@code step} names, decoded with its codec; empty if the
     * step recorded none (it did not complete, or returned null).
     *
     * <pre>{@code
     * Receipt receipt = handle.await(Duration.ofSeconds(30)).output(CHARGE).orElseThrow();
     * }</pre>
     *
     * @throws NullPointerException if {@code step} is null
     * @throws IllegalArgumentException if the task has no step of that name
     */
    public <O> Optional<O> output(StepRef<O> step) {
        Objects.requireNonNull(step, "step must not be null");
        return Optional.ofNullable(step.decode(info.step(step.name()).output()));
    }

    /**
     * The recorded output of a step, decoded with {@code codec}; empty if the step recorded none.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the task has no step of that name
     */
    public <O> Optional<O> output(String stepName, Codec<O> codec) {
        Objects.requireNonNull(codec, "codec must not be null");
        return Optional.ofNullable(info.step(Objects.requireNonNull(stepName, "stepName must not be null")).output())
                .map(codec::decode);
    }
}
