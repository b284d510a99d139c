package dev.sas.cli;

import dev.sas.core.StepStatus;
import dev.sas.core.TaskDocument;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskNotFoundException;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskSearch;
import dev.sas.core.TaskStateException;
import dev.sas.core.TaskStatus;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code sas tasks list|show|result|resubmit|cancel|move}. */
@Command(name = "tasks", mixinStandardHelpOptions = true,
        description = "List, show, resubmit, cancel and move tasks.",
        subcommands = {TasksCommand.ListTasks.class, TasksCommand.Show.class, TasksCommand.Result.class,
            TaskActions.Resubmit.class, TaskActions.Cancel.class, TaskMove.class})
final class TasksCommand implements Runnable {

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** {@code sas tasks list}. */
    @Command(name = "list", mixinStandardHelpOptions = true, description = "List tasks, oldest first.")
    static final class ListTasks implements Callable<Integer> {
        @Mixin
        StoreOptions store;

        @Spec
        CommandSpec spec;

        @Mixin
        TaskFilter filter;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "50",
                description = "at most N tasks, 1 to " + TaskQuery.MAX_LIMIT + " (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        public Integer call() {
            if (limit < 1 || limit > TaskQuery.MAX_LIMIT) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--limit must be 1 to "
                        + TaskQuery.MAX_LIMIT + ", was " + limit);
            }
            TaskSearch search = filter.search(spec.commandLine());
            PrintWriter out = spec.commandLine().getOut();
            try (StoreOptions.Session s = store.open()) {
                List<TaskInfo> found = search.find(s.client(), limit);
                boolean more = found.size() > limit;
                List<TaskInfo> tasks = found.subList(0, Math.min(limit, found.size()));
                if (store.json) {
                    Output.json(out, tasks.stream().map(TaskDocument::summary).toList());
                    return 0;
                }
                List<List<String>> rows = new ArrayList<>();
                for (TaskInfo t : tasks) {
                    rows.add(List.of(t.taskId().value(), t.workflow() + " v" + t.workflowVersion(),
                            Output.cut(t.businessKey(), 40), t.status().name(), Integer.toString(t.currentStep()),
                            Output.time(t.updatedAt()), Output.cut(t.lastError(), 60)));
                }
                Output.table(out, List.of("ID", "WORKFLOW", "BUSINESS KEY", "STATE", "STEP", "UPDATED", "LAST ERROR"),
                        rows);
                out.println(tasks.size() + " task" + (tasks.size() == 1 ? "" : "s")
                        + (more ? " (more match: raise --limit)" : ""));
                return 0;
            }
        }
    }

    /** {@code sas tasks show}. */
    @Command(name = "show", mixinStandardHelpOptions = true,
            description = "Show a task: its state, steps and events.")
    static final class Show implements Callable<Integer> {
        @Mixin
        StoreOptions store;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", arity = "0..1", paramLabel = "TASK_ID", description = "the task's id")
        String taskId;

        @Option(names = "--key", paramLabel = "BUSINESS_KEY", description = "find the task by business key instead"
                + " (with --workflow)")
        String businessKey;

        @Option(names = "--workflow", paramLabel = "NAME", description = "the workflow of --key")
        String workflow;

        @Option(names = "--payloads", description = "show step outputs (business data; hidden by default)")
        boolean payloads;

        @Override
        public Integer call() {
            if ((taskId == null) == (businessKey == null) || (businessKey != null && workflow == null)) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "name the task by TASK_ID, or by --key with --workflow");
            }
            PrintWriter out = spec.commandLine().getOut();
            try (StoreOptions.Session s = store.open()) {
                Optional<TaskInfo> found = taskId != null ? s.client().find(TaskId.of(taskId))
                        : s.client().find(workflow, businessKey);
                if (found.isEmpty()) {
                    return Output.refuse(spec.commandLine(), store.json, "no task " + (taskId != null ? taskId
                            : "with business key '" + businessKey + "' in workflow " + workflow));
                }
                TaskInfo t = found.get();
                List<TaskEvent> events = s.client().events(t.taskId());
                List<Map<String, Object>> children = TaskDocument.children(s.client(), t);
                if (store.json) {
                    Output.json(out, TaskDocument.detail(s.client(), t, events, payloads));
                    return 0;
                }
                print(out, t, events, children);
                return 0;
            }
        }

        private void print(PrintWriter out, TaskInfo t, List<TaskEvent> events, List<Map<String, Object>> children) {
            Map<String, String> fields = new LinkedHashMap<>();
            fields.put("task", t.taskId().value());
            fields.put("workflow", t.workflow() + " v" + t.workflowVersion());
            fields.put("business key", t.businessKey());
            fields.put("state", t.status() + (t.cancelRequested() ? " (cancel requested)" : ""));
            fields.put("current step", Integer.toString(t.currentStep()));
            fields.put("time-outs", Integer.toString(t.failureCount()));
            fields.put("held by", t.lockedBy() == null ? "-" : t.lockedBy() + " (lease " + t.lease() + ")");
            fields.put("deadline", Output.time(t.completeBy()));
            fields.put("next attempt", Output.time(t.nextAttemptAt()));
            boolean timerWaits = t.steps().stream()
                    .anyMatch(st -> st.index() == t.currentStep() && st.status() == StepStatus.WAITING);
            if (timerWaits) {
                fields.put("timer fires", Output.time(t.nextAttemptAt()));
            }
            fields.put("created", Output.time(t.createdAt()));
            fields.put("updated", Output.time(t.updatedAt()));
            if (t.lastError() != null) {
                fields.put("last error", t.lastError().strip());
            }
            Object parent = TaskDocument.detail(t, List.of(), false).get("parent");
            if (parent instanceof Map<?, ?> p) {
                fields.put("parent", p.get("id") + " (step " + p.get("step") + ")");
            }
            for (Map<String, Object> c : children) {
                // a parallel step has one child per branch: the branch names the line
                fields.put("child " + c.get("step") + (c.get("branch") == null ? "" : "/" + c.get("branch")),
                        c.get("id") + " " + c.get("workflow") + " " + c.get("status"));
            }
            fields.forEach((k, v) -> out.printf("%-13s %s%n", k + ":", v));
            out.println();
            List<List<String>> steps = new ArrayList<>();
            for (TaskInfo.StepInfo st : t.steps()) {
                steps.add(List.of(Integer.toString(st.index()), st.name(), st.status().name(),
                        Integer.toString(st.attempts()), Output.time(st.finishedAt()),
                        st.compensationStatus() == null ? "" : st.compensationStatus().name(),
                        payloads ? Output.cut(st.output(), 50) : st.output() == null ? "" : "(hidden)",
                        Output.cut(st.error(), 60)));
            }
            Output.table(out, List.of("#", "STEP", "STATE", "ATTEMPTS", "FINISHED", "COMPENSATION", "OUTPUT", "ERROR"),
                    steps);
            out.println();
            List<List<String>> rows = new ArrayList<>();
            for (TaskEvent e : events) {
                rows.add(List.of(Output.time(e.at()), e.type().name(), e.stepName() == null ? "" : e.stepName(),
                        e.attempt() == 0 ? "" : Integer.toString(e.attempt()), Output.cut(e.message(), 70)));
            }
            Output.table(out, List.of("WHEN", "EVENT", "STEP", "ATTEMPT", "DETAIL"), rows);
        }
    }

    /** {@code sas tasks result}. */
    @Command(name = "result", mixinStandardHelpOptions = true,
            description = {"Print a task's outcome: its state and each completed step's output (business data).",
                "Exit status 1 if the task has not finished, or did not end PROCESSED."})
    static final class Result implements Callable<Integer> {
        @Mixin
        StoreOptions store;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TASK_ID", description = "the task's id")
        String taskId;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (StoreOptions.Session s = store.open()) {
                Optional<TaskInfo> found = s.client().find(TaskId.of(taskId));
                if (found.isEmpty()) {
                    return Output.refuse(spec.commandLine(), store.json, "no task " + taskId);
                }
                TaskInfo t = found.get();
                Map<String, Object> outputs = new LinkedHashMap<>();
                for (TaskInfo.StepInfo st : t.steps()) {
                    if (st.output() != null) {
                        outputs.put(st.name(), st.output());
                    }
                }
                boolean ok = t.status() == TaskStatus.PROCESSED;
                if (store.json) {
                    Map<String, Object> doc = new LinkedHashMap<>();
                    doc.put("id", t.taskId().value());
                    doc.put("status", t.status().name());
                    doc.put("finished", t.status().isTerminal());
                    doc.put("outputs", outputs);
                    doc.put("lastError", t.lastError());
                    Output.json(out, doc);
                } else {
                    out.println("state: " + t.status() + (t.status().isTerminal() ? "" : " (not finished)"));
                    outputs.forEach((step, output) -> out.println(step + ": " + output));
                    if (!ok && t.lastError() != null) {
                        out.println("last error: " + t.lastError().strip());
                    }
                }
                return ok ? 0 : SasCli.REFUSED;
            }
        }
    }
}
