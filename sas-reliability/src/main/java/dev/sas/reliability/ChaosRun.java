package dev.sas.reliability;

import dev.sas.core.SasRuntime;
import dev.sas.core.StateStoreException;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The coordinator of a chaos run: creates a fresh set of tables, starts the worker JVMs, submits
 * the tasks, SIGKILLs and restarts workers at random moments (and disrupts the database once if
 * asked), then checks the ledger and the task table. Workers die with it: {@link #close()} kills
 * them, and so does a shutdown hook, and each worker halts when this process is gone.
 *
 * <p>Phases: {@link #start()}, {@link #submitAll()}, {@link #startChaos()}, wait until
 * {@link #finished()}, {@link #finish()} (returns the {@link ChaosReport}), {@link #close()}.
 */
public final class ChaosRun implements AutoCloseable {
    /** Every state that is not terminal: a task left PARKED, WAITING or AWAITING_REPLY is not done. */
    private static final String NON_TERMINAL = "('PENDING', 'PROCESSING', 'COMPENSATING', 'WAITING', 'PARKED',"
            + " 'AWAITING_REPLY')";

    private final ChaosSettings s;
    private final ChaosDb db;
    private final String prefix;
    private final String appPrefix;
    private final Path logDir;
    private final long startedAt = System.currentTimeMillis();
    private final Process[] slots;
    private final int[] incarnations;
    private final List<Process> started = new CopyOnWriteArrayList<>();
    private final List<TaskId> ids = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger killsDone = new AtomicInteger();
    private final AtomicInteger killsWithWork = new AtomicInteger();
    private final AtomicInteger pausesDone = new AtomicInteger();
    private final AtomicInteger selfExits = new AtomicInteger();
    /** Workers killed at a fault point (exit {@link FaultPoints#KILLED_AT_POINT}), restarted. */
    private final AtomicInteger faultKills = new AtomicInteger();
    private final AtomicInteger partitionsDone = new AtomicInteger();
    /** One proxy per worker slot in front of the store's database, when the run makes partitions. */
    private final List<DbProxy> proxies = new ArrayList<>();
    /** When each worker could not run steps; the windows in which none could are outages for the stall check. */
    private final NodeDowntime downtime;
    /** Per slot, the incarnation whose first report ends its downtime (0: none awaited). */
    private final int[] awaitedIncarnation;
    /** Cancels scheduled but not yet sent. */
    private final AtomicInteger pendingCancels = new AtomicInteger();
    /** Poison tasks to resubmit once they are in ERROR; removed when resubmitted. */
    private final Set<TaskId> toResubmit = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService operator = Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "chaos-operator");
        t.setDaemon(true);
        return t;
    });
    private final Thread shutdownHook;
    private volatile boolean chaosDone;
    private volatile boolean submitted;
    private volatile boolean closing;
    private volatile String dbDisruption = "none";
    /** When the database was restarted or failed over, on the database clock. */
    private final List<ChaosChecks.Outage> outages = new CopyOnWriteArrayList<>();
    /** The failovers of the HA cluster done so far. */
    private final List<FailoverRecord> failoversDone = new CopyOnWriteArrayList<>();
    /** Where the harness's tables are (ledger, actions, worker metrics); the store's URL unless set apart. */
    private final String harnessUrl;
    /** From each SIGKILL or SIGSTOP of the supervisor lease's holder, one lease later (database clock). */
    private final List<ChaosChecks.Outage> supervisorLosses = new CopyOnWriteArrayList<>();
    /** The database clock minus this process's clock, measured at start. */
    private long dbOffsetMs;
    private int submitFailures;
    /** The last count {@link #nonTerminal()} read, or -1 before the first. */
    private volatile long lastNonTerminal = -1;
    private Thread chaosThread;
    private JdbcStateStore store;
    private SasRuntime sas;
    private Workflow<String> workflow;

    public ChaosRun(ChaosSettings settings) {
        this.s = settings;
        this.db = settings.db();
        this.harnessUrl = settings.ledgerUrl();
        if (!settings.failovers.isEmpty() && db != ChaosDb.POSTGRES) {
            throw new IllegalArgumentException("--failover needs the HA PostgreSQL cluster (--db ha-postgres)");
        }
        String id = randomLetters(6);
        this.prefix = "ch" + id + "_";
        this.appPrefix = "chaos-" + id + "-";
        this.logDir = settings.logDir.resolve(prefix + System.currentTimeMillis());
        this.slots = new Process[settings.workers];
        this.incarnations = new int[settings.workers];
        this.downtime = new NodeDowntime(settings.workers);
        this.awaitedIncarnation = new int[settings.workers];
        this.shutdownHook = new Thread(this::killAll, "chaos-kill-workers");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** This run's table prefix. */
    public String prefix() {
        return prefix;
    }

    /** Where the workers' logs go. */
    public Path logDir() {
        return logDir;
    }

    /** Every worker process this run started. */
    public List<Process> processes() {
        return List.copyOf(started);
    }

    void log(String msg) {
        System.out.printf("[chaos %6.1fs] %s%n", (System.currentTimeMillis() - startedAt) / 1000.0, msg);
        System.out.flush();
    }

    /** Creates the tables, the coordinator's (non-running) runtime, and starts the workers. */
    public void start() throws IOException, SQLException {
        Files.createDirectories(logDir);
        log("run " + prefix + " on " + db + ": " + s + "; worker logs in " + logDir.toAbsolutePath());
        store = JdbcStateStore.builder().url(s.url).tablePrefix(prefix).maxPoolSize(4).poolName(appPrefix + "coord")
                .build();
        try (Connection c = DriverManager.getConnection(harnessUrl); Statement st = c.createStatement()) {
            for (String ddl : db.ddl(prefix)) {
                st.execute(ddl);
            }
        }
        try (Connection c = DriverManager.getConnection(s.url); Statement st = c.createStatement()) {
            dbOffsetMs = measureDbOffset(st);
        }
        if (s.partitions > 0 && proxies.isEmpty()) {
            for (int slot = 0; slot < slots.length; slot++) {
                proxies.add(DbProxy.of(s.url, "w" + slot));
            }
        }
        log("database clock - coordinator clock = " + dbOffsetMs + " ms (corrects submission times for the stall check)");
        workflow = ChaosWorkflow.create(null, null, s);
        sas = SasRuntime.builder().stateStore(store).workflow(workflow).schedulerEnabled(false).supervisorEnabled(false)
                .instanceId(appPrefix + "coordinator").build();
        sas.start();
        for (int i = 0; i < slots.length; i++) {
            startWorker(i);
        }
    }

    /** The database clock minus this process's, from the quickest of five round trips. */
    private long measureDbOffset(Statement st) throws SQLException {
        long best = Long.MAX_VALUE;
        long offset = 0;
        for (int i = 0; i < 5; i++) {
            long before = System.currentTimeMillis();
            long dbNow;
            try (ResultSet rs = st.executeQuery("SELECT " + db.nowMillis())) {
                rs.next();
                dbNow = rs.getLong(1);
            }
            long after = System.currentTimeMillis();
            if (after - before < best) {
                best = after - before;
                offset = dbNow - (before + after) / 2;
            }
        }
        return offset;
    }

    private synchronized void startWorker(int slot) throws IOException {
        if (closing) {
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
                "--url", proxies.isEmpty() ? s.url : proxies.get(slot).rewrite(s.url), "--ledger-url", harnessUrl, "--fail-every", String.valueOf(s.failEvery),
                "--latency-ms", s.ledgerLatencyMinMs + "-" + s.ledgerLatencyMaxMs,
                "--slow-per-mille", String.valueOf(s.slowPerMille),
                "--late-apply-per-mille", String.valueOf(s.lateApplyPerMille),
                "--service-enforces-deadline", String.valueOf(s.serviceEnforcesDeadline),
                "--complete-within-ms", String.valueOf(s.completeWithin.toMillis()),
                "--supervisor-interval-ms", String.valueOf(s.supervisorInterval.toMillis()),
                "--poll-interval-ms", String.valueOf(s.pollInterval.toMillis())));
        // worker 0 only: the others keep the cluster running (three nodes killed at once would measure
        // the JVMs' restart, not SAS); a restarted worker 0 gets them again until the budget is spent
        if (!s.faultPoints.isEmpty() && slot == 0 && faultKills.get() < s.faultBudget) {
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
        log("started worker " + slot + " incarnation " + inc + " pid " + p.pid());
    }

    /** True once every worker slot has reported metrics at least once. */
    public boolean workersReady() {
        try {
            return queryLong(harnessUrl, "SELECT COUNT(DISTINCT slot) FROM " + prefix + "chaos_worker") >= slots.length;
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * Submits every task through the coordinator's runtime, on 4 threads, spread evenly over
     * {@link ChaosSettings#submitWindowMs()} so that work arrives during the whole chaos (a retried
     * submit is deduplicated by business key, so retrying after a store failure is safe).
     */
    public void submitAll() throws InterruptedException {
        long t0 = System.currentTimeMillis();
        AtomicInteger next = new AtomicInteger();
        long window = s.submitWindowMs();
        AtomicInteger failures = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread th = new Thread(() -> {
                for (int i = next.getAndIncrement(); i < s.tasks && !closing; i = next.getAndIncrement()) {
                    long due = t0 + window * i / s.tasks;
                    long wait = due - System.currentTimeMillis();
                    if (wait > 0) {
                        pause(wait);
                    }
                    Fault fault = s.fault(i);
                    String input = ChaosInput.of(i, fault, s.deepPoison(i));
                    TaskId id = null;
                    for (int attempt = 1; id == null; attempt++) {
                        try {
                            id = sas.client().submit(workflow, "t-" + i, input).id();
                        } catch (StateStoreException e) {
                            if (attempt >= 40) {
                                failures.incrementAndGet();
                                log("submit of task " + i + " failed for good: " + e);
                                break;
                            }
                            pause(250);
                        }
                    }
                    if (id != null) {
                        ids.add(id);
                        if (fault == Fault.CANCEL) {
                            scheduleCancel(id);
                        } else if (s.resubmitted(i)) {
                            toResubmit.add(id);
                        }
                    }
                }
            }, "chaos-submit-" + t);
            th.start();
            threads.add(th);
        }
        for (Thread th : threads) {
            th.join();
        }
        submitFailures = failures.get();
        submitted = true;
        log("submitted " + ids.size() + " tasks in " + (System.currentTimeMillis() - t0) + " ms");
    }

    /**
     * Cancels {@code id} and records the answer: half of the cancels at a random moment within
     * {@link ChaosSettings#cancelWithin}, the other half as soon as the task is seen running
     * ({@code PROCESSING}, polled every 5 ms, for at most 20 × {@code cancelWithin}), so that they
     * land on running steps, whose calls last longer than that poll.
     */
    private void scheduleCancel(TaskId id) {
        pendingCancels.incrementAndGet();
        if (ThreadLocalRandom.current().nextBoolean()) {
            long giveUp = System.nanoTime() + s.cancelWithin.multipliedBy(20).toNanos();
            operator.schedule(() -> cancelWhenRunning(id, giveUp), 0, TimeUnit.MILLISECONDS);
            return;
        }
        long delay = ThreadLocalRandom.current().nextLong(s.cancelWithin.toMillis() + 1);
        operator.schedule(() -> sendCancel(id), delay, TimeUnit.MILLISECONDS);
    }

    private void cancelWhenRunning(TaskId id, long giveUpNanos) {
        boolean running;
        try {
            running = sas.client().find(id).map(t -> t.status() != TaskStatus.PENDING).orElse(false);
        } catch (RuntimeException e) {
            running = false;
        }
        if (running || closing || System.nanoTime() - giveUpNanos > 0) {
            sendCancel(id);
        } else {
            operator.schedule(() -> cancelWhenRunning(id, giveUpNanos), 5, TimeUnit.MILLISECONDS);
        }
    }

    private void sendCancel(TaskId id) {
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    boolean accepted = sas.client().operations().cancel(id);
                    // after a failed attempt, false is ambiguous: that attempt may have committed before
                    // its connection was lost (a failover), and a second request for a cancel is refused
                    record(id, attempt == 1 ? "cancel" : "cancel-retried", accepted);
                    return;
                } catch (StateStoreException e) {
                    if (attempt >= 40 || closing) {
                        log("cancel of task " + id + " failed for good: " + e);
                        return;
                    }
                    pause(250);
                }
            }
        } finally {
            pendingCancels.decrementAndGet();
        }
    }

    /** Resubmits, once each, the poison tasks picked for it as soon as they are in ERROR. */
    private void resubmitErrors() {
        for (TaskId id : toResubmit) {
            try {
                Optional<TaskInfo> info = sas.client().find(id);
                if (info.isPresent() && info.get().status() == TaskStatus.ERROR) {
                    sas.client().operations().resubmit(id);
                    toResubmit.remove(id);
                    record(id, "resubmit", true);
                }
            } catch (RuntimeException e) {
                // the database is restarting, or the task moved on: try again on the next round
            }
        }
    }

    /** Records an operator action, stamped with the database clock (retried while the database is down). */
    private void record(TaskId id, String action, boolean result) {
        String sql = "INSERT INTO " + prefix + "chaos_action (task_id, action, result, at) VALUES (?, ?, ?, "
                + db.nowMillis() + ")";
        for (int attempt = 1; attempt <= 40 && !closing; attempt++) {
            try (Connection c = DriverManager.getConnection(harnessUrl); PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, id.value());
                ps.setString(2, action);
                ps.setInt(3, result ? 1 : 0);
                ps.executeUpdate();
                return;
            } catch (SQLException e) {
                pause(250);
            }
        }
        log("could not record " + action + " of task " + id);
    }

    /** Starts killing workers in the background; {@link #chaosDone()} tells when it is over. */
    public void startChaos() {
        operator.scheduleWithFixedDelay(this::resubmitErrors, 200, 200, TimeUnit.MILLISECONDS);
        operator.scheduleWithFixedDelay(this::noteRestartsReady, 200, 200, TimeUnit.MILLISECONDS);
        if (!s.faultPoints.isEmpty()) {
            operator.scheduleWithFixedDelay(() -> {
                try {
                    restartCrashed();
                } catch (IOException e) {
                    log("could not restart a worker: " + e);
                }
            }, 250, 250, TimeUnit.MILLISECONDS);
        }
        chaosThread = new Thread(this::chaos, "chaos-monkey");
        chaosThread.setDaemon(true);
        chaosThread.start();
    }

    private void chaos() {
        try {
            List<String> actions = new ArrayList<>();
            for (int i = 0; i < s.kills; i++) {
                actions.add("kill");
            }
            for (int i = 0; i < s.pauses; i++) {
                actions.add("pause");
            }
            for (int i = 0; i < s.partitions; i++) {
                actions.add("partition");
            }
            Collections.shuffle(actions);
            int disruptAt = (actions.size() + 1) / 2;
            // failovers spread evenly over the actions: after action n * (j + 1) / (f + 1)
            Map<Integer, List<ChaosSettings.Failover>> failoverAt = new HashMap<>();
            for (int j = 0; j < s.failovers.size(); j++) {
                int at = Math.max(1, actions.size() * (j + 1) / (s.failovers.size() + 1));
                failoverAt.computeIfAbsent(at, x -> new ArrayList<>()).add(s.failovers.get(j));
            }
            int k = 0;
            for (String action : actions) {
                long base = s.killEvery.toMillis();
                pause(ThreadLocalRandom.current().nextLong(base / 2, base * 3 / 2 + 1));
                if (closing) {
                    return;
                }
                k++;
                // a kill on an idle cluster proves little: before the tasks are in, wait for work
                for (int w = 0; w < 100 && !submitted && nonTerminal() == 0 && !closing; w++) {
                    pause(100);
                }
                restartCrashed();
                int slot = pickReadySlot();
                Process p = slots[slot];
                long open = nonTerminal();
                if (!action.equals("partition")) {
                    noteIfSupervisor(p.pid());
                }
                if (action.equals("kill")) {
                    // under the lock restartCrashed takes, so it never sees this worker dead and restarts
                    // it as a crash before this kill restarts it
                    synchronized (this) {
                        downtime.down(slot, dbNow());
                        p.destroyForcibly();
                        p.onExit().get(10, TimeUnit.SECONDS);
                        killsDone.incrementAndGet();
                        if (open != 0) {
                            killsWithWork.incrementAndGet();
                        }
                        log("SIGKILL #" + killsDone.get() + ": worker " + slot + " pid " + p.pid() + " (exit "
                                + p.exitValue() + "), " + open + " tasks not terminal");
                        startWorker(slot);
                        awaitedIncarnation[slot] = incarnations[slot];
                    }
                } else if (action.equals("partition")) {
                    partition(slot, p.pid());
                } else {
                    long ms = s.completeWithin.toMillis() + 2_000;
                    downtime.down(slot, dbNow());
                    signal("STOP", p.pid());
                    log("SIGSTOP: worker " + slot + " pid " + p.pid() + " frozen for " + ms + " ms, " + open
                            + " tasks not terminal");
                    pause(ms);
                    signal("CONT", p.pid());
                    downtime.up(slot, dbNow());
                    pausesDone.incrementAndGet();
                    log("SIGCONT: worker " + slot + " pid " + p.pid() + " resumed");
                }
                if (k == disruptAt) {
                    disruptDatabase();
                }
                for (ChaosSettings.Failover f : failoverAt.getOrDefault(k, List.of())) {
                    failover(f);
                }
            }
            if (actions.isEmpty()) {
                disruptDatabase();
                for (ChaosSettings.Failover f : s.failovers) {
                    // with no worker actions, a failover every killEvery, the first once work is in flight
                    pause(s.killEvery.toMillis());
                    for (int w = 0; w < 100 && !submitted && nonTerminal() == 0 && !closing; w++) {
                        pause(100);
                    }
                    failover(f);
                }
            }
        } catch (Exception e) {
            log("chaos thread failed: " + e);
        } finally {
            chaosDone = true;
        }
    }

    /**
     * Restarts any worker that died on its own (not killed by this harness), and counts it: as
     * killed at a fault point if it exited with {@link FaultPoints#KILLED_AT_POINT}, else as a crash.
     */
    private synchronized void restartCrashed() throws IOException {
        for (int i = 0; i < slots.length; i++) {
            Process p = slots[i];
            if (p != null && !p.isAlive() && !closing) {
                downtime.down(i, dbNow() - 250); // it died at most one poll ago
                if (p.exitValue() == FaultPoints.KILLED_AT_POINT) {
                    faultKills.incrementAndGet();
                    noteIfSupervisor(p.pid());
                    log("worker " + i + " pid " + p.pid() + " killed at a fault point; restarting it");
                } else {
                    selfExits.incrementAndGet();
                    log("worker " + i + " pid " + p.pid() + " exited on its own with " + p.exitValue() + "; see "
                            + logDir.resolve("worker-" + i + ".log") + "; restarting it");
                }
                startWorker(i);
                awaitedIncarnation[i] = incarnations[i];
            }
        }
    }

    /** Now on the database clock (this process's clock corrected by the offset measured at start). */
    private long dbNow() {
        return System.currentTimeMillis() + dbOffsetMs;
    }

    /** Ends the downtime of each restarted worker whose new incarnation has reported (it runs steps). */
    private void noteRestartsReady() {
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
            long now = dbNow();
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
     * Cuts worker {@code slot} off the store's database (its proxy, in the next direction of
     * {@link ChaosSettings#partitionCuts}) past a step's deadline, then heals the cut. The worker
     * still reaches the service (the ledger): a node cut off must lose its claims safely.
     */
    private void partition(int slot, long pid) throws SQLException {
        DbProxy.Cut cut = s.partitionCuts.get(partitionsDone.get() % s.partitionCuts.size());
        long ms = s.freezeMs();
        boolean supervisor = holdsSupervisor(pid);
        downtime.down(slot, dbNow());
        proxies.get(slot).cut(cut);
        try (Connection c = DriverManager.getConnection(harnessUrl)) {
            FaultLog.record(c, db, prefix, "w" + slot, "partition", cut.label(), supervisor, ms);
        }
        log("partition (" + cut.label() + "): worker " + slot + " pid " + pid + " cut off the database for " + ms
                + " ms" + (supervisor ? " (it holds the supervisor lease)" : ""));
        pause(ms);
        proxies.get(slot).heal();
        downtime.up(slot, dbNow());
        partitionsDone.incrementAndGet();
        log("partition healed: worker " + slot);
    }

    /**
     * A random slot whose current incarnation has started (reported metrics), so a kill hits a
     * working node rather than a JVM still booting; after 30 s of waiting, any slot.
     */
    private int pickReadySlot() throws IOException {
        long end = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < end && !closing) {
            List<Integer> ready = new ArrayList<>();
            try (Connection c = DriverManager.getConnection(harnessUrl); Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT slot, MAX(incarnation) FROM " + prefix
                            + "chaos_worker GROUP BY slot")) {
                while (rs.next()) {
                    int slot = rs.getInt(1);
                    if (slot < slots.length && rs.getInt(2) == incarnations[slot] && slots[slot].isAlive()) {
                        ready.add(slot);
                    }
                }
            } catch (SQLException e) {
                // the database is restarting; try again
            }
            if (!ready.isEmpty()) {
                return ready.get(ThreadLocalRandom.current().nextInt(ready.size()));
            }
            pause(100);
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
    private void noteIfSupervisor(long pid) {
        if (holdsSupervisor(pid)) {
            long at = System.currentTimeMillis() + dbOffsetMs;
            supervisorLosses.add(new ChaosChecks.Outage(at, at + s.supervisorLeaseMs()));
            log("worker pid " + pid + " holds the supervisor lease");
        }
    }

    /** True if worker {@code pid} holds the supervisor lease (or it cannot be read: then allow for it). */
    private boolean holdsSupervisor(long pid) {
        try (Connection c = DriverManager.getConnection(s.url);
                PreparedStatement ps = c.prepareStatement("SELECT holder FROM " + prefix + "supervisor_lease"
                        + " WHERE name = 'supervisor'")) {
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                String holder = rs.next() ? rs.getString(1) : null;
                return holder != null && holder.endsWith("-p" + pid);
            }
        } catch (Exception e) {
            log("could not read the supervisor lease before a fault: " + e);
            return true;
        }
    }

    private void disruptDatabase() throws IOException, InterruptedException {
        if (s.restartDb) {
            List<String> cmd = s.restartCommand();
            long t0 = System.currentTimeMillis();
            log("restarting " + db + ": " + String.join(" ", cmd));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logDir.resolve("db-restart.log").toFile())).start();
            int rc = p.waitFor();
            boolean up = waitDbReady(s.url, 60_000);
            long t1 = System.currentTimeMillis();
            outages.add(new ChaosChecks.Outage(t0 + dbOffsetMs, t1 + dbOffsetMs));
            dbDisruption = db + " restarted (" + String.join(" ", cmd) + " exit " + rc + ", accepting again after "
                    + (t1 - t0) + " ms" + (up ? ")" : ", NOT READY)");
            log(dbDisruption);
        } else if (s.terminateBackends && db == ChaosDb.POSTGRES) {
            String sql = "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE left(application_name, "
                    + appPrefix.length() + ") = '" + appPrefix + "' AND pid <> pg_backend_pid()";
            try {
                long n = queryLong(s.url, sql);
                dbDisruption = "terminated all " + n + " backends of application_name " + appPrefix + "*";
            } catch (SQLException e) {
                dbDisruption = "terminating backends failed: " + e.getMessage();
            }
            log(dbDisruption);
        }
    }

    /** One failover of the HA cluster, times on this process's clock. */
    record FailoverRecord(ChaosSettings.Failover kind, String output, long startedAt, long writableAt, boolean writable,
            long healthyAt) {
    }

    /**
     * Moves the HA cluster's primary ({@code ha/kill-primary.sh} or {@code ha/switchover.sh}),
     * waits until the store's URL reaches a writable primary again (the outage, kept for the stall
     * check), and after a kill brings the killed node back ({@code ha/start-node.sh}) and waits
     * until the cluster is whole again ({@code ha/wait.sh}), so the next failover finds a
     * synchronous standby.
     */
    private void failover(ChaosSettings.Failover kind) throws IOException, InterruptedException {
        if (closing) {
            return;
        }
        List<String> cmd = new ArrayList<>(List.of("bash", s.haDir.resolve(
                kind == ChaosSettings.Failover.KILL ? "kill-primary.sh" : "switchover.sh").toString()));
        if (kind == ChaosSettings.Failover.KILL && s.replicationLagMs > 0) {
            cmd.addAll(List.of("--lag-ms", String.valueOf(s.replicationLagMs)));
        }
        long open = nonTerminal();
        long t0 = System.currentTimeMillis();
        log("failover #" + (failoversDone.size() + 1) + " (" + kind + "), " + open + " tasks not terminal: "
                + String.join(" ", cmd));
        String out = runScript(cmd);
        // a kill with replication lag froze the standbys first: the primary died at the end of the script
        long died = kind == ChaosSettings.Failover.KILL ? killedAt(out, t0) : t0;
        boolean up = waitWritable(s.url, 120_000);
        long t1 = System.currentTimeMillis();
        outages.add(new ChaosChecks.Outage(died + dbOffsetMs, t1 + dbOffsetMs, s.reconnect.toMillis()));
        log(out.strip().replace('\n', ' ') + "; a primary accepts writes again after " + (t1 - died) + " ms"
                + (up ? "" : " (NOT WRITABLE after 120 s)"));
        if (kind == ChaosSettings.Failover.KILL) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("killed node(\\d+)").matcher(out);
            if (m.find()) {
                log(runScript(List.of("bash", s.haDir.resolve("start-node.sh").toString(), m.group(1))).strip());
            }
        }
        String health = runScript(List.of("bash", s.haDir.resolve("wait.sh").toString(), "120"));
        long t2 = System.currentTimeMillis();
        log("cluster whole again after " + (t2 - died) + " ms" + (health.isBlank() ? "" : ": " + health.strip()));
        failoversDone.add(new FailoverRecord(kind, out.strip(), died, t1, up, t2));
    }

    /** The kill time {@code kill-primary.sh} printed ("at <epoch ms>"), or {@code fallback}. */
    static long killedAt(String out, long fallback) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("killed node\\d+ .* at (\\d+)").matcher(out);
        return m.find() ? Long.parseLong(m.group(1)) : fallback;
    }

    /** Runs a script of the HA cluster and returns its output (also appended to ha.log in the log directory). */
    private String runScript(List<String> cmd) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(s.haEnv);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        int rc = p.waitFor();
        Files.writeString(logDir.resolve("ha.log"), "$ " + String.join(" ", cmd) + " (exit " + rc + ")\n" + out,
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
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

    public boolean chaosDone() {
        return chaosDone;
    }

    /** Tasks not yet terminal, or -1 if the database cannot be asked right now. */
    public long nonTerminal() {
        try {
            long n = queryLong(s.url, "SELECT COUNT(*) FROM " + prefix + "task WHERE state IN " + NON_TERMINAL);
            lastNonTerminal = n;
            return n;
        } catch (SQLException e) {
            return -1;
        }
    }

    /**
     * True when the chaos is over, every cancel was sent, every poison task picked for a resubmit
     * was resubmitted, and every submitted task is terminal.
     */
    public boolean finished() {
        return chaosDone && submitted && pendingCancels.get() == 0 && toResubmit.isEmpty() && nonTerminal() == 0;
    }

    /** One line of progress. */
    public String progress() {
        long open = nonTerminal();
        // never "-1": while the database cannot be asked, say so and show the last count it gave
        String count = open >= 0 ? String.valueOf(open)
                : "database unreachable (last count " + (lastNonTerminal < 0 ? "none" : lastNonTerminal) + ")";
        return count + " of " + ids.size() + " submitted tasks not terminal, kills " + killsDone.get() + "/"
                + s.kills + ", pauses " + pausesDone.get() + "/" + s.pauses + ", partitions " + partitionsDone.get() + "/"
                + s.partitions + ", fault-point kills " + faultKills.get() + ", cancels pending " + pendingCancels.get()
                + ", resubmits pending " + toResubmit.size();
    }

    /**
     * Lets late replies land, stops the workers (SIGTERM, so they write their final metrics), and
     * checks everything.
     */
    public ChaosReport finish() throws Exception {
        if (chaosThread != null) {
            chaosThread.join(30_000);
        }
        pause(s.completeWithin.toMillis() + 1_000);
        stopWorkers();
        ChaosReport r = verify();
        r.wallClockMs = System.currentTimeMillis() - startedAt;
        try {
            r.loadAverage = Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            r.loadAverage = "unknown";
        }
        return r;
    }

    private void stopWorkers() throws InterruptedException {
        synchronized (this) {
            for (int i = 0; i < slots.length; i++) {
                Process p = slots[i];
                if (p != null && !p.isAlive() && p.exitValue() == FaultPoints.KILLED_AT_POINT) {
                    faultKills.incrementAndGet();
                } else if (p != null && !p.isAlive()) {
                    selfExits.incrementAndGet();
                    log("worker " + i + " pid " + p.pid() + " had exited on its own with " + p.exitValue());
                }
            }
            closing = true;
            for (Process p : slots) {
                if (p != null && p.isAlive()) {
                    p.destroy();
                }
            }
        }
        for (Process p : slots) {
            if (p != null && !p.waitFor(15, TimeUnit.SECONDS)) {
                log("worker pid " + p.pid() + " ignored SIGTERM; killing it");
                p.destroyForcibly();
            }
        }
    }

    /** Checks every invariant against the task table, the ledger and the workers' metrics. */
    public ChaosReport verify() throws SQLException {
        ChaosReport r = new ChaosReport();
        r.database = db + " (" + s.url.replaceAll("password=[^&]*", "password=***") + ")";
        r.settings = s.toString();
        r.total = s.tasks;
        r.submitted = ids.size();
        r.submitFailures = submitFailures;
        r.expectedFailures = s.expectedFailures();
        r.poisonTasks = s.count(Fault.POISON);
        r.cancelTasks = s.count(Fault.CANCEL);
        r.killsDone = killsDone.get();
        r.killsWithWorkInFlight = killsWithWork.get();
        r.pausesDone = pausesDone.get();
        r.faultKills = faultKills.get();
        r.partitionsDone = partitionsDone.get();
        r.selfExits = selfExits.get();
        r.workerProcesses = started.size();
        r.dbDisruption = dbDisruption;
        try (Connection c = DriverManager.getConnection(s.url); Connection h = DriverManager.getConnection(harnessUrl)) {
            Map<String, int[]> eventCounts = new HashMap<>();
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT task_id, type, COUNT(*) FROM"
                    // an event may share its row with the one before it (then_type, schema 8)
                    + " (SELECT task_id, type FROM " + prefix + "event UNION ALL SELECT task_id, then_type FROM "
                    + prefix + "event WHERE then_type IS NOT NULL) x"
                    + " WHERE type IN ('ERROR', 'RESUBMITTED') GROUP BY task_id, type")) {
                while (rs.next()) {
                    eventCounts.computeIfAbsent(rs.getString(1), x -> new int[2])[rs.getString(2).equals("ERROR") ? 0
                            : 1] = rs.getInt(3);
                }
            }
            Map<String, ChaosChecks.Task> tasks = new HashMap<>();
            List<Long> durations = new ArrayList<>();
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT task_id, business_key,"
                    + " state, created_at, updated_at, last_error FROM " + prefix + "task")) {
                while (rs.next()) {
                    String id = rs.getString(1);
                    int[] n = eventCounts.getOrDefault(id, new int[2]);
                    tasks.put(id, new ChaosChecks.Task(id, Integer.parseInt(rs.getString(2).substring(2)),
                            rs.getString(3), rs.getLong(4) + dbOffsetMs, rs.getString(6), n[0], n[1]));
                    durations.add(rs.getLong(5) - rs.getLong(4));
                }
            }
            Set<String> lost = new HashSet<>();
            for (TaskId id : ids) {
                if (tasks.containsKey(id.value())) {
                    r.rowsFound++;
                } else {
                    r.lost++;
                    lost.add(id.value());
                }
            }
            Collections.sort(durations);
            if (!durations.isEmpty()) {
                r.p50CreatedToFinalMs = durations.get(durations.size() / 2);
                r.p99CreatedToFinalMs = durations.get(Math.min(durations.size() - 1, (int) (durations.size() * 0.99)));
                r.maxCreatedToFinalMs = durations.get(durations.size() - 1);
            }
            List<ChaosChecks.Exec> execs = new ArrayList<>();
            try (Statement st = h.createStatement(); ResultSet rs = st.executeQuery("SELECT id, task_id, step, kind,"
                    + " attempt, node, idem_key, started_at, window_ms, ended_at, outcome FROM " + prefix + "ledger_exec")) {
                while (rs.next()) {
                    long ended = rs.getLong(10);
                    Long end = rs.wasNull() ? null : ended;
                    execs.add(new ChaosChecks.Exec(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4),
                            rs.getInt(5), rs.getString(6), rs.getString(7), rs.getLong(8), rs.getLong(9), end,
                            rs.getString(11)));
                }
            }
            List<ChaosChecks.Effect> effects = new ArrayList<>();
            try (Statement st = h.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT f.exec_id, f.idem_key, f.task_id, f.step, f.kind,"
                            + " CASE WHEN f.at > x.started_at + x.window_ms THEN 1 ELSE 0 END FROM " + prefix
                            + "ledger_effect f JOIN " + prefix + "ledger_exec x ON x.id = f.exec_id")) {
                while (rs.next()) {
                    effects.add(new ChaosChecks.Effect(rs.getLong(1), rs.getString(2), rs.getString(3),
                            rs.getString(4), rs.getString(5), rs.getInt(6) == 1));
                }
            }
            List<ChaosChecks.Action> actions = new ArrayList<>();
            try (Statement st = h.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT task_id, action, result, at FROM " + prefix + "chaos_action")) {
                while (rs.next()) {
                    actions.add(new ChaosChecks.Action(rs.getString(1), rs.getString(2), rs.getInt(3) == 1,
                            rs.getLong(4)));
                }
            }
            FaultLog faults = FaultLog.read(h, prefix, s.supervisorLeaseMs());
            r.faults.putAll(faults.counts);
            List<ChaosChecks.Outage> supervisorLost = new ArrayList<>(supervisorLosses);
            supervisorLost.addAll(faults.supervisorLosses);
            faults.freezes.forEach(f -> downtime.downFor((int) f[0], f[1], f[2]));
            List<ChaosChecks.Outage> noNode = downtime.allDown(dbNow());
            r.noNodeWindows = noNode.size();
            r.noNodeMs = noNode.stream().mapToLong(ChaosChecks.Outage::length).sum();
            List<ChaosChecks.Outage> held = new ArrayList<>(outages);
            held.addAll(noNode);
            ChaosChecks checks = new ChaosChecks(s, List.copyOf(tasks.values()), execs, effects, actions,
                    List.copyOf(held)).supervisorLost(supervisorLost);
            checks.check(r);
            r.history = HistoryInput.check(c, h, prefix, ids.stream().map(TaskId::value).toList(), s.stallBoundMs());
            Set<String> suspects = new TreeSet<>(checks.suspects);
            suspects.addAll(lost);
            // worker metrics and events
            try (Statement st = h.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT COALESCE(SUM(timeouts_recovered), 0), COALESCE(SUM(stale_rejected), 0),"
                            + " COALESCE(SUM(deadlines_missed), 0), COALESCE(SUM(retries), 0),"
                            + " COALESCE(SUM(store_failures), 0), COALESCE(SUM(steps_completed), 0),"
                            + " COALESCE(SUM(tasks_processed), 0) FROM " + prefix + "chaos_worker")) {
                rs.next();
                r.takeoversMetric = rs.getLong(1);
                r.staleRejected = rs.getLong(2);
                r.deadlinesMissed = rs.getLong(3);
                r.retries = rs.getLong(4);
                r.storeFailures = rs.getLong(5);
                r.stepsCompletedMetric = rs.getLong(6);
                r.tasksProcessedMetric = rs.getLong(7);
            }
            r.stepsCompletedEvents = countEvents(c, "STEP_COMPLETED");
            r.processedEvents = countEvents(c, "PROCESSED");
            for (FailoverRecord f : failoversDone) {
                r.failovers.add(describe(c, f));
            }
            eventGaps(c, r);
            if (r.maxStallTask != null) {
                r.longestStall = describe(h, r.maxStallTask, tasks.get(r.maxStallTask));
            }
            // evidence for whatever broke an invariant
            if (!r.history.passed()) {
                r.evidence.add("history checker: " + r.history.summary());
            }
            int shown = 0;
            for (String id : suspects) {
                if (shown++ >= 10) {
                    r.evidence.add("... and " + (suspects.size() - 10) + " more suspect tasks");
                    break;
                }
                r.evidence.add(describe(h, id, tasks.get(id)));
            }
        }
        return r;
    }

    private long countEvents(Connection c, String type) throws SQLException {
        // an event may be kept in another's row (then_type: a PROCESSED after the last STEP_COMPLETED;
        // before_type: a claim's start written with the attempt's outcome, schema 14)
        try (PreparedStatement ps = c.prepareStatement("SELECT COALESCE(SUM(CASE WHEN type = ? THEN 1 ELSE 0 END"
                + " + CASE WHEN then_type = ? THEN 1 ELSE 0 END + CASE WHEN before_type = ? THEN 1 ELSE 0 END), 0)"
                + " FROM " + prefix + "event")) {
            ps.setString(1, type);
            ps.setString(2, type);
            ps.setString(3, type);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * One failover in the report: what moved, how long until a primary accepted writes, and the
     * time from the primary's death (or the switchover's start) to the first step completion
     * recorded after it, that is on the new primary (event times are the recording runtimes'
     * database-clock estimates).
     */
    private String describe(Connection c, FailoverRecord f) throws SQLException {
        long from = f.startedAt() + dbOffsetMs;
        long writable = f.writableAt() + dbOffsetMs;
        Long first = null;
        List<Long> completions = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT at FROM " + prefix
                + "event WHERE type = 'STEP_COMPLETED' AND at >= ? AND at <= ? ORDER BY at")) {
            ps.setLong(1, from - 5_000);
            ps.setLong(2, f.healthyAt() + dbOffsetMs + 5_000);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long at = rs.getLong(1);
                    completions.add(at);
                    if (first == null && at > from) {
                        first = at;
                    }
                }
            }
        }
        // the longest pause in step completions that spans part of the outage
        long pause = 0;
        long pauseEnd = 0;
        for (int i = 0; i + 1 < completions.size(); i++) {
            long a = completions.get(i);
            long b = completions.get(i + 1);
            if (a <= writable && b >= from && b - a > pause) {
                pause = b - a;
                pauseEnd = b;
            }
        }
        String what = f.output().lines().filter(l -> l.startsWith("killed") || l.startsWith("switchover"))
                .findFirst().orElse(f.kind().toString());
        return f.kind() + " at +" + String.format(Locale.ROOT, "%.1f", (f.startedAt() - startedAt) / 1000.0) + " s ("
                + what.replaceAll(" at \\d+$", "") + "): writable primary after " + (f.writableAt() - f.startedAt())
                + " ms" + (f.writable() ? "" : " (NEVER)") + ", first step completed after "
                + (first == null ? "NONE" : (first - from) + " ms") + ", longest pause in step completions "
                + pause + " ms (ending " + (pauseEnd - from) + " ms after the start), cluster whole again after "
                + (f.healthyAt() - f.startedAt()) + " ms";
    }

    /** The longest gaps between consecutive events of one task (event times are the recording nodes' clocks). */
    private void eventGaps(Connection c, ChaosReport r) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                // the store writes a task's RECEIVED event into the task row, may keep two events of one
                // instant in one row (then_type), a claim's start with the attempt's outcome (before_type)
                // and a running attempt's start in the task row (pending_start_at): read them back as it does
                "SELECT task_id, type, at FROM (SELECT task_id, 'RECEIVED' AS type, created_at AS at, -1 AS ord,"
                        + " 0 AS sub FROM " + prefix + "task UNION ALL SELECT task_id, before_type, before_at, id, -1"
                        + " FROM " + prefix + "event WHERE before_type IS NOT NULL"
                        + " UNION ALL SELECT task_id, type, at, id, 0 FROM " + prefix
                        + "event WHERE type <> 'RECEIVED' UNION ALL SELECT task_id, then_type, at, id, 1 FROM " + prefix
                        + "event WHERE then_type IS NOT NULL UNION ALL SELECT task_id, 'STEP_STARTED', pending_start_at,"
                        + " 9223372036854775807, 0 FROM " + prefix + "task WHERE pending_start_at IS NOT NULL) x"
                        + " ORDER BY task_id, ord, sub")) {
            String prevTask = null;
            String prevType = null;
            long prevAt = 0;
            while (rs.next()) {
                String task = rs.getString(1);
                String type = rs.getString(2);
                long at = rs.getLong(3);
                if (type.equals("STEP_TIMED_OUT")) {
                    r.takeoverEvents++;
                }
                if (task.equals(prevTask)) {
                    long gap = at - prevAt;
                    if (gap > r.maxEventGapMs) {
                        r.maxEventGapMs = gap;
                        r.maxEventGapTask = task;
                    }
                    if (!"RECEIVED".equals(prevType) && gap > r.maxStallAfterStartMs) {
                        r.maxStallAfterStartMs = gap;
                        r.maxStallTask = task;
                    }
                }
                prevTask = task;
                prevType = type;
                prevAt = at;
            }
        }
    }

    private String describe(Connection c, String id, ChaosChecks.Task task) throws SQLException {
        StringBuilder sb = new StringBuilder("task " + id + (task == null ? " (no task row)" : " index " + task.index()
                + " fault " + s.fault(task.index()) + " state " + task.state() + " submitted at " + task.createdAt()
                + " (database clock)") + "\n");
        try {
            for (TaskEvent e : sas.client().events(TaskId.of(id))) {
                String m = e.message() == null ? null
                        : e.message().length() > 300 ? e.message().substring(0, 300) + "..." : e.message();
                sb.append("  event ").append(e.at()).append(' ').append(e.type()).append(" step ")
                        .append(e.stepName()).append(" attempt ").append(e.attempt()).append(": ").append(m)
                        .append('\n');
            }
        } catch (RuntimeException e) {
            sb.append("  (events unavailable: ").append(e).append(")\n");
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT x.kind, x.step, x.attempt, x.node, x.started_at,"
                + " x.window_ms, x.ended_at, x.outcome, (SELECT COUNT(*) FROM " + prefix + "ledger_effect f"
                + " WHERE f.exec_id = x.id) FROM " + prefix + "ledger_exec x WHERE x.task_id = ? ORDER BY x.started_at")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    sb.append("  ledger ").append(rs.getString(1)).append(':').append(rs.getString(2))
                            .append(" attempt ").append(rs.getInt(3)).append(" on ").append(rs.getString(4))
                            .append(" [").append(rs.getLong(5)).append(", ").append(rs.getObject(7))
                            .append("] window ").append(rs.getLong(6)).append(" ms: ").append(rs.getString(8))
                            .append(rs.getInt(9) > 0 ? " (effect applied)" : "").append('\n');
                }
            }
        }
        return sb.toString();
    }

    private static long queryLong(String url, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void killAll() {
        closing = true;
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

    /** Kills every worker still alive, closes the coordinator's runtime and drops the run's tables. */
    @Override
    public void close() {
        killAll();
        operator.shutdownNow();
        proxies.forEach(DbProxy::close);
        if (chaosThread != null) {
            chaosThread.interrupt();
        }
        if (sas != null) {
            sas.close();
        }
        if (store != null) {
            store.close();
        }
        if (!s.keepTables) {
            for (String url : new TreeSet<>(List.of(s.url, harnessUrl))) {
                try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
                    for (String t : ChaosDb.tables(prefix)) {
                        st.execute("DROP TABLE IF EXISTS " + t);
                    }
                    if (url.startsWith("jdbc:postgresql:")) {
                        for (String f : ChaosDb.functions(prefix)) {
                            st.execute("DROP FUNCTION IF EXISTS " + f + "() CASCADE");
                        }
                    }
                } catch (SQLException e) {
                    log("could not drop tables " + prefix + "*: " + e.getMessage());
                }
            }
        } else {
            log("kept tables " + prefix + "*");
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or has run
        }
    }

    static String randomLetters(int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append((char) ('a' + ThreadLocalRandom.current().nextInt(26)));
        }
        return sb.toString();
    }
}
