package dev.sas.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Shows a stored task with every step of its workflow, started or not. */
final class StatusView {
    private StatusView() {
    }

    /** {@code info} with the steps it has not started yet as PENDING and the running one as PROCESSING. */
    static TaskInfo withAllSteps(TaskInfo info, Workflow<?> wf) {
        if (wf == null) {
            return info;
        }
        Map<Integer, TaskInfo.StepInfo> recorded = new HashMap<>();
        for (TaskInfo.StepInfo s : info.steps()) {
            recorded.put(s.index(), s);
        }
        List<TaskInfo.StepInfo> steps = new ArrayList<>();
        for (StepDefinition<?> def : wf.steps()) {
            TaskInfo.StepInfo s = recorded.get(def.index());
            boolean running = (info.status() == TaskStatus.PROCESSING || info.status() == TaskStatus.AWAITING_COMPLETION)
                    && info.currentStep() == def.index();
            if (s == null) {
                s = new TaskInfo.StepInfo(def.index(), def.name(), running ? StepStatus.PROCESSING : StepStatus.PENDING,
                        0, null, null, null, null, null);
            } else if (running && s.status() != StepStatus.COMPLETED) {
                s = new TaskInfo.StepInfo(s.index(), s.name(), StepStatus.PROCESSING, s.attempts(), s.output(),
                        s.error(), s.startedAt(), s.finishedAt(), s.compensationStatus());
            }
            steps.add(s);
        }
        return new TaskInfo(info.taskId(), info.workflow(), info.workflowVersion(), info.businessKey(), info.status(),
                info.priority(), info.currentStep(), info.failureCount(), info.lockedBy(), info.lease(),
                info.completeBy(), info.nextAttemptAt(), info.createdAt(), info.updatedAt(), info.lastError(),
                info.cancelRequested(), steps, info.attempt());
    }
}
