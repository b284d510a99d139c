package dev.sas.reliability;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a chaos run found, and which invariants it broke. Filled in by {@link ChaosRun#verify()}
 * and {@link ChaosChecks}. Not thread-safe.
 */
public final class ChaosReport {
    public String database;
    public String settings;
    public int total;
    public int submitted;
    public int submitFailures;
    public int rowsFound;
    public int terminal;
    public int processed;
    public int compensated;
    public int cancelled;
    public int errors;
    public int otherTerminal;
    public int lost;
    public int notTerminal;
    /** The history checker's verdict over the ledger's calls, the cancels and the final states; null before it ran. */
    public HistoryChecker.Result history;
    /** Effects the service applied after their call's deadline (it ignores remaining()). */
    public int lateEffects;
    /** Late effects also applied by a retry started after their deadline (the service raced it; not counted twice). */
    public int lateDuplicates;
    /** Tasks that ended ERROR, COMPENSATED, COMPENSATION_FAILED or CANCELLED without the injected fault that allows it. */
    public int falseFailures;
    /** Tasks that ended in another state than their fault allows (not a failure state), or poison parked without its reason. */
    public int unexpectedOutcome;
    public int expectedFailures;
    public int poisonTasks;
    public int poisonParked;
    public int cancelTasks;
    public int cancelsSent;
    public int cancelsAccepted;
    /** Accepted cancels whose task still ended PROCESSED (its last step was running). */
    public int cancelTooLate;
    public int resubmitsSent;
    /** Resubmitted tasks that did not run again (ERROR events != RESUBMITTED events + 1). */
    public int resubmitsNotRerun;
    /** Ledger executions (calls served). */
    public int executions;
    /** Effect rows (applications). */
    public int effects;
    public int duplicateCalls;
    public int lateRefused;
    /** Idempotency keys whose effect was applied more than once. */
    public int keysAppliedTwice;
    public int stepsWithTwoKeys;
    /** Pairs of executions of one (task, step, kind) that were active at the same time. */
    public int overlaps;
    public final List<String> overlapExamples = new ArrayList<>();
    public long stallBoundMs;
    /** Waits past the stall bound that are stalls: passed over, or idle ({@link StallCheck}). */
    public int stallViolations;
    /** Of the stalls: a task claimable more than the bound later started during the wait. */
    public int stallsPassedOver;
    /** Of the stalls: the cluster started nothing for longer than the bound during the wait. */
    public int stallsIdle;
    /** Waits past the stall bound in due order (the machine's queue, not a stall), and their p50 / p99 / max. */
    public int queuedWaits;
    public long p50QueuedMs;
    public long p99QueuedMs;
    public long maxQueuedMs;
    /**
     * Of the queued waits: those judged by idleness only (no claim of their own, after a claim the
     * ledger never saw, or with no release recorded: the ledger has no claim times).
     */
    public int queuedIdleOnly;
    public long maxWaitMs;
    public String maxWaitTask;
    /** The executions that waited longest past the stall bound, worst first. */
    public final List<String> worstStalls = new ArrayList<>();
    public int effectMismatches;
    public int orphanEffects;
    public int tasksWithCompensation;
    public int killsDone;
    public int killsWithWorkInFlight;
    public int pausesDone;
    public int selfExits;
    /** Faults fired at chosen points, clock jumps and partitions, by {@code point:action} (from {@code chaos_fault}). */
    public final java.util.Map<String, Integer> faults = new java.util.TreeMap<>();
    /** Workers killed at a fault point (and restarted). */
    public int faultKills;
    /** Partitions between a worker and the database made and healed. */
    public int partitionsDone;
    /** Windows in which no worker could run steps (all killed, booting, frozen or cut off), and their total length. */
    public int noNodeWindows;
    public long noNodeMs;
    /** Accepted cancels recorded while a forward call of their task was running at the service. */
    public int cancelsOnRunningStep;
    /** Events and ledger rows of the task with the longest stall. */
    public String longestStall;
    public int workerProcesses;
    public String dbDisruption = "none";
    public long takeoversMetric;
    public long takeoverEvents;
    public long staleRejected;
    public long deadlinesMissed;
    public long retries;
    public long storeFailures;
    /** Sum of the workers' {@code stepsCompleted}: step completions the store acknowledged. */
    public long stepsCompletedMetric;
    /** STEP_COMPLETED events in the store at the end. */
    public long stepsCompletedEvents;
    /** Sum of the workers' {@code tasksProcessed}: PROCESSED transitions the store acknowledged. */
    public long tasksProcessedMetric;
    /** PROCESSED events in the store at the end. */
    public long processedEvents;
    /** One line per failover of the HA cluster. */
    public final List<String> failovers = new ArrayList<>();
    public long maxEventGapMs;
    public String maxEventGapTask;
    public long maxStallAfterStartMs;
    public String maxStallTask;
    public long maxCreatedToFinalMs;
    public long p50CreatedToFinalMs;
    public long p99CreatedToFinalMs;
    public long wallClockMs;
    public String loadAverage;
    /** Tasks that broke an invariant, with their events and ledger rows. */
    public final List<String> evidence = new ArrayList<>();

    /** The broken invariants; empty when the run proved the promise. */
    public List<String> violations() {
        List<String> v = new ArrayList<>();
        if (submitFailures > 0) {
            v.add(submitFailures + " submissions failed");
        }
        if (lost > 0) {
            v.add(lost + " submitted tasks lost (no task row)");
        }
        if (terminal != total) {
            v.add("only " + terminal + " of " + total + " tasks terminal");
        }
        if (falseFailures > 0) {
            v.add(falseFailures + " false failures (ERROR, COMPENSATED, COMPENSATION_FAILED or CANCELLED without an"
                    + " injected fault)");
        }
        if (unexpectedOutcome > 0) {
            v.add(unexpectedOutcome + " tasks ended other than their fault allows");
        }
        if (keysAppliedTwice > 0 || stepsWithTwoKeys > 0) {
            v.add("effects applied twice: " + keysAppliedTwice + " keys applied more than once, " + stepsWithTwoKeys
                    + " (task, step) with more than one idempotency key");
        }
        if (overlaps > 0) {
            v.add(overlaps + " overlapping executions of one step");
        }
        if (history != null && !history.passed()) {
            v.add("history checker: " + history.counts);
        }
        if (stallViolations > 0) {
            v.add(stallViolations + " executions waited past the stall bound (" + stallBoundMs + " ms) while SAS passed"
                    + " them over (" + stallsPassedOver + ") or started nothing (" + stallsIdle + ")");
        }
        if (effectMismatches > 0) {
            v.add(effectMismatches + " tasks whose ledger effects do not match their final state");
        }
        if (orphanEffects > 0) {
            v.add(orphanEffects + " ledger effects of unknown tasks");
        }
        if (resubmitsNotRerun > 0) {
            v.add(resubmitsNotRerun + " resubmitted tasks that did not run again");
        }
        if (selfExits > 0) {
            v.add(selfExits + " worker JVMs died on their own");
        }
        return v;
    }

    private static String pct(int a, int b) {
        return String.format(Locale.ROOT, "%.2f %%", b == 0 ? 0.0 : 100.0 * a / b);
    }

    /** A Markdown table of the results. */
    public String toMarkdown() {
        StringBuilder sb = new StringBuilder();
        sb.append("| metric | value |\n|---|---|\n");
        row(sb, "database", database);
        row(sb, "tasks terminal / total", terminal + " / " + total + " (" + pct(terminal, total) + ")");
        row(sb, "ended PROCESSED / COMPENSATED / CANCELLED / ERROR / other", processed + " / " + compensated + " / "
                + cancelled + " / " + errors + " / " + otherTerminal);
        row(sb, "lost (submitted, no task row)", lost);
        row(sb, "not terminal at the end", notTerminal);
        row(sb, "effects the service applied after their deadline (of them also applied by a retry started after"
                + " that deadline)", lateEffects + " (" + lateDuplicates + ")");
        if (history != null) {
            row(sb, "history checker (calls, compensations, cancels, losses)", history.passed() ? "PASS"
                    : "FAIL " + history.counts);
        }
        row(sb, "false failures (failed without an injected fault)", falseFailures);
        row(sb, "ended other than their fault allows", unexpectedOutcome);
        row(sb, "declined tasks (must compensate)", expectedFailures);
        row(sb, "poison inputs parked in ERROR with the decoding error / poison tasks", poisonParked + " / "
                + poisonTasks);
        row(sb, "cancels sent / accepted / accepted but the last step finished first", cancelsSent + " / "
                + cancelsAccepted + " / " + cancelTooLate + " (of " + cancelTasks + " tasks to cancel)");
        row(sb, "accepted cancels that landed on a running forward call", cancelsOnRunningStep);
        row(sb, "resubmits sent / resubmitted tasks that did not run again", resubmitsSent + " / " + resubmitsNotRerun);
        row(sb, "effects applied twice", (keysAppliedTwice + stepsWithTwoKeys) + " (keys applied >1: "
                + keysAppliedTwice + ", (task,step,kind) with >1 key: " + stepsWithTwoKeys + ")");
        row(sb, "overlapping executions of one step", overlaps);
        row(sb, "stall bound violations (bound " + stallBoundMs + " ms): passed over / cluster idle", stallViolations
                + " (" + stallsPassedOver + " / " + stallsIdle + ")");
        row(sb, "waits past the bound in due order (queueing, not a stall): count, p50 / p99 / max (of them judged"
                + " by idleness only: no claim of their own, after a claim the ledger never saw, or with no release recorded)", queuedWaits + ", "
                + p50QueuedMs + " / " + p99QueuedMs + " / " + maxQueuedMs + " ms (" + queuedIdleOnly + ")");
        row(sb, "longest wait past due", maxWaitMs + " ms (" + maxWaitTask + ")");
        row(sb, "ledger executions / effects applied", executions + " / " + effects + " (" + duplicateCalls
                + " repeated calls deduplicated, " + lateRefused + " refused as past their deadline)");
        row(sb, "tasks whose effects do not match their state", effectMismatches);
        row(sb, "tasks with a compensation effect", tasksWithCompensation);
        row(sb, "worker SIGKILLs (with work in flight)", killsDone + " (" + killsWithWorkInFlight + ")");
        row(sb, "worker SIGSTOP/SIGCONT freezes", pausesDone);
        row(sb, "workers that died on their own (restarted)", selfExits);
        if (!faults.isEmpty()) {
            row(sb, "faults at chosen points, clock jumps, partitions (point:action count)", faults.toString());
            row(sb, "workers killed at a fault point (restarted) / partitions healed", faultKills + " / "
                    + partitionsDone);
        }
        if (noNodeWindows > 0) {
            row(sb, "windows with no worker able to run steps (held the tasks, like an outage)", noNodeWindows + " ("
                    + noNodeMs + " ms in all)");
        }
        row(sb, "worker JVMs started", workerProcesses);
        row(sb, "database disruption", dbDisruption);
        for (int i = 0; i < failovers.size(); i++) {
            row(sb, "failover " + (i + 1), failovers.get(i));
        }
        row(sb, "step completions acknowledged / recorded (STEP_COMPLETED events)", stepsCompletedMetric + " / "
                + stepsCompletedEvents + " (exact when no worker was SIGKILLed: a kill loses up to 200 ms of metrics)");
        row(sb, "tasks PROCESSED acknowledged / recorded (PROCESSED events)", tasksProcessedMetric + " / "
                + processedEvents);
        row(sb, "supervisor takeovers (sum of timeoutsRecovered / STEP_TIMED_OUT events)",
                takeoversMetric + " / " + takeoverEvents);
        row(sb, "stale replies rejected (sum of staleRejected)", staleRejected);
        row(sb, "deadlines missed / retries scheduled / store failures", deadlinesMissed + " / " + retries + " / "
                + storeFailures);
        row(sb, "max gap between consecutive events of a task", maxEventGapMs + " ms (" + maxEventGapTask + ")");
        row(sb, "max stall after a task started (excl. queueing)", maxStallAfterStartMs + " ms (" + maxStallTask + ")");
        row(sb, "created -> final: p50 / p99 / max", p50CreatedToFinalMs + " / " + p99CreatedToFinalMs + " / "
                + maxCreatedToFinalMs + " ms");
        row(sb, "wall clock", wallClockMs + " ms");
        row(sb, "load average at the end", loadAverage);
        List<String> v = violations();
        row(sb, "verdict", v.isEmpty() ? "PASS" : "FAIL: " + String.join("; ", v));
        return sb.toString();
    }

    private static void row(StringBuilder sb, String k, Object v) {
        sb.append("| ").append(k).append(" | ").append(v).append(" |\n");
    }
}
