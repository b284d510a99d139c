package dev.sas.console.internal;

import dev.sas.core.OperatorNote;
import dev.sas.core.SasClient;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.VersionMoveException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * {@code POST api/tasks/{id}/move?toVersion=&reason=}: moves a task to another version of its
 * workflow through {@link dev.sas.core.OperationsClient#moveVersion}; the caller has passed the
 * {@link ActionGuard}. A move the task's state refuses answers 409 (through {@link Api}), one the
 * versions refuse ({@link VersionMoveException}) 409 with what to do. Thread-safe.
 */
final class ConsoleMoves {
    private static final Logger log = LoggerFactory.getLogger("dev.sas.console.SasConsole");

    private ConsoleMoves() {
    }

    static Api.Answer move(SasClient client, TaskId id, Map<String, String> query, OperatorNote note, String who) {
        String raw = query.get("toVersion");
        if (raw == null || raw.isBlank()) {
            throw new IllegalArgumentException("toVersion (the version to move the task to) is required");
        }
        int toVersion;
        try {
            toVersion = Integer.parseInt(raw.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("toVersion must be a number, was '" + raw + "'", e);
        }
        MDC.put("sas.taskId", id.value());
        try {
            client.operations().moveVersion(id, toVersion, note);
            log.info("console: task {} moved to v{} by {} at {}", id, toVersion, note.operator(), who);
        } catch (VersionMoveException e) {
            return Api.Answer.error(409, e.getMessage());
        } finally {
            MDC.remove("sas.taskId");
        }
        TaskInfo now = client.find(id).orElse(null);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", true);
        m.put("message", (now == null ? "task " + id : now.businessKey() + " (" + now.workflow() + ")")
                + ": moved to v" + toVersion);
        m.put("status", now == null ? null : now.status());
        return new Api.Answer(200, m);
    }
}
