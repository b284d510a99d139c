package dev.sas.core;

import dev.sas.core.spi.StateStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * A {@link SasRuntime}'s settings as built by {@link RuntimeBuilder}: immutable, every
 * collection copied. {@link SasRuntime#config()} returns it; the runtime logs it once at start.
 * The defaults are the {@code DEFAULT_...} constants of {@link SasRuntime}.
 *
 * @param stateStore where tasks live
 * @param workflows the workflows (and versions) this runtime runs
 * @param instanceId this runtime's id, stamped on its claims
 * @param clock the local clock: measures local durations and, moved by the measured offset to the
 *     store's clock, gives every time compared across nodes
 * @param databaseClock whether times compared across nodes follow the store's clock
 *     ({@link RuntimeBuilder#trustLocalClock()} turns it off)
 * @param maxPayloadBytes largest encoded input or step output, in UTF-8 bytes
 * @param schedulerEnabled whether this runtime claims and runs tasks
 * @param schedulerThreads threads running steps, when no step executor is given
 * @param claimBatchSize most tasks claimed in one round trip
 * @param maxInFlight most tasks held at once
 * @param writerThreads threads recording step results
 * @param pollInterval how often the scheduler looks for work from other instances
 * @param agentThreads threads per agent without an executor of its own
 * @param supervisorEnabled whether this runtime takes part in the supervisor election
 * @param supervisorInterval how often the active supervisor scans for expired claims
 * @param shutdownGrace how long {@code close()} lets running steps finish
 * @param retention how long final tasks are kept
 * @param retentionBatchSize most final tasks deleted in one batch
 * @param retentionMaxDeletesPerSecond most final tasks deleted per second while a backlog lasts
 * @param retentionInterval how often retention looks for final tasks past retention when there is no backlog
 * @param stepExecutor the host's executor for steps, or null for {@code sas-scheduler-N} threads
 * @param agentExecutors the host's executors per agent name
 * @param listeners listeners for every event this runtime records
 * @param statusChannels the status channels this runtime consumes, by name
 * @param alertSink where alerts go
 * @param eventQueueCapacity most events and alerts waiting for listeners; more are dropped for listeners
 * @param unrunnableGrace how long a task may be due while no live runtime has its workflow
 *     version before the supervisor parks it
 * @param tracing carries the submitter's trace to the steps ({@link Tracing#none()} by default)
 * @param busyPollInterval how often the scheduler and status channels look at a store without
 *     wake-up hints while recently busy
 * @param completionTokenKeys the keys that sign and check reply tokens, or null if none were given (only
 *     allowed when no workflow has a step that awaits a reply)
 */
public record RuntimeConfig(
        StateStore stateStore,
        List<Workflow<?>> workflows,
        String instanceId,
        Clock clock,
        boolean databaseClock,
        int maxPayloadBytes,
        boolean schedulerEnabled,
        int schedulerThreads,
        int claimBatchSize,
        int maxInFlight,
        int writerThreads,
        Duration pollInterval,
        int agentThreads,
        boolean supervisorEnabled,
        Duration supervisorInterval,
        Duration shutdownGrace,
        Duration retention,
        int retentionBatchSize,
        int retentionMaxDeletesPerSecond,
        Duration retentionInterval,
        Executor stepExecutor,
        Map<String, Executor> agentExecutors,
        List<TaskListener> listeners,
        Map<String, StatusChannel> statusChannels,
        AlertSink alertSink,
        int eventQueueCapacity,
        Duration unrunnableGrace,
        Tracing tracing,
        Duration busyPollInterval,
        CompletionTokenKeys completionTokenKeys) {

    /** Copies every collection. */
    public RuntimeConfig {
        workflows = List.copyOf(workflows);
        agentExecutors = Map.copyOf(agentExecutors);
        listeners = List.copyOf(listeners);
        statusChannels = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(statusChannels));
    }

    /** The supervisor lease: three intervals, at least {@link SasRuntime#MIN_SUPERVISOR_LEASE}. */
    Duration supervisorLease() {
        Duration three = supervisorInterval.multipliedBy(3);
        return three.compareTo(SasRuntime.MIN_SUPERVISOR_LEASE) < 0 ? SasRuntime.MIN_SUPERVISOR_LEASE : three;
    }

    /** One line of the scalar settings, for the start-up log. */
    String summary() {
        return "workflows=" + workflows.stream().map(w -> w.name() + " v" + w.version()).toList()
                + ", schedulerEnabled=" + schedulerEnabled
                + ", schedulerThreads=" + (stepExecutor != null ? "host executor" : schedulerThreads)
                + ", claimBatchSize=" + claimBatchSize + ", maxInFlight=" + maxInFlight + ", writerThreads="
                + writerThreads + ", pollInterval=" + pollInterval + ", busyPollInterval=" + busyPollInterval
                + ", statusChannels=" + statusChannels.keySet() + ", supervisorEnabled=" + supervisorEnabled
                + ", supervisorInterval=" + supervisorInterval + ", agentThreads=" + agentThreads
                + ", maxPayloadBytes=" + maxPayloadBytes + ", retention=" + retention + ", retentionBatchSize="
                + retentionBatchSize + ", retentionMaxDeletesPerSecond=" + retentionMaxDeletesPerSecond
                + ", retentionInterval=" + retentionInterval + ", shutdownGrace=" + shutdownGrace
                + ", eventQueueCapacity=" + eventQueueCapacity + ", unrunnableGrace=" + unrunnableGrace
                + ", tracing=" + tracing + ", completionTokenKeys=" + completionTokenKeys + ", clock=" + clock
                + (databaseClock ? " (offset to the store's clock)" : " (trusted; the store's clock is not read)");
    }
}
