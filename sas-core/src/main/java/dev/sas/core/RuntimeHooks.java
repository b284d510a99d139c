package dev.sas.core;

import dev.sas.core.internal.EventBus;
import dev.sas.core.internal.Metrics;
import dev.sas.core.internal.Scheduler;
import java.util.List;
import java.util.Set;

/** Hands what a runtime's own client does to the runtime's listeners and its scheduler. */
final class RuntimeHooks implements ClientHooks {
    private final Metrics metrics;
    private final EventBus events;
    private final Scheduler scheduler;
    private final Set<String> statusChannels;
    private final boolean claimsAtSubmit;
    private final String instanceId;

    RuntimeHooks(Metrics metrics, EventBus events, Scheduler scheduler, Set<String> statusChannels,
            boolean claimsAtSubmit, String instanceId) {
        this.metrics = metrics;
        this.events = events;
        this.scheduler = scheduler;
        this.statusChannels = statusChannels;
        this.claimsAtSubmit = claimsAtSubmit;
        this.instanceId = instanceId;
    }

    @Override
    public boolean consumesStatusChannel(String name) {
        return statusChannels.contains(name);
    }

    @Override
    public void submitted(List<TaskEvent> received, String statusChannel, boolean dueNow, boolean inHostTransaction) {
        metrics.submitted(received.size());
        if (!inHostTransaction) {
            // Inside a host transaction the task may still roll back: its RECEIVED event is in
            // the event log once committed, but listeners hear first of it at its claim.
            events.publish(received, statusChannel);
        }
        if (dueNow && inHostTransaction) {
            scheduler.wakeUpAfterHostCommit();
        } else if (dueNow) {
            scheduler.wakeUp();
        }
    }

    @Override
    public String reserveStart(dev.sas.core.spi.NewTask task) {
        boolean reserved = claimsAtSubmit && task.dueAt().equals(task.createdAt())
                && scheduler.reserve(new dev.sas.core.spi.WorkflowVersion(task.workflow(), task.workflowVersion()));
        return reserved ? instanceId : null;
    }

    @Override
    public void startReserved(dev.sas.core.spi.ClaimedTask claim) {
        if (claim == null) {
            scheduler.cancelReservation();
        } else {
            scheduler.startReserved(claim);
        }
    }

    @Override
    public void operatorAction(TaskEvent event) {
        events.publish(List.of(event), null);
        scheduler.wakeUp();
    }

    @Override
    public void replied(dev.sas.core.spi.Transition written, List<Alert> alerts) {
        if (written.status() == TaskStatus.PROCESSED) {
            metrics.tasksProcessed();
        }
        events.publish(written.events(), written.statusChannel());
        alerts.forEach(events::alert);
        if (written.nextAttemptAt() != null) {
            scheduler.wakeUp();
        }
    }

    @Override
    public void completionRejected(CompletionOutcome outcome) {
        if (outcome == CompletionOutcome.LATE) {
            metrics.lateCompletion();
        } else if (outcome == CompletionOutcome.STALE) {
            metrics.staleCompletion();
        } else if (outcome == CompletionOutcome.INVALID_TOKEN) {
            metrics.invalidCompletionToken();
        }
    }
}
