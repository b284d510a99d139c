package dev.sas.cli;

import dev.sas.core.OperatorNote;
import dev.sas.core.SasClient;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskNotFoundException;
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

/**
 * {@code sas tasks resubmit|cancel}: act on tasks named by id, or on every task a filter matches
 * (a preview of the count unless {@code --yes}). Each action records who and why.
 */
final class TaskActions {

    private TaskActions() {
    }

    /** The outcome of acting on one task: null if done, else why not. */
    @FunctionalInterface
    interface Action {
        String apply(SasClient client, TaskId id, OperatorNote note);
    }

    /** What every action shares: the store, who acts and why, and which tasks. */
    abstract static class Base implements Callable<Integer> {
        @Mixin
        StoreOptions store;

        @Mixin
        TaskFilter filter;

        @Spec
        CommandSpec spec;

        @Parameters(arity = "0..*", paramLabel = "TASK_ID", description = "the tasks; or name them by filters")
        List<String> taskIds = new ArrayList<>();

        @Option(names = "--reason", paramLabel = "TEXT", description = "why: recorded in the task's timeline")
        String reason;

        @Option(names = "--operator", paramLabel = "NAME", defaultValue = "${env:SAS_OPERATOR:-${sys:user.name}}",
                description = "who acts, recorded in the task's timeline (default: $SAS_OPERATOR, else your user"
                        + " name: ${DEFAULT-VALUE})")
        String operator;

        @Option(names = "--yes", description = "with filters: act on every matching task (without it: a preview)")
        boolean yes;

        @Option(names = "--max", paramLabel = "N", defaultValue = "10000",
                description = "with filters: refuse if more than N tasks match (default: ${DEFAULT-VALUE})")
        int max;

        /** "resubmit", "cancel", "move". */
        abstract String verb();

        /** Acts on one task. */
        abstract Action action();

        /** What the output says of a task acted on. */
        abstract String doneText(SasClient client, TaskId id);

        /** Runs a form of the command that needs no task list, or returns empty. */
        Optional<Integer> special(StoreOptions.Session s, PrintWriter out) {
            return Optional.empty();
        }

        /** True if this form also takes no TASK_ID and no filter. */
        boolean specialForm() {
            return false;
        }

        @Override
        public Integer call() {
            CommandLine cl = spec.commandLine();
            TaskSearch search = filter.search(cl);
            if (!specialForm() && taskIds.isEmpty() == !search.any()) {
                throw new CommandLine.ParameterException(cl, "name TASK_IDs, or filters (--status, --workflow,"
                        + " --created-after, --created-before, --error-contains), not both");
            }
            if (max < 1) {
                throw new CommandLine.ParameterException(cl, "--max must be at least 1, was " + max);
            }
            OperatorNote note;
            try {
                note = OperatorNote.of(operator == null || operator.isBlank() ? "cli" : operator, reason);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(cl, e.getMessage());
            }
            PrintWriter out = cl.getOut();
            try (StoreOptions.Session s = store.open()) {
                Optional<Integer> done = special(s, out);
                if (done.isPresent()) {
                    return done.get();
                }
                List<String> ids = taskIds;
                if (search.any()) {
                    List<TaskInfo> found = search.find(s.client(), max);
                    if (found.size() > max) {
                        return Output.refuse(cl, store.json, "more than " + max + " tasks match "
                                + search.describe() + "; narrow the filters or raise --max");
                    }
                    if (!yes) {
                        preview(out, found, search);
                        return 0;
                    }
                    ids = found.stream().map(t -> t.taskId().value()).toList();
                }
                return act(s.client(), ids, note, out);
            }
        }

        private void preview(PrintWriter out, List<TaskInfo> found, TaskSearch search) {
            if (store.json) {
                Map<String, Object> doc = new LinkedHashMap<>();
                doc.put("preview", true);
                doc.put("action", verb());
                doc.put("matching", found.size());
                doc.put("ids", found.stream().map(t -> t.taskId().value()).toList());
                Output.json(out, doc);
                return;
            }
            out.println(found.size() + " task" + (found.size() == 1 ? "" : "s") + " match " + search.describe()
                    + "; run again with --yes to " + verb() + " " + (found.size() == 1 ? "it" : "them"));
            found.stream().limit(20).forEach(t -> out.println("  " + t.taskId().value() + "  " + t.workflow() + "  "
                    + Output.cut(t.businessKey(), 40) + "  " + t.status()));
            if (found.size() > 20) {
                out.println("  ... and " + (found.size() - 20) + " more");
            }
        }

