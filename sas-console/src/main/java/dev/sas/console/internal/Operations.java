package dev.sas.console.internal;

import dev.sas.core.AgentStatus;
import dev.sas.core.OperatorNote;
import dev.sas.core.SasClient;
import dev.sas.core.TaskDocument;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskNotFoundException;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStateException;
import dev.sas.core.TaskSearch;
import dev.sas.core.TaskStatus;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * What an operator runs the cluster with, besides single tasks: the agents' flow-control state with
 * the tasks held back for each agent, a search by state, workflow, creation time and error text,
 * and resubmit or cancel of every task such a search matches, in two steps: a preview that counts
 * them and hands out a confirmation, and the action, refused unless it carries that confirmation
 * and the tasks still match as previewed. Stateless (the confirmation is a digest of what was
 * previewed, so any node of the application can check it); thread-safe.
 */
final class Operations {
    private static final Logger log = LoggerFactory.getLogger("dev.sas.console.SasConsole");
    /** Most tasks a bulk action takes when the request sets no {@code max}: 1,000. */
    static final int DEFAULT_BULK_MAX = 1_000;
    /** Largest {@code max} a bulk action accepts: 10,000 (the CLI's default). */
    static final int BULK_MAX = 10_000;
    /** Tasks of a preview or of an agent's held-back list shown by name. */
    static final int SAMPLE = 20;
    /** Most WAITING tasks the agents view reads to attribute them to agents. */
    static final int WAITING_LIMIT = 1_000;
    /** How a held-back task's last error names its agent (see FlowPolicy's messages). */
    private static final Pattern AGENT = Pattern.compile("agent '([^']+)'");

    private final SasClient client;

    Operations(SasClient client) {
        this.client = client;
    }

    // ------------------------------------------------------------------ agents

    /** Every agent endpoint's flow-control state, grouped by agent, with the tasks held back for each agent. */
    Object agents() {
        boolean supported = true;
        List<AgentStatus> statuses;
        try {
            statuses = client.operations().agents();
        } catch (UnsupportedOperationException e) {
            supported = false;
            statuses = List.of();
        }
        List<TaskInfo> waiting = client.list(TaskQuery.all().withStatus(TaskStatus.WAITING).withLimit(WAITING_LIMIT));
        Map<String, List<TaskInfo>> heldBack = new TreeMap<>();
        int unattributed = 0;
        for (TaskInfo t : waiting) {
            Matcher m = AGENT.matcher(t.lastError() == null ? "" : t.lastError());
            if (m.find()) {
                heldBack.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(t);
            } else {
                unattributed++;
            }
        }
        Map<String, List<Object>> endpoints = new TreeMap<>();
        for (AgentStatus a : statuses) {
            endpoints.computeIfAbsent(a.agent(), k -> new ArrayList<>()).add(endpoint(a));
        }
        heldBack.keySet().forEach(name -> endpoints.computeIfAbsent(name, k -> new ArrayList<>()));
        List<Object> agents = new ArrayList<>();
        endpoints.forEach((name, eps) -> {
            List<TaskInfo> held = heldBack.getOrDefault(name, List.of());
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", name);
            m.put("endpoints", eps);
            m.put("waiting", held.size());
            m.put("waitingTasks", held.stream().limit(SAMPLE).map(TaskDocument::summary).toList());
            agents.add(m);
        });
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("supported", supported);
        m.put("agents", agents);
        m.put("waitingTotal", waiting.size());
        m.put("waitingCapped", waiting.size() == WAITING_LIMIT);
        m.put("waitingUnattributed", unattributed);
        return m;
    }

