package dev.sas.core;

import java.time.Duration;
import java.time.Instant;
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
     * The recorded output of an earlier completed step.
     *
     * @throws IllegalArgumentException if no step has that name
     */
    Optional<String> output(String stepName);

    /**
     * The recorded output of an earlier completed step, decoded.
     *
     * @throws IllegalArgumentException if no step has that name
     */
    default <T> Optional<T> output(String stepName, Codec<T> codec) {
        return output(stepName).map(codec::decode);
    }
}
