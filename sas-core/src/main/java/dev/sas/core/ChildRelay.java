package dev.sas.core;

import dev.sas.core.internal.ChildWatch;
import dev.sas.core.internal.TaskLog;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Completes child task steps ({@link StepBuilder#childTask}) whose child has ended: on each supervisor
 * pass it reads the tasks of this runtime's workflows that await a child, finds each one's child by
 * its derived business key, and, if the child is terminal, completes (or fails) the parent's step
 * through {@link StepCompletionClient}, fenced by the parent's step and lease. Nothing is kept in
 * memory between passes, so a node that dies after a child ended (or in the middle of a delivery)
 * loses nothing: the next pass, on any node, delivers it; a delivery repeated answers
 * {@link CompletionOutcome#ALREADY_COMPLETED} or {@link CompletionOutcome#STALE} and changes nothing.
 * Thread-safe (called by the supervisor only).
 */
final class ChildRelay implements ChildWatch {
    private static final Logger log = LoggerFactory.getLogger(ChildRelay.class);

    /** Most awaiting parents read per workflow and pass; the rest wait for the next pass. */
    static final int MAX_PER_PASS = 5_000;
    private static final int PAGE = 500;

    private final SasClient client;
    private final List<Workflow<?>> workflows;
    private final Set<String> parents = new LinkedHashSet<>();

    ChildRelay(SasClient client, List<Workflow<?>> workflows) {
        this.client = client;
        this.workflows = List.copyOf(workflows);
        for (Workflow<?> w : workflows) {
            if (w.steps().stream().anyMatch(StepDefinition::startsChildTask)) {
                parents.add(w.name());
            }
        }
    }

    /** Whether any of the workflows has a child task step (else the runtime needs no relay). */
    boolean needed() {
        return !parents.isEmpty();
    }

    @Override
    public int deliverEnded() {
        int delivered = 0;
        for (String workflow : parents) {
            TaskQuery query = TaskQuery.all().withStatus(TaskStatus.AWAITING_REPLY).withWorkflow(workflow)
                    .withLimit(PAGE);
            List<TaskInfo> page = client.list(query);
            int read = 0;
            while (!page.isEmpty()) {
                for (TaskInfo parent : page) {
                    delivered += deliver(parent) ? 1 : 0;
                }
                read += page.size();
                if (page.size() < PAGE || read >= MAX_PER_PASS) {
                    break;
                }
                page = client.list(query.after(page.get(page.size() - 1)));
            }
        }
        return delivered;
    }

    /** Delivers the end of {@code parent}'s child, if its current step awaits one that has ended. */
    private boolean deliver(TaskInfo parent) {
        StepDefinition<?> step = childStep(parent).orElse(null);
        if (step == null) {
            return false;
        }
        try {
            Workflow<?> childWorkflow = step.childWorkflow().orElseThrow();
            TaskInfo child = client.find(childWorkflow.name(), ChildCall.childKey(parent.taskId(), step.name()))
                    .orElse(null);
            if (child == null || !child.status().isTerminal()) {
                return false;
            }
            CompletionOutcome outcome = client.stepCompletion().childEnded(parent, child);
            TaskLog.run(parent.taskId(), parent.workflow(), parent.currentStep(), 0, () -> log.info(
                    "task {} step {}: child task {} ended {}; delivered: {}", parent.taskId(), step.name(),
                    child.taskId(), child.status(), outcome));
            return outcome.accepted();
        } catch (RuntimeException e) {
            // one parent's failure never stops the others; the next pass tries it again
            log.warn("task {} step {}: delivering its child's end failed ({}); trying again on the next pass",
                    parent.taskId(), step.name(), e.toString());
            return false;
        }
    }

    /** The step {@code parent} is at, if it starts a child task and this runtime knows its workflow. */
    private Optional<StepDefinition<?>> childStep(TaskInfo parent) {
        for (Workflow<?> w : workflows) {
            if (w.name().equals(parent.workflow()) && w.version() == parent.workflowVersion()) {
                if (parent.currentStep() < 0 || parent.currentStep() >= w.steps().size()) {
                    return Optional.empty();
                }
                StepDefinition<?> s = w.steps().get(parent.currentStep());
                return s.startsChildTask() ? Optional.of(s) : Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** The child task ids {@code info}'s child steps started so far (for status pages), in step order. */
    static List<TaskId> children(SasClient client, Workflow<?> workflow, TaskInfo info) {
        List<TaskId> ids = new ArrayList<>();
        for (StepDefinition<?> s : workflow.steps()) {
            s.childWorkflow().flatMap(c -> client.find(c.name(), ChildCall.childKey(info.taskId(), s.name())))
                    .ifPresent(c -> ids.add(c.taskId()));
        }
        return ids;
    }
}
