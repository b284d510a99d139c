package dev.sas.core;

import java.util.Optional;

/**
 * How a fan-out step ({@link ForEachBuilder}) keeps at most K elements running: every element is
 * submitted as a unit task when the step starts (so each element's input is in its own row, and no
 * row grows with the list), with the business key {@link ChildGroup#unitKey} ending in
 * {@code #<index>}. Unit {@code i} runs in lane {@code i mod K}: the first K skip their
 * {@value ForEachBuilder#SLOT_STEP} step (a condition), every later unit rests
 * {@link TaskStatus#AWAITING_COMPLETION} there, holding no thread and no slot, until unit {@code i - K}
 * has ended. Then {@link ChildRelay} completes its slot step through the fenced completion path
 * ({@link #release}): right after unit {@code i - K} ended on a node that knows the workflow (or
 * after unit {@code i} came to rest there, if it came later), or, whatever node died, on the relay's
 * scan of awaiting tasks ({@link #turnCame}).
 * Stateless and thread-safe.
 */
final class FanOutLanes {

    /**
     * The slot step's marker: K, the fan-out's concurrency, and whether a failed element lets the next
     * of its lane go on ({@link ForEachFailure#COLLECT_FAILURES}; otherwise the fan-out is cancelled).
     */
    record Slot(int concurrency, boolean afterFailure) {
    }

    private FanOutLanes() {
    }

    /** The element index a unit's business key ends with ({@code #<index>}), or -1 if it has none. */
    static int index(String businessKey) {
        int hash = businessKey == null ? -1 : businessKey.lastIndexOf('#');
        if (hash < 0 || hash == businessKey.length() - 1) {
            return -1;
        }
        try {
            return Integer.parseInt(businessKey.substring(hash + 1));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The business key of the unit {@code delta} places after (or before) the one with {@code businessKey}. */
    static String shifted(String businessKey, int delta) {
        return businessKey.substring(0, businessKey.lastIndexOf('#') + 1) + (index(businessKey) + delta);
    }

    /** Whether {@code unit} waits in its slot step for its turn. */
    static boolean waiting(TaskInfo unit) {
        return unit.status() == TaskStatus.AWAITING_COMPLETION && unit.currentStep() == 0;
    }

    /** Whether {@code unit} has not yet reached its slot step (submitted, or claimed and about to rest there). */
    static boolean beforeSlot(TaskInfo unit) {
        return !unit.status().isTerminal() && unit.currentStep() == 0 && unit.status() != TaskStatus.AWAITING_COMPLETION;
    }

    /**
     * Whether {@code unit}'s turn has come: the unit in the same lane before it has ended (or there is
     * none); after a failure only if {@code slot} goes on after one.
     */
    static boolean turnCame(SasClient client, TaskInfo unit, Slot slot) {
        int i = index(unit.businessKey());
        if (i < slot.concurrency()) {
            return true;
        }
        Optional<TaskInfo> before = client.find(unit.workflow(), shifted(unit.businessKey(), -slot.concurrency()));
        return before.isEmpty() || before.get().status() == TaskStatus.PROCESSED
                || before.get().status().isTerminal() && slot.afterFailure();
    }

    /**
     * Lets {@code unit} go on past its slot step, fenced by its lease.
     *
     * @return whether this call completed the slot step
     */
    static boolean release(SasClient client, TaskInfo unit) {
        return waiting(unit) && client.stepCompletion().unitsEnded(unit, null, null).accepted();
    }

    /**
     * Whether the elements around {@code businessKey}'s, the last of its lane, have ended too: the K - 1
     * before and after it hold the last element of every other lane. Reads the later ones first (the
     * elements end in about the order they started, so one still running is usually the next) and
     * stops at the first one missing or running: the parent's join check, which reads every element,
     * then runs about once per fan-out instead of once per lane; the element whose end is recorded
     * last sees every other one ended.
     */
    static boolean lastOfLanesEnded(SasClient client, String workflow, String businessKey, int k) {
        int i = index(businessKey);
        for (int d = 1; d < k; d++) {
            Optional<TaskInfo> later = client.find(workflow, shifted(businessKey, d));
            if (later.isEmpty()) {
                break; // the elements are numbered without gaps: none after it
            }
            if (!later.get().status().isTerminal()) {
                return false; // its end looks again
            }
        }
        for (int d = 1; d < k && i - d >= 0; d++) {
            Optional<TaskInfo> earlier = client.find(workflow, shifted(businessKey, -d));
            if (earlier.isPresent() && !earlier.get().status().isTerminal()) {
                return false;
            }
        }
        return true;
    }
}
