package dev.sas.core;

import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.TaskDecisions;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Recognises a unit task (a parallel branch or fan-out element) by the business key its group step
 * gave it ({@link ChildGroup#unitKey}) and asks {@link TaskDecisions#unitAction} whether an operator
 * may act on it on its own, from its parent's state as the store reads it. Stateless.
 */
final class UnitTasks {

    private UnitTasks() {
    }

    /**
     * Why {@code action} on {@code task} is refused: it is a unit task whose parent's group step has
     * ended. Empty for any other task, and for a unit whose group still runs.
     */
    static Optional<UnitTaskException> refusal(StateStore store, String action, TaskInfo task) {
        return refusal(store::find, action, task);
    }

    /** As {@link #refusal(StateStore, String, TaskInfo)}, reading the parent with {@code tasks}. */
    static Optional<UnitTaskException> refusal(Function<TaskId, Optional<TaskInfo>> tasks, String action,
            TaskInfo task) {
        Optional<List<String>> group = groupOf(task.businessKey());
        if (group.isEmpty()) {
            return Optional.empty();
        }
        TaskId parentId = TaskId.of(group.get().get(0));
        String step = group.get().get(1);
        Optional<TaskInfo> parent = tasks.apply(parentId);
        return TaskDecisions.unitAction(action, task.taskId(), parentId, step,
                        parent.map(TaskInfo::status).orElse(null), parent.map(p -> atStep(p, step)).orElse(false))
                .map(reason -> new UnitTaskException(reason, task.taskId(), task.status(), parentId));
    }

    /** The parent task id and group step a unit's business key names, or empty for another key. */
    static Optional<List<String>> groupOf(String businessKey) {
        int hash = businessKey == null ? -1 : businessKey.lastIndexOf('#');
        if (hash < 0 || hash == businessKey.length() - 1
                || !businessKey.substring(hash + 1).chars().allMatch(c -> c >= '0' && c <= '9')) {
            return Optional.empty();
        }
        return ChildCall.parentOf(businessKey.substring(0, hash));
    }

    /**
     * Whether {@code parent} is at its step {@code step}. A store records a step's row once it has
     * ended; a group step with no row has never ended, so its units' parent has not left it.
     */
    private static boolean atStep(TaskInfo parent, String step) {
        return parent.steps().stream().filter(s -> s.name().equals(step)).findFirst()
                .map(s -> s.index() == parent.currentStep()).orElse(true);
    }
}
