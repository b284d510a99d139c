package dev.sas.testing;

import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.AwaitWrite;
import dev.sas.core.spi.ReplyTarget;
import dev.sas.core.spi.ReplyWrite;
import dev.sas.core.spi.StepReply;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import dev.sas.testing.InMemoryTasks.Row;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Steps of {@link InMemoryStateStore} that await their completion: the completions kept per
 * attempt, and the two writes that meet them (the task starts awaiting; a completion arrives),
 * under the store's lock. Thread-safe.
 */
final class InMemoryAwaits {

    /** Which attempt a kept reply answers. */
    private record ReplyKey(TaskId taskId, int step, long lease) {
    }

    private final InMemoryTasks tasks;
    private final Map<ReplyKey, StepReply> stepReplies = new HashMap<>();

    InMemoryAwaits(InMemoryTasks tasks) {
        this.tasks = tasks;
    }

    AwaitWrite awaitReply(Transition awaiting, Function<StepReply, Transition> ifReplied, Instant now) {
        Objects.requireNonNull(awaiting, "awaiting must not be null");
        Objects.requireNonNull(ifReplied, "ifReplied must not be null");
        synchronized (tasks.lock) {
            Row r = tasks.rows.get(awaiting.taskId());
            StepReply kept = stepReplies.get(new ReplyKey(awaiting.taskId(), awaiting.fromStep(), awaiting.lease()));
            if (kept == null || r == null || r.lastTransition == awaiting.id()) {
                return new AwaitWrite(tasks.apply(awaiting, now), null, awaiting);
            }
            // the reply came first: check the awaiting transition's fences, then write the reply's instead
            WriteOutcome fence = InMemoryTasks.check(awaiting, r, now);
            if (fence != null) {
                return new AwaitWrite(fence, null, awaiting);
            }
            Transition instead = ifReplied.apply(kept);
            return new AwaitWrite(tasks.apply(instead, now), kept, instead);
        }
    }

    ReplyWrite acceptReply(StepReply reply, Function<ReplyTarget, Transition> decide, Instant now) {
        Objects.requireNonNull(reply, "reply must not be null");
        Objects.requireNonNull(decide, "decide must not be null");
        synchronized (tasks.lock) {
            Row r = tasks.rows.get(reply.taskId());
            if (r == null) {
                return ReplyWrite.of(ReplyWrite.Kind.NOT_FOUND);
            }
            ReplyKey key = new ReplyKey(reply.taskId(), reply.step(), reply.lease());
            ReplyTarget target = new ReplyTarget(r.taskId, r.workflow, r.version, r.businessKey, r.status,
                    r.lease, r.currentStep, r.attempt, r.failureCount, r.completeBy, r.cancelRequested, r.replyTo);
            ReplyWrite.Kind refused = reply.refusal(target, r.lockedBy != null, stepReplies.containsKey(key), now);
            if (refused != null) {
                return ReplyWrite.of(refused);
            }
            if (r.status == TaskStatus.PROCESSING) {
                stepReplies.put(key, reply);
                return ReplyWrite.of(ReplyWrite.Kind.KEPT);
            }
            Transition t = decide.apply(target);
            WriteOutcome outcome = tasks.apply(t, now);
            if (outcome.kind() == WriteOutcome.Kind.REFUSED) {
                return ReplyWrite.of(ReplyWrite.Kind.REFUSED);
            }
            if (!outcome.isApplied()) {
                return ReplyWrite.of(ReplyWrite.Kind.STALE);
            }
            stepReplies.put(key, reply);
            return new ReplyWrite(ReplyWrite.Kind.APPLIED, t);
        }
    }

    /** Drops what was kept for a purged task. Under the store's lock. */
    void purged(TaskId taskId) {
        stepReplies.keySet().removeIf(k -> k.taskId().equals(taskId));
    }
}
