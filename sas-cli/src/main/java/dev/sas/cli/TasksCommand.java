package dev.sas.cli;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskNotFoundException;
import dev.sas.core.TaskQuery;
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

/** {@code sas tasks list|show|resubmit|cancel}. */
@Command(name = "tasks", mixinStandardHelpOptions = true, description = "List, show, resubmit and cancel tasks.",
        subcommands = {TasksCommand.ListTasks.class, TasksCommand.Show.class, TasksCommand.Resubmit.class,
            TasksCommand.Cancel.class})
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

        @Option(names = "--status", paramLabel = "STATE", description = "only tasks in this state: ${COMPLETION-CANDIDATES}")
        TaskStatus status;

        @Option(names = "--workflow", paramLabel = "NAME", description = "only tasks of this workflow")
        String workflow;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "50",
                description = "at most N tasks, 1 to " + TaskQuery.MAX_LIMIT + " (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        public Integer call() {
            if (limit < 1 || limit > TaskQuery.MAX_LIMIT) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--limit must be 1 to "
                        + TaskQuery.MAX_LIMIT + ", was " + limit);
            }
            PrintWriter out = spec.commandLine().getOut();
            try (StoreOptions.Session s = store.open()) {
                TaskQuery q = TaskQuery.all().withLimit(Math.min(limit + 1, TaskQuery.MAX_LIMIT));
                if (status != null) {
                    q = q.withStatus(status);
                }
                if (workflow != null) {
                    q = q.withWorkflow(workflow);
                }
                List<TaskInfo> found = s.client().list(q);
                boolean more = found.size() > limit;
                List<TaskInfo> tasks = found.subList(0, Math.min(limit, found.size()));
                if (store.json) {
                    Output.json(out, tasks.stream().map(Output::summary).toList());
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
                    spec.commandLine().getErr().println("no task " + (taskId != null ? taskId
                            : "with business key '" + businessKey + "' in workflow " + workflow));
                    return SasCli.REFUSED;
                }
                TaskInfo t = found.get();
                List<TaskEvent> events = s.client().events(t.taskId());
                if (store.json) {
                    Output.json(out, Output.detail(t, events, payloads));
                    return 0;
                }
                print(out, t, events);
                return 0;
            }
        }

        private void print(PrintWriter out, TaskInfo t, List<TaskEvent> events) {
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
            fields.put("created", Output.time(t.createdAt()));
            fields.put("updated", Output.time(t.updatedAt()));
            if (t.lastError() != null) {
                fields.put("last error", t.lastError().strip());
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

    /** {@code sas tasks resubmit}. */
    @Command(name = "resubmit", mixinStandardHelpOptions = true,
            description = {"Resubmit ERROR tasks from their failed step (or go on compensating COMPENSATION_FAILED"
                    + " ones).", "Fix the cause first: a resubmitted task runs the failed step again."})
    static final class Resubmit implements Callable<Integer> {
        @Mixin
        StoreOptions store;

        @Spec
        CommandSpec spec;

        @Parameters(arity = "0..*", paramLabel = "TASK_ID", description = "the tasks to resubmit")
        List<String> taskIds = new ArrayList<>();

        @Option(names = "--all-errors", description = "resubmit every ERROR task of --workflow")
        boolean allErrors;

        @Option(names = "--workflow", paramLabel = "NAME", description = "the workflow of --all-errors")
        String workflow;

        @Override
        public Integer call() {
            if (allErrors == !taskIds.isEmpty() || (allErrors && workflow == null)) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "name TASK_IDs, or use --all-errors with --workflow");
            }
            PrintWriter out = spec.commandLine().getOut();
            try (StoreOptions.Session s = store.open()) {
                if (allErrors) {
                    int n = s.client().resubmitAll(workflow);
                    if (store.json) {
                        Output.json(out, Map.of("workflow", workflow, "resubmitted", n));
                    } else {
                        out.println(n + " ERROR task" + (n == 1 ? "" : "s") + " of " + workflow + " resubmitted");
                    }
                    return 0;
                }
                List<Object> results = new ArrayList<>();
                int refused = 0;
                for (String id : taskIds) {
                    Map<String, Object> r = new LinkedHashMap<>();
                    r.put("id", id);
                    try {
                        s.client().resubmit(TaskId.of(id));
                        r.put("resubmitted", true);
                        r.put("status", s.client().find(TaskId.of(id)).map(t -> t.status().name()).orElse(null));
                        line(out, id + ": resubmitted, now " + r.get("status"));
                    } catch (TaskNotFoundException | TaskStateException | IllegalArgumentException e) {
                        refused++;
                        r.put("resubmitted", false);
                        r.put("error", e.getMessage());
                        spec.commandLine().getErr().println(id + ": not resubmitted: " + e.getMessage());
                    }
                    results.add(r);
                }
                if (store.json) {
                    Output.json(out, results);
                }
                return refused == 0 ? 0 : SasCli.REFUSED;
            }
        }

        private void line(PrintWriter out, String text) {
            if (!store.json) {
                out.println(text);
            }
        }
    }

    /** {@code sas tasks cancel}. */
    @Command(name = "cancel", mixinStandardHelpOptions = true,
            description = {"Cancel tasks: their completed steps are compensated, newest first, and they end"
                    + " CANCELLED.", "A task that has finished cannot be cancelled."})
    static final class Cancel implements Callable<Integer> {
        @Mixin
        StoreOptions store;

        @Spec
        CommandSpec spec;

        @Parameters(arity = "1..*", paramLabel = "TASK_ID", description = "the tasks to cancel")
        List<String> taskIds;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (StoreOptions.Session s = store.open()) {
                List<Object> results = new ArrayList<>();
                int refused = 0;
                for (String id : taskIds) {
                    Map<String, Object> r = new LinkedHashMap<>();
                    r.put("id", id);
                    String error;
                    try {
                        error = s.client().cancel(TaskId.of(id)) ? null
                                : "it has finished, is COMPENSATION_FAILED (resubmit it), or is being cancelled already";
                    } catch (TaskNotFoundException | IllegalArgumentException e) {
                        error = e.getMessage();
                    }
                    r.put("cancelRequested", error == null);
                    if (error == null) {
                        if (!store.json) {
                            out.println(id + ": cancel requested; its completed steps will be compensated");
                        }
                    } else {
                        refused++;
                        r.put("error", error);
                        spec.commandLine().getErr().println(id + ": not cancelled: " + error);
                    }
                    results.add(r);
                }
                if (store.json) {
                    Output.json(out, results);
                }
                return refused == 0 ? 0 : SasCli.REFUSED;
            }
        }
    }
}
