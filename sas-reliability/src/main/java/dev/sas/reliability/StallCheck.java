package dev.sas.reliability;

import dev.sas.core.RetryPolicy;
import dev.sas.reliability.ChaosChecks.Action;
import dev.sas.reliability.ChaosChecks.Exec;
import dev.sas.reliability.ChaosChecks.Outage;
import dev.sas.reliability.ChaosChecks.Task;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The stall bound of a chaos run, judged so that it measures SAS and not the machine. For each
 * execution the wait from when its task was claimable to its start is measured (see
 * {@link #check}); a wait past the bound is a <em>stall</em> only if SAS left the task:
 * <ul>
 *   <li><b>passed over</b>: in that wait an execution of another task started whose task became
 *       claimable more than the bound later than this one (claims go by due time: a task claimed
 *       out of that order by more than the bound was skipped);</li>
 *   <li><b>idle</b>: in that wait the cluster started nothing for longer than the bound (it had
 *       free capacity and did not take the task).</li>
 * </ul>
 * Passing over is judged at every moment a task became claimable that is known: its first claim
 * (due at its submission, or a cancel or resubmit), and every later claim after a <em>release</em>
 * the store recorded ({@link #releases}: a retry scheduled after a failure, a claim recovered after
 * its deadline; on JDBC the {@code STEP_RETRYING} and {@code STEP_TIMED_OUT} events), or a resubmit:
 * such a claim is judged from the last release before it, plus the policy's longest backoff. The
 * ledger has no claim times, so a claim's place in the sequence is read from the attempt numbers
 * (each claim of a step adds one: a retry or a recovery of the same step is the next attempt, the
 * next step on another node after the recovery of the claim that continued the task is attempt 2,
 * after a release at a graceful stop attempt 1). A wait is judged by idleness only, and counted
 * apart among the queueing ones, when it is no claim of its own (the next step on the same node
 * continues its task's claim: never a task that passed another), follows a claim the ledger never
 * saw (an attempt skipped: a worker killed between claim and call), or has no release recorded
 * before it (when the store let the task go is then unknown: measured from the earlier call, a
 * recovery slowed by a loaded machine would count as passing over, as a run at load 34 showed).
 * Otherwise every start in the wait was of work claimable earlier or within the bound: the task
 * queued behind it because the machine could not serve faster. Such a wait is counted and its
 * p50/p99 reported as queueing, not as a violation. A task still PENDING at the end (never started
 * again) is judged the same way, its wait running to the last start of the run. Pure; not
 * thread-safe.
 */
final class StallCheck {
    private static final int EXAMPLES = 10;
    /**
     * A passer must have started this much before the task it passed: calls claimed in one batch, or
     * a poll apart on two nodes, reach the service in any order (a node's threads pick them up), so
     * a start order closer than this says nothing about the claim order. Seen in a queued run at load
     * 10–14: two first claims "passed over" by a retry whose call started 60 ms before theirs.
     */
    static final long START_JITTER_MS = 500;

    /**
     * A start of an execution and the earliest time its task may have been claimable for it;
     * {@code claim} unless it continued its task's claim (the next step on the same node).
     */
    private record Start(String task, long earliest, long at, boolean claim) {
    }

    /**
     * A wait past its bound: the claimable stretch {@code [from, to]} of {@code task}'s execution
     * {@code e}; {@code judged} if it is a claim whose claimable moment the ledger shows (passing over
     * is judged for it), else it is judged by idleness only.
     */
    private record Wait(Task task, Exec e, long from, long to, long allowed, String basis, boolean judged,
            long claimableAt) {
        long length() {
            return to - from;
        }
    }

    private final ChaosSettings s;
    private final Map<String, Task> tasks;
    private final Map<String, List<Exec>> execsByTask;
    private final Map<String, List<Action>> actionsByTask;
    private final List<Outage> outages;
    private final List<Outage> supervisorLosses;
    /** Per task, sorted: when the store released it to be claimed again (a retry scheduled, a claim recovered). */
    private final Map<String, List<Long>> releases;
    private final List<Start> starts = new ArrayList<>();
    private final List<Wait> past = new ArrayList<>();

    StallCheck(ChaosSettings s, Map<String, Task> tasks, Map<String, List<Exec>> execsByTask,
            Map<String, List<Action>> actionsByTask, List<Outage> outages, List<Outage> supervisorLosses,
            Map<String, List<Long>> releases) {
        this.s = s;
        this.releases = releases;
        this.tasks = tasks;
        this.execsByTask = execsByTask;
        this.actionsByTask = actionsByTask;
        this.outages = outages.stream().sorted(Comparator.comparingLong(Outage::from)).toList();
        this.supervisorLosses = supervisorLosses;
    }

    /**
     * Measures every wait, judges those past the bound and fills in {@code r}; tasks with a stall
     * are added to {@code suspects}. The due time of an execution:
     * <ul>
     *   <li>the task's first execution: its submission;</li>
     *   <li>after an execution of another step (the next step, or a compensation): that
     *       execution's end (its start if the end was never recorded);</li>
     *   <li>a re-run of the same step: the previous run's end if it failed (a retry), else its start
     *       (it was lost, killed or late: the deadline is part of the bound), plus the retry
     *       policy's longest backoff for the n-th re-run;</li>
     *   <li>never before the last cancel or resubmit sent before the execution started.</li>
     * </ul>
     * A database outage (or a window with no worker able to run) during the wait holds the task:
     * it is claimable again at the outage's end plus the reconnect allowance, and the wait before
     * the outage counts on its own. The bound grows by one supervisor lease when the wait overlaps
     * the loss of the lease's holder. As a competitor (the task that may have passed another), an
     * execution's claimable time is taken as early as it can be: its place in the queue is its
 * submission, moved only by a retry after a recorded failure (without its backoff) or a resubmit
 * (a recovered claim may keep its place, so it never counts as claimable later).
     */
    void check(ChaosReport r, Set<String> suspects) {
        RetryPolicy policy = ChaosWorkflow.retryPolicy();
        long bound = s.stallBoundMs();
        r.stallBoundMs = bound;
        long endOfRun = Long.MIN_VALUE;
        for (Map.Entry<String, List<Exec>> entry : execsByTask.entrySet()) {
            Task t = tasks.get(entry.getKey());
            if (t == null) {
                continue;
            }
            Exec prev = null;
            int rerun = 0;
            long earliest = t.createdAt();
            for (Exec e : entry.getValue()) {
                long due;
                String basis;
                if (prev == null) {
                    due = t.createdAt();
                    basis = "submitted";
                } else if (prev.what().equals(e.what())) {
                    rerun++;
                    long from = prev.failed() && prev.end() != null ? prev.end() : prev.start();
                    due = from + ChaosChecks.maxBackoff(policy, rerun);
                    if (prev.failed() && prev.end() != null) {
                        earliest = from; // a retry: re-queued after the failure
                    }
                    basis = "re-run " + rerun + " after " + prev;
                } else {
                    rerun = 0;
                    due = prev.end() != null ? prev.end() : prev.start();
                    basis = "after " + prev;
                }
                for (Action a : actionsByTask.getOrDefault(t.id(), List.of())) {
                    if (a.at() <= e.start() && a.at() > due) {
                        due = a.at();
                        basis = a.action() + " sent";
                    }
                    if (a.action().equals("resubmit") && a.at() <= e.start() && a.at() > earliest) {
                        earliest = a.at();
                    }
                }
                // the next step on the same node ran within its task's claim: not a claim of its own
                boolean claim = prev == null || !prev.node().equals(e.node()) || prev.what().equals(e.what());
                starts.add(new Start(t.id(), afterOutages(earliest), e.start(), claim));
                endOfRun = Math.max(endOfRun, e.start());
                long claimableAt = prev == null ? Long.MIN_VALUE : released(t.id(), prev.start(), e.start());
                boolean judged = claimSeen(prev, e) && claimableAt != Long.MAX_VALUE;
                if (prev != null && judged) {
                    claimableAt += ChaosChecks.maxBackoff(policy, Math.max(1, rerun));
                }
                measure(r, t, e, due, e.start(), basis, bound, judged, claimableAt);
                prev = e;
            }
        }
        for (Task t : tasks.values()) {
            if (t.state().equals("PENDING")) {
                List<Exec> l = execsByTask.getOrDefault(t.id(), List.of());
                Exec last = l.isEmpty() ? null : l.get(l.size() - 1);
                long due = last == null ? t.createdAt() : last.end() != null ? last.end() : last.start();
                // a failed call is retried: due after its longest backoff; judged from its release
                boolean retry = last != null && last.failed() && last.end() != null;
                long claimableAt = last == null ? Long.MIN_VALUE : released(t.id(), last.start(), Long.MAX_VALUE);
                if (retry) {
                    due += ChaosChecks.maxBackoff(policy, sameStepRuns(l));
                }
                boolean judged = last == null || (retry && claimableAt != Long.MAX_VALUE);
                if (last != null && judged) {
                    claimableAt += ChaosChecks.maxBackoff(policy, sameStepRuns(l));
                }
                if (endOfRun > due) {
                    measure(r, t, null, due, endOfRun, last == null ? "submitted, never started"
                            : "after " + last + ", never started again", bound, judged, claimableAt);
                }
            }
        }
        starts.sort(Comparator.comparingLong(Start::at));
        judge(r, suspects);
    }

    /**
     * True if {@code e} is a claim whose claimable moment the ledger shows: the first call of its
     * task (attempt 1); a re-run of the same step claimed right after the previous call (the attempt
     * one more: a retry, or a recovery of that call); the next step on another node, claimed after a
     * graceful stop released the task (attempt 1) or after the recovery of the claim that continued
     * the task on the previous node (attempt 2). Any other attempt follows a claim the ledger never
     * saw; the next step on the same node at attempt 1 is no claim.
     */
    static boolean claimSeen(Exec prev, Exec e) {
        if (prev == null) {
            return e.attempt() == 1;
        }
        if (prev.what().equals(e.what())) {
            return e.attempt() == prev.attempt() + 1;
        }
        return e.attempt() == 2 || (e.attempt() == 1 && !prev.node().equals(e.node()));
    }

    /**
     * The last time in {@code (after, until]} the store released {@code task} to be claimed again, or
     * a resubmit was sent; {@link Long#MAX_VALUE} if none is known.
     */
    private long released(String task, long after, long until) {
        long last = Long.MAX_VALUE;
        for (long at : releases.getOrDefault(task, List.of())) {
            if (at > after && at <= until) {
                last = at;
            }
        }
        for (Action a : actionsByTask.getOrDefault(task, List.of())) {
            if (a.action().equals("resubmit") && a.at() > after && a.at() <= until
                    && (last == Long.MAX_VALUE || a.at() > last)) {
                last = a.at();
            }
        }
        return last;
    }

    /** How many of the last executions of {@code l} ran its last execution's step (the n of its next re-run's backoff). */
    private static int sameStepRuns(List<Exec> l) {
        String what = l.get(l.size() - 1).what();
        int n = 0;
        for (int i = l.size() - 1; i >= 0 && l.get(i).what().equals(what); i--) {
            n++;
        }
        return n;
    }

    private void measure(ChaosReport r, Task t, Exec e, long due, long start, String basis, long bound,
            boolean judged, long claimableAt) {
        long[] claimable = claimable(due, start);
        long wait = claimable[0];
        long allowed = bound + claimable[1];
        if (claimable[2] > due) {
            basis += ", held by an outage until " + claimable[2];
        }
        for (Outage lost : supervisorLosses) {
            if (due < lost.to() && start > lost.from()) {
                allowed += lost.length();
                basis += ", supervisor lost at " + lost.from();
                break;
            }
        }
        String what = e == null ? "(never started)" : e.what();
        if (wait > r.maxWaitMs) {
            r.maxWaitMs = wait;
            r.maxWaitTask = t.id() + " " + what + " (" + basis + ")";
        }
        if (wait > allowed) {
            past.add(new Wait(t, e, claimable[3], claimable[3] + wait, allowed, basis, judged, claimableAt));
        }
    }

    /** Sorts each wait past the bound into a stall (passed over, idle) or queueing. */
    private void judge(ChaosReport r, Set<String> suspects) {
        List<long[]> worst = new ArrayList<>();
        List<String> lines = new ArrayList<>();
        List<Long> queued = new ArrayList<>();
        for (Wait w : past) {
            String why = null;
            Start passer = null;
            long lastStart = w.from();
            long idle = 0;
            for (int i = firstAtOrAfter(w.from()); i < starts.size() && starts.get(i).at() < w.to(); i++) {
                Start x = starts.get(i);
                if (x.task().equals(w.task().id())) {
                    continue;
                }
                if (w.judged() && x.claim() && x.earliest() > Math.max(w.from(), w.claimableAt()) + w.allowed()
                        && x.at() < w.to() - START_JITTER_MS
                        && (passer == null || x.earliest() > passer.earliest())) {
                    passer = x;
                }
                idle = Math.max(idle, x.at() - lastStart);
                lastStart = x.at();
            }
            idle = Math.max(idle, w.to() - lastStart);
            if (passer != null) {
                r.stallsPassedOver++;
                why = "passed over: task " + passer.task() + ", claimable " + (passer.earliest() - w.from())
                        + " ms later, started at " + passer.at();
            } else if (idle > w.allowed()) {
                r.stallsIdle++;
                why = "the cluster started nothing for " + idle + " ms of it";
            }
            if (why == null) {
                queued.add(w.length());
                if (!w.judged()) {
                    r.queuedIdleOnly++;
                }
                continue;
            }
            r.stallViolations++;
            suspects.add(w.task().id());
            String exec = w.e() == null ? "(never started)" : w.e().toString();
            worst.add(new long[] {w.length(), lines.size()});
            lines.add("task " + w.task().id() + " " + exec + " waited " + w.length() + " ms > " + w.allowed()
                    + " ms past its due time (" + w.basis() + "); " + why);
        }
        worst.sort(Comparator.comparingLong((long[] x) -> x[0]).reversed());
        worst.stream().limit(EXAMPLES).forEach(x -> r.worstStalls.add(lines.get((int) x[1])));
        queued.sort(Comparator.naturalOrder());
        r.queuedWaits = queued.size();
        r.p50QueuedMs = percentile(queued, 50);
        r.p99QueuedMs = percentile(queued, 99);
        r.maxQueuedMs = queued.isEmpty() ? 0 : queued.get(queued.size() - 1);
    }

    private int firstAtOrAfter(long at) {
        int lo = 0;
        int hi = starts.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (starts.get(mid).at() < at) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    static long percentile(List<Long> sorted, int p) {
        if (sorted.isEmpty()) {
            return 0;
        }
        int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    /** {@code at}, moved to the end of the outage it falls in (no claim happens during one). */
    private long afterOutages(long at) {
        long t = at;
        for (Outage o : outages) {
            if (o.from() <= t && t < o.to()) {
                t = o.to();
            }
        }
        return t;
    }

    /**
     * The longest stretch from {@code due} to {@code start} in which the task was claimable, cut
     * by the outages that overlap it: {@code [wait, reconnect allowance of the outage before that
     * stretch, when the last stretch began, when the longest stretch began]}.
     */
    private long[] claimable(long due, long start) {
        long from = due;
        long worst = 0;
        long worstFrom = due;
        long allowance = 0;
        long reconnect = 0;
        for (Outage o : outages) {
            if (o.from() < start && o.to() > from) {
                if (o.from() - from - reconnect > worst - allowance) {
                    worst = o.from() - from;
                    worstFrom = from;
                    allowance = reconnect;
                }
                from = Math.max(from, o.to());
                reconnect = o.reconnectMs();
            }
        }
        if (start - from - reconnect >= worst - allowance) {
            worst = start - from;
            worstFrom = from;
            allowance = reconnect;
        }
        return new long[] {worst, allowance, from, worstFrom};
    }
}
