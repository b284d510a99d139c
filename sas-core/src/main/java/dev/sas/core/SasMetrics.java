package dev.sas.core;

/**
 * Counters of one runtime since it was built (not cluster-wide). A snapshot; immutable.
 *
 * @param claimed tasks claimed by this runtime's scheduler
 * @param stepsCompleted step results recorded
 * @param tasksProcessed tasks this runtime finished as PROCESSED
 * @param retriesScheduled failed attempts released for a later retry
 * @param timeoutsRecovered expired claims this runtime's supervisor recovered
 * @param staleRejected results not recorded because the deadline passed or the lease moved on
 * @param deadlinesMissed attempts this runtime's scheduler stopped waiting for at their deadline
 * @param errors tasks this runtime moved to ERROR (a parallel branch or fan-out element is not counted: its
 *     failure is its parent step's, and the parent's end is counted)
 * @param compensated tasks this runtime finished as COMPENSATED or CANCELLED (branches and elements not
 *     counted, as for {@code errors})
 * @param compensationFailed tasks this runtime moved to COMPENSATION_FAILED
 * @param storeFailures state store operations that failed (and were retried or left to the supervisor)
 * @param listenerFailures exceptions and errors thrown by listeners and alert sinks (contained)
 * @param eventsDropped events and alerts not delivered to listeners because the event queue was full or
 *     the runtime was closing (the event log in the store still has every event)
 * @param internalErrors unexpected exceptions and errors (a {@code StackOverflowError}, a store's
 *     {@code Error}, a bug) that a long-lived thread contained: logged with the task and step, the
 *     task parked or left to the supervisor, and the thread went on
 * @param clockSkewMillis the store's clock minus this node's at the last measurement, in
 *     milliseconds (positive: this node's clock is behind). SAS compares every due time, deadline
 *     and lease on the store's time, so skew is corrected; it is reported so that operators fix
 *     the node's clock. Zero when the store has no clock of its own or the runtime trusts its local
 *     clock
 * @param submitted new tasks submitted through this runtime's {@link SasRuntime#client() client}
 *     (duplicates of existing tasks not counted; in a host transaction counted when the submit
 *     returns, so a rollback does not take it back)
 * @param statusUpdatesDelivered status updates this node's channels delivered and acknowledged
 *     (a message delivered again after a failure counts again)
 * @param statusUpdateFailures status update batches whose handler failed (delivered again after a backoff)
 *     and store failures while consuming a channel
 * @param statusChannelUnknown events this node recorded for tasks whose status channel no node has
 *     registered: they wait in the store's outbox until a node registers it (each logged at WARN, at
 *     most every 10 s)
 * @param heldBack agent calls this runtime held back instead of making them (their tasks waited,
 *     spending no attempt): the endpoints had no capacity, their rate limit was reached, or their
 *     circuit breaker was open ({@link FlowControl})
 * @param breakersOpened times the outcome of one of this runtime's calls opened an endpoint's
 *     circuit breaker (again, after a failed probe, included); {@link OperationsClient#agents()} shows the
 *     breakers' state across the cluster
 * @param breakersClosed times a successful probe of this runtime closed an endpoint's circuit breaker
 * @param lateCompletions replies to awaiting steps ({@link StepCompletionClient#complete(String, Object)},
 *     {@link StepCompletionClient#fail(String, String)}) through this runtime's client rejected because they
 *     came after the step's deadline ({@link CompletionOutcome#LATE})
 * @param staleCompletions replies through this runtime's client rejected because their token's attempt was
 *     no longer the task's ({@link CompletionOutcome#STALE})
 * @param invalidCompletionTokens replies through this runtime's client refused because their token was not
 *     one the configured {@link CompletionTokenKeys} signed: forged, altered, truncated, malformed or signed
 *     with a key no longer accepted ({@link CompletionOutcome#INVALID_TOKEN})
 * @param permitsLapsed agent permits of this runtime's calls that a renewal found lapsed: the node
 *     was held up (starved, paused, cut off from the store) for more than a lease while a call
 *     overran its deadline, so another call may have taken its share ({@link FlowControl#permitLease()})
 * @param supervisorPassesStopped supervisor passes of this runtime stopped because they were held
 *     up past their lease's margin; another instance may have led meanwhile
 * @param scheduleFires tasks this runtime submitted for the fire times of recurring schedules
 *     ({@link Schedule}); a fire time another node submitted first is not counted here
 * @param scheduleFiresSkipped missed fire times of recurring schedules that this runtime dropped as
 *     their missed-fire policy says ({@link MissedFires}; an outage of more than 10,000 fire times counts about 10,000)
 */
public record SasMetrics(
        long claimed,
        long stepsCompleted,
        long tasksProcessed,
        long retriesScheduled,
        long timeoutsRecovered,
        long staleRejected,
        long deadlinesMissed,
        long errors,
        long compensated,
        long compensationFailed,
        long storeFailures,
        long listenerFailures,
        long eventsDropped,
        long internalErrors,
        long clockSkewMillis,
        long submitted,
        long statusUpdatesDelivered,
        long statusUpdateFailures,
        long statusChannelUnknown,
        long heldBack,
        long breakersOpened,
        long breakersClosed,
        long lateCompletions,
        long staleCompletions,
        long invalidCompletionTokens,
        long permitsLapsed,
        long supervisorPassesStopped,
        long scheduleFires,
        long scheduleFiresSkipped) {
}
