package dev.sas.reliability;

import java.util.List;

/**
 * The runnable chaos run:
 * {@code java -jar sas-reliability/target/sas-reliability.jar --db postgres --tasks 5000 --kills 10 --restart-db}.
 *
 * <p>Options: {@code --db postgres|mariadb} (URL from SAS_TEST_POSTGRES_URL / SAS_TEST_MARIADB_URL or the
 * local default) or {@code --url}, {@code --tasks}, {@code --workers}, {@code --kills}, {@code --kill-every-ms},
 * {@code --fail-every}, {@code --poison-every}, {@code --cancel-every}, {@code --cancel-within-ms},
 * {@code --skew 300s} (worker 0 +300 s, worker 1 -300 s) or {@code --clock-offsets PT1S,-PT1S},
 * {@code --stall-slack-ms}, {@code --restart-db} (PostgreSQL via {@code pg_ctlcluster
 * --skip-systemctl-redirect <--pg-cluster, default "15 main"> restart}, MariaDB via
 * {@code service mariadb restart}, or {@code --restart-cmd}), {@code --terminate-backends}, {@code --latency-ms a-b},
 * {@code --slow-per-mille}, {@code --complete-within-ms}, {@code --supervisor-interval-ms},
 * {@code --poll-interval-ms}, {@code --timeout-s}, {@code --log-dir}, {@code --keep-tables}.
 * Faults at chosen points (worker 0): {@code --fault-points after-effect:freeze:30,claim-start:kill:30}
 * (points claim-start, start-record, after-effect, compensation, completion — the last needs
 * {@code --await-reply true}, which adds a step that awaits a reply; actions kill, freeze; per mille),
 * {@code --fault-budget} (fault-point kills before restarted workers get no more, default 3),
 * {@code --fault-workers} (how many workers honour them, slots 0, 1, ...; default 1);
 * {@code --clock-jump 5m} with {@code --clock-jump-every-ms} (worker 0 ahead and back, worker 1
 * behind and back); {@code --partitions N} with {@code --partition-cuts both,from-db,to-db}.
 * On the local HA cluster ({@code ha/start.sh}): {@code --db ha-postgres} (its multi-host URL, or
 * SAS_TEST_HA_POSTGRES_URL; the harness's tables outside the cluster, or SAS_TEST_HA_OUTSIDE_URL),
 * {@code --ledger-url}, {@code --failover kill,switchover}, {@code --replication-lag-ms},
 * {@code --reconnect-ms}, {@code --ha-dir}.
 * Exits 0 when every invariant holds, 1 when one broke, 2 on a usage error.
 */
public final class ChaosMain {

    private ChaosMain() {
    }

    private static void print(String title, List<String> lines) {
        if (!lines.isEmpty()) {
            System.out.println();
            System.out.println(title);
            lines.forEach(System.out::println);
        }
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel",
                System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        ChaosSettings s;
        try {
            s = ChaosSettings.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("usage error: " + e.getMessage());
            System.exit(2);
            return;
        }
        ChaosReport report;
        try (ChaosRun run = new ChaosRun(s)) {
            run.start();
            long readyBy = System.currentTimeMillis() + 60_000;
            while (!run.workersReady()) {
                if (System.currentTimeMillis() > readyBy) {
                    throw new IllegalStateException("workers did not start within 60 s; see " + run.logDir());
                }
                Thread.sleep(100);
            }
            run.log("all workers ready");
            run.startChaos();
            run.submitAll();
            long deadline = System.currentTimeMillis() + s.timeout.toMillis();
            long nextPrint = 0;
            while (!run.finished()) {
                if (System.currentTimeMillis() > deadline) {
                    run.log("timed out after " + s.timeout + " with " + run.progress());
                    break;
                }
                if (System.currentTimeMillis() >= nextPrint) {
                    run.log(run.progress());
                    nextPrint = System.currentTimeMillis() + 2_000;
                }
                Thread.sleep(200);
            }
            run.log("all tasks terminal; letting late replies land and stopping workers");
            report = run.finish();
            System.out.println();
            System.out.println("Settings: " + report.settings);
            System.out.println();
            System.out.print(report.toMarkdown());
            if (report.longestStall != null) {
                System.out.println();
                System.out.println("Task with the longest stall:");
                System.out.print(report.longestStall);
            }
            print("Overlapping executions (first 10):", report.overlapExamples);
            print("Stalls past the bound, passed over or idle (worst 10):", report.worstStalls);
            List<String> evidence = report.evidence;
            if (!evidence.isEmpty()) {
                System.out.println();
                System.out.println("Evidence (tasks that broke an invariant):");
                evidence.forEach(System.out::println);
            }
        }
        if (s.restartDb && !DbDisruption.waitDbReady(s.url, 60_000)) {
            System.err.println("the database is NOT accepting connections after the run");
        }
        System.exit(report.violations().isEmpty() ? 0 : 1);
    }
}
