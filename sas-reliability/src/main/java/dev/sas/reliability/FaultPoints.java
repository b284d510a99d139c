package dev.sas.reliability;

import dev.sas.core.StepContext;
import dev.sas.core.TaskId;
import dev.sas.core.Tracing;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * Faults at chosen points of a step's life, honoured by a worker JVM: at a {@link Point}, with a
 * probability, the node is killed ({@code Runtime.halt}) or frozen (SIGSTOP of its own process by
 * a helper shell that sends SIGCONT after {@code freezeMs}). Each fault is recorded in
 * {@code <prefix>chaos_fault} (database clock) before it strikes, so a run can show it fired.
 * A worker JVM fires at most once per point (a killed one is restarted by the coordinator, which
 * stops passing the faults on once its budget is spent).
 *
 * <p>Spec: {@code point:action:perMille}, comma-separated, e.g.
 * {@code after-effect:freeze:50,claim-start:kill:20}. Thread-safe.
 */
final class FaultPoints {
    /** The exit status of a worker killed at a fault point (the coordinator restarts it and counts it). */
    static final int KILLED_AT_POINT = 77;

    /** Where in a step's life a fault strikes. */
    enum Point {
        /** The step is claimed, its start not yet recorded (the runtime starts the attempt's trace). */
        CLAIM_START("claim-start"),
        /** The step's start is recorded, the service not yet called. */
        START_RECORD("start-record"),
        /** The service applied the step's effect; SAS has not recorded the step. */
        AFTER_EFFECT("after-effect"),
        /** The service applied a compensation's effect; SAS has not recorded the compensation. */
        COMPENSATION("compensation"),
        /**
         * The service applied an awaiting step's effect and is about to deliver its completion
         * (the reply to an awaiting step, {@link ChaosSettings#awaitReply}): killed, the reply is
         * never delivered; frozen, it is delivered after the step's deadline.
         */
        COMPLETION("completion");

        final String label;

        Point(String label) {
            this.label = label;
        }

        static Point parse(String v) {
            for (Point p : values()) {
                if (p.label.equals(v.trim().toLowerCase(Locale.ROOT))) {
                    return p;
                }
            }
            throw new IllegalArgumentException("fault point must be claim-start, start-record, after-effect,"
                    + " compensation or completion, not " + v);
        }
    }

    /** What the fault does to the node. */
    enum Action {
        KILL,
        FREEZE
    }

    /** One configured fault: at {@code point}, {@code action} with {@code perMille} / 1000 probability. */
    record Spec(Point point, Action action, int perMille) {
        @Override
        public String toString() {
            return point.label + ":" + action.name().toLowerCase(Locale.ROOT) + ":" + perMille;
        }
    }

    private final Map<Point, Spec> specs = new EnumMap<>(Point.class);
    private final Map<Point, AtomicBoolean> fired = new EnumMap<>(Point.class);
    private final DataSource harness;
    private final String prefix;
    private final String node;
    private final long freezeMs;
    private final String insert;

    FaultPoints(List<Spec> specs, DataSource harness, ChaosDb db, String prefix, String node, long freezeMs) {
        specs.forEach(s -> this.specs.put(s.point(), s));
        for (Point p : Point.values()) {
            fired.put(p, new AtomicBoolean());
        }
        this.harness = harness;
        this.prefix = prefix;
        this.node = node;
        this.freezeMs = freezeMs;
        this.insert = "INSERT INTO " + prefix + "chaos_fault (node, point, action, task_id, step, supervisor, ms, at)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, " + db.nowMillis() + ")";
    }

