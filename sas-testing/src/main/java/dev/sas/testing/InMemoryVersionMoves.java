package dev.sas.testing;

import dev.sas.core.TaskEvent;
import dev.sas.core.spi.TaskChange;
import dev.sas.core.spi.TaskDecisions;
import dev.sas.core.spi.VersionMove;
import dev.sas.core.spi.VersionMoves;
import dev.sas.testing.InMemoryTasks.Row;
import dev.sas.testing.InMemoryTasks.StepRow;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Moves of tasks of {@link InMemoryStateStore} to another workflow version
 * ({@link InMemoryStateStore#versionMoves()}), under the store's lock, as a JDBC store moves them
 * under the task's row lock. Thread-safe.
 */
final class InMemoryVersionMoves implements VersionMoves {

    private final InMemoryTasks tasks;

    InMemoryVersionMoves(InMemoryTasks tasks) {
        this.tasks = tasks;
    }

    @Override
    public VersionMove.Result move(VersionMove move, Instant now) {
        synchronized (tasks.lock) {
            Row r = tasks.rows.get(move.taskId());
            if (r == null) {
                return new VersionMove.Result(VersionMove.Kind.NOT_FOUND, null, 0, null, null);
            }
            VersionMove.Kind refused = null;
            Map<Integer, String> rows = new TreeMap<>();
            r.steps.forEach((i, s) -> rows.put(i, s.name));
            VersionMove.Plan plan = move.plan(r.currentStepName, rows);
            Optional<TaskChange> change = TaskDecisions.moveVersion(InMemoryTasks.snapshot(r), now);
            if (r.version != move.fromVersion()) {
                refused = VersionMove.Kind.OTHER_VERSION;
            } else if (change.isEmpty()) {
                refused = VersionMove.Kind.NOT_MOVABLE;
            } else if (!plan.complete()) {
                refused = VersionMove.Kind.UNMAPPED_STEP;
            }
            if (refused != null) {
                return new VersionMove.Result(refused, r.status, r.version, plan.unmapped(), null);
            }
            TaskEvent event = move.event(r.businessKey, r.workflow, r.currentStepName, plan.current(), now);
            InMemoryTasks.apply(r, change, now);
            r.version = move.toVersion();
            r.currentStep = plan.current().index();
            r.currentStepName = plan.current().name();
            r.stepTimeout = plan.current().timeout();
            r.lease++;
            List<StepRow> moved = new ArrayList<>(r.steps.values());
            r.steps.clear();
            for (StepRow s : moved) {
                VersionMove.Target t = plan.rows().get(s.index);
                s.index = t.index();
                s.name = t.name();
                r.steps.put(s.index, s);
            }
            tasks.addEvents(r, List.of(event));
            return new VersionMove.Result(VersionMove.Kind.MOVED, r.status, r.version, null, event);
        }
    }
}
