package dev.sas.jdbc;

import dev.sas.core.StepStatus;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WorkflowVersion;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

/** Test data. */
final class Tasks {

    static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** The workflow version of {@link #newTask}: what the tests' claims name as runnable. */
    static final Set<WorkflowVersion> WF_V1 = Set.of(new WorkflowVersion("wf", 1));

    private Tasks() {
    }

    static NewTask newTask(TaskId id, String key, String input, Instant at) {
        return new NewTask(id, "wf", 1, key, 0, input, null, "first", TIMEOUT, at, at);
    }

    static TaskEvent received(TaskId id, String key, Instant at) {
        return new TaskEvent(id, key, "wf", TaskEvent.Type.RECEIVED, -1, null, 0, at, null);
    }

    static Transition finish(ClaimedTask c, Instant now) {
        StepUpdate step = new StepUpdate(c.currentStep(), "first", StepStatus.COMPLETED, c.attempt(), "out",
                null, now, now, false, null);
        return Transition.holder(c).at(c.currentStep(), "first", TIMEOUT).attempt(c.attempt())
                .failureCount(c.failureCount()).recording(step)
                .events(new TaskEvent(c.taskId(), c.businessKey(), c.workflow(), TaskEvent.Type.STEP_COMPLETED,
                                c.currentStep(), "first", c.attempt(), now, null),
                        new TaskEvent(c.taskId(), c.businessKey(), c.workflow(), TaskEvent.Type.PROCESSED, -1, null,
                                0, now, null))
                .end(TaskStatus.PROCESSED);
    }

    /** The claimed step failed and is retried at {@code retryAt}: the task is released, due then. */
    static Transition retry(ClaimedTask c, Instant retryAt) {
        return Transition.holder(c).at(c.currentStep(), "first", TIMEOUT).attempt(c.attempt())
                .failureCount(c.failureCount()).lastError("boom")
                .events(new TaskEvent(c.taskId(), c.businessKey(), c.workflow(), TaskEvent.Type.STEP_RETRYING,
                        c.currentStep(), "first", c.attempt(), retryAt, "boom"))
                .release(TaskStatus.PENDING, retryAt);
    }

    static Transition expire(ClaimedTask c, Instant now) {
        return Transition.expired(c.taskId(), c.lease(), c.status(), c.currentStep()).at(c.currentStep(), "first", TIMEOUT)
                .attempt(c.attempt()).failureCount(c.failureCount() + 1).lastError("timed out")
                .events(new TaskEvent(c.taskId(), c.businessKey(), c.workflow(), TaskEvent.Type.STEP_TIMED_OUT,
                        c.currentStep(), "first", c.attempt(), now, null))
                .release(TaskStatus.PENDING, now);
    }
}
