package dev.sas.reliability;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.SasRuntime;
import dev.sas.core.SasMetrics;
import dev.sas.jdbc.JdbcStateStore;
import dev.sas.reliability.ChaosWorkflow.LedgerAgent;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One worker JVM of a chaos run: an SAS runtime (scheduler, agents, supervisor) on the shared
 * database, running {@link ChaosWorkflow}. It writes its {@link SasMetrics} to
 * {@code <prefix>chaos_worker} every 200 ms (the coordinator sums them; a SIGKILL loses at most
 * the last 200 ms), and halts as soon as its coordinator process is gone.
 *
 * <p>Arguments: {@code --prefix P --slot N --incarnation K --parent-pid PID --app-name A}, optionally
 * {@code --clock-offset D} (ISO-8601, e.g. {@code PT5M} or {@code -PT5M}: the runtime's clock is
 * {@code Clock.offset(Clock.systemUTC(), D)}, a node whose clock is off), followed by the shared
 * {@link ChaosSettings} options ({@code --url}, latencies, deadlines ...).
 */
public final class WorkerMain {

    private WorkerMain() {
    }

    /** Opens the store, retrying for up to a minute while the database is unreachable (e.g. restarting). */
    private static JdbcStateStore openStore(ChaosSettings s, String prefix, String appName) throws InterruptedException {
        long end = System.currentTimeMillis() + 60_000;
        while (true) {
            try {
                // below completeWithin, as its Javadoc advises: a frozen worker's open write then
                // holds its rows no longer than a deadline
                return JdbcStateStore.builder().url(s.url).tablePrefix(prefix).maxPoolSize(8).poolName(appName)
                        .idleInTransactionTimeout(s.completeWithin.dividedBy(2))
                        .build();
            } catch (RuntimeException e) {
                if (System.currentTimeMillis() > end) {
                    throw e;
                }
                System.err.println("store not reachable yet (" + e.getMessage() + "); retrying");
                Thread.sleep(500);
            }
        }
    }

    /**
     * Every {@code every}, the clock jumps from its base offset by {@code jump}, or back: a clock
     * stepped mid-run by minutes, ahead and back (worker 0) or behind and back (worker 1). Each
     * jump is recorded in {@code chaos_fault} as a {@code clock-jump}.
     */
    private static void scheduleClockJumps(ScheduledExecutorService on, JumpingClock clock, Duration base,
            Duration jump, Duration every, FaultPoints faults) {
        on.scheduleWithFixedDelay(() -> {
            Duration to = clock.offset().equals(base) ? base.plus(jump) : base;
            clock.jumpTo(to);
            faults.record("clock-jump", to.equals(base) ? "back" : jump.isNegative() ? "behind" : "ahead", null, null,
                    to.toMillis());
        }, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    }

    public static void main(String[] args) throws Exception {
        String prefix = null;
        String appName = null;
        int slot = 0;
        int incarnation = 0;
        long parentPid = -1;
        Duration clockOffset = Duration.ZERO;
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--prefix" -> prefix = args[++i];
                case "--app-name" -> appName = args[++i];
                case "--slot" -> slot = Integer.parseInt(args[++i]);
                case "--incarnation" -> incarnation = Integer.parseInt(args[++i]);
                case "--parent-pid" -> parentPid = Long.parseLong(args[++i]);
                case "--clock-offset" -> clockOffset = Duration.parse(args[++i]);
                default -> rest.add(args[i]);
            }
        }
        if (prefix == null || appName == null || parentPid < 0) {
            throw new IllegalArgumentException("--prefix, --app-name and --parent-pid are required");
        }
        // die with the coordinator, whatever way it ends (even SIGKILL)
        ProcessHandle.of(parentPid).ifPresentOrElse(
                h -> h.onExit().thenRun(() -> Runtime.getRuntime().halt(3)),
                () -> Runtime.getRuntime().halt(3));