    /** Parses {@code point:action:perMille[,...]}; empty or null gives none. */
    static List<Spec> parse(String v) {
        List<Spec> out = new ArrayList<>();
        if (v == null || v.isBlank()) {
            return out;
        }
        for (String one : v.split(",")) {
            String[] p = one.trim().split(":");
            if (p.length != 3) {
                throw new IllegalArgumentException("a fault is point:action:perMille (e.g. after-effect:freeze:50), not "
                        + one);
            }
            Action a = switch (p[1].trim().toLowerCase(Locale.ROOT)) {
                case "kill" -> Action.KILL;
                case "freeze" -> Action.FREEZE;
                default -> throw new IllegalArgumentException("a fault's action is kill or freeze, not " + p[1]);
            };
            int perMille = Integer.parseInt(p[2].trim());
            if (perMille < 1 || perMille > 1000) {
                throw new IllegalArgumentException("a fault's per mille is 1 to 1000, was " + perMille);
            }
            out.add(new Spec(Point.parse(p[0]), a, perMille));
        }
        return out;
    }

    static String format(List<Spec> specs) {
        return String.join(",", specs.stream().map(Spec::toString).toList());
    }

    /** Strikes if {@code point} is configured, its dice say so, and this JVM has not fired at it yet. */
    void at(Point point, TaskId task, String step) {
        Spec spec = specs.get(point);
        if (spec == null || ThreadLocalRandom.current().nextInt(1000) >= spec.perMille()
                || !fired.get(point).compareAndSet(false, true)) {
            return;
        }
        long ms = spec.action() == Action.FREEZE ? freezeMs : 0;
        record(point.label, spec.action().name().toLowerCase(Locale.ROOT), task.value(), step, ms);
        System.out.println(node + ": fault " + spec + " at task " + task.value() + " step " + step);
        System.out.flush();
        if (spec.action() == Action.KILL) {
            Runtime.getRuntime().halt(KILLED_AT_POINT);
        }
        freeze(freezeMs);
    }

    /** Records a fault (or a clock jump) in {@code chaos_fault}; a failure to record is printed, not thrown. */
    void record(String point, String action, String task, String step, long ms) {
        boolean supervisor = holdsSupervisorLease();
        try (Connection c = harness.getConnection(); PreparedStatement ps = c.prepareStatement(insert)) {
            ps.setString(1, node);
            ps.setString(2, point);
            ps.setString(3, action);
            ps.setString(4, task);
            ps.setString(5, step);
            ps.setInt(6, supervisor ? 1 : 0);
            ps.setLong(7, ms);
            ps.executeUpdate();
        } catch (Exception e) {
            System.err.println(node + ": could not record fault " + point + ": " + e);
        }
    }

    /**
     * True if this node holds the supervisor lease: the coordinator then allows for its loss (read
     * where the harness's tables are; where that is not the store's database, it cannot tell: true).
     */
    private boolean holdsSupervisorLease() {
        try (Connection c = harness.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT holder FROM " + prefix + "supervisor_lease WHERE name = 'supervisor'")) {
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && node.equals(rs.getString(1));
            }
        } catch (Exception e) {
            return true; // cannot tell: allow for it
        }
    }

    /**
     * Freezes the whole JVM: a helper shell (a process of its own, so it runs on while this one is
     * stopped) sends SIGSTOP to this process and SIGCONT {@code ms} later; the calling thread waits
     * for it, so it goes on only after the resume.
     */
    static void freeze(long ms) {
        long pid = ProcessHandle.current().pid();
        String secs = String.format(Locale.ROOT, "%.3f", ms / 1000.0);
        try {
            Process p = new ProcessBuilder("sh", "-c", "kill -STOP " + pid + "; sleep " + secs + "; kill -CONT " + pid)
                    .inheritIO().start();
            p.waitFor();
        } catch (Exception e) {
            System.err.println("could not freeze: " + e);
        }
    }

    /**
     * A {@link Tracing} that only strikes at {@link Point#CLAIM_START}: the runtime starts an
     * attempt's trace after the claim and, for an agent call, before the start is recorded.
     */
    Tracing claimStartHook() {
        FaultPoints self = this;
        return new Tracing() {
            @Override
            public String capture(String workflow, TaskId taskId) {
                return null;
            }

            @Override
            public StepTrace startStep(StepContext<?> step, String traceContext) {
                if (!step.compensating()) {
                    self.at(Point.CLAIM_START, step.taskId(), step.stepName());
                }
                return Tracing.none().startStep(step, traceContext);
            }
        };
    }
}
