package dev.sas.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What a step (or a compensation) sees of its task while it runs. Valid only during that run;
 * not thread-safe to share beyond it.
 *
 * @param <I> the workflow's input type
 */
public interface StepContext<I> {

    /** The task being run. */
    TaskId taskId();

    /** The business key the task was submitted with. */
    String businessKey();

    /** The workflow name. */
    String workflow();

    /** This step's name. */
    String stepName();

    /** This step's position in the workflow, from 0. */
    int stepIndex();

    /** Which attempt at this step this is, from 1; counts every claim of the step. */
    int attempt();

    /** True when this run is the step's compensation, not the step itself. */
    boolean compensating();

    /** The decoded task input. */
    I input();

    /**
     * The fencing token of the claim running this attempt: it grows with every claim of the task.
     * A service that remembers the highest token it has seen per task can refuse writes from a
     * node whose claim was taken over.
     */
    long lease();

    /** The instant by which this attempt must finish; a later result is rejected. */
    Instant completeBy();

    /** Time left until {@link #completeBy()}, never negative. */
    Duration remaining();

    /**
     * A key that is the same for every attempt at this step of this task (and different for its
     * compensation). Pass it to remote services so a retried call is applied once.
     */
    String idempotencyKey();

    /**
     * The recorded output of an earlier completed step. Prefer {@link #output(StepRef)}, which
     * decodes it and checks the ref belongs to this workflow.
     *
     * @throws IllegalArgumentException if no step has that name
     */
    Optional<String> output(String stepName);

    /**
     * The decoded output of a completed step of this workflow, for example an earlier step's, or
     * (in a compensation) this step's own.
     *
     * <pre>{@code Receipt receipt = ctx.output(CHARGE);}</pre>
     *
     * @throws NullPointerException if {@code ref} is null
     * @throws IllegalArgumentException if {@code ref} is not a step of this workflow (no step has its
     *     name, or the step was defined with another ref, for example one of another workflow)
     * @throws IllegalStateException if the step has no recorded output: it has not completed, or
     *     it returned null ({@link #outputIfPresent(StepRef)} tells these apart from a value)
     * @throws NonRetryableException if the ref's codec cannot decode the stored output
     */
    default <O> O output(StepRef<O> ref) {
        return outputIfPresent(ref).orElseThrow(() -> new IllegalStateException("workflow '" + workflow()
                + "', step '" + stepName() + "': step '" + ref.name() + "' has no recorded output (it has not "
                + "completed, or it returned null); use outputIfPresent(ref) where that is expected"));
    }

    /**
     * The decoded output of a completed step of this workflow, or empty if the step has not
     * completed or returned null.
     *
     * @throws NullPointerException if {@code ref} is null
     * @throws IllegalArgumentException if {@code ref} is not a step of this workflow
     * @throws NonRetryableException if the ref's codec cannot decode the stored output
     */
    default <O> Optional<O> outputIfPresent(StepRef<O> ref) {
        Objects.requireNonNull(ref, "ref must not be null");
        return output(ref.name()).map(text -> {
            try {
                return ref.codec().decode(text);
            } catch (RuntimeException e) {
                throw new NonRetryableException("workflow '" + workflow() + "': output of step '" + ref.name()
                        + "' cannot be decoded with " + ref + ": " + e.getMessage(), e);
            }
        });
    }

    /**
     * The recorded output of an earlier completed step, decoded.
     *
     * @throws IllegalArgumentException if no step has that name
     */
    default <T> Optional<T> output(String stepName, Codec<T> codec) {
        return output(stepName).map(codec::decode);
    }
}
