package dev.sas.reliability;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A Jepsen-style checker of a chaos run's whole history, independent of SAS's own counters: it
 * reads what the remote service saw (every call, with its start, end and the time the runtime
 * gave it, and when its effect was applied) and what the store recorded (every applied write,
 * with the lease it named), and checks per task that
 * <ul>
 *   <li>every write was made by the holder of the then-current lease, before that lease's
 *       deadline; a recovery only after it; a claim only of a task nobody holds;</li>
 *   <li>no two calls of one step (or one compensation) were active at once within the time they
 *       were given, and no step's effect was applied twice, whatever keys the calls carried;</li>
 *   <li>a compensation never starts while a forward call of its task may still apply, never before
 *       the effect it undoes, and compensations run in reverse order of the steps;</li>
 *   <li>an accepted cancel ends {@code CANCELLED}, unless the last step had started before the
 *       cancel was recorded (it may then finish: {@code PROCESSED});</li>
 *   <li>nothing is lost: every submitted task ends terminal ({@code PARKED}, {@code WAITING} and
 *       the like are not);</li>
 *   <li>no stall: a claim starts within a bound of the time its task became claimable (its due
 *       time, or the end of an outage that held it), and an expired claim is recovered within a
 *       bound of its deadline.</li>
 * </ul>
 * Times are epoch milliseconds on one clock, the database's. Pure; not thread-safe.
 */
final class HistoryChecker {
    private static final int EXAMPLES = 10;
    static final Set<String> TERMINAL = Set.of("PROCESSED", "COMPENSATED", "CANCELLED", "ERROR", "COMPENSATION_FAILED");

    /** Who wrote: a submission, a claim (a new lease), its holder, a recovery of an expired claim, a cancel. */
    enum WriteKind { SUBMIT, CLAIM, HOLDER, EXPIRED, CANCEL, OTHER }

    /**
     * One write the store applied, in the order it applied them.
     *
     * @param lease the lease the writer named (for a claim, the new lease)
     * @param startsStep the index of the forward step this write starts, or -1
     * @param deadline the deadline this write starts for its holder ({@code at} + the step's or the
     *     compensation's time-out), or -1 if it starts none
     * @param releases true if, after it, nobody holds the task
     * @param dueAt when a released task is claimable again, or -1 when it is not (terminal)
     * @param what the events it wrote, for the evidence
     */
    record Write(String task, long at, WriteKind kind, long lease, int startsStep, long deadline, boolean releases,
            long dueAt, String what) {
    }

    /**
     * One call the service served.
     *
     * @param kind {@code forward} or {@code compensate}
     * @param end when it replied (or failed); null if never
     * @param windowMs the time the runtime gave it when it arrived
     * @param appliedAt when its effect was applied, or null if it was not (a duplicate, a refusal, a failure before it)
     */
    record Call(long id, String task, String step, String kind, String key, int attempt, String node, long start,
            Long end, long windowMs, Long appliedAt) {

        /** Until when SAS let this call run: its end, at most its deadline. */
        long activeUntil() {
            long deadline = start + Math.max(0, windowMs);
            return end == null ? deadline : Math.min(end, deadline);
        }

        boolean appliedLate() {
            return appliedAt != null && appliedAt > start + windowMs;
        }

        String what() {
            return kind + ":" + step;
        }

        @Override
        public String toString() {
            return what() + " #" + id + " attempt " + attempt + " on " + node + " [" + start + ", "
                    + (end == null ? "?" : end) + "] window " + windowMs + (appliedAt == null ? "" : " applied " + appliedAt);
        }
    }

    /** A cancel the operator sent: when the store recorded it (or the answer arrived) and the answer. */
    record Cancel(String task, long at, boolean accepted) {
    }

    /** When the store was unavailable: a claimable task waits from {@code to} on. */
    record Outage(long from, long to) {
    }

    /** What can be wrong. */
    enum Violation {
        LEASE_NOT_CURRENT("a write named a lease that was not the task's current one"),
        WRITE_AFTER_DEADLINE("a holder wrote after its lease's deadline"),
        EARLY_RECOVERY("a claim was recovered before its deadline"),
        CLAIM_WHILE_HELD("a task was claimed while another lease held it"),
        OVERLAP("two calls of one step were active at once"),
        APPLIED_TWICE("a step's effect was applied more than once"),
        COMPENSATION_DURING_FORWARD("a compensation started while a forward call of its task could still apply"),
        COMPENSATION_BEFORE_EFFECT("a compensation started before the effect it undoes"),
        COMPENSATION_ORDER("compensations did not run in reverse order of the steps"),
        UNCOMPENSATED("a compensated or cancelled task kept a forward effect"),
        CANCEL_IGNORED("an accepted cancel did not end the task CANCELLED"),
        STATE_MISMATCH("the task's final state does not match its effects"),
        LOST("a submitted task is missing or not terminal"),
        STALL("a claimable task waited, or an expired claim stayed, longer than the bound");

