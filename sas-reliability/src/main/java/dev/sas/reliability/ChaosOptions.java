package dev.sas.reliability;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The command line of {@link ChaosMain} and {@link WorkerMain}: {@code --name value} options
 * into {@link ChaosSettings}, and the durations they take. Stateless.
 */
final class ChaosOptions {
    private ChaosOptions() {
    }

    /** Parses {@code --name value} options; see {@link ChaosMain} for the list. */
    static ChaosSettings parse(String[] args) {
        ChaosSettings s = new ChaosSettings();
        List<String> a = new ArrayList<>(List.of(args));
        for (int i = 0; i < a.size(); i++) {
            String opt = a.get(i);
            switch (opt) {
                case "--restart-db" -> s.restartDb = true;
                case "--terminate-backends" -> s.terminateBackends = true;
                case "--keep-tables" -> s.keepTables = true;
                default -> {
                    if (i + 1 >= a.size()) {
                        throw new IllegalArgumentException("option " + opt + " needs a value");
                    }
                    String v = a.get(++i);
                    switch (opt) {
                        case "--db" -> {
                            s.url = switch (v.toLowerCase(Locale.ROOT)) {
                                case "postgres", "postgresql" -> env("SAS_TEST_POSTGRES_URL", ChaosSettings.DEFAULT_POSTGRES_URL);
                                case "mariadb", "mysql" -> env("SAS_TEST_MARIADB_URL", ChaosSettings.DEFAULT_MARIADB_URL);
                                case "ha-postgres" -> env("SAS_TEST_HA_POSTGRES_URL", ChaosSettings.DEFAULT_HA_URL);
                                default -> throw new IllegalArgumentException(
                                        "--db must be postgres, mariadb or ha-postgres, was " + v);
                            };
                            if (v.equalsIgnoreCase("ha-postgres") && s.ledgerUrl == null) {
                                s.ledgerUrl = env("SAS_TEST_HA_OUTSIDE_URL", ChaosSettings.DEFAULT_HA_OUTSIDE_URL);
                            }
                        }
                        case "--ledger-url" -> s.ledgerUrl = v;
                        case "--failover" -> {
                            List<ChaosSettings.Failover> f = new ArrayList<>();
                            for (String k : v.split(",")) {
                                f.add(switch (k.trim().toLowerCase(Locale.ROOT)) {
                                    case "kill" -> ChaosSettings.Failover.KILL;
                                    case "switchover" -> ChaosSettings.Failover.SWITCHOVER;
                                    default -> throw new IllegalArgumentException(
                                            "--failover takes kill and switchover, comma-separated; was " + v);
                                });
                            }
                            s.failovers = List.copyOf(f);
                        }
                        case "--ha-dir" -> s.haDir = Path.of(v);
                        case "--replication-lag-ms" -> s.replicationLagMs = Long.parseLong(v);
                        case "--reconnect-ms" -> s.reconnect = Duration.ofMillis(Long.parseLong(v));
                        case "--url" -> s.url = v;
                        case "--tasks" -> s.tasks = Integer.parseInt(v);
                        case "--workers" -> s.workers = Integer.parseInt(v);
                        case "--kills" -> s.kills = Integer.parseInt(v);
                        case "--pauses" -> s.pauses = Integer.parseInt(v);
                        case "--skew" -> s.skew(duration(v));
                        case "--clock-offsets" -> {
                            List<Duration> offsets = new ArrayList<>();
                            for (String o : v.split(",")) {
                                offsets.add(duration(o.trim()));
                            }
                            s.clockOffsets = List.copyOf(offsets);
                        }
                        case "--poison-every" -> s.poisonEvery = Integer.parseInt(v);
                        case "--cancel-every" -> s.cancelEvery = Integer.parseInt(v);
                        case "--cancel-within-ms" -> s.cancelWithin = Duration.ofMillis(Long.parseLong(v));
                        case "--stall-slack-ms" -> s.stallSlack = Duration.ofMillis(Long.parseLong(v));
                        case "--restart-cmd" -> s.restartCommand = v;
                        case "--submit-over-ms" -> s.submitOverMs = Long.parseLong(v);
                        case "--kill-every-ms" -> s.killEvery = Duration.ofMillis(Long.parseLong(v));
                        case "--fail-every" -> s.failEvery = Integer.parseInt(v);
                        case "--pg-cluster" -> s.pgCluster = v;
                        case "--fault-points" -> s.faultPoints = List.copyOf(FaultPoints.parse(v));
                        case "--fault-budget" -> s.faultBudget = Integer.parseInt(v);
                        case "--fault-workers" -> s.faultWorkers = Integer.parseInt(v);
                        case "--clock-jump" -> s.clockJump = duration(v).abs();
                        case "--clock-jump-every-ms" -> s.clockJumpEvery = Duration.ofMillis(Long.parseLong(v));
                        case "--partitions" -> s.partitions = Integer.parseInt(v);
                        case "--partition-cuts" -> {
                            List<DbProxy.Cut> cuts = new ArrayList<>();
                            for (String c : v.split(",")) {
                                cuts.add(DbProxy.Cut.parse(c));
                            }
                            s.partitionCuts = List.copyOf(cuts);
                        }
                        case "--latency-ms" -> {
                            String[] mm = v.split("-");
                            s.ledgerLatencyMinMs = Integer.parseInt(mm[0]);
                            s.ledgerLatencyMaxMs = Integer.parseInt(mm[mm.length - 1]);
                        }
                        case "--slow-per-mille" -> s.slowPerMille = Integer.parseInt(v);
                        case "--late-apply-per-mille" -> s.lateApplyPerMille = Integer.parseInt(v);
                        case "--service-enforces-deadline" -> s.serviceEnforcesDeadline = Boolean.parseBoolean(v);
                        case "--await-reply" -> s.awaitReply = Boolean.parseBoolean(v);
                        case "--complete-within-ms" -> s.completeWithin = Duration.ofMillis(Long.parseLong(v));
                        case "--supervisor-interval-ms" -> s.supervisorInterval = Duration.ofMillis(Long.parseLong(v));
                        case "--poll-interval-ms" -> s.pollInterval = Duration.ofMillis(Long.parseLong(v));
                        case "--timeout-s" -> s.timeout = Duration.ofSeconds(Long.parseLong(v));
                        case "--log-dir" -> s.logDir = Path.of(v);
                        default -> throw new IllegalArgumentException("unknown option " + opt);
                    }
                }
            }
        }
        if (s.partitions < 0 || s.faultBudget < 0 || s.partitionCuts.isEmpty()) {
            throw new IllegalArgumentException("--partitions and --fault-budget must not be negative,"
                    + " --partition-cuts not empty");
        }
        if (s.tasks < 1 || s.workers < 1 || s.kills < 0 || s.pauses < 0) {
            throw new IllegalArgumentException("--tasks and --workers must be positive, --kills not negative");
        }
        if (s.faultWorkers < 1 || (s.workers > 1 && s.faultWorkers >= s.workers)) {
            throw new IllegalArgumentException("--fault-workers must be at least 1 and fewer than --workers (one worker"
                    + " keeps the cluster running), was " + s.faultWorkers + " with " + s.workers + " workers");
        }
        if (s.failEvery < 0 || s.poisonEvery < 0 || s.cancelEvery < 0) {
            throw new IllegalArgumentException("--fail-every, --poison-every and --cancel-every must not be negative"
                    + " (0 turns the fault off)");
        }
        return s;
    }

