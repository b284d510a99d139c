package dev.sas.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The settings every step has, whatever its output: deadline, retries, time-out budget,
 * compensation and the earlier steps it reads. {@link StepBuilder} configures a step with a plain
 * string output (or none), {@link TypedStepBuilder} one defined by a {@link StepRef}. Not
 * thread-safe.
 *
 * @param <I> the workflow's input type
 * @param <B> the concrete builder, returned by every setter so calls chain
 */
public abstract sealed class AbstractStepBuilder<I, B extends AbstractStepBuilder<I, B>>
        permits StepBuilder, TypedStepBuilder {

    final String name;
    Duration completeWithin = StepBuilder.DEFAULT_COMPLETE_WITHIN;
    RetryPolicy retryPolicy;
    int maxTimeouts = StepBuilder.DEFAULT_MAX_TIMEOUTS;
    Compensation<I> compensation;
    AgentCall<I, ?, ?> compensationCall;
    Duration compensateWithin;
    RetryPolicy compensationRetry;
    final List<StepRef<?>> reads = new ArrayList<>();
    ChildCall<I, ?> childCall;
    ChildGroup<I> group;
    Predicate<StepContext<I>> condition;
    StepTimer<I> timer;
    FanOutLanes.Slot slot;

    AbstractStepBuilder(String name) {
        this.name = name;
    }

    abstract B self();

    /**
     * How long one attempt may take; the scheduler stops waiting then and rejects a later result.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if not positive
     */
    public B completeWithin(Duration completeWithin) {
        this.completeWithin = positive("completeWithin", completeWithin);
        return self();
    }

    /**
     * How failed attempts are retried; defaults to the agent's policy for agent calls, else
     * {@link RetryPolicy#defaults()}. Its {@link RetryPolicy#maxAttempts()} bounds every attempt at
     * the step, however it ended: with an error or a time-out ({@link #maxTimeouts(int)} bounds
     * the time-outs among them).
     *
     * @throws NullPointerException if null
     */
    public B retry(RetryPolicy retryPolicy) {
        this.retryPolicy = Objects.requireNonNull(retryPolicy, "step '" + name + "': retry policy must not be null");
        return self();
    }

    /**
     * How many attempts at this step (or at its compensation) may time out, that is be found past
     * their deadline by the supervisor (the step hung, or its node died), before the task fails.
     * Only time-outs count here; errors a step throws count against the retry policy's
     * {@link RetryPolicy#maxAttempts()}, which counts time-outs too. So the step is tried at most
     * {@code maxAttempts} times, of which at most {@code maxTimeouts} may time out. Default
     * {@link StepBuilder#DEFAULT_MAX_TIMEOUTS}.
     *
     * @throws IllegalArgumentException if less than 1
     */
    public B maxTimeouts(int maxTimeouts) {
        return maxTimeouts("maxTimeouts", maxTimeouts);
    }

    /**
     * Old name of {@link #maxTimeouts(int)}, which it calls: it always counted time-outs only.
     *
     * @throws IllegalArgumentException if less than 1
     * @deprecated use {@link #maxTimeouts(int)}
     */
    @Deprecated(since = "0.2.0", forRemoval = true)
    public B failureThreshold(int failureThreshold) {
        return maxTimeouts("failureThreshold (now maxTimeouts)", failureThreshold);
    }

    private B maxTimeouts(String what, int value) {
        if (value < 1) {
            throw new IllegalArgumentException("step '" + name + "': " + what + " must be at least 1, was " + value);
        }
        this.maxTimeouts = value;
        return self();
    }

    /**
     * Undoes this step with local code when a later step fails for good or the task is cancelled.
     * It runs on a scheduler thread, with the step's retry policy unless
     * {@link #compensationRetry(RetryPolicy)} is set. For a compensation that calls a remote
     * service, prefer {@link #compensateWith(Agent, Function)}.
     *
     * @throws NullPointerException if null
     */
    public B compensateWith(Compensation<I> compensation) {
        this.compensation = Objects.requireNonNull(compensation, "step '" + name + "': compensation must not be null");
        return self();
    }

    /**
     * Undoes this step through {@code agent}: the request built by {@code request} goes the same way
     * as a step's agent call (asynchronously, on the agent's executor {@code sas-agent-<name>-N},
     * with the agent's retry policy unless {@link #compensationRetry(RetryPolicy)} is set, bounded
     * by {@link #compensateWithin(Duration)}), and {@link AgentRequest#compensation()} is true. The
     * reply is ignored; completing normally means the step is compensated. The request function may
     * read this step's own output with {@link StepContext#output(StepRef)}.
     *
     * @param agent the agent to call; may differ from the step's agent
     * @param request builds the compensation request from the context
     * @param <Q> the agent's request type
     * @throws NullPointerException if an argument is null
     */
    public <Q> B compensateWith(Agent<Q, ?> agent, Function<StepContext<I>, Q> request) {
        Objects.requireNonNull(agent, "step '" + name + "': compensation agent must not be null");
        Objects.requireNonNull(request, "step '" + name + "': compensation request must not be null");
        this.compensationCall = new AgentCall<>(agent, request, null);
        return self();
    }

    /**
     * How long one attempt at the compensation may take; defaults to {@link #completeWithin}.
     * A compensation attempt that misses it is handled like a step that misses its deadline: the
     * supervisor retries it, and past {@link #maxTimeouts(int)} the task ends COMPENSATION_FAILED.
     *
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if not positive
     */
    public B compensateWithin(Duration compensateWithin) {
        this.compensateWithin = positive("compensateWithin", compensateWithin);
        return self();
    }

    /**
     * How failed compensation attempts are retried; defaults to the compensation agent's policy
     * for {@link #compensateWith(Agent, Function)}, else to the step's retry policy.
     *
     * @throws NullPointerException if null
     */
    public B compensationRetry(RetryPolicy compensationRetry) {
        this.compensationRetry = Objects.requireNonNull(compensationRetry,
                "step '" + name + "': compensation retry policy must not be null");
        return self();
    }

    /**
     * Declares the earlier steps whose output this step (or its compensation) reads with
     * {@link StepContext#output(StepRef)}. {@link Workflow.Builder#build()} then checks that each
     * is an earlier step of the same workflow (for a parallel branch's or fan-out element's step,
     * also a step before the parallel or forEach step), defined with the same ref, so a reference to a
     * step that was renamed, removed, moved after this one or belongs to another workflow fails when the
     * workflow is built rather than when a task reaches this step. Reading an undeclared ref still
     * works; it is checked only when read.
     *
     * @throws NullPointerException if the array or a ref is null
     */
    public B reads(StepRef<?>... refs) {
        Objects.requireNonNull(refs, "step '" + name + "': reads must not be null");
        for (StepRef<?> r : Arrays.asList(refs)) {
            reads.add(Objects.requireNonNull(r, "step '" + name + "': a ref in reads(...) must not be null"));
        }
        return self();
    }

    /**
     * Runs this step only when {@code condition} holds when the step comes up; otherwise the step is
     * recorded {@link StepStatus#SKIPPED} (event {@link TaskEvent.Type#STEP_SKIPPED}), the task goes
     * on with the next step, and the skipped step is never compensated. The condition reads the input
     * and earlier steps' outputs ({@link StepContext#output(StepRef)}; declare them with
     * {@link #reads}); it runs on a scheduler thread and must be quick and free of side effects. A
     * condition that throws fails the attempt like the step's work would (the retry policy decides).
     *
     * <pre>{@code .step(CHARGE, s -> s.when(ctx -> ctx.input().paysByCard()).call(payments, ...))}</pre>
     *
     * @throws NullPointerException if {@code condition} is null
     */
    public B when(Predicate<StepContext<I>> condition) {
        this.condition = Objects.requireNonNull(condition, "step '" + name + "': when condition must not be null");
        return self();
    }

    private Duration positive(String what, Duration d) {
        Objects.requireNonNull(d, "step '" + name + "': " + what + " must not be null");
        if (d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException("step '" + name + "': " + what + " must be positive, was " + d);
        }
        return d;
    }

    /** Checks the combination of settings and builds the step. */
    StepDefinition<I> build(int index, StepRef<?> ref, Step<I> step, AgentCall<I, ?, ?> agentCall,
            StepDefinition.AwaitCompletion<I> awaitCompletion) {
        List<String> kinds = new ArrayList<>();
        if (step != null) {
            kinds.add("execute(...)");
        }
        if (agentCall != null) {
            kinds.add("call(...)");
        }
        if (awaitCompletion != null) {
            kinds.add("awaitCompletion(...)");
        }
        if (childCall != null) {
            kinds.add("childTask(...)");
        }
        if (group != null) {
            kinds.add("a group of units");
        }
        if (slot != null) {
            kinds.add("a fan-out element's turn");
        }
        if (timer != null) {
            kinds.add("a timer");
        }
        if (kinds.isEmpty()) {
            throw new IllegalStateException(
                    "step '" + name + "' has no work: set execute(...), call(...), awaitCompletion(...) or childTask(...)");
        }
        if (kinds.size() > 1) {
            throw new IllegalStateException(
                    "step '" + name + "' sets " + String.join(" and ", kinds) + "; choose one");
        }
        if (compensation != null && compensationCall != null) {
            throw new IllegalStateException("step '" + name + "' sets both compensateWith(compensation) and "
                    + "compensateWith(agent, request); choose one");
        }
        boolean compensates = compensation != null || compensationCall != null;
        if (!compensates && compensateWithin != null) {
            throw new IllegalStateException("step '" + name + "' sets compensateWithin(" + compensateWithin
                    + ") but no compensateWith(...); add the compensation or remove compensateWithin");
        }
        if (!compensates && compensationRetry != null) {
            throw new IllegalStateException("step '" + name + "' sets compensationRetry(...) but no "
                    + "compensateWith(...); add the compensation or remove compensationRetry");
        }
        RetryPolicy policy = retryPolicy != null ? retryPolicy
                : agentCall != null ? agentCall.agent.retryPolicy() : RetryPolicy.defaults();
        if (policy == null) {
            throw new IllegalStateException("step '" + name + "': agent '" + agentCall.agent.name()
                    + "' returned a null retryPolicy(); set retry(...) on the step");
        }
        RetryPolicy undoPolicy = compensationRetry != null ? compensationRetry
                : compensationCall != null ? compensationCall.agent.retryPolicy() : policy;
        if (undoPolicy == null) {
            throw new IllegalStateException("step '" + name + "': compensation agent '" + compensationCall.agent.name()
                    + "' returned a null retryPolicy(); set compensationRetry(...) on the step");
        }
        return new StepDefinition<>(this, index, ref, policy, undoPolicy, step, agentCall, childCall != null || group != null
                || slot != null ? new StepDefinition.AwaitCompletion<I>(ChildCall.<I>notARequest(name), ref.codec()) : awaitCompletion);
    }
}