        final String meaning;

        Violation(String meaning) {
            this.meaning = meaning;
        }
    }

    /** The checker's verdict: violations by kind, with examples. */
    static final class Result {
        final Map<Violation, Integer> counts = new EnumMap<>(Violation.class);
        final Map<Violation, List<String>> examples = new EnumMap<>(Violation.class);
        /** Effects a non-cooperating service applied after the call's deadline (not SAS's fault; reported). */
        int lateEffects;
        /**
         * Late effects applied although a retry, started after the late call's deadline, applied it
         * too (the service ignored its deadline and raced the retry; reported, not SAS's fault).
         */
        int lateDuplicates;
        long longestWaitMs;
        long longestRecoveryMs;
        int tasks;
        int writes;
        int calls;

        void add(Violation v, String example) {
            counts.merge(v, 1, Integer::sum);
            List<String> l = examples.computeIfAbsent(v, k -> new ArrayList<>());
            if (l.size() < EXAMPLES) {
                l.add(example);
            }
        }

        int count(Violation v) {
            return counts.getOrDefault(v, 0);
        }

        boolean passed() {
            return counts.isEmpty();
        }

        /** The violations, one line each, with up to three examples. */
        String summary() {
            StringBuilder sb = new StringBuilder();
            sb.append(passed() ? "PASS" : "FAIL").append(": ").append(tasks).append(" tasks, ").append(writes)
                    .append(" writes, ").append(calls).append(" calls, ").append(lateEffects)
                    .append(" effects applied after their deadline (").append(lateDuplicates)
                    .append(" of them also applied by a retry started after that deadline), longest wait ").append(longestWaitMs)
                    .append(" ms, longest recovery ").append(longestRecoveryMs).append(" ms\n");
            counts.forEach((v, n) -> {
                sb.append("  ").append(v).append(" x").append(n).append(" (").append(v.meaning).append(")\n");
                examples.get(v).stream().limit(3).forEach(e -> sb.append("    ").append(e).append('\n'));
            });
            return sb.toString();
        }
    }

    private final List<String> steps;
    private final long stallBoundMs;
    private final long recoveryBoundMs;

    /**
     * @param steps the workflow's steps in order
     * @param stallBoundMs the longest a claimable task may wait for its claim
     * @param recoveryBoundMs the longest an expired claim may stay before it is recovered
     */
    HistoryChecker(List<String> steps, long stallBoundMs, long recoveryBoundMs) {
        this.steps = List.copyOf(steps);
        this.stallBoundMs = stallBoundMs;
        this.recoveryBoundMs = recoveryBoundMs;
    }

    /**
     * Checks a history.
     *
     * @param submitted every task id the application was told was submitted
     * @param finalStates the state each task's row ended in (missing: no row)
     * @param writes every applied write, in the order the store applied them
     * @param calls every call the service served
     */
    Result check(List<String> submitted, Map<String, String> finalStates, List<Write> writes, List<Call> calls,
            List<Cancel> cancels, List<Outage> outages) {
        Result r = new Result();
        r.tasks = submitted.size();
        r.writes = writes.size();
        r.calls = calls.size();
        Map<String, List<Write>> writesByTask = group(writes, Write::task);
        Map<String, List<Call>> callsByTask = group(calls, Call::task);
        callsByTask.values().forEach(l -> l.sort(Comparator.comparingLong(Call::start).thenComparingLong(Call::id)));
        Map<String, List<Cancel>> cancelsByTask = group(cancels, Cancel::task);
        for (String task : submitted) {
            String state = finalStates.get(task);
            if (state == null || !TERMINAL.contains(state)) {
                r.add(Violation.LOST, "task " + task + " ended " + (state == null ? "without a row" : state));
            }
            List<Write> w = writesByTask.getOrDefault(task, List.of());
            List<Call> c = callsByTask.getOrDefault(task, List.of());
            leases(r, task, w, outages);
            calls(r, task, c);
            compensations(r, task, c);
            outcome(r, task, state, w, c, cancelsByTask.getOrDefault(task, List.of()));
        }
        return r;
    }

    // ------------------------------------------------------------------ leases, deadlines, stalls

