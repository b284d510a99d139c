package dev.sas.testing;

import dev.sas.core.spi.FlowControlStore;
import dev.sas.core.spi.GateChange;
import dev.sas.core.spi.GateState;
import dev.sas.core.spi.GateView;
import dev.sas.core.spi.Permit;
import dev.sas.core.spi.StepKey;
import dev.sas.core.spi.TaskDecisions;
import dev.sas.testing.InMemoryTasks.Row;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The agents' shared flow control of {@link InMemoryStateStore} ({@link InMemoryStateStore#flowControl()}): gates, their permits, and waking
 * the tasks that wait for them, under the store's lock. Thread-safe.
 */
final class InMemoryFlowControl implements FlowControlStore {

    private final InMemoryTasks tasks;
    private final Map<String, GateState> gates = new TreeMap<>();
    private final Map<String, Permit> permits = new HashMap<>();

    InMemoryFlowControl(InMemoryTasks tasks) {
        this.tasks = tasks;
    }

    @Override
    public <T> T changeGate(String gate, Instant now, Function<GateView, GateChange<T>> decide) {
        Objects.requireNonNull(gate, "gate must not be null");
        Objects.requireNonNull(now, "now must not be null");
        Objects.requireNonNull(decide, "decide must not be null");
        synchronized (tasks.lock) {
            permits.values().removeIf(p -> p.gate().equals(gate) && !p.expiresAt().isAfter(now));
            GateState state = gates.get(gate);
            GateChange<T> change = Objects.requireNonNull(decide.apply(view(gate, state, now)),
                    "decide must not return null");
            if (change.state() != null) {
                gates.put(gate, change.state());
            }
            if (change.take() != null) {
                permits.put(change.take().id(), change.take());
            }
            if (change.giveBack() != null) {
                permits.remove(change.giveBack());
            }
            return change.result();
        }
    }

    private GateView view(String gate, GateState state, Instant now) {
        int inUse = 0;
        int probes = 0;
        for (Permit p : permits.values()) {
            if (p.gate().equals(gate) && p.expiresAt().isAfter(now)) {
                inUse++;
                if (p.probe()) {
                    probes++;
                }
            }
        }
        return new GateView(gate, state != null ? state : GateState.initial(now), state != null, inUse, probes);
    }

    @Override
    public int renewPermits(Collection<String> permitIds, Instant now, Instant expiresAt) {
        Objects.requireNonNull(permitIds, "permitIds must not be null");
        Objects.requireNonNull(now, "now must not be null");
        Objects.requireNonNull(expiresAt, "expiresAt must not be null");
        synchronized (tasks.lock) {
            int renewed = 0;
            for (String id : permitIds) {
                Permit p = permits.get(id);
                if (p != null && p.expiresAt().isAfter(now)) {
                    permits.put(id, new Permit(p.id(), p.gate(), p.holder(), p.probe(), p.acquiredAt(), expiresAt));
                    renewed++;
                }
            }
            return renewed;
        }
    }

    @Override
    public int wakeWaiting(Set<StepKey> steps, Instant now, int limit) {
        Objects.requireNonNull(steps, "steps must not be null");
        Objects.requireNonNull(now, "now must not be null");
        synchronized (tasks.lock) {
            List<Row> waiting = new ArrayList<>();
            for (Row r : tasks.rows.values()) {
                if (steps.contains(new StepKey(r.workflow, r.version, r.currentStep))
                        && TaskDecisions.wake(InMemoryTasks.snapshot(r), now).isPresent()) {
                    waiting.add(r);
                }
            }
            waiting.sort(Comparator.comparingInt((Row r) -> -r.priority).thenComparing(r -> r.nextAttemptAt));
            int woken = 0;
            for (Row r : waiting) {
                if (woken >= limit) {
                    break;
                }
                InMemoryTasks.apply(r, TaskDecisions.wake(InMemoryTasks.snapshot(r), now), now);
                woken++;
            }
            return woken;
        }
    }

    @Override
    public List<GateView> gates(Instant now) {
        Objects.requireNonNull(now, "now must not be null");
        synchronized (tasks.lock) {
            List<GateView> out = new ArrayList<>();
            gates.forEach((gate, state) -> out.add(view(gate, state, now)));
            return out;
        }
    }
}
