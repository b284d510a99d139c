package dev.sas.reliability;

import dev.sas.core.RetryPolicy;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The invariants of a chaos run, checked over what the run left behind: the task rows, the
 * ledger's executions and effects, and the operator actions. Pure (no database), so a test can
 * feed it a synthetic ledger and see each check fail. Times are database-clock epoch
 * milliseconds. Not thread-safe; one instance per check.
 */
final class ChaosChecks {
    static final Set<String> FAILURE_STATES = Set.of("ERROR", "COMPENSATED", "COMPENSATION_FAILED", "CANCELLED");
    private static final int EXAMPLES = 10;

    /**
     * One call the ledger served. {@code end} is null when it was never recorded (the node died or
     * the database was down); the execution then counts until its deadline.
     */
    record Exec(long id, String task, String step, String kind, int attempt, String node, String key, long start,
            long windowMs, Long end, String outcome) {

        /** The end of the time this execution may have been running: its recorded end, at most its deadline. */
        long activeUntil() {
            long deadline = start + Math.max(0, windowMs);
            return end == null ? deadline : Math.min(end, deadline);
        }

        boolean failed() {
            return Ledger.ERROR.equals(outcome) || Ledger.DECLINED.equals(outcome);
        }

        String what() {
            return kind + ":" + step;
        }

        @Override
        public String toString() {
            return what() + " attempt " + attempt + " on " + node + " [" + start + ", " + (end == null ? "?" : end)
                    + "] window " + windowMs + " ms, " + (outcome == null ? "no outcome" : outcome);
        }
    }

    /**
     * One application of an effect; {@code late} when the service applied it after the call's
     * deadline (it ignored the time it was given: not something SAS can prevent).
     */
    record Effect(long execId, String key, String task, String step, String kind, boolean late) {
        Effect(long execId, String key, String task, String step, String kind) {
            this(execId, key, task, step, kind, false);
        }

        String what() {
            return kind + ":" + step;
        }
    }

    /**
     * One task row, with its counts of ERROR and RESUBMITTED events. {@code createdAt} is on the
     * database clock (the coordinator corrects its own timestamps by the offset it measured).
     */
    record Task(String id, int index, String state, long createdAt, String lastError, int errorEvents,
            int resubmittedEvents) {
    }

    /** A cancel or resubmit the coordinator sent, with its answer. */
    record Action(String task, String action, boolean result, long at) {
    }

    /**
     * When the database was unavailable (a restart, a failover), and how long nodes may take after
     * it to reconnect ({@code reconnectMs}, added to the bound of a wait that overlaps it).
     */
    record Outage(long from, long to, long reconnectMs) {
        Outage(long from, long to) {
            this(from, to, 0);
        }

        long length() {
            return to - from;
        }
    }

    private final ChaosSettings s;
    private final Map<String, Task> tasks = new HashMap<>();
    private final Map<String, List<Exec>> execsByTask = new HashMap<>();
    private final List<Effect> effects;
    private final Map<String, List<Action>> actionsByTask = new HashMap<>();
    private final List<Outage> outages;
    private List<Outage> supervisorLosses = List.of();
    private Map<String, List<Long>> releases = Map.of();
    /** Tasks that broke an invariant (their evidence is printed). */
    final Set<String> suspects = new TreeSet<>();

    ChaosChecks(ChaosSettings s, List<Task> tasks, List<Exec> execs, List<Effect> effects, List<Action> actions,
            List<Outage> outages) {
        this.s = s;
        tasks.forEach(t -> this.tasks.put(t.id(), t));
        for (Exec e : execs) {
            execsByTask.computeIfAbsent(e.task(), x -> new ArrayList<>()).add(e);
        }
        execsByTask.values().forEach(l -> l.sort(Comparator.comparingLong(Exec::start).thenComparingLong(Exec::id)));
        this.effects = List.copyOf(effects);
        for (Action a : actions) {
            actionsByTask.computeIfAbsent(a.task(), x -> new ArrayList<>()).add(a);
        }
        this.outages = List.copyOf(outages);
    }

    /**
     * The times from a SIGKILL or SIGSTOP of the supervisor lease's holder to one lease later: an
     * expired claim due then waits up to one more lease for another node to take over.
     */
    ChaosChecks supervisorLost(List<Outage> windows) {
        this.supervisorLosses = List.copyOf(windows);
        return this;
    }