    private void leases(Result r, String task, List<Write> writes, List<Outage> outages) {
        boolean held = false;
        long lease = -1;
        long deadline = Long.MAX_VALUE;
        long claimableAt = -1;
        for (Write w : writes) {
            switch (w.kind()) {
                case CLAIM -> {
                    if (held && w.at() <= deadline) {
                        r.add(Violation.CLAIM_WHILE_HELD, "task " + task + ": claim " + w.lease() + " at " + w.at()
                                + " while lease " + lease + " held it until " + deadline);
                    }
                    if (claimableAt >= 0) {
                        long from = afterOutages(claimableAt, w.at(), outages);
                        long wait = w.at() - from;
                        r.longestWaitMs = Math.max(r.longestWaitMs, wait);
                        if (wait > stallBoundMs) {
                            r.add(Violation.STALL, "task " + task + ": claimable at " + from + ", claimed at " + w.at()
                                    + " (" + wait + " ms)");
                        }
                    }
                    held = true;
                    lease = w.lease();
                    deadline = w.deadline() >= 0 ? w.deadline() : Long.MAX_VALUE;
                    claimableAt = -1;
                }
                case HOLDER -> {
                    if (!held || w.lease() != lease) {
                        r.add(Violation.LEASE_NOT_CURRENT, "task " + task + ": " + w.what() + " at " + w.at()
                                + " under lease " + w.lease() + ", current " + (held ? lease : "none (released)"));
                    } else if (w.at() > deadline) {
                        r.add(Violation.WRITE_AFTER_DEADLINE, "task " + task + ": " + w.what() + " at " + w.at()
                                + " under lease " + lease + ", deadline " + deadline);
                    }
                    if (w.deadline() >= 0) {
                        deadline = w.deadline();
                    }
                    if (w.releases()) {
                        held = false;
                        claimableAt = w.dueAt() >= 0 ? Math.max(w.dueAt(), w.at()) : -1;
                    }
                }
                case EXPIRED -> {
                    if (!held || w.lease() != lease) {
                        r.add(Violation.LEASE_NOT_CURRENT, "task " + task + ": recovery " + w.what() + " at " + w.at()
                                + " of lease " + w.lease() + ", current " + (held ? lease : "none (released)"));
                    } else if (w.at() < deadline) {
                        r.add(Violation.EARLY_RECOVERY, "task " + task + ": lease " + lease + " recovered at " + w.at()
                                + ", " + (deadline - w.at()) + " ms before its deadline " + deadline);
                    } else {
                        long late = w.at() - afterOutages(deadline, w.at(), outages);
                        r.longestRecoveryMs = Math.max(r.longestRecoveryMs, late);
                        if (late > recoveryBoundMs) {
                            r.add(Violation.STALL, "task " + task + ": lease " + lease + " expired at " + deadline
                                    + ", recovered at " + w.at() + " (" + late + " ms)");
                        }
                    }
                    held = false;
                    claimableAt = w.dueAt() >= 0 ? Math.max(w.dueAt(), w.at()) : -1;
                }
                case SUBMIT, CANCEL, OTHER -> {
                    // a cancel never releases a running claim; it may make a released task due sooner
                    if (!held && w.dueAt() >= 0) {
                        long due = Math.max(w.dueAt(), w.at());
                        claimableAt = claimableAt < 0 ? due : Math.min(claimableAt, due);
                    }
                }
                default -> throw new IllegalStateException("unknown write kind " + w.kind());
            }
        }
    }

    /** {@code from}, moved to the end of every outage that overlaps the wait from it to {@code until}. */
    private static long afterOutages(long from, long until, List<Outage> outages) {
        long t = from;
        for (Outage o : outages) {
            if (o.from() <= until && o.to() > t) {
                t = Math.max(t, Math.min(o.to(), until));
            }
        }
        return t;
    }

    // ------------------------------------------------------------------ calls: overlaps, double effects

    private void calls(Result r, String task, List<Call> calls) {
        Map<String, List<Call>> byStep = group(calls, Call::what);
        for (List<Call> l : byStep.values()) {
            int applied = 0;
            for (int i = 0; i < l.size(); i++) {
                Call a = l.get(i);
                if (a.appliedAt() != null) {
                    applied++;
                    if (a.appliedLate()) {
                        r.lateEffects++;
                    }
                }
                for (int j = i + 1; j < l.size(); j++) {
                    Call b = l.get(j);
                    // active times intersect; a call that reached the service after its deadline
                    // (held in transit by a frozen node: window 0) was given no time and is active at
                    // no instant: its effect, if applied, counts as late, not as an overlap
                    if (b.start() < a.activeUntil() && b.start() < b.activeUntil()) {
                        r.add(Violation.OVERLAP, "task " + task + ": " + b + " started while " + a + " was active until "
                                + a.activeUntil());
                    }
                }
            }
            int excused = 0;
            for (Call a : l) {
                if (applied - excused > 1 && a.appliedLate() && l.stream().anyMatch(b -> b != a && b.appliedAt() != null
                        && b.key().equals(a.key()) && b.start() >= a.start() + Math.max(0, a.windowMs()))) {
                    // the service ignored its deadline and applied after SAS rightly started the retry
                    // with the same key: its doing (a cooperating service refuses a late effect, and
                    // one that dedupes atomically applies it once), reported, not blamed on SAS; a
                    // retry under another key is SAS's (the service cannot know it is the same step)
                    excused++;
                    r.lateDuplicates++;
                }
            }
            if (applied - excused > 1) {
                r.add(Violation.APPLIED_TWICE, "task " + task + ": " + l.get(0).what() + " applied " + applied
                        + " times: " + l);
            }
        }
    }

