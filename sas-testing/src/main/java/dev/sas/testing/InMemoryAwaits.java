package dev.sas.testing;

import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.AwaitWrite;
import dev.sas.core.spi.CompletionTarget;
import dev.sas.core.spi.CompletionWrite;
import dev.sas.core.spi.StepCompletion;
import dev.sas.core.spi.StepCompletionStore;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import dev.sas.testing.InMemoryTasks.Row;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Steps of {@link InMemoryStateStore} that await their completion ({@link InMemoryStateStore#stepCompletions()}): the completions kept per
 * attempt, and the two writes that meet them (the task starts awaiting; a completion arrives),
 * under the store's lock. Thread-safe.
 */
final class InMemoryAwaits implements StepCompletionStore {

    /** Which attempt a kept reply answers. */
    private record CompletionKey(TaskId taskId, int step, long lease) {
    }

    private final InMemoryTasks tasks;
    private final Map<CompletionKey, StepCompletion> stepCompletions = new HashMap<>();

    InMemoryAwaits(InMemoryTasks tasks) {
        this.tasks = tasks;
    }

    @Override
    public AwaitWrite awaitCompletion(Transition awaiting, Function<StepCompletion, Transition> ifCompleted, Instant now) {
        Objects.requireNonNull(awaiting, "awaiting must not be null");
        Objects.requireNonNull(ifCompleted, "ifCompleted must not be null");
        synchronized (tasks.lock) {
            Row r = tasks.rows.get(awaiting.taskId());
            StepCompletion kept = stepCompletions.get(new CompletionKey(awaiting.taskId(), awaiting.fromStep(), awaiting.lease()));
            if (kept == null || r == null || r.lastTransition == awaiting.id()) {
                return new AwaitWrite(tasks.apply(awaiting, now), null, awaiting);
            }
            // the reply came first: check the awaiting transition's fences, then write the reply's instead
            WriteOutcome fence = InMemoryTasks.check(awaiting, r, now);
            if (fence != null) {
                return new AwaitWrite(fence, null, awaiting);
            }
            Transition instead = ifCompleted.apply(kept);
            return new AwaitWrite(tasks.apply(instead, now), kept, instead);
        }
    }

    @Override
    public CompletionWrite acceptCompletion(StepCompletion reply, Function<CompletionTarget, Transition> decide, Instant now) {
        Objects.requireNonNull(reply, "completion must not be null");
        Objects.requireNonNull(decide, "decide must not be null");
        synchronized (tasks.lock) {
            Row r = tasks.rows.get(reply.taskId());
            if (r == null) {
                return CompletionWrite.of(CompletionWrite.Kind.NOT_FOUND);
            }
            CompletionKey key = new CompletionKey(reply.taskId(), reply.step(), reply.lease());
            CompletionTarget target = new CompletionTarget(r.taskId, r.workflow, r.version, r.businessKey, r.status,
                    r.lease, r.currentStep, r.attempt, r.failureCount, r.completeBy, r.cancelRequested, r.statusChannel);
            CompletionWrite.Kind refused = reply.refusal(target, r.lockedBy != null, stepCompletions.containsKey(key), now);
            if (refused != null) {
                return CompletionWrite.of(refused);
            }
            if (r.status == TaskStatus.PROCESSING) {
                stepCompletions.put(key, reply);
                return CompletionWrite.of(CompletionWrite.Kind.KEPT);
            }
            Transition t = decide.apply(target);
            WriteOutcome outcome = tasks.apply(t, now);
            if (outcome.kind() == WriteOutcome.Kind.REFUSED) {
                return CompletionWrite.of(CompletionWrite.Kind.REFUSED);
            }
            if (!outcome.isApplied()) {
                return CompletionWrite.of(CompletionWrite.Kind.STALE);
            }
            stepCompletions.put(key, reply);
            return new CompletionWrite(CompletionWrite.Kind.APPLIED, t);
        }
    }

    /** Drops what was kept for a purged task. Under the store's lock. */
    void purged(TaskId taskId) {
        stepCompletions.keySet().removeIf(k -> k.taskId().equals(taskId));
    }
}