        private int act(SasClient client, List<String> ids, OperatorNote note, PrintWriter out) {
            List<Object> results = new ArrayList<>();
            int refused = 0;
            for (String id : ids) {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("id", id);
                String error;
                try {
                    error = action().apply(client, TaskId.of(id), note);
                } catch (TaskNotFoundException | TaskStateException | IllegalArgumentException e) {
                    error = e.getMessage();
                }
                r.put("done", error == null);
                if (error == null) {
                    String text = doneText(client, TaskId.of(id));
                    r.put("detail", text);
                    if (!store.json) {
                        out.println(id + ": " + text);
                    }
                } else {
                    refused++;
                    r.put("error", error);
                    spec.commandLine().getErr().println(id + ": not " + pastTense() + ": " + error);
                }
                results.add(r);
            }
            if (store.json) {
                Output.json(out, results);
            } else if (ids.size() > 1) {
                out.println((ids.size() - refused) + " of " + ids.size() + " tasks " + pastTense());
            }
            return refused == 0 ? 0 : SasCli.REFUSED;
        }

        abstract String pastTense();
    }

    /** {@code sas tasks resubmit}. */
    @Command(name = "resubmit", mixinStandardHelpOptions = true,
            description = {"Resubmit ERROR tasks from their failed step (or go on compensating COMPENSATION_FAILED"
                    + " ones), by id or by filters.", "Fix the cause first: a resubmitted task runs the failed step"
                    + " again."})
    static final class Resubmit extends Base {
        @Option(names = "--all-errors", description = "resubmit every ERROR task of --workflow at once")
        boolean allErrors;

        @Override
        String verb() {
            return "resubmit";
        }

        @Override
        String pastTense() {
            return "resubmitted";
        }

        @Override
        boolean specialForm() {
            if (allErrors && (filter.workflow == null || !taskIds.isEmpty() || filter.status != null)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--all-errors takes --workflow only");
            }
            return allErrors;
        }

        @Override
        Optional<Integer> special(StoreOptions.Session s, PrintWriter out) {
            if (!allErrors) {
                return Optional.empty();
            }
            int n = s.client().operations().resubmitAll(filter.workflow);
            if (store.json) {
                Output.json(out, Map.of("workflow", filter.workflow, "resubmitted", n));
            } else {
                out.println(n + " ERROR task" + (n == 1 ? "" : "s") + " of " + filter.workflow + " resubmitted");
            }
            return Optional.of(0);
        }

        @Override
        Action action() {
            return (client, id, note) -> {
                client.operations().resubmit(id, note);
                return null;
            };
        }

        @Override
        String doneText(SasClient client, TaskId id) {
            return "resubmitted, now " + client.find(id).map(t -> t.status().name()).orElse("gone");
        }
    }

    /** {@code sas tasks cancel}. */
    @Command(name = "cancel", mixinStandardHelpOptions = true,
            description = {"Cancel tasks, by id or by filters: their completed steps are compensated, newest first,"
                    + " and they end CANCELLED.", "A task that has finished cannot be cancelled."})
    static final class Cancel extends Base {
        @Override
        String verb() {
            return "cancel";
        }

        @Override
        String pastTense() {
            return "cancelled";
        }

        @Override
        Action action() {
            return (client, id, note) -> {
                if (client.operations().cancel(id, note)) {
                    return null;
                }
                TaskInfo t = client.find(id).orElseThrow(() -> new TaskNotFoundException(id));
                return "it is " + t.status() + why(t);
            };
        }

        private static String why(TaskInfo t) {
            if (t.status() == TaskStatus.COMPENSATION_FAILED) {
                return "; resubmit it to go on compensating";
            }
            if (t.cancelRequested()) {
                return " and a cancel is already being carried out";
            }
            return t.status().isTerminal() ? " (finished)" : "";
        }

        @Override
        String doneText(SasClient client, TaskId id) {
            return "cancel requested; its completed steps will be compensated";
        }
    }
}
