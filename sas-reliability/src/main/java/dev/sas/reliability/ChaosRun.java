package dev.sas.reliability;

import dev.sas.core.SasRuntime;
import dev.sas.core.TaskId;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The coordinator of a chaos run: creates a fresh set of tables, starts the worker JVMs
 * ({@link ChaosWorkers}), submits the tasks and acts as the operator ({@link ChaosOperator}),
 * SIGKILLs, freezes, cuts off and restarts workers at random moments (and disrupts the database
 * once if asked, {@link DbDisruption}), then checks the ledger and the task table
 * ({@link ChaosVerifier}). Workers die with it: {@link #close()} kills them, and so does a
 * shutdown hook, and each worker halts when this process is gone.
 *
 * <p>Phases: {@link #start()}, {@link #submitAll()}, {@link #startChaos()}, wait until
 * {@link #finished()}, {@link #finish()} (returns the {@link ChaosReport}), {@link #close()}.
 */
public final class ChaosRun implements AutoCloseable {
    private final ChaosSettings s;
    private final ChaosDb db;
    private final String prefix;
    private final String appPrefix;
    private final Path logDir;
    private final long startedAt = System.currentTimeMillis();
    /** Where the harness's tables are (ledger, actions, worker metrics); the store's URL unless set apart. */
    private final String harnessUrl;
    private final AtomicBoolean closing = new AtomicBoolean();
    private final ChaosWorkers workers;
    private final AtomicInteger pausesDone = new AtomicInteger();
    private final AtomicInteger partitionsDone = new AtomicInteger();
    private final ScheduledExecutorService operatorThreads = Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "chaos-operator");
        t.setDaemon(true);
        return t;
    });
    private final Thread shutdownHook;
    private volatile boolean chaosDone;
    /** The database clock minus this process's clock, measured at start. */
    private volatile long dbOffsetMs;
    /** The last count {@link #nonTerminal()} read, or -1 before the first. */
    private volatile long lastNonTerminal = -1;
    private Thread chaosThread;
    private JdbcStateStore store;
    private SasRuntime sas;
    private ChaosOperator operator;
    private DbDisruption disruption;

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
        this.workers = new ChaosWorkers(settings, prefix, appPrefix, logDir, harnessUrl, closing, this::log,
                this::dbNow);
        this.shutdownHook = new Thread(workers::killAll, "chaos-kill-workers");
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
        return workers.processes();
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
        log("database clock - coordinator clock = " + dbOffsetMs + " ms (corrects submission times for the stall check)");
        Workflow<String> workflow = ChaosWorkflow.create(null, null, s);
        sas = SasRuntime.builder().stateStore(store).workflow(workflow).completionTokenKeys(ChaosWorkflow.KEYS)
                .schedulerEnabled(false).supervisorEnabled(false)
                .instanceId(appPrefix + "coordinator").build();
        sas.start();
        operator = new ChaosOperator(s, prefix, harnessUrl, closing, this::log, sas.client(), workflow, operatorThreads);
        disruption = new DbDisruption(s, appPrefix, logDir, dbOffsetMs, closing, this::log);
        workers.startAll();
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

    /** True once every worker slot has reported metrics at least once. */
    public boolean workersReady() {
        return workers.ready();
    }

    /** Submits every task (see {@link ChaosOperator#submitAll()}). */
    public void submitAll() throws InterruptedException {
        operator.submitAll();
    }

    /** Starts killing workers in the background; {@link #chaosDone()} tells when it is over. */
    public void startChaos() {
        operatorThreads.scheduleWithFixedDelay(operator::resubmitErrors, 200, 200, TimeUnit.MILLISECONDS);
        operatorThreads.scheduleWithFixedDelay(workers::noteRestartsReady, 200, 200, TimeUnit.MILLISECONDS);
        if (!s.faultPoints.isEmpty()) {
            operatorThreads.scheduleWithFixedDelay(() -> {
                try {
                    workers.restartCrashed();
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
            actions.addAll(Collections.nCopies(s.kills, "kill"));
            actions.addAll(Collections.nCopies(s.pauses, "pause"));
            actions.addAll(Collections.nCopies(s.partitions, "partition"));
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
                if (closing.get()) {
                    return;
                }
                k++;
                awaitWork();
                workers.restartCrashed();
                int slot = workers.pickReadySlot();
                long pid = workers.process(slot).pid();
                long open = nonTerminal();
                if (!action.equals("partition")) {
                    workers.noteIfSupervisor(pid);
                }
                if (action.equals("kill")) {
                    // the picked worker may have halted at a fault point meanwhile: then kill another
                    while (!workers.kill(slot, open) && !closing.get()) {
                        slot = workers.pickReadySlot();
                        workers.noteIfSupervisor(workers.process(slot).pid());
                    }
                } else if (action.equals("partition")) {
                    partition(slot, pid);
                } else {
                    workers.freeze(slot, s.completeWithin.toMillis() + 2_000, open);
                    pausesDone.incrementAndGet();
                }
                if (k == disruptAt) {
                    disruption.disrupt();
                }
                for (ChaosSettings.Failover f : failoverAt.getOrDefault(k, List.of())) {
                    disruption.failover(f, nonTerminal());
                }
            }
            if (actions.isEmpty()) {
                disruption.disrupt();
                for (ChaosSettings.Failover f : s.failovers) {
                    // with no worker actions, a failover every killEvery, the first once work is in flight
                    pause(s.killEvery.toMillis());
                    awaitWork();
                    disruption.failover(f, nonTerminal());
                }
            }
        } catch (Exception e) {
            log("chaos thread failed: " + e);
        } finally {
            chaosDone = true;
        }
    }

    /** A fault on an idle cluster proves little: before the tasks are in, waits (up to 10 s) for work. */
    private void awaitWork() {
        for (int w = 0; w < 100 && !operator.submitted && nonTerminal() == 0 && !closing.get(); w++) {
            pause(100);
        }
    }

    /** Now on the database clock (this process's clock corrected by the offset measured at start). */
    private long dbNow() {
        return System.currentTimeMillis() + dbOffsetMs;
    }

    /**
     * Cuts worker {@code slot} off the store's database (its proxy, in the next direction of
     * {@link ChaosSettings#partitionCuts}) past a step's deadline, then heals the cut. The worker
     * still reaches the service (the ledger): a node cut off must lose its claims safely.
     */
    private void partition(int slot, long pid) throws SQLException {
        DbProxy.Cut cut = s.partitionCuts.get(partitionsDone.get() % s.partitionCuts.size());
        long ms = s.freezeMs();
        boolean supervisor = workers.holdsSupervisor(pid);
        workers.downtime.down(slot, dbNow());
        workers.proxy(slot).cut(cut);
        try (Connection c = DriverManager.getConnection(harnessUrl)) {
            FaultLog.record(c, db, prefix, "w" + slot, "partition", cut.label(), supervisor, ms);
        }
        log("partition (" + cut.label() + "): worker " + slot + " pid " + pid + " cut off the database for " + ms
                + " ms" + (supervisor ? " (it holds the supervisor lease)" : ""));
        pause(ms);
        workers.proxy(slot).heal();
        workers.downtime.up(slot, dbNow());
        partitionsDone.incrementAndGet();
        log("partition healed: worker " + slot);
    }

    public boolean chaosDone() {
        return chaosDone;
    }

    /**
     * Tasks not yet terminal ({@link ChaosProgress#NON_TERMINAL}: PARKED, WAITING and AWAITING_COMPLETION
     * are not), or -1 if the database cannot be asked right now.
     */
    public long nonTerminal() {
        try (Connection c = DriverManager.getConnection(s.url); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(ChaosProgress.openCountSql(prefix + "task"))) {
            rs.next();
            long n = rs.getLong(1);
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
        return chaosDone && operator.done() && nonTerminal() == 0;
    }

    /** One line of progress. */
    public String progress() {
        long open = nonTerminal();
        // never "-1": while the database cannot be asked, say so and show the last count it gave
        String count = ChaosProgress.openCount(open, lastNonTerminal);
        return count + " of " + operator.ids.size() + " submitted tasks not terminal, kills " + workers.killsDone.get()
                + "/" + s.kills + ", pauses " + pausesDone.get() + "/" + s.pauses + ", partitions "
                + partitionsDone.get() + "/" + s.partitions + ", fault-point kills " + workers.faultKills.get()
                + ", cancels pending " + operator.pendingCancels.get() + ", resubmits pending "
                + operator.toResubmit.size();
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
        workers.stop();
        ChaosReport r = verify();
        r.wallClockMs = System.currentTimeMillis() - startedAt;
        try {
            r.loadAverage = Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            r.loadAverage = "unknown";
        }
        return r;
    }

    /** Checks every invariant against the task table, the ledger and the workers' metrics. */
    public ChaosReport verify() throws SQLException {
        ChaosReport r = new ChaosReport();
        r.submitFailures = operator.submitFailures;
        r.killsDone = workers.killsDone.get();
        r.killsWithWorkInFlight = workers.killsWithWork.get();
        r.pausesDone = pausesDone.get();
        r.faultKills = workers.faultKills.get();
        r.partitionsDone = partitionsDone.get();
        r.selfExits = workers.selfExits.get();
        r.workerProcesses = workers.processes().size();
        r.dbDisruption = disruption.description;
        List<TaskId> ids;
        synchronized (operator.ids) {
            ids = List.copyOf(operator.ids);
        }
        return new ChaosVerifier(s, prefix, harnessUrl, dbOffsetMs, startedAt, sas.client()).verify(r, ids,
                workers.downtime, List.copyOf(disruption.outages), List.copyOf(workers.supervisorLosses),
                List.copyOf(disruption.failoversDone));
    }

    private static void pause(long ms) {
        ChaosOperator.pause(ms);
    }

    /** Kills every worker still alive, closes the coordinator's runtime and drops the run's tables. */
    @Override
    public void close() {
        workers.killAll();
        operatorThreads.shutdownNow();
        workers.closeProxies();
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
            dropTables();
        } else {
            log("kept tables " + prefix + "*");
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or has run
        }
    }

    private void dropTables() {
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
    }

    static String randomLetters(int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) {
            sb.append((char) ('a' + ThreadLocalRandom.current().nextInt(26)));
        }
        return sb.toString();
    }
}
