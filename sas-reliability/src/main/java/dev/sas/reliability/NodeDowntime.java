package dev.sas.reliability;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * When each worker slot could not run steps — killed until its next incarnation reported, frozen,
 * cut off by a partition — and so the windows in which <em>no</em> node could: a task claimable
 * then waits for a node to come back (on a loaded machine a worker JVM takes 10–15 s to start),
 * which is the harness's doing, not SAS's; the stall check treats those windows as outages. Times
 * are database-clock epoch milliseconds. Thread-safe.
 */
final class NodeDowntime {
    private final List<List<long[]>> bySlot = new ArrayList<>();

    NodeDowntime(int slots) {
        for (int i = 0; i < slots; i++) {
            bySlot.add(new ArrayList<>());
        }
    }

    /** Slot {@code slot} is down from {@code from}, until {@link #up}. */
    synchronized void down(int slot, long from) {
        List<long[]> l = bySlot.get(slot);
        if (l.isEmpty() || l.get(l.size() - 1)[1] != Long.MAX_VALUE) {
            l.add(new long[] {from, Long.MAX_VALUE});
        }
    }

    /** Slot {@code slot} runs steps again from {@code at}. */
    synchronized void up(int slot, long at) {
        List<long[]> l = bySlot.get(slot);
        if (!l.isEmpty() && l.get(l.size() - 1)[1] == Long.MAX_VALUE) {
            l.get(l.size() - 1)[1] = Math.max(at, l.get(l.size() - 1)[0]);
        }
    }

    /** True while slot {@code slot} is down (waiting for {@link #up}). */
    synchronized boolean isDown(int slot) {
        List<long[]> l = bySlot.get(slot);
        return !l.isEmpty() && l.get(l.size() - 1)[1] == Long.MAX_VALUE;
    }

    /** Slot {@code slot} was down in {@code [from, to)} (a freeze the worker made itself). */
    synchronized void downFor(int slot, long from, long to) {
        bySlot.get(slot).add(new long[] {from, to});
    }

    /** The windows in which every slot was down, a window still open ending at {@code now}. */
    synchronized List<ChaosChecks.Outage> allDown(long now) {
        TreeSet<Long> points = new TreeSet<>();
        for (List<long[]> l : bySlot) {
            for (long[] w : l) {
                points.add(w[0]);
                points.add(Math.min(w[1], now));
            }
        }
        List<ChaosChecks.Outage> out = new ArrayList<>();
        Long start = null;
        Long prev = null;
        for (long p : points) {
            if (prev != null) {
                boolean all = allDownAt(prev, p, now);
                if (all && start == null) {
                    start = prev;
                } else if (!all && start != null) {
                    out.add(new ChaosChecks.Outage(start, prev));
                    start = null;
                }
            }
            prev = p;
        }
        if (start != null) {
            out.add(new ChaosChecks.Outage(start, prev));
        }
        return out;
    }

    /** True if every slot is down during all of {@code [a, b)}. */
    private boolean allDownAt(long a, long b, long now) {
        for (List<long[]> l : bySlot) {
            boolean down = false;
            for (long[] w : l) {
                if (w[0] <= a && Math.min(w[1], now) >= b) {
                    down = true;
                    break;
                }
            }
            if (!down) {
                return false;
            }
        }
        return true;
    }
}
