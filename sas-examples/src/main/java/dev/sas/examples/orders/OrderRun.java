package dev.sas.examples.orders;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.AlertSink;
import dev.sas.core.Sas;
import dev.sas.core.SasMetrics;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One run of the order-processing example, start to finish: database, services, runtime(s),
 * placing the orders, the optional crash, the operator's resubmission, and the ledger checks.
 * {@link #run} returns the {@link RunSummary} instead of exiting, so tests can call it.
 */
public final class OrderRun {

    /** The supervisor's scan interval: short, so hung calls are recovered fast. */
    public static final Duration SUPERVISOR_INTERVAL = Duration.ofMillis(500);
    /** How often a scheduler looks for work it was not woken for (another instance's, retries). */
    public static final Duration POLL_INTERVAL = Duration.ofMillis(200);

    private final RunConfig config;
    private final PrintStream out;
    private final Clock clock = Clock.systemUTC();
    private final long started = System.nanoTime();

    private OrderRun(RunConfig config, PrintStream out) {
        this.config = config;
        this.out = out;
    }

    /**
     * Runs the example and checks its ledgers.
     *
     * @param config the run's settings
     * @param out where progress and the summary are printed
     * @return what happened; {@link RunSummary#ok()} says whether every check held
     * @throws Exception if the run could not be set up (database, ports, worker process)
     */
    public static RunSummary run(RunConfig config, PrintStream out) throws Exception {
        return new OrderRun(config, out).run();
    }

    /**
     * The runtime settings shared by the shop and the crash worker: short deadlines and a fast
     * supervisor so hung calls are recovered within seconds.
     */
    static Sas runtime(JdbcStateStore store, Workflow<Order> workflow, String instanceId, OrderStatusBoard board,
            AlertSink alerts) {
        return Sas.builder()
                .stateStore(store)
                .workflow(workflow)
                .instanceId(instanceId)
                .schedulerThreads(8)
                .agentThreads(8)
                .pollInterval(POLL_INTERVAL)
                .supervisorInterval(SUPERVISOR_INTERVAL)
                .shutdownGrace(Duration.ofSeconds(3))
                .replyChannel(OrderStatusBoard.CHANNEL, board)
                .alertSink(alerts)
                .build();
    }

    /** A connection pool for the shop's database, shared by its orders table and the state store. */
    static HikariDataSource dataSource(String url, String name, int size) {
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(url);
        hc.setPoolName(name);
        hc.setMaximumPoolSize(size);
        return new HikariDataSource(hc);
    }

    private RunSummary run() throws Exception {
        Path dir = config.dir() != null ? Files.createDirectories(config.dir()) : Files.createTempDirectory("sas-orders-");
        String tag = UUID.randomUUID().toString().substring(0, 4).toUpperCase(Locale.ROOT);
        String url = config.postgresUrl() != null ? config.postgresUrl()
                : "jdbc:h2:file:" + dir.resolve("shop").toAbsolutePath() + ";AUTO_SERVER=TRUE;LOCK_TIMEOUT=10000";
        String database = config.postgresUrl() != null ? "PostgreSQL " + config.postgresUrl().replaceAll("\\?.*", "")
                : "H2 file " + dir.resolve("shop.mv.db");
        List<Order> orders = Shop.orders(tag, config.orders(), config.seed());
        OperatorLog operator = new OperatorLog(dir.resolve("operator.log"));
        OrderStatusBoard board = new OrderStatusBoard(config.verbose() ? out : null);

        try (HikariDataSource ds = dataSource(url, "shop", 16);
                JdbcStateStore store = JdbcStateStore.builder().dataSource(ds).build();
                Shop shop = Shop.start(config)) {
            OrderDatabase db = new OrderDatabase(ds, clock);
            db.createSchema();
            OrderWorkflow.Agents agents = OrderWorkflow.Agents.connect(shop.inventory().uri(), shop.payment().uri(),
                    shop.shipping().uri());
            Workflow<Order> workflow = OrderWorkflow.create(agents, db);
            out.printf("order-processing example: %d orders (ids %s-00001..), seed %d, crash %s%n", orders.size(), tag,
                    config.seed(), config.crash());
            out.println("  database:  " + database);
            out.println("  services:  " + shop.inventory() + "\n             " + shop.payment() + "\n             "
                    + shop.shipping());
            out.println("  logs:      " + (config.verbose() ? "console" : dir.resolve("sas.log")) + ", operator log "
                    + operator.file());

            Sas sas = runtime(store, workflow, "shop-" + tag, board, operator);
            Tracker tracker = new Tracker(sas);
            ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "progress");
                t.setDaemon(true);
                return t;
            });
            WorkerProcess process = null;
            Sas inProcessWorker = null;
            String crash = null;
            long[] workerMetrics = new long[5];
            try {
                RunConfig.Crash mode = config.crash();
                if (mode == RunConfig.Crash.PROCESS) {
                    process = WorkerProcess.start(url, shop, "worker-" + tag, dir.resolve("worker.log"));
                    if (!process.awaitReady(Duration.ofSeconds(60))) {
                        out.println("  the worker JVM did not start (see " + dir.resolve("worker.log")
                                + "); crashing an in-process runtime instead");
                        process.close();
                        process = null;
                        mode = RunConfig.Crash.IN_PROCESS;
                    } else {
                        out.println("  worker:    JVM pid " + process.pid() + " runs the first runtime, worker-" + tag);
                    }
                }
                if (mode == RunConfig.Crash.IN_PROCESS) {
                    inProcessWorker = Sas.builder()
                            .stateStore(store).workflow(workflow).instanceId("worker-" + tag)
                            .pollInterval(POLL_INTERVAL).supervisorInterval(SUPERVISOR_INTERVAL)
                            .shutdownGrace(Duration.ZERO)
                            .replyChannel(OrderStatusBoard.CHANNEL, new OrderStatusBoard(null))
                            .alertSink(operator)
                            .build().start();
                }
                if (mode == RunConfig.Crash.NONE) {
                    sas.start();
                }
                ticker.scheduleAtFixedRate(() -> tick(tracker), 250, 250, TimeUnit.MILLISECONDS);

                long placing = System.nanoTime();
                for (Order o : orders) {
                    tracker.add(o.orderId(), db.place(sas, workflow, o, OrderStatusBoard.CHANNEL));
                }
                out.printf("  placed %d orders in %d ms (order row + task in one transaction each)%n", orders.size(),
                        (System.nanoTime() - placing) / 1_000_000);

                if (mode != RunConfig.Crash.NONE) {
                    int crashAt = Math.max(1, orders.size() * 35 / 100);
                    await(() -> tracker.terminal() >= crashAt, Duration.ofSeconds(30));
                    tracker.refresh();
                    long unfinished = orders.size() - tracker.terminal();
                    if (process != null) {
                        workerMetrics = process.metrics();
                        process.kill();
                        crash = "worker JVM pid " + process.pid() + " killed (SIGKILL) with " + unfinished
                                + " orders unfinished; shop-" + tag + " took over";
                    } else {
                        workerMetrics = metricsOf(inProcessWorker.metrics());
                        inProcessWorker.close();
                        workerMetrics = metricsOf(inProcessWorker.metrics());
                        crash = "in-process runtime worker-" + tag + " closed abruptly (no grace) with " + unfinished
                                + " orders unfinished; shop-" + tag + " took over";
                    }
                    out.println("  CRASH: " + crash);
                    sas.start();
                }

                Duration limit = Duration.ofSeconds(Math.max(60, orders.size() / 4));
                await(() -> tracker.terminal() == orders.size(), limit);
                Duration untilTerminal = Duration.ofNanos(System.nanoTime() - placing);
                tracker.refresh();
                printProgress(tracker);

                String resubmitted = null;
                TaskStatus resubmittedStatus = null;
                String errorOrder = tracker.first(TaskStatus.ERROR);
                if (errorOrder != null) {
                    resubmitted = errorOrder;
                    shop.inventory().faults().liftPermanentFaults();
                    operator.action(clock.instant(), "the warehouse unblocked its SKUs; resubmitting order " + errorOrder);
                    out.println("  operator: unblocked the warehouse's SKUs and resubmitted order " + errorOrder);
                    TaskId id = tracker.taskId(errorOrder);
                    sas.resubmit(id);
                    await(() -> sas.status(id).map(i -> i.status().isTerminal() && i.status() != TaskStatus.ERROR)
                            .orElse(false), Duration.ofSeconds(30));
                    resubmittedStatus = sas.status(id).map(TaskInfo::status).orElse(null);
                    operator.action(clock.instant(), "order " + errorOrder + " is " + resubmittedStatus);
                    out.println("  operator: order " + errorOrder + " is now " + resubmittedStatus);
                }
                ticker.shutdownNow();
                tracker.refresh();
                sas.close();
                SasMetrics m = sas.metrics();

                Map<String, TaskStatus> statuses = tracker.statuses();
                LedgerCheck.Result checks = LedgerCheck.verify(orders, statuses, db.statuses(tag + "-"), shop);
                if (resubmitted != null && resubmittedStatus != TaskStatus.PROCESSED) {
                    List<String> failures = new ArrayList<>(checks.failures());
                    failures.add("resubmitted order " + resubmitted + " ended " + resubmittedStatus + ", not PROCESSED");
                    checks = new LedgerCheck.Result(checks.passed(), List.copyOf(failures));
                } else if (resubmitted != null) {
                    List<String> passed = new ArrayList<>(checks.passed());
                    passed.add("the resubmitted order was processed");
                    checks = new LedgerCheck.Result(List.copyOf(passed), checks.failures());
                }
                long processed = count(statuses, TaskStatus.PROCESSED);
                long compensated = count(statuses, TaskStatus.COMPENSATED);
                long error = count(statuses, TaskStatus.ERROR);
                return new RunSummary(orders.size(), processed, compensated, error,
                        orders.size() - processed - compensated - error,
                        m.retriesScheduled() + workerMetrics[0], m.timeoutsRecovered() + workerMetrics[1],
                        m.deadlinesMissed() + workerMetrics[2], m.staleRejected() + workerMetrics[3],
                        shop.inventory().replayed() + shop.payment().replayed() + shop.shipping().replayed(),
                        shop.inventory().unavailable() + shop.payment().unavailable() + shop.shipping().unavailable(),
                        shop.inventory().hung() + shop.payment().hung() + shop.shipping().hung(),
                        shop.inventory().rejected() + shop.payment().rejected() + shop.shipping().rejected(),
                        operator.alerts(), crash, resubmitted, resubmittedStatus, untilTerminal,
                        Duration.ofNanos(System.nanoTime() - started), database, dir, checks);
            } finally {
                ticker.shutdownNow();
                if (process != null) {
                    process.close();
                }
                if (inProcessWorker != null) {
                    inProcessWorker.close();
                }
                sas.close();
            }
        }
    }

    private static long[] metricsOf(SasMetrics m) {
        return new long[] {m.retriesScheduled(), m.timeoutsRecovered(), m.deadlinesMissed(), m.staleRejected(),
            m.tasksProcessed()};
    }

    private static long count(Map<String, TaskStatus> statuses, TaskStatus s) {
        return statuses.values().stream().filter(x -> x == s).count();
    }

    private int ticks;

    private void tick(Tracker tracker) {
        try {
            tracker.refresh();
            if (++ticks % 4 == 0) {
                printProgress(tracker);
            }
        } catch (RuntimeException e) {
            out.println("  (progress: " + e.getMessage() + ")");
        }
    }

    private void printProgress(Tracker t) {
        out.printf(Locale.ROOT, "  [%5.1fs] processed %4d | compensated %3d | error %3d | in flight %4d%n",
                (System.nanoTime() - started) / 1e9, t.count(TaskStatus.PROCESSED), t.count(TaskStatus.COMPENSATED),
                t.count(TaskStatus.ERROR), t.placed() - t.terminal());
    }

    private static void await(BooleanSupplier done, Duration limit) throws InterruptedException {
        long end = System.nanoTime() + limit.toNanos();
        while (!done.getAsBoolean() && System.nanoTime() < end) {
            Thread.sleep(50);
        }
    }

    /** Each order's task status, refreshed from the store (so it sees every runtime's work). */
    private static final class Tracker {
        private final Sas sas;
        private final Map<String, TaskId> ids = new LinkedHashMap<>();
        private final Map<String, TaskStatus> status = new LinkedHashMap<>();

        Tracker(Sas sas) {
            this.sas = sas;
        }

        synchronized void add(String orderId, TaskId id) {
            ids.put(orderId, id);
            status.put(orderId, TaskStatus.PENDING);
        }

        void refresh() {
            Map<String, TaskId> todo = new LinkedHashMap<>();
            synchronized (this) {
                status.forEach((order, s) -> {
                    if (!s.isFinal()) {
                        todo.put(order, ids.get(order));
                    }
                });
            }
            Map<String, TaskStatus> fresh = new LinkedHashMap<>();
            todo.forEach((order, id) -> sas.status(id).ifPresent(i -> fresh.put(order, i.status())));
            synchronized (this) {
                status.putAll(fresh);
            }
        }

        synchronized int placed() {
            return ids.size();
        }

        synchronized int terminal() {
            return (int) status.values().stream().filter(TaskStatus::isTerminal).count();
        }

        synchronized long count(TaskStatus s) {
            return status.values().stream().filter(x -> x == s).count();
        }

        synchronized String first(TaskStatus s) {
            return status.entrySet().stream().filter(e -> e.getValue() == s).map(Map.Entry::getKey).findFirst()
                    .orElse(null);
        }

        synchronized TaskId taskId(String orderId) {
            return ids.get(orderId);
        }

        synchronized Map<String, TaskStatus> statuses() {
            return Map.copyOf(status);
        }
    }
}
