package dev.sas.console.internal;

import dev.sas.core.SasClient;
import dev.sas.core.ScheduleInfo;
import dev.sas.core.ScheduleNotFoundException;
import dev.sas.core.TaskHandle;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The console's schedules page: the store's recurring schedules, and pausing, resuming and
 * triggering one (actions the {@link Api} lets through its {@link ActionGuard} only). Thread-safe.
 *
 * <pre>
 * GET  api/schedules                             every schedule: fire times, state, last and next fire time
 * POST api/schedules/{name}/pause|resume|trigger  act on one schedule
 * </pre>
 */
final class ConsoleSchedules {
    private static final Logger log = LoggerFactory.getLogger("dev.sas.console.SasConsole");

    private final SasClient client;

    ConsoleSchedules(SasClient client) {
        this.client = client;
    }

    /**
     * Answers {@code api/schedules...}.
     *
     * @param operator who acts (asked only for an action), as the host names them
     */
    Api.Answer answer(String method, List<String> p, java.util.function.Supplier<String> operator) {
        if (p.size() == 1) {
            if (!method.equals("GET") && !method.equals("HEAD")) {
                return Api.Answer.error(405, "only GET here");
            }
            return new Api.Answer(200, list());
        }
        if (p.size() != 3 || !List.of("pause", "resume", "trigger").contains(p.get(2))) {
            return Api.Answer.error(404, "no such API: schedules/" + String.join("/", p.subList(1, p.size())));
        }
        if (!method.equals("POST")) {
            return Api.Answer.error(405, "only POST here");
        }
        String name = p.get(1);
        String who = operator.get();
        String message;
        try {
            switch (p.get(2)) {
                case "pause" -> {
                    client.schedules().pause(name);
                    message = "schedule " + name + " paused";
                }
                case "resume" -> {
                    client.schedules().resume(name);
                    message = "schedule " + name + " resumed";
                }
                default -> {
                    TaskHandle task = client.schedules().trigger(name);
                    message = "schedule " + name + " triggered: task " + task.id();
                }
            }
        } catch (ScheduleNotFoundException e) {
            return Api.Answer.error(404, e.getMessage());
        }
        log.info("console: {} (by {})", message, who);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", true);
        m.put("message", message);
        return new Api.Answer(200, m);
    }

    private Map<String, Object> list() {
        Map<String, Object> m = new LinkedHashMap<>();
        List<Object> schedules = new ArrayList<>();
        boolean supported = client.config().stateStore().schedules().isPresent();
        if (supported) {
            for (ScheduleInfo s : client.schedules().list()) {
                Map<String, Object> d = new LinkedHashMap<>();
                d.put("name", s.name());
                d.put("workflow", s.workflow());
                d.put("workflowVersion", s.workflowVersion());
                d.put("trigger", s.trigger());
                d.put("zone", s.zone());
                d.put("missedFires", s.missedFires().toString());
                d.put("missedAfter", s.missedAfter().toString());
                d.put("paused", s.paused());
                d.put("lastFireTime", iso(s.lastFireTime()));
                d.put("nextFireTime", iso(s.nextFireTime()));
                d.put("registeredAt", iso(s.registeredAt()));
                d.put("updatedAt", iso(s.updatedAt()));
                schedules.add(d);
            }
        }
        m.put("supported", supported);
        m.put("schedules", schedules);
        return m;
    }

    private static String iso(Instant t) {
        return t == null ? null : t.toString();
    }
}
