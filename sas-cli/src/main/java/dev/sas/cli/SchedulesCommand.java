package dev.sas.cli;

import dev.sas.core.ScheduleInfo;
import dev.sas.core.ScheduleNotFoundException;
import dev.sas.core.TaskHandle;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code sas schedules}: list, pause, resume, trigger and remove the store's recurring schedules. */
@Command(name = "schedules", mixinStandardHelpOptions = true,
        description = "List, pause, resume, trigger and remove recurring schedules.",
        subcommands = {SchedulesCommand.ListSchedules.class, SchedulesCommand.Pause.class,
            SchedulesCommand.Resume.class, SchedulesCommand.Trigger.class,
            SchedulesCommand.Remove.class})
final class SchedulesCommand implements Runnable {

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** The JSON document of one schedule (the console's schedules page writes the same fields). */
    static Map<String, Object> json(ScheduleInfo s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", s.name());
        m.put("workflow", s.workflow());
        m.put("workflowVersion", s.workflowVersion());
        m.put("trigger", s.trigger());
        m.put("zone", s.zone());
        m.put("missedFires", s.missedFires().toString());
        m.put("missedAfter", s.missedAfter().toString());
        m.put("paused", s.paused());
        m.put("lastFireTime", Output.iso(s.lastFireTime()));
        m.put("nextFireTime", Output.iso(s.nextFireTime()));
        m.put("registeredAt", Output.iso(s.registeredAt()));
        m.put("updatedAt", Output.iso(s.updatedAt()));
        return m;
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List the schedules, by name.")
    static final class ListSchedules implements Callable<Integer> {
        @Mixin
        StoreOptions store;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            try (StoreOptions.Session s = store.open()) {
                List<ScheduleInfo> all = s.client().schedules().list();
                if (store.json) {
                    Output.json(out, all.stream().map(SchedulesCommand::json).toList());
                    return 0;
                }
                List<List<String>> rows = new ArrayList<>();
                for (ScheduleInfo i : all) {
                    rows.add(List.of(i.name(), i.trigger() + (i.zone() == null ? "" : " " + i.zone()),
                            i.workflow() + " v" + i.workflowVersion(), i.paused() ? "PAUSED" : "ACTIVE",
                            Output.time(i.lastFireTime()), i.paused() ? "-" : Output.time(i.nextFireTime()),
                            i.missedFires().toString()));
                }
                Output.table(out, List.of("NAME", "FIRES", "WORKFLOW", "STATE", "LAST FIRE", "NEXT FIRE", "MISSED"),
                        rows);
                out.println(all.size() + " schedule" + (all.size() == 1 ? "" : "s"));
                return 0;
            }
        }
    }

    /** The part of pause, resume, trigger and remove that names one schedule. */
    abstract static class OneSchedule implements Callable<Integer> {
        @Mixin
        StoreOptions store;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NAME", description = "the schedule's name")
        String name;

        abstract String act(StoreOptions.Session s);

        @Override
        public Integer call() {
            try (StoreOptions.Session s = store.open()) {
                ScheduleInfo before = s.client().schedules().find(name)
                        .orElseThrow(() -> new ScheduleNotFoundException(name));
                String done = act(s);
                if (store.json) {
                    // the schedule as it is now; a removed one as it was
                    Map<String, Object> doc = new LinkedHashMap<>(json(s.client().schedules().find(name).orElse(before)));
                    doc.put("done", done);
                    Output.json(spec.commandLine().getOut(), doc);
                } else {
                    spec.commandLine().getOut().println(done);
                }
                return 0;
            } catch (ScheduleNotFoundException e) {
                return Output.refuse(spec.commandLine(), store.json, e.getMessage());
            }
        }
    }

    @Command(name = "pause", mixinStandardHelpOptions = true,
            description = "Pause a schedule: no fire time is submitted until it is resumed.")
    static final class Pause extends OneSchedule {
        @Override
        String act(StoreOptions.Session s) {
            s.client().schedules().pause(name);
            return "schedule " + name + " paused";
        }
    }

    @Command(name = "resume", mixinStandardHelpOptions = true,
            description = "Resume a paused schedule from now (fire times that passed while paused are not run).")
    static final class Resume extends OneSchedule {
        @Override
        String act(StoreOptions.Session s) {
            s.client().schedules().resume(name);
            return "schedule " + name + " resumed";
        }
    }

    @Command(name = "trigger", mixinStandardHelpOptions = true,
            description = "Submit a schedule's task now, outside its fire times (also while paused).")
    static final class Trigger extends OneSchedule {
        @Override
        String act(StoreOptions.Session s) {
            TaskHandle task = s.client().schedules().trigger(name);
            return "schedule " + name + " triggered: task " + task.id();
        }
    }

    @Command(name = "remove", mixinStandardHelpOptions = true,
            description = "Remove a schedule; the tasks it submitted stay. A node that registers it at its next start"
                    + " brings it back: remove it from the code too.")
    static final class Remove extends OneSchedule {
        @Override
        String act(StoreOptions.Session s) {
            if (!s.client().schedules().remove(name)) {
                throw new ScheduleNotFoundException(name); // removed by someone else meanwhile
            }
            return "schedule " + name + " removed";
        }
    }
}
