package dev.sas.reliability;

import dev.sas.reliability.ChaosChecks.Effect;
import dev.sas.reliability.ChaosChecks.Exec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Late effects that raced a retry: a late effect (the service ignored its deadline) applied
 * although another execution of the same key, started after that deadline, applied it too. The
 * retry was right to start, and a cooperating service refuses the late effect: not counted as
 * applied twice by {@link ChaosChecks}, reported.
 */
final class LateRaces {
    private LateRaces() {
    }

    /**
     * Lowers {@code applications} (applications per key) by the excused late effects.
     *
     * @return how many were excused
     */
    static int excuse(List<Effect> effects, Map<Long, Exec> execs, Map<String, Integer> applications) {
        Map<String, List<Effect>> byKey = new HashMap<>();
        effects.forEach(e -> byKey.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e));
        int excused = 0;
        for (Map.Entry<String, List<Effect>> k : byKey.entrySet()) {
            List<Effect> l = k.getValue();
            for (Effect e : l) {
                Exec x = execs.get(e.execId());
                if (applications.get(k.getKey()) > 1 && e.late() && x != null && l.stream().anyMatch(f -> f != e
                        && execs.containsKey(f.execId())
                        && execs.get(f.execId()).start() >= x.start() + Math.max(0, x.windowMs()))) {
                    applications.merge(k.getKey(), -1, Integer::sum);
                    excused++;
                }
            }
        }
        return excused;
    }
}
