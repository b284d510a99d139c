package dev.sas.console.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The JSON shapes of tasks, steps and events the console's API answers with. Stateless. */
public final class TaskJson {

    /** States a resubmit accepts. */
    static final Set<TaskStatus> RESUBMITTABLE = EnumSet.of(TaskStatus.ERROR, TaskStatus.COMPENSATION_FAILED);
    /** States a cancel accepts (see {@code SasClient.cancel}). */
    static final Set<TaskStatus> CANCELLABLE = EnumSet.of(TaskStatus.PENDING, TaskStatus.PARKED, TaskStatus.PROCESSING,
            TaskStatus.COMPENSATING, TaskStatus.ERROR);

    private TaskJson() {
    }

    /** A task as listed: no steps. */
    static Map<String, Object> summary(TaskInfo t) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", t.taskId().value());
        m.put("workflow", t.workflow());
        m.put("version", t.workflowVersion());
        m.put("businessKey", t.businessKey());
        m.put("status", t.status());
        m.put("currentStep", t.currentStep());
        m.put("failureCount", t.failureCount());
        m.put("createdAt", t.createdAt());
        m.put("updatedAt", t.updatedAt());
        m.put("lastError", t.lastError());
        m.put("cancelRequested", t.cancelRequested());
        return m;
    }

    /**
     * A task in full: its steps (outputs only when {@code payloads}), what an operator may do with
     * it, and its events.
     */
    static Map<String, Object> detail(TaskInfo t, List<TaskEvent> events, boolean payloads, boolean actions) {
        Map<String, Object> m = summary(t);
        m.put("priority", t.priority());
        m.put("lockedBy", t.lockedBy());
        m.put("lease", t.lease());
        m.put("completeBy", t.completeBy());
        m.put("nextAttemptAt", t.nextAttemptAt());
        m.put("terminal", t.status().isTerminal());
        m.put("final", t.status().isFinal());
        Map<String, Object> can = new LinkedHashMap<>();
        can.put("resubmit", actions && RESUBMITTABLE.contains(t.status()));
        can.put("cancel", actions && CANCELLABLE.contains(t.status())
                && (!t.cancelRequested() || t.status() == TaskStatus.ERROR));
        m.put("can", can);
        List<Object> steps = new ArrayList<>();
        for (TaskInfo.StepInfo s : t.steps()) {
            Map<String, Object> step = new LinkedHashMap<>();
            step.put("index", s.index());
            step.put("name", s.name());
            step.put("status", s.status());
            step.put("attempts", s.attempts());
            step.put("startedAt", s.startedAt());
            step.put("finishedAt", s.finishedAt());
            step.put("compensation", s.compensationStatus());
            step.put("error", s.error());
            if (payloads) {
                step.put("output", s.output());
            } else {
                step.put("outputHidden", s.output() != null);
            }
            steps.add(step);
        }
        m.put("steps", steps);
        List<Object> timeline = new ArrayList<>();
        for (TaskEvent e : events) {
            Map<String, Object> ev = new LinkedHashMap<>();
            ev.put("at", e.at());
            ev.put("type", e.type());
            ev.put("by", actor(e.type()));
            ev.put("step", e.stepName());
            ev.put("stepIndex", e.stepIndex());
            ev.put("attempt", e.attempt());
            ev.put("message", e.message());
            if (ev.get("by").equals("operator") && e.message() != null && e.message().startsWith("by ")) {
                // OperatorNote.describe(): "by <operator>" or "by <operator>: <reason>"
                String rest = e.message().substring(3);
                int colon = rest.indexOf(": ");
                ev.put("operator", colon < 0 ? rest : rest.substring(0, colon));
                ev.put("reason", colon < 0 ? null : rest.substring(colon + 2));
            }
            timeline.add(ev);
        }
        m.put("events", timeline);
        return m;
    }

    /**
     * Which party records an event of this type: the submitting client (or the one that delivered a
     * reply to an awaiting step), an operator, the
     * supervisor, or a runtime (a scheduler, or the supervisor failing a step that ran out of time).
     */
    static String actor(TaskEvent.Type type) {
        return switch (type) {
            case RECEIVED, REPLY_RECEIVED -> "client";
            case RESUBMITTED, CANCEL_REQUESTED -> "operator";
            case STEP_TIMED_OUT, PARKED, UNPARKED -> "supervisor";
            default -> "runtime";
        };
    }
}
