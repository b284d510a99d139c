package dev.sas.core;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;

/**
 * Configures one step inside {@link Workflow.Builder#step(String, java.util.function.Consumer)}.
 * Set exactly one kind of work: {@link #execute} (a local function) or {@link #call} (a call
 * through an {@link Agent}). Not thread-safe.
 *
 * @param <I> the workflow's input type
 */
public final class StepBuilder<I> {

    /** Default deadline of one attempt: 30 s. */
    public static final Duration DEFAULT_COMPLETE_WITHIN = Duration.ofSeconds(30);
    /** Default number of supervisor time-outs before the task fails: 3. */
    public static final int DEFAULT_FAILURE_THRESHOLD = 3;

    private final String name;
    private Duration completeWithin = DEFAULT_COMPLETE_WITHIN;
    private RetryPolicy retryPolicy;
    private int failureThreshold = DEFAULT_FAILURE_THRESHOLD;
    private Compensation<I> compensation;
    private Step<I> step;
    private StepDefinition.AgentCall<I, ?, ?> agentCall;

    StepBuilder(String name) {
        this.name = name;
    }

    /**
     * The step's work: a local function run on a scheduler thread.
     *
     * @throws NullPointerException if {@code step} is null
     */
    public StepBuilder<I> execute(Step<I> step) {
        this.step = Objects.requireNonNull(step, "step '" + name + "': execute must not be null");
        return this;
    }

    /**
     * The step's work: a call through {@code agent}, with the request built from the context and
     * the reply encoded with {@code replyCodec} as the step's output.
     *
     * @throws NullPointerException if an argument is null
     */
    public <Q, R> StepBuilder<I> call(Agent<Q, R> agent, Function<StepContext<I>, Q> request, Codec<R> replyCodec) {
        Objects.requireNonNull(agent, "step '" + name + "': agent must not be null");
        Objects.requireNonNull(request, "step '" + name + "': request must not be null");
        Objects.requireNonNull(replyCodec, "step '" + name + "': replyCodec must not be null");
        this.agentCall = new StepDefinition.AgentCall<>(agent, request, replyCodec);
        return this;
    }

    /**
     * The step's work: a call through an agent whose reply is a string.
     *
     * @throws NullPointerException if an argument is null
     */
    public <Q> StepBuilder<I> call(Agent<Q, String> agent, Function<StepContext<I>, Q> request) {
        return call(agent, request, Codec.string());
    }

    /**
     * How long one attempt may take; the scheduler stops waiting then and rejects a later result.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if not positive
     */
    public StepBuilder<I> completeWithin(Duration completeWithin) {
        Objects.requireNonNull(completeWithin, "step '" + name + "': completeWithin must not be null");
        if (completeWithin.isZero() || completeWithin.isNegative()) {
            throw new IllegalArgumentException(
                    "step '" + name + "': completeWithin must be positive, was " + completeWithin);
        }
        this.completeWithin = completeWithin;
        return this;
    }

    /**
     * How failed attempts are retried; defaults to the agent's policy for agent calls, else
     * {@link RetryPolicy#defaults()}.
     *
     * @throws NullPointerException if null
     */
    public StepBuilder<I> retry(RetryPolicy retryPolicy) {
        this.retryPolicy = Objects.requireNonNull(retryPolicy, "step '" + name + "': retry policy must not be null");
        return this;
    }

    /**
     * How many times the supervisor may find this step past its deadline (hung, or its node died)
     * before the task fails.
     *
     * @throws IllegalArgumentException if less than 1
     */
    public StepBuilder<I> failureThreshold(int failureThreshold) {
        if (failureThreshold < 1) {
            throw new IllegalArgumentException(
                    "step '" + name + "': failureThreshold must be at least 1, was " + failureThreshold);
        }
        this.failureThreshold = failureThreshold;
        return this;
    }

    /**
     * Undoes this step when a later step fails for good or the task is cancelled.
     *
     * @throws NullPointerException if null
     */
    public StepBuilder<I> compensateWith(Compensation<I> compensation) {
        this.compensation = Objects.requireNonNull(compensation, "step '" + name + "': compensation must not be null");
        return this;
    }

    StepDefinition<I> build(int index) {
        if (step == null && agentCall == null) {
            throw new IllegalStateException("step '" + name + "' has no work: set execute(...) or call(...)");
        }
        if (step != null && agentCall != null) {
            throw new IllegalStateException(
                    "step '" + name + "' sets both execute(...) and call(...); choose one");
        }
        RetryPolicy policy = retryPolicy != null ? retryPolicy
                : agentCall != null ? agentCall.agent.retryPolicy() : RetryPolicy.defaults();
        if (policy == null) {
            throw new IllegalStateException("step '" + name + "': agent '" + agentCall.agent.name()
                    + "' returned a null retryPolicy(); set retry(...) on the step");
        }
        return new StepDefinition<>(name, index, completeWithin, policy, failureThreshold, compensation, step, agentCall);
    }
}
