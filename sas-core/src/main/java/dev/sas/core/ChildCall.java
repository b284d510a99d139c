package dev.sas.core;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The work of a step that runs another workflow as a child task
 * ({@link StepBuilder#childTask(Workflow, Function)}): starting the child, finding it, cancelling it,
 * and what its end means for the step. The child is an ordinary task whose business key is derived
 * from the parent's task id and the step's name ({@link #childKey}), so a step started again (after a
 * time-out, a dead node, a resubmit) finds the child it started before instead of starting another.
 * Immutable and thread-safe.
 *
 * @param <I> the parent workflow's input type
 * @param <C> the child workflow's input type
 */
final class ChildCall<I, C> {
    private static final Logger log = LoggerFactory.getLogger(ChildCall.class);

    /** Prefix of every child task's business key. */
    static final String KEY_PREFIX = "sas-child:";

    final Workflow<C> workflow;
    private final Function<StepContext<I>, C> input;

    ChildCall(Workflow<C> workflow, Function<StepContext<I>, C> input) {
        this.workflow = Objects.requireNonNull(workflow, "child workflow must not be null");
        this.input = Objects.requireNonNull(input, "child input must not be null");
    }

    /**
     * The request of a child task step, which the runtime never sends: it starts the child with
     * {@link StepDefinition#startChild} instead.
     */
    static <I> CompletionRequest<I> notARequest(String step) {
        return (context, replyToken) -> {
            throw new IllegalStateException("step '" + step + "' starts a child task; it sends no request");
        };
    }

    /** The business key of the child that step {@code step} of task {@code parent} starts. */
    static String childKey(TaskId parent, String step) {
        return KEY_PREFIX + parent.value() + "/" + step;
    }

    /**
     * The parent task id and step name a child's business key names, or empty for a key no child
     * step derived.
     */
    static Optional<List<String>> parentOf(String businessKey) {
        if (businessKey == null || !businessKey.startsWith(KEY_PREFIX)) {
            return Optional.empty();
        }
        String rest = businessKey.substring(KEY_PREFIX.length());
        int slash = rest.lastIndexOf('/');
        if (slash <= 0 || slash == rest.length() - 1) {
            return Optional.empty();
        }
        return Optional.of(List.of(rest.substring(0, slash), rest.substring(slash + 1)));
    }

    /**
     * Starts the child, or finds the one started before: a duplicate submission of the same key
     * returns the existing task. A child that ended in {@link TaskStatus#ERROR} is resubmitted, so
     * resubmitting the parent runs its failed child again.
     */
    TaskId start(StepContext<I> context, SasClient client) {
        String key = childKey(context.taskId(), context.stepName());
        Optional<TaskInfo> existing = client.find(workflow.name(), key);
        if (existing.isPresent()) {
            TaskInfo child = existing.get();
            if (child.status() == TaskStatus.ERROR) {
                log.info("task {} step {}: child task {} ended ERROR before; resubmitting it", context.taskId(),
                        context.stepName(), child.taskId());
                client.operations().resubmit(child.taskId());
            }
            return child.taskId();
        }
        C value = input.apply(context);
        TaskId id = client.submit(workflow, key, value).id();
        log.info("task {} step {}: child task {} of workflow '{}' started", context.taskId(), context.stepName(), id,
                workflow.name());
        return id;
    }

    /** Requests the cancel of the child, if it was started and has not ended. */
    void cancel(StepContext<I> context, SasClient client) {
        Optional<TaskInfo> child = client.find(workflow.name(), childKey(context.taskId(), context.stepName()));
        if (child.isPresent() && !child.get().status().isTerminal()) {
            boolean requested = client.operations().cancel(child.get().taskId());
            log.info("task {} step {}: cancel of child task {} {}", context.taskId(), context.stepName(),
                    child.get().taskId(), requested ? "requested" : "not needed, it ended meanwhile");
        }
    }

    /**
     * The child's output as the parent step's output: the output of the child's last step (null
     * when that step recorded none).
     */
    static String result(TaskInfo child) {
        List<TaskInfo.StepInfo> steps = child.steps();
        return steps.isEmpty() ? null : steps.get(steps.size() - 1).output();
    }

    /** Why a child that did not end {@link TaskStatus#PROCESSED} fails the step. */
    static String failure(TaskInfo child) {
        return "child task " + child.taskId() + " (workflow '" + child.workflow() + "') ended " + child.status()
                + (child.lastError() == null ? "" : ": " + child.lastError());
    }
}
