package dev.sas.reliability;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The worker JVMs of a chaos run, one per slot: starts them ({@link WorkerMain}), kills, freezes
 * and restarts them, restarts any that died on their own (counting fault-point kills apart from
 * crashes), keeps when each could not run steps ({@link NodeDowntime}), and notes when a worker
 * hit by a fault held the supervisor lease. Thread-safe: the slot table is guarded by this object.
 */
final class ChaosWorkers {
    private final ChaosSettings s;
    private final String prefix;
    private final String appPrefix;
    private final Path logDir;
    private final String harnessUrl;
    private final AtomicBoolean closing;
    private final Consumer<String> log;
    /** Now on the database clock. */
    private final LongSupplier dbNow;
    private final Process[] slots;
    private final int[] incarnations;
    /** Per slot, the incarnation whose first report ends its downtime (0: none awaited). */
    private final int[] awaitedIncarnation;
    private final List<Process> started = new CopyOnWriteArrayList<>();
    /** One proxy per worker slot in front of the store's database, when the run makes partitions. */
    private final List<DbProxy> proxies = new ArrayList<>();
    /** When each worker could not run steps; the windows in which none could are outages for the stall check. */
    final NodeDowntime downtime;
    final AtomicInteger killsDone = new AtomicInteger();
    final AtomicInteger killsWithWork = new AtomicInteger();
    final AtomicInteger selfExits = new AtomicInteger();
    /** Workers killed at a fault point (exit {@link FaultPoints#KILLED_AT_POINT}), restarted. */
    final AtomicInteger faultKills = new AtomicInteger();
    /** From each SIGKILL or SIGSTOP of the supervisor lease's holder, one lease later (database clock). */
    final List<ChaosChecks.Outage> supervisorLosses = new CopyOnWriteArrayList<>();

    ChaosWorkers(ChaosSettings s, String prefix, String appPrefix, Path logDir, String harnessUrl,
            AtomicBoolean closing, Consumer<String> log, LongSupplier dbNow) {
        this.s = s;
        this.prefix = prefix;
        this.appPrefix = appPrefix;
        this.logDir = logDir;
        this.harnessUrl = harnessUrl;
        this.closing = closing;
        this.log = log;
        this.dbNow = dbNow;
        this.slots = new Process[s.workers];
        this.incarnations = new int[s.workers];
        this.awaitedIncarnation = new int[s.workers];
        this.downtime = new NodeDowntime(s.workers);
    }

    int size() {
        return slots.length;
    }

    Process process(int slot) {
        return slots[slot];
    }

    DbProxy proxy(int slot) {
        return proxies.get(slot);
    }

    /** Every worker process started. */
    List<Process> processes() {
        return List.copyOf(started);
    }

    /** Puts a proxy in front of the store's database for each slot (for partitions), then starts every worker. */
    void startAll() throws IOException {
        if (s.partitions > 0 && proxies.isEmpty()) {
            for (int slot = 0; slot < slots.length; slot++) {
                proxies.add(DbProxy.of(s.url, "w" + slot));
            }
        }
        for (int i = 0; i < slots.length; i++) {
            start(i);
        }
    }