    /**
     * When the store released each task to be claimed again (a retry scheduled after a failure, a
     * claim recovered after its deadline): later claims are judged for passing over from these
     * ({@link StallCheck}); without them only first claims are.
     */
    ChaosChecks releases(Map<String, List<Long>> byTask) {
        Map<String, List<Long>> copy = new HashMap<>();
        byTask.forEach((task, at) -> copy.put(task, at.stream().sorted().toList()));
        this.releases = copy;
        return this;
    }

    /** Runs every check and fills in {@code r}. */
    void check(ChaosReport r) {
        outcomes(r);
        effects(r);
        overlaps(r);
        stalls(r);
    }

    // ------------------------------------------------------------------ final states

    /** The states a task with {@code fault} may end in, given the cancel answer if any. */
    static Set<String> allowedStates(Fault fault, Boolean cancelAccepted) {
        return switch (fault) {
            case NONE -> Set.of("PROCESSED");
            case DECLINED -> Set.of("COMPENSATED");
            case POISON -> Set.of("ERROR");
            // cancel returns false only for a finished task; an accepted cancel lets a running last step finish
            case CANCEL -> Boolean.FALSE.equals(cancelAccepted) ? Set.of("PROCESSED") : Set.of("CANCELLED", "PROCESSED");
        };
    }

    private void outcomes(ChaosReport r) {
        for (Task t : tasks.values()) {
            Fault f = s.fault(t.index());
            Boolean accepted = null;
            for (Action a : actionsByTask.getOrDefault(t.id(), List.of())) {
                if (a.action().startsWith("cancel")) {
                    // a retried cancel that was refused may have been accepted by the attempt that failed
                    accepted = a.action().equals("cancel-retried") && !a.result() ? null : a.result();
                    r.cancelsSent++;
                    if (a.result()) {
                        r.cancelsAccepted++;
                        if (landedOnRunningCall(t.id(), a.at())) {
                            r.cancelsOnRunningStep++;
                        }
                    }
                } else if (a.action().equals("resubmit")) {
                    r.resubmitsSent++;
                    if (t.errorEvents() != t.resubmittedEvents() + 1) {
                        r.resubmitsNotRerun++;
                        suspects.add(t.id());
                    }
                }
            }
            switch (t.state()) {
                // PARKED, WAITING and AWAITING_COMPLETION wait for something: not terminal either
                case "PENDING", "PROCESSING", "COMPENSATING", "PARKED", "WAITING", "AWAITING_COMPLETION" -> {
                    r.notTerminal++;
                    suspects.add(t.id());
                    continue;
                }
                case "PROCESSED" -> r.processed++;
                case "COMPENSATED" -> r.compensated++;
                case "CANCELLED" -> r.cancelled++;
                case "ERROR" -> r.errors++;
                default -> r.otherTerminal++;
            }
            r.terminal++;
            if (!allowedStates(f, accepted).contains(t.state())) {
                if (FAILURE_STATES.contains(t.state())) {
                    r.falseFailures++;
                } else {
                    r.unexpectedOutcome++;
                }
                suspects.add(t.id());
            } else if (f == Fault.POISON) {
                String e = t.lastError() == null ? "" : t.lastError();
                if (e.contains("cannot be decoded") && (e.contains("StackOverflowError") || e.contains("NumberFormat"))) {
                    r.poisonParked++;
                } else {
                    r.unexpectedOutcome++;
                    suspects.add(t.id());
                }
            } else if (f == Fault.CANCEL && t.state().equals("PROCESSED") && Boolean.TRUE.equals(accepted)) {
                r.cancelTooLate++;
            }
        }
    }