    /**
     * A duration: ISO-8601 ({@code PT5M}, {@code -PT5M}) or a number with a unit ({@code 300s},
     * {@code -300s}, {@code 1500ms}, {@code 5m}).
     *
     * @throws IllegalArgumentException if {@code v} is neither
     */
    static Duration duration(String v) {
        String t = v.trim();
        try {
            if (t.toUpperCase(Locale.ROOT).matches("[+-]?P.*")) {
                return Duration.parse(t);
            }
            if (t.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
            }
            if (t.endsWith("s")) {
                return Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
            }
            if (t.endsWith("m")) {
                return Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
            }
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a duration: '" + v + "'; use PT5M, -PT5M, 300s or 1500ms", e);
        }
        throw new IllegalArgumentException("not a duration: '" + v + "'; use PT5M, -PT5M, 300s or 1500ms");
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }


    /** One line describing {@code s}, for the run's log and report. */
    static String describe(ChaosSettings s) {
        return "tasks=" + s.tasks + " (submitted over " + s.submitWindowMs() + " ms), workers=" + s.workers + ", kills="
                + s.kills + " (every ~" + s.killEvery.toMillis() + " ms +-50%), worker clock offsets=" + s.clockOffsets
                + ", pauses=" + s.pauses + " (SIGSTOP for completeWithin + 2 s, then SIGCONT)"
                + (s.faultPoints.isEmpty() ? "" : ", fault points=" + FaultPoints.format(s.faultPoints) + " (workers 0.."
                        + (s.faultWorkers - 1) + ", budget " + s.faultBudget + " kills)")
                + (s.clockJump.isZero() ? "" : ", clock jumps of worker 0 +" + s.clockJump.toSeconds() + " s and worker 1 -"
                        + s.clockJump.toSeconds() + " s and back every " + s.clockJumpEvery.toMillis() + " ms")
                + (s.partitions == 0 ? "" : ", partitions=" + s.partitions + " " + s.partitionCuts + " for " + s.freezeMs()
                        + " ms each")
                + (s.awaitReply ? ", a 4th step awaits a reply the ledger delivers" : "")
                + ", failEvery=" + s.failEvery
                + " (" + s.expectedFailures() + " tasks fail for good at step 3), poisonEvery=" + s.poisonEvery + " ("
                + s.count(Fault.POISON) + " poison inputs, every other one resubmitted once in ERROR), cancelEvery="
                + s.cancelEvery + " (" + s.count(Fault.CANCEL) + " tasks cancelled within " + s.cancelWithin.toMillis()
                + " ms of submission), stall bound=" + s.stallBoundMs() + " ms (slack " + s.stallSlack.toMillis() + " ms)"
                + ", restartDb=" + s.restartDb + (s.restartDb ? " (" + String.join(" ", s.restartCommand()) + ")" : "")
                + ", terminateBackends=" + s.terminateBackends
                + (s.failovers.isEmpty() ? "" : ", failovers=" + s.failovers + " (" + s.haDir + "/), replicationLag="
                        + s.replicationLagMs + " ms, reconnect allowance " + s.reconnect.toMillis() + " ms after each, ledger outside the store at " + s.ledgerUrl())
                + ", ledgerLatency="
                + s.ledgerLatencyMinMs + "-" + s.ledgerLatencyMaxMs + " ms x2 per call, slowReplies=" + s.slowPerMille
                + " per mille of first attempts, lateApplies=" + s.lateApplyPerMille + " per mille of forward calls, service "
                + (s.serviceEnforcesDeadline ? "enforces" : "ignores") + " deadlines, completeWithin=" + s.completeWithin.toMillis() + " ms, supervisorInterval="
                + s.supervisorInterval.toMillis() + " ms, pollInterval=" + s.pollInterval.toMillis() + " ms";
    }
}