    // ------------------------------------------------------------------ compensations

    private void compensations(Result r, String task, List<Call> calls) {
        List<Call> forward = calls.stream().filter(c -> c.kind().equals("forward")).toList();
        List<Call> undo = calls.stream().filter(c -> c.kind().equals("compensate")).toList();
        for (Call u : undo) {
            for (Call f : forward) {
                if (f.start() < u.start() && u.start() < f.activeUntil()) {
                    r.add(Violation.COMPENSATION_DURING_FORWARD, "task " + task + ": " + u + " started while " + f
                            + " was active until " + f.activeUntil());
                }
                if (f.step().equals(u.step()) && f.appliedAt() != null && !f.appliedLate() && u.start() < f.appliedAt()) {
                    r.add(Violation.COMPENSATION_BEFORE_EFFECT, "task " + task + ": " + u + " started before " + f
                            + " applied its effect");
                }
            }
        }
        // reverse order: no compensation of step i starts before the compensation of a later step j
        // applied its effect (unless the service applied that one after its deadline)
        for (Call ui : undo) {
            int i = steps.indexOf(ui.step());
            for (Call uj : undo) {
                int j = steps.indexOf(uj.step());
                if (j > i && uj.appliedAt() != null && !uj.appliedLate() && ui.start() < uj.appliedAt()) {
                    r.add(Violation.COMPENSATION_ORDER, "task " + task + ": " + ui + " started before " + uj
                            + " applied its effect");
                }
            }
        }
    }

    // ------------------------------------------------------------------ final state against effects and cancels

    private void outcome(Result r, String task, String state, List<Write> writes, List<Call> calls,
            List<Cancel> cancels) {
        if (state == null || !TERMINAL.contains(state)) {
            return;
        }
        Map<String, Call> forward = new HashMap<>();
        Map<String, Call> undone = new HashMap<>();
        for (Call c : calls) {
            if (c.appliedAt() != null) {
                (c.kind().equals("forward") ? forward : undone).putIfAbsent(c.step(), c);
            }
        }
        switch (state) {
            case "PROCESSED" -> {
                if (!forward.keySet().containsAll(steps) || !undone.isEmpty()) {
                    r.add(Violation.STATE_MISMATCH, "task " + task + " PROCESSED with forward effects "
                            + forward.keySet() + " and compensations " + undone.keySet());
                }
            }
            case "COMPENSATED", "CANCELLED" -> {
                for (Call f : forward.values()) {
                    // an effect a non-cooperating service applied after its deadline is its own doing
                    if (!undone.containsKey(f.step()) && !f.appliedLate()) {
                        r.add(Violation.UNCOMPENSATED, "task " + task + " " + state + " kept " + f);
                    }
                }
            }
            default -> {
                // ERROR, COMPENSATION_FAILED: what was applied stays for an operator
            }
        }
        Cancel accepted = cancels.stream().filter(Cancel::accepted).min(Comparator.comparingLong(Cancel::at))
                .orElse(null);
        if (accepted == null || state.equals("CANCELLED")) {
            return;
        }
        String last = steps.get(steps.size() - 1);
        int lastIndex = steps.size() - 1;
        long lastStarted = Long.MAX_VALUE;
        for (Write w : writes) {
            if (w.startsStep() == lastIndex) {
                lastStarted = Math.min(lastStarted, w.at());
            }
        }
        for (Call c : calls) {
            if (c.kind().equals("forward") && c.step().equals(last)) {
                lastStarted = Math.min(lastStarted, c.start());
            }
        }
        boolean finishedLastStep = state.equals("PROCESSED") && lastStarted < accepted.at();
        if (!finishedLastStep) {
            r.add(Violation.CANCEL_IGNORED, "task " + task + " ended " + state + " after a cancel accepted at "
                    + accepted.at() + " (its last step started " + (lastStarted == Long.MAX_VALUE ? "never" : lastStarted)
                    + ")");
        }
    }

    private static <T> Map<String, List<T>> group(List<T> items, java.util.function.Function<T, String> key) {
        Map<String, List<T>> out = new HashMap<>();
        for (T t : items) {
            out.computeIfAbsent(Objects.requireNonNull(key.apply(t)), k -> new ArrayList<>()).add(t);
        }
        return out;
    }
}
