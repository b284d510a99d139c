package dev.sas.core;

/**
 * What a fan-out step ({@link Workflow.Builder#forEach}) does when an element fails for good (its
 * step's retries, time-outs or a {@link NonRetryableException} exhausted): as Step Functions'
 * Map state without and with a tolerated failure count. Immutable.
 */
public enum ForEachFailure {

    /**
     * The default: the first element that fails for good fails the fan-out step. The elements
     * still running are cancelled (each stops after its in-flight step, bounded by that step's
     * deadline), those not started yet never start, and the task compensates: every completed
     * element step's compensation runs once, latest completion first, then the steps before the
     * fan-out step, in reverse order.
     */
    FAIL_AND_COMPENSATE_ALL,

    /**
     * Every element runs whatever the others do; the fan-out step completes when every element has
     * ended, and its output ({@link ForEachResults}) holds each element's output or its error, in
     * list order. The next step decides what a failed element means; nothing is compensated
     * because an element failed.
     */
    COLLECT_FAILURES
}