    private static Map<String, Object> endpoint(AgentStatus a) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("endpoint", a.endpoint());
        m.put("breaker", a.breaker());
        m.put("breakerSince", a.breakerSince());
        m.put("openUntil", a.openUntil());
        m.put("callsInFlight", a.callsInFlight());
        m.put("probesInFlight", a.probesInFlight());
        m.put("callsInWindow", a.callsInWindow());
        m.put("failuresInWindow", a.failuresInWindow());
        m.put("consecutiveFailures", a.consecutiveFailures());
        m.put("lastFailure", a.lastFailure());
        m.put("updatedAt", a.updatedAt());
        return m;
    }

    // ------------------------------------------------------------------ search

    /** A page of the tasks {@code q}'s filters match, oldest first, with a cursor to the next. */
    Object query(Map<String, String> q) {
        TaskSearch filter = TaskFilter.from(q);
        int limit = q.containsKey("limit") ? number("limit", q.get("limit")) : Api.DEFAULT_PAGE;
        if (limit < 1 || limit > Api.MAX_PAGE) {
            throw new IllegalArgumentException("limit must be 1 to " + Api.MAX_PAGE + ", was " + limit);
        }
        Instant afterCreatedAt = TaskSearch.parseTime("afterCreatedAt", q.get("afterCreatedAt"));
        String afterId = q.get("afterId");
        if ((afterCreatedAt == null) != (afterId == null || afterId.isBlank())) {
            throw new IllegalArgumentException("a cursor needs both afterCreatedAt and afterId");
        }
        TaskSearch.Page page = filter.page(client, limit, afterCreatedAt,
                afterCreatedAt == null ? null : TaskId.of(afterId), TaskFilter.SCAN_LIMIT);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tasks", page.tasks().stream().map(TaskDocument::summary).toList());
        m.put("filter", filter.describe());
        m.put("scanned", page.scanned());
        if (page.next() == null) {
            m.put("next", null);
        } else {
            Map<String, Object> next = new LinkedHashMap<>();
            next.put("afterCreatedAt", page.next().createdAt());
            next.put("afterId", page.next().taskId().value());
            m.put("next", next);
        }
        return m;
    }

    // ------------------------------------------------------------------ bulk actions

    /** How many tasks {@code action} would take, a sample of them, and the confirmation to act. */
    Object preview(Map<String, String> q) {
        Bulk bulk = Bulk.from(q);
        List<TaskInfo> found = bulk.filter.find(client, bulk.max);
        boolean tooMany = found.size() > bulk.max;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("action", bulk.action);
        m.put("filter", bulk.filter.describe());
        m.put("max", bulk.max);
        m.put("tooMany", tooMany);
        m.put("matching", tooMany ? null : found.size());
        m.put("count", tooMany ? null : found.size());
        m.put("confirm", tooMany || found.isEmpty() ? null : bulk.confirmation(found));
        m.put("sample", found.stream().limit(SAMPLE).map(TaskDocument::summary).toList());
        m.put("message", tooMany ? "more than " + bulk.max + " tasks match " + bulk.filter.describe()
                + "; narrow the filters" : found.size() + " task" + (found.size() == 1 ? "" : "s") + " match "
                + bulk.filter.describe());
        return m;
    }

    /**
     * Carries out the action previewed: only with the preview's {@code confirm} and {@code count},
     * and only while the same tasks match.
     */
    Api.Answer act(String action, Map<String, String> q, OperatorNote note, String who) {
        Map<String, String> withAction = new LinkedHashMap<>(q);
        withAction.put("action", action);
        Bulk bulk = Bulk.from(withAction);
        String confirm = q.get("confirm");
        String count = q.get("count");
        if (confirm == null || confirm.isBlank() || count == null || count.isBlank()) {
            return Api.Answer.error(428, "a bulk " + action + " needs the confirm and count of its preview: preview"
                    + " it first (GET api/bulk?action=" + action + " with the same filters)");
        }
        int expected = number("count", count);
        List<TaskInfo> found = bulk.filter.find(client, bulk.max);
        if (found.size() > bulk.max) {
            return Api.Answer.error(409, "more than " + bulk.max + " tasks match " + bulk.filter.describe()
                    + " now; narrow the filters");
        }
        if (found.size() != expected || !MessageDigest.isEqual(bulk.confirmation(found).getBytes(StandardCharsets.UTF_8),
                confirm.getBytes(StandardCharsets.UTF_8))) {
            return Api.Answer.error(409, "the matching tasks changed since the preview (" + expected + " then, "
                    + found.size() + " now): nothing was done; preview again");
        }
        List<Object> refused = new ArrayList<>();
        int done = 0;
        for (TaskInfo t : found) {
            String error = apply(bulk.action, t.taskId(), note);
            if (error == null) {
                done++;
            } else {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("id", t.taskId().value());
                r.put("businessKey", t.businessKey());
                r.put("error", error);
                refused.add(r);
            }
        }
        log.info("console: bulk {} of {} tasks ({}) by {} at {}: {} done, {} refused", bulk.action, found.size(),
                bulk.filter.describe(), note.operator(), who, done, refused.size());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", refused.isEmpty());
        m.put("action", bulk.action);
        m.put("done", done);
        m.put("refused", refused);
        m.put("message", done + " of " + found.size() + " task" + (found.size() == 1 ? "" : "s") + " "
                + (bulk.action.equals("cancel") ? "cancelled" : "resubmitted")
                + (refused.isEmpty() ? "" : "; " + refused.size() + " refused"));
        return new Api.Answer(200, m);
    }

    /** Resubmits every ERROR task of {@code workflow}, recording {@code note}; how many. */
    int resubmitErrors(String workflow, OperatorNote note) {
        TaskSearch filter = new TaskSearch(TaskStatus.ERROR, workflow, null, null, null);
        int n = 0;
        TaskSearch.Page page = filter.page(client, TaskSearch.PAGE, null, null, Integer.MAX_VALUE);
        while (true) {
            for (TaskInfo t : page.tasks()) {
                if (apply("resubmit", t.taskId(), note) == null) {
                    n++;
                }
            }
            if (page.next() == null || page.tasks().size() < TaskSearch.PAGE) {
                return n;
            }
            page = filter.page(client, TaskSearch.PAGE, page.next().createdAt(), page.next().taskId(),
                    Integer.MAX_VALUE);
        }
    }

    /** Acts on one task: null if done, else why not. */
    private String apply(String action, TaskId id, OperatorNote note) {
        MDC.put("sas.taskId", id.value());
        try {
            if (action.equals("resubmit")) {
                client.operations().resubmit(id, note);
                return null;
            }
            if (client.operations().cancel(id, note)) {
                return null;
            }
            TaskInfo t = client.find(id).orElseThrow(() -> new TaskNotFoundException(id));
            return "it is " + t.status() + (t.status() == TaskStatus.COMPENSATION_FAILED ? "; resubmit it instead"
                    : t.cancelRequested() ? " and a cancel is already being carried out" : "");
        } catch (TaskNotFoundException | TaskStateException e) {
            return e.getMessage();
        } finally {
            MDC.remove("sas.taskId");
        }
    }

    private static int number(String name, String s) {
        try {
            return Integer.parseInt(s.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a number, was '" + s + "'", e);
        }
    }

    /** A bulk action's parameters, checked. */
    private static final class Bulk {
        final String action;
        final TaskSearch filter;
        final int max;

        private Bulk(String action, TaskSearch filter, int max) {
            this.action = action;
            this.filter = filter;
            this.max = max;
        }

        static Bulk from(Map<String, String> q) {
            String action = q.get("action");
            if (!"cancel".equals(action) && !"resubmit".equals(action)) {
                throw new IllegalArgumentException("action must be cancel or resubmit, was '" + action + "'");
            }
            TaskSearch filter = TaskFilter.from(q);
            if (!filter.any()) {
                throw new IllegalArgumentException("a bulk " + action + " needs at least one filter (status, workflow,"
                        + " createdAfter, createdBefore, error): it never takes every task");
            }
            int max = q.containsKey("max") && !q.get("max").isBlank() ? number("max", q.get("max")) : DEFAULT_BULK_MAX;
            if (max < 1 || max > BULK_MAX) {
                throw new IllegalArgumentException("max must be 1 to " + BULK_MAX + ", was " + max);
            }
            return new Bulk(action, filter, max);
        }

        /** A digest of the action, its filters and the tasks matched: the same tasks give the same text. */
        String confirmation(List<TaskInfo> found) {
            StringBuilder s = new StringBuilder(action).append('\n').append(filter).append('\n');
            found.forEach(t -> s.append(t.taskId().value()).append('\n'));
            try {
                byte[] d = MessageDigest.getInstance("SHA-256").digest(s.toString().getBytes(StandardCharsets.UTF_8));
                return HexFormat.of().formatHex(d, 0, 16);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-256 is missing from this JVM", e);
            }
        }
    }
}