    private synchronized void start(int slot) throws IOException {
        if (closing.get()) {
            return;
        }
        int inc = ++incarnations[slot];
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = s.classpath != null ? s.classpath
                : System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(javaBin, "-Xmx256m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dorg.slf4j.simpleLogger.showDateTime=true", "-cp", cp, WorkerMain.class.getName(),
                "--prefix", prefix, "--slot", String.valueOf(slot), "--incarnation", String.valueOf(inc),
                "--parent-pid", String.valueOf(ProcessHandle.current().pid()), "--app-name", appPrefix + "w" + slot,
                "--clock-offset", s.clockOffset(slot).toString(),
                "--url", proxies.isEmpty() ? s.url : proxies.get(slot).rewrite(s.url), "--ledger-url", harnessUrl,
                "--fail-every", String.valueOf(s.failEvery),
                "--latency-ms", s.ledgerLatencyMinMs + "-" + s.ledgerLatencyMaxMs,
                "--slow-per-mille", String.valueOf(s.slowPerMille),
                "--late-apply-per-mille", String.valueOf(s.lateApplyPerMille),
                "--service-enforces-deadline", String.valueOf(s.serviceEnforcesDeadline),
                "--complete-within-ms", String.valueOf(s.completeWithin.toMillis()),
                "--supervisor-interval-ms", String.valueOf(s.supervisorInterval.toMillis()),
                "--poll-interval-ms", String.valueOf(s.pollInterval.toMillis())));
        if (s.awaitReply) {
            cmd.addAll(List.of("--await-reply", "true"));
        }
        // the first faultWorkers only (worker 0 by default): the others keep the cluster running (three
        // nodes killed at once would measure the JVMs' restart, not SAS); a restarted one gets them again
        // until the budget is spent
        if (!s.faultPoints.isEmpty() && slot < s.faultWorkers && faultKills.get() < s.faultBudget) {
            cmd.addAll(List.of("--fault-points", FaultPoints.format(s.faultPoints)));
        }
        if (!s.clockJump.isZero()) {
            cmd.addAll(List.of("--clock-jump", s.clockJump.toString(), "--clock-jump-every-ms",
                    String.valueOf(s.clockJumpEvery.toMillis())));
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logDir.resolve("worker-" + slot + ".log").toFile()));
        Process p = pb.start();
        started.add(p);
        slots[slot] = p;
        log.accept("started worker " + slot + " incarnation " + inc + " pid " + p.pid());
    }

    /** True once every worker slot has reported metrics at least once. */
    boolean ready() {
        try (Connection c = DriverManager.getConnection(harnessUrl); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT COUNT(DISTINCT slot) FROM " + prefix + "chaos_worker")) {
            return rs.next() && rs.getLong(1) >= slots.length;
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * SIGKILLs worker {@code slot} and starts its next incarnation, under the lock
     * {@link #restartCrashed} takes, so it never sees this worker dead and restarts it as a crash.
     * Returns false, killing nothing, if the worker had already exited (halted at a fault point
     * since it was picked): it is counted and restarted as {@link #restartCrashed} does, not as a SIGKILL.
     */
    synchronized boolean kill(int slot, long open) throws Exception {
        Process p = slots[slot];
        if (!p.isAlive()) {
            restartCrashed();
            return false;
        }
        downtime.down(slot, dbNow.getAsLong());
        p.destroyForcibly();
        p.onExit().get(10, TimeUnit.SECONDS);
        killsDone.incrementAndGet();
        if (open != 0) {
            killsWithWork.incrementAndGet();
        }
        log.accept("SIGKILL #" + killsDone.get() + ": worker " + slot + " pid " + p.pid() + " (exit "
                + p.exitValue() + "), " + open + " tasks not terminal");
        start(slot);
        awaitedIncarnation[slot] = incarnations[slot];
        return true;
    }

    /** Freezes worker {@code slot} (SIGSTOP) for {@code ms}, then resumes it (SIGCONT). */
    void freeze(int slot, long ms, long open) throws IOException, InterruptedException {
        Process p = slots[slot];
        downtime.down(slot, dbNow.getAsLong());
        signal("STOP", p.pid());
        log.accept("SIGSTOP: worker " + slot + " pid " + p.pid() + " frozen for " + ms + " ms, " + open
                + " tasks not terminal");
        Thread.sleep(ms);
        signal("CONT", p.pid());
        downtime.up(slot, dbNow.getAsLong());
        log.accept("SIGCONT: worker " + slot + " pid " + p.pid() + " resumed");
    }

    /**
     * Restarts any worker that died on its own (not killed by this harness), and counts it: as
     * killed at a fault point if it exited with {@link FaultPoints#KILLED_AT_POINT}, else as a crash.
     */
    synchronized void restartCrashed() throws IOException {
        for (int i = 0; i < slots.length; i++) {
            Process p = slots[i];
            if (p != null && !p.isAlive() && !closing.get()) {
                downtime.down(i, dbNow.getAsLong() - 250); // it died at most one poll ago
                if (p.exitValue() == FaultPoints.KILLED_AT_POINT) {
                    faultKills.incrementAndGet();
                    noteIfSupervisor(p.pid());
                    log.accept("worker " + i + " pid " + p.pid() + " killed at a fault point; restarting it");
                } else {
                    selfExits.incrementAndGet();
                    log.accept("worker " + i + " pid " + p.pid() + " exited on its own with " + p.exitValue() + "; see "
                            + logDir.resolve("worker-" + i + ".log") + "; restarting it");
                }
                start(i);
                awaitedIncarnation[i] = incarnations[i];
            }
        }
    }

    /** Ends the downtime of each restarted worker whose new incarnation has reported (it runs steps). */
    void noteRestartsReady() {
        boolean any = false;
        synchronized (this) {
            for (int a : awaitedIncarnation) {
                any |= a > 0;
            }
        }
        if (!any) {
            return;
        }
        try (Connection c = DriverManager.getConnection(harnessUrl); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT slot, MAX(incarnation) FROM " + prefix
                        + "chaos_worker GROUP BY slot")) {
            long now = dbNow.getAsLong();
            synchronized (this) {
                while (rs.next()) {
                    int slot = rs.getInt(1);
                    if (slot < slots.length && awaitedIncarnation[slot] > 0 && rs.getInt(2) >= awaitedIncarnation[slot]) {
                        awaitedIncarnation[slot] = 0;
                        downtime.up(slot, now);
                    }
                }
            }
        } catch (SQLException e) {
            // the database is restarting; the next round sees it
        }
    }

    /**
     * A random slot whose current incarnation has started (reported metrics), so a kill hits a
     * working node rather than a JVM still booting; after 30 s of waiting, any slot.
     */
    int pickReadySlot() throws IOException, InterruptedException {
        long end = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < end && !closing.get()) {
            List<Integer> ready = new ArrayList<>();
            try (Connection c = DriverManager.getConnection(harnessUrl); Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT slot, MAX(incarnation) FROM " + prefix
                            + "chaos_worker GROUP BY slot")) {
                synchronized (this) {
                    while (rs.next()) {
                        int slot = rs.getInt(1);
                        if (slot < slots.length && rs.getInt(2) == incarnations[slot] && slots[slot].isAlive()) {
                            ready.add(slot);
                        }
                    }
                }
            } catch (SQLException e) {
                // the database is restarting; try again
            }
            if (!ready.isEmpty()) {
                return ready.get(ThreadLocalRandom.current().nextInt(ready.size()));
            }
            Thread.sleep(100);
            restartCrashed();
        }
        return ThreadLocalRandom.current().nextInt(slots.length);
    }

    private static void signal(String sig, long pid) throws IOException, InterruptedException {
        int rc = new ProcessBuilder("kill", "-" + sig, String.valueOf(pid)).inheritIO().start().waitFor();
        if (rc != 0) {
            throw new IOException("kill -" + sig + " " + pid + " exited " + rc);
        }
    }

    /**
     * If the worker about to be killed or frozen holds the supervisor lease, the expired claims wait
     * up to one more lease for another node to take over: the stall check allows for it.
     */
    void noteIfSupervisor(long pid) {
        if (holdsSupervisor(pid)) {
            long at = dbNow.getAsLong();
            supervisorLosses.add(new ChaosChecks.Outage(at, at + s.supervisorLeaseMs()));
            log.accept("worker pid " + pid + " holds the supervisor lease");
        }
    }

    /** True if worker {@code pid} holds the supervisor lease (or it cannot be read: then allow for it). */
    boolean holdsSupervisor(long pid) {
        try (Connection c = DriverManager.getConnection(s.url);
                PreparedStatement ps = c.prepareStatement("SELECT holder FROM " + prefix + "supervisor_lease"
                        + " WHERE name = 'supervisor'")) {
            try (ResultSet rs = ps.executeQuery()) {
                String holder = rs.next() ? rs.getString(1) : null;
                return holder != null && holder.endsWith("-p" + pid);
            }
        } catch (Exception e) {
            log.accept("could not read the supervisor lease before a fault: " + e);
            return true;
        }
    }

    /**
     * Counts workers that were found dead at the end, then stops the others (SIGTERM, so they write
     * their final metrics; SIGKILL after 15 s). Sets {@code closing}: nothing is restarted after it.
     */
    void stop() throws InterruptedException {
        synchronized (this) {
            for (int i = 0; i < slots.length; i++) {
                Process p = slots[i];
                if (p != null && !p.isAlive() && p.exitValue() == FaultPoints.KILLED_AT_POINT) {
                    faultKills.incrementAndGet();
                } else if (p != null && !p.isAlive()) {
                    selfExits.incrementAndGet();
                    log.accept("worker " + i + " pid " + p.pid() + " had exited on its own with " + p.exitValue());
                }
            }
            closing.set(true);
            for (Process p : slots) {
                if (p != null && p.isAlive()) {
                    p.destroy();
                }
            }
        }
        for (Process p : slots) {
            if (p != null && !p.waitFor(15, TimeUnit.SECONDS)) {
                log.accept("worker pid " + p.pid() + " ignored SIGTERM; killing it");
                p.destroyForcibly();
            }
        }
    }

    /** Kills every worker still alive and closes the proxies. */
    void killAll() {
        closing.set(true);
        for (Process p : started) {
            p.destroyForcibly();
        }
        for (Process p : started) {
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    void closeProxies() {
        proxies.forEach(DbProxy::close);
    }
}
