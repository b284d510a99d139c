package dev.sas.reliability;

import dev.sas.reliability.ChaosChecks.Action;
import dev.sas.reliability.ChaosChecks.Exec;
import dev.sas.reliability.ChaosChecks.Outage;
import dev.sas.reliability.ChaosChecks.Task;
import dev.sas.reliability.HistoryChecker.Call;
import dev.sas.reliability.HistoryChecker.Cancel;
import dev.sas.reliability.HistoryChecker.Write;
import dev.sas.reliability.HistoryChecker.WriteKind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The chaos run's own stall check ({@link StallCheck}) over a mutation run's history, as a JDBC
 * chaos run feeds it: the service's calls as the ledger's executions, the cancels as the
 * coordinator's actions. What a JDBC run takes from the worker a call ran on is taken here from
 * the claim that call ran under (the store's last claim of the task before the call started): the
 * next step within the same claim is no claim of its own, a call under a new claim is. A node
 * frozen with the supervisor's writes held delays recoveries as the loss of the lease's holder
 * does in a chaos run: its window is passed as a supervisor loss. The store's writes that released
 * a task to be claimed again stand for the events a JDBC run reads for that. Pure; not thread-safe.
 */
final class MutationStalls {
    private MutationStalls() {
    }

    /**
     * Runs {@link StallCheck} (bound: {@code completeWithin} + 2 × {@code supervisorInterval} +
     * {@code slack}) and returns its part of a report.
     *
     * @param outcomes per call id, the ledger's outcome ({@link Ledger#APPLIED}, {@link Ledger#ERROR},
     *     {@link Ledger#DECLINED})
     * @param freezes the windows [from, to] in which a node's claims and writes were frozen
     */
    static ChaosReport check(List<String> ids, Map<String, String> states, List<Write> writes, List<Call> calls,
            Map<Long, String> outcomes, List<Cancel> cancels, List<long[]> freezes, Duration completeWithin,
            Duration supervisorInterval, Duration slack) {
        ChaosSettings s = new ChaosSettings().tasks(ids.size()).stallSlack(slack);
        s.completeWithin = completeWithin;
        s.supervisorInterval = supervisorInterval;
        Map<String, Long> created = new HashMap<>();
        Map<String, List<Write>> claims = new HashMap<>();
        Map<String, List<Long>> releases = new HashMap<>();
        for (Write w : writes) {
            if (w.kind() == WriteKind.SUBMIT) {
                created.putIfAbsent(w.task(), w.at());
            } else if (w.kind() == WriteKind.CLAIM) {
                claims.computeIfAbsent(w.task(), k -> new ArrayList<>()).add(w);
            } else if (w.releases() && w.dueAt() >= 0) {
                // a write that let the task go to be claimed again (a retry, a recovery, a release)
                releases.computeIfAbsent(w.task(), k -> new ArrayList<>()).add(w.at());
            }
        }
        Map<String, Task> tasks = new HashMap<>();
        for (int i = 0; i < ids.size(); i++) {
            String id = ids.get(i);
            if (created.containsKey(id)) {
                tasks.put(id, new Task(id, i, states.getOrDefault(id, "PENDING"), created.get(id), null, 0, 0));
            }
        }
        Map<String, List<Exec>> execs = new HashMap<>();
        for (Call c : calls) {
            long lease = -1;
            for (Write w : claims.getOrDefault(c.task(), List.of())) {
                if (w.at() <= c.start()) {
                    lease = w.lease();
                }
            }
            execs.computeIfAbsent(c.task(), k -> new ArrayList<>()).add(new Exec(c.id(), c.task(), c.step(), c.kind(),
                    c.attempt(), "lease-" + lease, c.key(), c.start(), c.windowMs(), c.end(),
                    outcomes.get(c.id())));
        }
        execs.values().forEach(l -> l.sort(Comparator.comparingLong(Exec::start).thenComparingLong(Exec::id)));
        Map<String, List<Action>> actions = new HashMap<>();
        for (Cancel c : cancels) {
            actions.computeIfAbsent(c.task(), k -> new ArrayList<>()).add(new Action(c.task(), "cancel", c.accepted(),
                    c.at()));
        }
        List<Outage> losses = freezes.stream().map(f -> new Outage(f[0], f[1])).toList();
        ChaosReport r = new ChaosReport();
        r.total = ids.size();
        new StallCheck(s, tasks, execs, actions, List.of(), losses, releases).check(r, new TreeSet<>());
        return r;
    }

    /** The stall check's verdict in a word or two, for the mutation table. */
    static String verdict(ChaosReport r) {
        return r.stallViolations == 0 ? "passed (" + r.queuedWaits + " queued)"
                : "caught: " + r.stallsPassedOver + " passed over, " + r.stallsIdle + " idle";
    }
}
