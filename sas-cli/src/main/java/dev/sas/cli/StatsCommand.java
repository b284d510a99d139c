package dev.sas.cli;

import dev.sas.core.TaskStatus;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code sas stats}: task counts per state, in total and per workflow. */
@Command(name = "stats", mixinStandardHelpOptions = true,
        description = "Count tasks per state, in total and per workflow.")
final class StatsCommand implements Callable<Integer> {

    @Mixin
    StoreOptions store;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (StoreOptions.Session s = store.open()) {
            Map<String, Map<TaskStatus, Long>> byWorkflow = s.client().countByWorkflow();
            Map<TaskStatus, Long> total = s.client().countByStatus();
            if (store.json) {
                Map<String, Object> doc = new LinkedHashMap<>();
                doc.put("total", total.values().stream().mapToLong(Long::longValue).sum());
                doc.put("counts", total);
                doc.put("workflows", byWorkflow);
                Output.json(out, doc);
                return 0;
            }
            List<String> header = new ArrayList<>();
            header.add("WORKFLOW");
            for (TaskStatus st : TaskStatus.values()) {
                header.add(st.name());
            }
            header.add("TOTAL");
            List<List<String>> rows = new ArrayList<>();
            byWorkflow.forEach((w, counts) -> rows.add(row(w, counts)));
            rows.add(row("(all)", total));
            Output.table(out, header, rows);
            return 0;
        }
    }

    private static List<String> row(String name, Map<TaskStatus, Long> counts) {
        List<String> row = new ArrayList<>();
        row.add(name);
        long sum = 0;
        for (TaskStatus st : TaskStatus.values()) {
            long n = counts.getOrDefault(st, 0L);
            sum += n;
            row.add(Long.toString(n));
        }
        row.add(Long.toString(sum));
        return row;
    }
}