        ChaosSettings s = ChaosSettings.parse(rest.toArray(String[]::new));
        ChaosDb db = s.db();
        long pid = ProcessHandle.current().pid();
        String instanceId = "w" + slot + "-i" + incarnation + "-p" + pid;

        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(s.ledgerUrl());
        hc.setPoolName(appName + "-ledger");
        hc.setMaximumPoolSize(12);
        hc.setConnectionTimeout(5_000);
        hc.setInitializationFailTimeout(-1); // start even while the database restarts
        // set, not detected: HikariCP detects the default isolation once, and if that first connection
        // dies during the detection (backends terminated, database restarting) it keeps -1 and can
        // never open a connection again (seen in the reduced run: a worker whose ledger was dead)
        hc.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        if (db == ChaosDb.POSTGRES) {
            hc.addDataSourceProperty("ApplicationName", appName);
        }
        HikariDataSource ledgerDs = new HikariDataSource(hc);
        ExecutorService service = Executors.newFixedThreadPool(16, r -> {
            Thread t = new Thread(r, "ledger-service");
            t.setDaemon(true);
            return t;
        });
        Ledger ledger = new Ledger(ledgerDs, db, prefix, instanceId, s.serviceEnforcesDeadline);
        JdbcStateStore store = openStore(s, prefix, appName);
        FaultPoints faults = new FaultPoints(s.faultPoints, ledgerDs, db, prefix, instanceId, s.freezeMs());
        // without jumps or a claim-start fault, the runtime gets the plain clock and no tracing, as before
        JumpingClock jumping = s.clockJump.isZero() ? null : new JumpingClock(clockOffset);
        Clock clock = jumping != null ? jumping
                : clockOffset.isZero() ? Clock.systemUTC() : Clock.offset(Clock.systemUTC(), clockOffset);
        var rb = SasRuntime.builder().stateStore(store).clock(clock);
        if (s.faultPoints.stream().anyMatch(f -> f.point() == FaultPoints.Point.CLAIM_START)) {
            rb.tracing(faults.claimStartHook());
        }
        LedgerAgent agent = new LedgerAgent(ledger, service, s, faults);
        SasRuntime sas = rb
                .workflow(ChaosWorkflow.create(agent, ledger, s, faults))
                .completionTokenKeys(ChaosWorkflow.KEYS)
                .instanceId(instanceId)
                .schedulerThreads(4)
                .agentThreads(8)
                .claimBatchSize(8)
                .maxInFlight(24)
                .pollInterval(s.pollInterval)
                .supervisorInterval(s.supervisorInterval)
                .shutdownGrace(Duration.ofSeconds(3))
                .build();
        agent.completeThrough(sas.client());
        String sql = db.metricsUpsert(prefix);
        int fSlot = slot;
        int fIncarnation = incarnation;
        AtomicInteger stopped = new AtomicInteger();
        Runnable report = () -> {
            SasMetrics m = sas.metrics();
            try (Connection c = ledgerDs.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, instanceId);
                ps.setInt(2, fSlot);
                ps.setInt(3, fIncarnation);
                ps.setLong(4, pid);
                long[] v = {m.claimed(), m.stepsCompleted(), m.tasksProcessed(), m.retriesScheduled(),
                    m.timeoutsRecovered(), m.staleRejected(), m.deadlinesMissed(), m.errors(), m.compensated(),
                    m.compensationFailed(), m.storeFailures(), System.currentTimeMillis()};
                for (int i = 0; i < v.length; i++) {
                    ps.setLong(5 + i, v[i]);
                }
                ps.setInt(17, stopped.get());
                ps.executeUpdate();
            } catch (Exception e) {
                System.err.println(instanceId + ": could not write metrics: " + e);
            }
        };
        ScheduledExecutorService reporter = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "metrics-reporter");
            t.setDaemon(true);
            return t;
        });
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // graceful stop (SIGTERM at the end of a run): let late replies arrive, then report
            reporter.shutdownNow();
            sas.close();
            service.shutdown();
            try {
                service.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            stopped.set(1);
            report.run();
            store.close();
            ledgerDs.close();
            System.out.println(instanceId + " stopped: " + sas.metrics());
            done.countDown();
        }, "worker-shutdown"));
        sas.start();
        report.run();
        reporter.scheduleWithFixedDelay(report, 200, 200, TimeUnit.MILLISECONDS);
        if (jumping != null && slot < 2) {
            scheduleClockJumps(reporter, jumping, clockOffset, slot == 0 ? s.clockJump : s.clockJump.negated(),
                    s.clockJumpEvery, faults);
        }
        System.out.println("READY " + instanceId + " clock offset " + clockOffset);
        System.out.flush();
        done.await();
    }
}
