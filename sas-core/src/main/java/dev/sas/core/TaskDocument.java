package dev.sas.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The one JSON shape of a task: what the operator console's API answers and what the {@code sas}
 * command line prints with {@code --json}, field for field ({@code docs/operations.md}, "A task as
 * JSON", lists every field). Each method returns an ordered map of JSON-ready values only: strings
 * (instants in ISO-8601, states by name), numbers, booleans, null, lists and maps, so any JSON writer
 * prints it the same way.
 *
 * <pre>{@code
 * Map<String, Object> json = TaskDocument.detail(task, client.events(task.taskId()), false);
 * }</pre>
 *
 * <p>Stateless and thread-safe.
 */
public final class TaskDocument {

    /** States a resubmit accepts. */
    public static final Set<TaskStatus> RESUBMITTABLE = EnumSet.of(TaskStatus.ERROR, TaskStatus.COMPENSATION_FAILED);
    /** States a cancel may be accepted in (see {@link OperationsClient#cancel(TaskId)}). */
    public static final Set<TaskStatus> CANCELLABLE = EnumSet.of(TaskStatus.PENDING, TaskStatus.PARKED,
            TaskStatus.PROCESSING, TaskStatus.COMPENSATING, TaskStatus.ERROR);
    /**
     * States a move to another workflow version accepts, when no runtime holds the task and no cancel
     * was requested (see {@link OperationsClient#moveVersion(TaskId, int)}).
     */
    public static final Set<TaskStatus> MOVABLE = Set.copyOf(EnumSet.of(TaskStatus.PENDING, TaskStatus.WAITING,
            TaskStatus.PARKED, TaskStatus.ERROR));

    private TaskDocument() {
    }

    /**
     * A task as listed, without steps and events: {@code id, workflow, version, businessKey, status,
     * currentStep, failureCount, createdAt, updatedAt, lastError, cancelRequested}.
     *
     * @throws NullPointerException if {@code task} is null
     */
    public static Map<String, Object> summary(TaskInfo task) {
        Objects.requireNonNull(task, "task must not be null");
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", task.taskId().value());
        m.put("workflow", task.workflow());
        m.put("version", task.workflowVersion());
        m.put("businessKey", task.businessKey());
        m.put("status", task.status().name());
        m.put("currentStep", task.currentStep());
        m.put("failureCount", task.failureCount());
        m.put("createdAt", iso(task.createdAt()));
        m.put("updatedAt", iso(task.updatedAt()));
        m.put("lastError", task.lastError());
        m.put("cancelRequested", task.cancelRequested());
        return m;
    }

    /**
     * A task in full: the {@link #summary} fields, then {@code priority, lockedBy, lease, completeBy,
     * nextAttemptAt, terminal, final, can} (what its state lets an operator do: {@code resubmit},
     * {@code cancel}, {@code move} to another workflow version), {@code steps} and {@code events} (oldest first, each with the party that
     * recorded it, {@code by}, and for an operator's event the {@code operator} and {@code reason}
     * of its {@link OperatorNote}), and {@code parent} ({@code id, step} of the task whose child
     * task step started it, or null).
     *
     * @param payloads whether step outputs are shown ({@code output}); else only whether there is one
     *     ({@code outputHidden})
     * @throws NullPointerException if {@code task} or {@code events} is null
     */
    public static Map<String, Object> detail(TaskInfo task, List<TaskEvent> events, boolean payloads) {
        Objects.requireNonNull(events, "events must not be null");
        Map<String, Object> m = summary(task);
        m.put("priority", task.priority());
        m.put("lockedBy", task.lockedBy());
        m.put("lease", task.lease());
        m.put("completeBy", iso(task.completeBy()));
        m.put("nextAttemptAt", iso(task.nextAttemptAt()));
        m.put("terminal", task.status().isTerminal());
        m.put("final", task.status().isFinal());
        Map<String, Object> can = new LinkedHashMap<>();
        can.put("resubmit", RESUBMITTABLE.contains(task.status()));
        can.put("cancel", CANCELLABLE.contains(task.status())
                && (!task.cancelRequested() || task.status() == TaskStatus.ERROR));
        can.put("move", MOVABLE.contains(task.status()) && task.lockedBy() == null && !task.cancelRequested());
        m.put("can", can);
        List<Object> steps = new ArrayList<>();
        for (TaskInfo.StepInfo s : task.steps()) {
            steps.add(step(s, payloads));
        }
        m.put("steps", steps);
        List<Object> timeline = new ArrayList<>();
        for (TaskEvent e : events) {
            timeline.add(event(e));
        }
        m.put("events", timeline);
        m.put("parent", ChildCall.parentOf(task.businessKey())
                .<Object>map(p -> parent(p.get(0), p.get(1))).orElse(null));
        return m;
    }

    /**
     * A task in full ({@link #detail(TaskInfo, List, boolean)}) with the child tasks its steps started
     * ({@link StepBuilder#childTask}), as {@link #children} found them.
     *
     * @throws NullPointerException if an argument is null
     */
    public static Map<String, Object> detail(TaskInfo task, List<TaskEvent> events, boolean payloads,
            List<Map<String, Object>> children) {
        Objects.requireNonNull(children, "children must not be null");
        Map<String, Object> m = detail(task, events, payloads);
        m.put("children", List.copyOf(children));
        return m;
    }

    /**
     * A task in full with its child tasks ({@link #detail(TaskInfo, List, boolean, List)}, {@link #children}),
     * read through {@code client}, whose {@code can} flags also follow the parent of a unit task (a parallel
     * branch or fan-out element): {@code resubmit} and {@code cancel} are false once the parent's group step
     * has ended, as {@link OperationsClient} then refuses them ({@link UnitTaskException}). Reads the parent
     * once for a unit task.
     *
     * @throws NullPointerException if an argument is null
     * @throws StateStoreException if the store failed
     */
    public static Map<String, Object> detail(SasClient client, TaskInfo task, List<TaskEvent> events,
            boolean payloads) {
        Map<String, Object> m = detail(task, events, payloads, children(client, task));
        @SuppressWarnings("unchecked")
        Map<String, Object> can = (Map<String, Object>) m.get("can");
        for (String action : List.of("resubmit", "cancel")) {
            if (Boolean.TRUE.equals(can.get(action)) && UnitTasks.refusal(client::find, action, task).isPresent()) {
                can.put(action, false);
            }
        }
        return m;
    }

    /**
     * The child tasks {@code task}'s steps started ({@link StepBuilder#childTask}), each as
     * {@code step, id, workflow, status}, in step order: found by the business key each child has
     * (derived from the parent's id and the step's name) in every workflow the store holds tasks of.
     * Needs no workflow definitions, so operator tools can call it; it reads one task per workflow
     * and step.
     *
     * @throws NullPointerException if an argument is null
     * @throws StateStoreException if the store failed
     */
    public static List<Map<String, Object>> children(SasClient client, TaskInfo task) {
        Objects.requireNonNull(client, "client must not be null");
        Objects.requireNonNull(task, "task must not be null");
        List<Map<String, Object>> children = new ArrayList<>();
        Set<String> workflows = client.countByWorkflow().keySet();
        for (TaskInfo.StepInfo s : task.steps()) {
            for (String w : workflows) {
                client.find(w, ChildCall.childKey(task.taskId(), s.name())).ifPresent(c -> children.add(child(s, c)));
            }
            String branchPrefix = task.workflow() + "." + s.name() + ".";
            for (int unit = 0; workflows.stream().anyMatch(w -> w.startsWith(branchPrefix)); unit++) {
                String key = ChildGroup.unitKey(task.taskId(), s.name(), unit);
                Optional<TaskInfo> found = workflows.stream().filter(w -> w.startsWith(branchPrefix))
                        .map(w -> client.find(w, key)).flatMap(Optional::stream).findFirst();
                if (found.isEmpty()) {
                    break;
                }
                Map<String, Object> child = child(s, found.get());
                child.put("branch", found.get().workflow().substring(branchPrefix.length()));
                children.add(child);
            }
        }
        return children;
    }

    private static Map<String, Object> child(TaskInfo.StepInfo s, TaskInfo c) {
        Map<String, Object> child = new LinkedHashMap<>();
        child.put("step", s.name());
        child.put("id", c.taskId().value());
        child.put("workflow", c.workflow());
        child.put("status", c.status().name());
        return child;
    }

    private static Map<String, Object> parent(String taskId, String step) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("id", taskId);
        p.put("step", step);
        return p;
    }

    private static Map<String, Object> step(TaskInfo.StepInfo s, boolean payloads) {
        Map<String, Object> step = new LinkedHashMap<>();
        step.put("index", s.index());
        step.put("name", s.name());
        step.put("status", s.status().name());
        step.put("attempts", s.attempts());
        step.put("startedAt", iso(s.startedAt()));
        step.put("finishedAt", iso(s.finishedAt()));
        step.put("compensation", s.compensationStatus() == null ? null : s.compensationStatus().name());
        step.put("error", s.error());
        if (payloads) {
            step.put("output", s.output());
        } else {
            step.put("outputHidden", s.output() != null);
        }
        return step;
    }

    private static Map<String, Object> event(TaskEvent e) {
        Map<String, Object> ev = new LinkedHashMap<>();
        ev.put("at", iso(e.at()));
        ev.put("type", e.type().name());
        String by = actor(e.type());
        ev.put("by", by);
        ev.put("step", e.stepName());
        ev.put("stepIndex", e.stepIndex());
        ev.put("attempt", e.attempt());
        ev.put("message", e.message());
        if (by.equals("operator") && e.message() != null && e.message().startsWith("by ")) {
            // OperatorNote.describe(): "by <operator>" or "by <operator>: <reason>"
            String rest = e.message().substring(3);
            int colon = rest.indexOf(": ");
            ev.put("operator", colon < 0 ? rest : rest.substring(0, colon));
            ev.put("reason", colon < 0 ? null : rest.substring(colon + 2));
        }
        return ev;
    }

    /**
     * Which party records an event of this type: {@code client} (the submitter, or whoever completed
     * an awaiting step), {@code operator}, {@code supervisor}, or {@code runtime} (a scheduler).
     *
     * @throws NullPointerException if {@code type} is null
     */
    public static String actor(TaskEvent.Type type) {
        return switch (type) {
            case RECEIVED, COMPLETION_RECEIVED -> "client";
            case RESUBMITTED, CANCEL_REQUESTED, VERSION_MOVED -> "operator";
            case STEP_TIMED_OUT, PARKED, UNPARKED -> "supervisor";
            default -> "runtime";
        };
    }

    private static String iso(Instant t) {
        return t == null ? null : t.toString();
    }
}
