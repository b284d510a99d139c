package dev.sas.examples.orders;

import dev.sas.core.SasClient;
import dev.sas.core.TaskDocument;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Prints the event history of the orders a failed ledger check names, and of their branch, element
 * and child tasks, so that a failed run says what SAS did with each (payloads left out).
 */
final class TaskHistory {

    private TaskHistory() {
    }

    /**
     * Prints, for every order id of the form {@code <tag>-NNNNN} in {@code failures}, its task's
     * events and those of the tasks it started; at most {@code limit} orders.
     */
    static void printFor(SasClient client, Map<String, TaskId> ids, String tag, List<String> failures, int limit,
            PrintStream out) {
        Set<String> named = new TreeSet<>();
        Pattern p = Pattern.compile(Pattern.quote(tag) + "-\\d{5}");
        for (String f : failures) {
            Matcher m = p.matcher(f);
            while (m.find()) {
                named.add(m.group());
            }
        }
        named.stream().limit(limit).forEach(order -> {
            TaskId id = ids.get(order);
            if (id == null) {
                return;
            }
            try {
                Optional<TaskInfo> task = client.find(id);
                if (task.isEmpty()) {
                    return;
                }
                out.println("history of order " + order + ":");
                print(client, task.get(), "  ", out);
                for (Map<String, Object> child : TaskDocument.children(client, task.get())) {
                    client.find(TaskId.of(String.valueOf(child.get("id"))))
                            .ifPresent(c -> print(client, c, "    ", out));
                }
            } catch (RuntimeException e) {
                out.println("history of order " + order + " not readable: " + e);
            }
        });
    }

    private static void print(SasClient client, TaskInfo task, String indent, PrintStream out) {
        out.println(indent + "task " + task.taskId() + " " + task.workflow() + " " + task.status() + " step "
                + task.currentStep() + " attempt " + task.attempt());
        List<TaskEvent> events = client.events(task.taskId());
        Instant first = events.isEmpty() ? null : events.get(0).at();
        for (TaskEvent e : events) {
            String msg = e.message() == null ? "" : e.message();
            out.printf("%s  +%5dms %-22s step %d %s attempt %d %s%n", indent,
                    Duration.between(first, e.at()).toMillis(), e.type(), e.stepIndex(),
                    e.stepName() == null ? "" : e.stepName(), e.attempt(),
                    msg.length() > 120 ? msg.substring(0, 120) + "..." : msg);
        }
    }
}
