package dev.sas.reliability;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a chaos run does to the database itself: restarts it once ({@code --restart-db}),
 * terminates the run's PostgreSQL backends ({@code --terminate-backends}), or moves the primary
 * of the HA cluster ({@code --failover}); keeps each outage (database clock) for the stall check.
 * Called from the chaos thread only.
 */
final class DbDisruption {
    /** One failover of the HA cluster, times on the coordinator's clock. */
    record FailoverRecord(ChaosSettings.Failover kind, String output, long startedAt, long writableAt, boolean writable,
            long healthyAt) {
    }

    private final ChaosSettings s;
    private final ChaosDb db;
    private final String appPrefix;
    private final Path logDir;
    private final long dbOffsetMs;
    private final AtomicBoolean closing;
    private final Consumer<String> log;
    /** When the database was restarted or failed over, on the database clock. */
    final List<ChaosChecks.Outage> outages = new CopyOnWriteArrayList<>();
    /** The failovers of the HA cluster done so far. */
    final List<FailoverRecord> failoversDone = new CopyOnWriteArrayList<>();
    volatile String description = "none";

    DbDisruption(ChaosSettings s, String appPrefix, Path logDir, long dbOffsetMs, AtomicBoolean closing,
            Consumer<String> log) {
        this.s = s;
        this.db = s.db();
        this.appPrefix = appPrefix;
        this.logDir = logDir;
        this.dbOffsetMs = dbOffsetMs;
        this.closing = closing;
        this.log = log;
    }

    /** Restarts the database, or terminates the run's backends, if the settings ask for it. */
    void disrupt() throws IOException, InterruptedException {
        if (s.restartDb) {
            List<String> cmd = s.restartCommand();
            long t0 = System.currentTimeMillis();
            log.accept("restarting " + db + ": " + String.join(" ", cmd));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logDir.resolve("db-restart.log").toFile())).start();
            int rc = p.waitFor();
            boolean up = waitDbReady(s.url, 60_000);
            long t1 = System.currentTimeMillis();
            outages.add(new ChaosChecks.Outage(t0 + dbOffsetMs, t1 + dbOffsetMs));
            description = db + " restarted (" + String.join(" ", cmd) + " exit " + rc + ", accepting again after "
                    + (t1 - t0) + " ms" + (up ? ")" : ", NOT READY)");
            log.accept(description);
        } else if (s.terminateBackends && db == ChaosDb.POSTGRES) {
            String sql = "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE left(application_name, "
                    + appPrefix.length() + ") = '" + appPrefix + "' AND pid <> pg_backend_pid()";
            try (Connection c = DriverManager.getConnection(s.url); Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery(sql)) {
                rs.next();
                description = "terminated all " + rs.getLong(1) + " backends of application_name " + appPrefix + "*";
            } catch (SQLException e) {
                description = "terminating backends failed: " + e.getMessage();
            }
            log.accept(description);
        }
    }

    /**
     * Moves the HA cluster's primary ({@code ha/kill-primary.sh} or {@code ha/switchover.sh}),
     * waits until the store's URL reaches a writable primary again (the outage, kept for the stall
     * check), and after a kill brings the killed node back ({@code ha/start-node.sh}) and waits
     * until the cluster is whole again ({@code ha/wait.sh}), so the next failover finds a
     * synchronous standby.
     *
     * @param open the tasks not terminal, for the log
     */
    void failover(ChaosSettings.Failover kind, long open) throws IOException, InterruptedException {
        if (closing.get()) {
            return;
        }
        List<String> cmd = new ArrayList<>(List.of("bash", s.haDir.resolve(
                kind == ChaosSettings.Failover.KILL ? "kill-primary.sh" : "switchover.sh").toString()));
        if (kind == ChaosSettings.Failover.KILL && s.replicationLagMs > 0) {
            cmd.addAll(List.of("--lag-ms", String.valueOf(s.replicationLagMs)));
        }
        long t0 = System.currentTimeMillis();
        log.accept("failover #" + (failoversDone.size() + 1) + " (" + kind + "), " + open + " tasks not terminal: "
                + String.join(" ", cmd));
        String out = runScript(cmd);
        // a kill with replication lag froze the standbys first: the primary died at the end of the script
        long died = kind == ChaosSettings.Failover.KILL ? killedAt(out, t0) : t0;
        boolean up = waitWritable(s.url, 120_000);
        long t1 = System.currentTimeMillis();
        outages.add(new ChaosChecks.Outage(died + dbOffsetMs, t1 + dbOffsetMs, s.reconnect.toMillis()));
        log.accept(out.strip().replace('\n', ' ') + "; a primary accepts writes again after " + (t1 - died) + " ms"
                + (up ? "" : " (NOT WRITABLE after 120 s)"));
        if (kind == ChaosSettings.Failover.KILL) {
            Matcher m = Pattern.compile("killed node(\\d+)").matcher(out);
            if (m.find()) {
                log.accept(runScript(List.of("bash", s.haDir.resolve("start-node.sh").toString(), m.group(1))).strip());
            }
        }
        String health = runScript(List.of("bash", s.haDir.resolve("wait.sh").toString(), "120"));
        long t2 = System.currentTimeMillis();
        log.accept("cluster whole again after " + (t2 - died) + " ms" + (health.isBlank() ? "" : ": " + health.strip()));
        failoversDone.add(new FailoverRecord(kind, out.strip(), died, t1, up, t2));
    }

    /** The kill time {@code kill-primary.sh} printed ("at <epoch ms>"), or {@code fallback}. */
    static long killedAt(String out, long fallback) {
        Matcher m = Pattern.compile("killed node\\d+ .* at (\\d+)").matcher(out);
        return m.find() ? Long.parseLong(m.group(1)) : fallback;
    }

    /** Runs a script of the HA cluster and returns its output (also appended to ha.log in the log directory). */
    private String runScript(List<String> cmd) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(s.haEnv);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int rc = p.waitFor();
        Files.writeString(logDir.resolve("ha.log"), "$ " + String.join(" ", cmd) + " (exit " + rc + ")\n" + out,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        return rc == 0 ? out : out + " (exit " + rc + ")";
    }

    /** Waits until {@code url} reaches a primary that accepts a write; true when it does. */
    static boolean waitWritable(String url, long timeoutMs) throws InterruptedException {
        long end = System.currentTimeMillis() + timeoutMs;
        DriverManager.setLoginTimeout(5);
        while (System.currentTimeMillis() < end) {
            try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
                st.execute("CREATE TEMPORARY TABLE chaos_probe (x INT)");
                return true;
            } catch (SQLException e) {
                Thread.sleep(100);
            }
        }
        return false;
    }

    /** Waits until the database at {@code url} accepts a connection and a query; true when it does. */
    static boolean waitDbReady(String url, long timeoutMs) throws InterruptedException {
        long end = System.currentTimeMillis() + timeoutMs;
        DriverManager.setLoginTimeout(5);
        while (System.currentTimeMillis() < end) {
            try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
                st.execute("SELECT 1");
                return true;
            } catch (SQLException e) {
                Thread.sleep(250);
            }
        }
        return false;
    }
}
