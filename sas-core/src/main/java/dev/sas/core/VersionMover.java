package dev.sas.core;

import dev.sas.core.spi.VersionMove;
import dev.sas.core.spi.VersionMoves;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link OperationsClient#moveVersion}: the targets of a task's steps from the new version's
 * {@link VersionMapping}, the store's move, and an error that says what to do when it is refused.
 * Thread-safe.
 */
final class VersionMover {
    private static final Logger log = LoggerFactory.getLogger(VersionMover.class);

    private static final java.util.Set<TaskStatus> MOVABLE = TaskDocument.MOVABLE;

    private final ClientCore core;

    VersionMover(ClientCore core) {
        this.core = core;
    }

    TaskEvent move(TaskId taskId, int toVersion, OperatorNote note) {
        TaskInfo info = (ClientCore.unstorable(taskId.value()) ? java.util.Optional.<TaskInfo>empty()
                : core.store.find(taskId)).orElseThrow(() -> new TaskNotFoundException(taskId));
        if (info.workflowVersion() == toVersion) {
            throw new VersionMoveException(taskId, toVersion, "it is at v" + toVersion + " already");
        }
        Workflow<?> target = core.workflow(info.workflow(), toVersion);
        if (target == null) {
            throw new VersionMoveException(taskId, toVersion, "workflow '" + info.workflow() + "' v" + toVersion
                    + " is not known to this client; build the client (or runtime) with that workflow");
        }
        VersionMapping mapping = target.movesFrom(info.workflowVersion()).orElseThrow(() -> new VersionMoveException(
                taskId, toVersion, "workflow '" + info.workflow() + "' v" + toVersion + " declares no mapping from v"
                        + info.workflowVersion() + "; add .movesFrom(" + info.workflowVersion() + ", m -> ...) to it"));
        VersionMoves moves = core.store.versionMoves().orElseThrow(() -> new UnsupportedOperationException(
                core.store + " cannot move tasks between workflow versions"));
        VersionMove move = new VersionMove(taskId, info.workflowVersion(), toVersion, targets(target, mapping),
                note == null ? null : note.describe());
        VersionMove.Result result = moves.move(move, core.now());
        switch (result.kind()) {
            case MOVED -> {
                log.info("task {} step {}: moved from v{} to v{} by {}", taskId, result.event().stepName(),
                        info.workflowVersion(), toVersion, note == null ? "an operator" : note.operator());
                core.hooks.operatorAction(result.event());
                return result.event();
            }
            case NOT_FOUND -> throw new TaskNotFoundException(taskId);
            case OTHER_VERSION -> throw new VersionMoveException(taskId, toVersion, "it moved to v" + result.version()
                    + " meanwhile; move it again if it should");
            case UNMAPPED_STEP -> throw new VersionMoveException(taskId, toVersion, "its step '" + result.step()
                    + "' of v" + info.workflowVersion() + " has no step of its own in v" + toVersion + "; map it with"
                    + " .movesFrom(" + info.workflowVersion() + ", m -> m.step(\"" + result.step() + "\", ...))");
            default -> throw notMovable(taskId, toVersion, result.status());
        }
    }

    private SasException notMovable(TaskId taskId, int toVersion, TaskStatus status) {
        if (MOVABLE.contains(status)) {
            // the state allows it, so the task is claimed or being cancelled
            TaskInfo now = core.store.find(taskId).orElseThrow(() -> new TaskNotFoundException(taskId));
            return new VersionMoveException(taskId, toVersion, "it is " + status + (now.cancelRequested()
                    ? " with a cancel being carried out; a task being cancelled is not moved"
                    : " and held by " + now.lockedBy() + "; move it once it is released"));
        }
        return new TaskStateException("move", taskId, status, MOVABLE);
    }

    /** Where each old step name continues: the same name by default, the mapped one where named. */
    private static Map<String, VersionMove.Target> targets(Workflow<?> target, VersionMapping mapping) {
        Map<String, VersionMove.Target> byOldName = new HashMap<>();
        List<? extends StepDefinition<?>> steps = target.steps();
        for (StepDefinition<?> s : steps) {
            byOldName.put(s.name(), targetOf(s));
        }
        mapping.steps().forEach((from, to) -> byOldName.put(from, targetOf(target.step(to))));
        return byOldName;
    }

    private static VersionMove.Target targetOf(StepDefinition<?> s) {
        return new VersionMove.Target(s.index(), s.name(), s.completeWithin());
    }
}
