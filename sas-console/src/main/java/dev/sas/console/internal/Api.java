package dev.sas.console.internal;

import dev.sas.console.ConsoleRequest;
import dev.sas.core.OperatorNote;
import dev.sas.core.SasClient;
import dev.sas.core.StateStoreException;
import dev.sas.core.TaskDocument;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskNotFoundException;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStateException;
import dev.sas.core.TaskStatus;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The console's JSON API over a {@link SasClient}: reads for anyone who reaches the console,
 * actions only past the {@link ActionGuard}. Thread-safe (the client is).
 *
 * <pre>
 * GET  api/info                                  title, whether actions and payloads are on
 * GET  api/overview                              counts per state, and per workflow and state
 * GET  api/tasks?status=&amp;workflow=&amp;limit=&amp;afterCreatedAt=&amp;afterId=   a page, oldest first
 * GET  api/search?q=&amp;workflow=                   by business key (in every workflow) or task id
 * GET  api/tasks/{id}                            a task, its steps and events
 * GET  api/query?status=&amp;workflow=&amp;createdAfter=&amp;createdBefore=&amp;error=&amp;limit=&amp;afterCreatedAt=&amp;afterId=
 *                                                a page of the tasks the filters match, oldest first
 * GET  api/agents                                agent endpoints' flow control, tasks held back per agent
 * GET  api/bulk?action=&amp;(filters)&amp;max=           preview: how many tasks, a sample, the confirm digest
 * POST api/tasks/{id}/resubmit?reason=           resubmit an ERROR or COMPENSATION_FAILED task
 * POST api/tasks/{id}/cancel?reason=             cancel a task
 * POST api/tasks/{id}/move?toVersion=&amp;reason=   move a task to another version of its workflow
 * POST api/workflows/{name}/resubmit-errors?reason=   resubmit every ERROR task of a workflow
 * POST api/bulk/{action}?(filters)&amp;max=&amp;count=&amp;confirm=&amp;reason=   act on what the preview counted
 * </pre>
 *
 * Every action records who acted (the host's operator function, else "console") and the
 * {@code reason} given, as an {@link OperatorNote} in the task's timeline.
 */
public final class Api {
    private static final Logger log = LoggerFactory.getLogger("dev.sas.console.SasConsole");
    /** Page size of the task list when the request names none. */
    static final int DEFAULT_PAGE = 50;
    /** Largest page the API serves. */
    static final int MAX_PAGE = 500;

    private final SasClient client;
    private final ActionGuard guard;
    private final boolean payloads;
    private final String title;
    private final Function<ConsoleRequest, String> operator;
    private final Operations operations;
    private final ConsoleSchedules schedules;

    /**
     * @param client where tasks are read and acted on
     * @param guard decides which requests may act
     * @param payloads whether step outputs are shown
     * @param title the console's title
     * @param operator who sends a request, as the host knows it; null (or a null answer) for
     *     {@value #DEFAULT_OPERATOR}
     */
    public Api(SasClient client, ActionGuard guard, boolean payloads, String title,
            Function<ConsoleRequest, String> operator) {
        this.client = client;
        this.guard = guard;
        this.payloads = payloads;
        this.title = title;
        this.operator = operator;
        this.operations = new Operations(client);
        this.schedules = new ConsoleSchedules(client);
    }

    /** Who acts when the host names no operator: {@value}. */
    public static final String DEFAULT_OPERATOR = "console";

    /**
     * Answers {@code request}, whose path starts with {@code /api/}.
     *
     * @return the status and the JSON body
     */
    public Answer handle(ConsoleRequest request) {
        List<String> parts = RequestParams.segments(request.path().substring("/api/".length()));
        try {
            return route(request, parts);
        } catch (TaskNotFoundException e) {
            return Answer.error(404, e.getMessage());
        } catch (TaskStateException e) {
            return Answer.error(409, e.getMessage());
        } catch (IllegalArgumentException e) {
            return Answer.error(400, e.getMessage());
        } catch (StateStoreException e) {
            String id = errorId();
            log.warn("console: error {}: the state store failed answering {} {}", id, request.method(),
                    HostGuard.printable(request.path()), e);
            return Answer.error(503, "the state store failed (error " + id + "; the console's log has the details)");
        } catch (RuntimeException e) {
            String id = errorId();
            log.warn("console: error {}: unexpected error answering {} {}", id, request.method(),
                    HostGuard.printable(request.path()), e);
            return Answer.error(500, "unexpected error (error " + id + "; the console's log has the details)");
        }
    }

    /** A short random id that ties an answer to its log line; it reveals nothing. */
    private static String errorId() {
        return java.util.UUID.randomUUID().toString().substring(0, 8);
    }

    private Answer route(ConsoleRequest request, List<String> p) {
        String method = request.method();
        if (p.size() == 1 && p.get(0).equals("info")) {
            return read(method, () -> info(request));
        }
        if (p.size() == 1 && p.get(0).equals("overview")) {
            return read(method, this::overview);
        }
        if (p.size() == 1 && p.get(0).equals("tasks")) {
            return read(method, () -> list(RequestParams.query(request.query())));
        }
        if (p.size() == 1 && p.get(0).equals("search")) {
            return read(method, () -> search(RequestParams.query(request.query())));
        }
        if (p.size() == 2 && p.get(0).equals("tasks")) {
            return read(method, () -> task(TaskId.of(p.get(1))));
        }
        if (p.size() == 1 && p.get(0).equals("query")) {
            return read(method, () -> operations.query(RequestParams.query(request.query())));
        }
        if (p.size() == 1 && p.get(0).equals("agents")) {
            return read(method, operations::agents);
        }
        if (!p.isEmpty() && p.get(0).equals("schedules")) { // reads for anyone, actions past the guard
            ActionGuard.Refusal refused = p.size() > 1 ? guard.check(request) : null;
            return refused != null ? refusal(request, refused) : schedules.answer(method, p, () -> note(request,
                    RequestParams.query(request.query())).operator());
        }
        if (p.size() == 1 && p.get(0).equals("bulk")) {
            return read(method, () -> operations.preview(RequestParams.query(request.query())));
        }
        if (p.size() == 2 && p.get(0).equals("bulk")) {
            ActionGuard.Refusal refused = guard.check(request);
            if (refused != null) {
                return refusal(request, refused);
            }
            Map<String, String> q = RequestParams.query(request.query());
            return operations.act(p.get(1), q, note(request, q), who(request));
        }
        if (p.size() == 3 && p.get(0).equals("tasks") && List.of("resubmit", "cancel", "move").contains(p.get(2))) {
            ActionGuard.Refusal refused = guard.check(request);
            if (refused != null) {
                return refusal(request, refused);
            }
            TaskId id = TaskId.of(p.get(1));
            Map<String, String> q = RequestParams.query(request.query());
            OperatorNote note = note(request, q);
            return switch (p.get(2)) {
                case "resubmit" -> resubmit(id, note, request);
                case "cancel" -> cancel(id, note, request);
                default -> ConsoleMoves.move(client, id, q, note, who(request));
            };
        }
        if (p.size() == 3 && p.get(0).equals("workflows") && p.get(2).equals("resubmit-errors")) {
            ActionGuard.Refusal refused = guard.check(request);
            if (refused != null) {
                return refusal(request, refused);
            }
            return resubmitErrors(p.get(1), note(request, RequestParams.query(request.query())), request);
        }
        return Answer.error(404, "no such API: " + request.path());
    }

    private static Answer read(String method, java.util.function.Supplier<Object> body) {
        if (!method.equals("GET") && !method.equals("HEAD")) {
            return Answer.error(405, "only GET here");
        }
        return new Answer(200, body.get());
    }

    private Answer refusal(ConsoleRequest request, ActionGuard.Refusal refused) {
        if (refused.status() == 403) {
            log.warn("console: action {} from {} refused: {}", request.path(), who(request), refused.reason());
        }
        return Answer.error(refused.status(), refused.reason());
    }

    private Object info(ConsoleRequest request) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("title", title);
        m.put("actions", guard.enabled());
        m.put("payloads", payloads);
        m.put("tokenHeader", ActionGuard.TOKEN_HEADER);
        m.put("statuses", List.of(TaskStatus.values()));
        String who;
        try {
            who = operatorName(request);
        } catch (RuntimeException e) { // e.g. nobody logged in: the page still loads
            log.debug("console: the host's operator function failed on a read: {}", e.toString());
            who = DEFAULT_OPERATOR;
        }
        m.put("operator", who);
        m.put("bulkMax", Operations.DEFAULT_BULK_MAX);
        return m;
    }

    private Object overview() {
        Map<String, Map<TaskStatus, Long>> byWorkflow = client.countByWorkflow();
        Map<TaskStatus, Long> total = new LinkedHashMap<>();
        for (TaskStatus s : TaskStatus.values()) {
            total.put(s, 0L);
        }
        List<Object> workflows = new ArrayList<>();
        byWorkflow.forEach((name, counts) -> {
            Map<String, Object> w = new LinkedHashMap<>();
            w.put("name", name);
            w.put("counts", counts);
            w.put("total", counts.values().stream().mapToLong(Long::longValue).sum());
            workflows.add(w);
            counts.forEach((s, n) -> total.merge(s, n, Long::sum));
        });
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("counts", total);
        m.put("total", total.values().stream().mapToLong(Long::longValue).sum());
        m.put("workflows", workflows);
        return m;
    }

    private Object list(Map<String, String> q) {
        int limit = q.containsKey("limit") ? RequestParams.parseInt("limit", q.get("limit")) : DEFAULT_PAGE;
        if (limit < 1 || limit > MAX_PAGE) {
            throw new IllegalArgumentException("limit must be 1 to " + MAX_PAGE + ", was " + limit);
        }
        TaskStatus status = q.containsKey("status") ? RequestParams.status(q.get("status")) : null;
        String workflow = RequestParams.blankToNull(q.get("workflow"));
        Instant afterCreatedAt = null;
        TaskId afterId = null;
        if (q.containsKey("afterCreatedAt") || q.containsKey("afterId")) {
            try {
                afterCreatedAt = Instant.parse(q.getOrDefault("afterCreatedAt", ""));
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("afterCreatedAt must be an ISO-8601 instant, was '"
                        + q.get("afterCreatedAt") + "'", e);
            }
            afterId = TaskId.of(q.getOrDefault("afterId", ""));
        }
        // one more than asked, to know whether there is a next page
        TaskQuery query = new TaskQuery(status, workflow, limit + 1, afterCreatedAt, afterId);
        List<TaskInfo> found = client.list(query);
        List<Object> tasks = new ArrayList<>();
        for (TaskInfo t : found.subList(0, Math.min(limit, found.size()))) {
            tasks.add(TaskDocument.summary(t));
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tasks", tasks);
        if (found.size() > limit) {
            TaskInfo last = found.get(limit - 1);
            Map<String, Object> next = new LinkedHashMap<>();
            next.put("afterCreatedAt", last.createdAt());
            next.put("afterId", last.taskId().value());
            m.put("next", next);
        } else {
            m.put("next", null);
        }
        return m;
    }

    /** Exact business key in one workflow or every workflow with tasks; or a task id. */
    private Object search(Map<String, String> q) {
        String text = RequestParams.blankToNull(q.get("q"));
        if (text == null) {
            throw new IllegalArgumentException("q (a business key or task id) is required");
        }
        String workflow = RequestParams.blankToNull(q.get("workflow"));
        List<String> workflows = workflow != null ? List.of(workflow) : List.copyOf(client.countByWorkflow().keySet());
        List<Object> tasks = new ArrayList<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (String w : workflows) {
            client.find(w, text).ifPresent(t -> {
                if (seen.add(t.taskId().value())) {
                    tasks.add(TaskDocument.summary(t));
                }
            });
        }
        if (text.length() <= TaskId.MAX_LENGTH) {
            client.find(TaskId.of(text)).ifPresent(t -> {
                if ((workflow == null || workflow.equals(t.workflow())) && seen.add(t.taskId().value())) {
                    tasks.add(TaskDocument.summary(t));
                }
            });
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tasks", tasks);
        m.put("next", null);
        return m;
    }

    private Object task(TaskId id) {
        TaskInfo info = client.find(id).orElseThrow(() -> new TaskNotFoundException(id));
        List<TaskEvent> events = client.events(id);
        Map<String, Object> m = TaskDocument.detail(client, info, events, payloads); // unit tasks: as OperationsClient decides
        if (!guard.enabled()) {
            Map<String, Object> none = new LinkedHashMap<>();
            none.put("resubmit", false);
            none.put("cancel", false);
            none.put("move", false);
            m.put("can", none); // this console takes no actions, whatever the task's state allows
        }
        return m;
    }

    private Answer resubmit(TaskId id, OperatorNote note, ConsoleRequest request) {
        MDC.put("sas.taskId", id.value());
        try {
            client.operations().resubmit(id, note);
            log.info("console: task {} resubmitted by {} at {}", id, note.operator(), who(request));
        } finally {
            MDC.remove("sas.taskId");
        }
        return new Answer(200, outcome(true, "resubmitted", id));
    }

    private Answer cancel(TaskId id, OperatorNote note, ConsoleRequest request) {
        boolean requested;
        MDC.put("sas.taskId", id.value());
        try {
            requested = client.operations().cancel(id, note);
            log.info("console: cancel of task {} by {} at {}: {}", id, note.operator(), who(request),
                    requested ? "requested" : "refused (finished, COMPENSATION_FAILED, or being cancelled)");
        } finally {
            MDC.remove("sas.taskId");
        }
        if (!requested) {
            return Answer.error(409, "task " + id + " cannot be cancelled: it has finished, is COMPENSATION_FAILED"
                    + " (resubmit it), or a cancel is already being carried out");
        }
        return new Answer(200, outcome(true, "cancel requested", id));
    }

    private Answer resubmitErrors(String workflow, OperatorNote note, ConsoleRequest request) {
        int n = operations.resubmitErrors(workflow, note);
        log.info("console: {} ERROR tasks of workflow {} resubmitted by {} at {}", n, workflow, note.operator(),
                who(request));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", true);
        m.put("resubmitted", n);
        m.put("message", n + " ERROR task" + (n == 1 ? "" : "s") + " of " + workflow + " resubmitted");
        return new Answer(200, m);
    }

    private Map<String, Object> outcome(boolean ok, String what, TaskId id) {
        TaskInfo now = client.find(id).orElse(null);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", ok);
        m.put("message", now == null ? "task " + id + ": " + what
                : now.businessKey() + " (" + now.workflow() + "): " + what);
        m.put("status", now == null ? null : now.status());
        return m;
    }

    /** Who acts, as the host names the request's operator, and the {@code reason} parameter. */
    private OperatorNote note(ConsoleRequest request, Map<String, String> q) {
        String name;
        try {
            name = operatorName(request);
        } catch (RuntimeException e) {
            // never record an action under a name that is not the actor's
            log.warn("console: action {} from {} refused: the host's operator function failed: {}", request.path(),
                    who(request), e.toString());
            throw new IllegalArgumentException("the operator could not be identified (" + e.getClass().getSimpleName()
                    + "); nothing was done", e);
        }
        return OperatorNote.of(name, q.get("reason"));
    }

    private String operatorName(ConsoleRequest request) {
        String name = operator == null ? null : operator.apply(request);
        return name == null || name.isBlank() ? DEFAULT_OPERATOR : name;
    }

    private static String who(ConsoleRequest request) {
        return request.remoteAddress() == null ? "an unknown address" : request.remoteAddress();
    }

    /**
     * An API answer.
     *
     * @param status the HTTP status
     * @param body what to write as JSON
     */
    public record Answer(int status, Object body) {

        /** An error answer: {@code {"ok": false, "error": message}}. */
        public static Answer error(int status, String message) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("ok", false);
            m.put("error", message);
            return new Answer(status, m);
        }
    }
}