    /** True if a forward call of {@code task} was running at the service at {@code at}. */
    private boolean landedOnRunningCall(String task, long at) {
        for (Exec e : execsByTask.getOrDefault(task, List.of())) {
            if (e.kind().equals("forward") && e.start() <= at && at <= e.activeUntil()) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ effects

    private void effects(ChaosReport r) {
        Map<String, Integer> applications = new HashMap<>();
        Map<String, Set<String>> applied = new HashMap<>();
        // effects a service that ignores its deadline applied after it: SAS may have compensated
        // or cancelled the task already, so an uncompensated one is its doing, not SAS's
        Map<String, Set<String>> late = new HashMap<>();
        Map<String, Set<String>> onTime = new HashMap<>();
        for (Effect e : effects) {
            r.effects++;
            applications.merge(e.key(), 1, Integer::sum);
            if (e.late()) {
                r.lateEffects++;
                late.computeIfAbsent(e.task(), x -> new HashSet<>()).add(e.what());
            } else {
                onTime.computeIfAbsent(e.task(), x -> new HashSet<>()).add(e.what());
            }
            applied.computeIfAbsent(e.task(), x -> new HashSet<>()).add(e.what());
            if (!tasks.containsKey(e.task())) {
                r.orphanEffects++;
            }
        }
        Map<Long, Exec> byId = new HashMap<>();
        execsByTask.values().forEach(l -> l.forEach(x -> byId.put(x.id(), x)));
        r.lateDuplicates += LateRaces.excuse(effects, byId, applications);
        for (Effect e : effects) {
            if (applications.get(e.key()) > 1) {
                suspects.add(e.task());
            }
        }
        r.keysAppliedTwice = (int) applications.values().stream().filter(n -> n > 1).count();
        for (Map.Entry<String, List<Exec>> e : execsByTask.entrySet()) {
            Map<String, Set<String>> keys = new HashMap<>();
            for (Exec x : e.getValue()) {
                r.executions++;
                keys.computeIfAbsent(x.what(), k -> new HashSet<>()).add(x.key());
                if (Ledger.DUPLICATE.equals(x.outcome())) {
                    r.duplicateCalls++;
                } else if (Ledger.LATE.equals(x.outcome())) {
                    r.lateRefused++;
                }
            }
            for (Set<String> k : keys.values()) {
                if (k.size() > 1) {
                    r.stepsWithTwoKeys++;
                    suspects.add(e.getKey());
                }
            }
        }
        for (Task t : tasks.values()) {
            Set<String> done = applied.getOrDefault(t.id(), Set.of());
            Set<String> forward = new HashSet<>();
            Set<String> undone = new HashSet<>();
            for (String w : done) {
                (w.startsWith("forward:") ? forward : undone).add(w.substring(w.indexOf(':') + 1));
            }
            if (!undone.isEmpty()) {
                r.tasksWithCompensation++;
            }
            Set<String> lateOnly = new HashSet<>();
            for (String w : late.getOrDefault(t.id(), Set.of())) {
                if (!onTime.getOrDefault(t.id(), Set.of()).contains(w) && w.startsWith("forward:")) {
                    lateOnly.add(w.substring(w.indexOf(':') + 1));
                }
            }
            Set<String> mustBeUndone = new HashSet<>(forward);
            mustBeUndone.removeAll(lateOnly);
            boolean ok = switch (t.state()) {
                case "PROCESSED" -> forward.equals(Set.copyOf(s.steps())) && undone.isEmpty();
                case "COMPENSATED" -> forward.equals(Set.of("reserve", "debit")) && undone.containsAll(mustBeUndone)
                        && forward.containsAll(undone);
                case "CANCELLED" -> undone.containsAll(mustBeUndone);
                case "ERROR" -> done.isEmpty() && !execsByTask.containsKey(t.id());
                default -> false;
            };
            if (!ok) {
                r.effectMismatches++;
                suspects.add(t.id());
            }
        }
    }

    // ------------------------------------------------------------------ overlapping executions

    /** Pairs of executions of one (task, step, kind) whose active times intersect. */
    private void overlaps(ChaosReport r) {
        for (List<Exec> list : execsByTask.values()) {
            Map<String, List<Exec>> byStep = new HashMap<>();
            list.forEach(e -> byStep.computeIfAbsent(e.what(), k -> new ArrayList<>()).add(e));
            for (List<Exec> l : byStep.values()) {
                for (int i = 0; i < l.size(); i++) {
                    for (int j = i + 1; j < l.size(); j++) {
                        Exec a = l.get(i);
                        Exec b = l.get(j);
                        // active times intersect (a call that arrived after its deadline has none)
                        if (b.start() < a.activeUntil() && b.start() < b.activeUntil()) {
                            r.overlaps++;
                            suspects.add(a.task());
                            if (r.overlapExamples.size() < EXAMPLES) {
                                r.overlapExamples.add("task " + a.task() + ": " + b + " started "
                                        + (b.start() - a.start()) + " ms after " + a + " (active until "
                                        + a.activeUntil() + ")");
                            }
                        }
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------ stall bound

    /** The stall bound, passed-over and idle waits apart from queueing ({@link StallCheck}). */
    private void stalls(ChaosReport r) {
        new StallCheck(s, tasks, execsByTask, actionsByTask, outages, supervisorLosses, releases).check(r, suspects);
    }

    /** The longest backoff the policy may choose before the n-th re-run (its cap, spread by the jitter). */
    static long maxBackoff(RetryPolicy p, int n) {
        double base = p.initialBackoff().toMillis() * Math.pow(p.multiplier(), n - 1);
        return Math.round(Math.min(base, p.maxBackoff().toMillis()) * (1 + p.jitter()));
    }
}
