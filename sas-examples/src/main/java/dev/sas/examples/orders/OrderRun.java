package dev.sas.examples.orders;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sas.console.ConsoleServer;
import dev.sas.console.SasConsole;
import dev.sas.core.AgentStatus;
import dev.sas.core.AlertSink;
import dev.sas.core.CircuitBreaker;
import dev.sas.core.CompletionTokenKeys;
import dev.sas.core.SasRuntime;
import dev.sas.core.SasSettings;
import dev.sas.core.SasMetrics;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.h2.tools.Server;
import org.slf4j.LoggerFactory;

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
    private boolean interrupted;

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
        OrderRun run = new OrderRun(config, out);
        RunSummary summary = run.run();
        if (run.interrupted) {
            // the interrupt that ended the console, kept until everything was closed
            Thread.currentThread().interrupt();
        }
        return summary;
    }

    /** The environment variable holding the reply token key, base64 (e.g. {@code openssl rand -base64 32}). */
    static final String REPLY_KEY_ENV = "SAS_EXAMPLE_REPLY_KEY";
    /** This run's reply token key: from {@link #REPLY_KEY_ENV}, else random for this run (handed to the worker JVM). */
    static final String REPLY_KEY_BASE64 = System.getenv(REPLY_KEY_ENV) != null ? System.getenv(REPLY_KEY_ENV)
            : randomKey();

    private static String randomKey() {
        byte[] key = new byte[32];
        new java.security.SecureRandom().nextBytes(key);
        return java.util.Base64.getEncoder().encodeToString(key);
    }

    /** The keys that sign the payment step's reply tokens: the same on every node of the run. */
    static CompletionTokenKeys completionTokenKeys() {
        return CompletionTokenKeys.builder().currentKey("example", java.util.Base64.getDecoder().decode(REPLY_KEY_BASE64))
                .build();
    }

    /** What every node of the run shares, given once: the store and the completion token keys. */
    static SasSettings settings(JdbcStateStore store) {
        return SasSettings.builder().stateStore(store).completionTokenKeys(completionTokenKeys()).build();
    }

    /**
     * The runtime settings shared by the shop and the crash worker: short deadlines and a fast
     * supervisor so hung calls are recovered within seconds.
     */
    static SasRuntime runtime(JdbcStateStore store, Workflow<Order> workflow, String instanceId, OrderStatusBoard board,
            AlertSink alerts, Workflow<?>... more) {
        var b = SasRuntime.builder();
        for (Workflow<?> w : more) {
            b.workflow(w);
        }
        return b
                .settings(settings(store))
                .workflow(workflow)
                .instanceId(instanceId)
                .schedulerThreads(8)
                .agentThreads(8)
                .pollInterval(POLL_INTERVAL)
                .supervisorInterval(SUPERVISOR_INTERVAL)
                .shutdownGrace(Duration.ofSeconds(3))
                .statusChannel(OrderStatusBoard.CHANNEL, board)
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
                : "jdbc:h2:file:" + dir.resolve("shop").toAbsolutePath() + ";LOCK_TIMEOUT=10000";
        String database = config.postgresUrl() != null ? "PostgreSQL " + config.postgresUrl().replaceAll("\\?.*", "")
                : "H2 file " + dir.resolve("shop.mv.db");
        List<Order> orders = Shop.orders(tag, config.orders(), config.seed());
        OperatorLog operator = new OperatorLog(dir.resolve("operator.log"));
        OrderStatusBoard board = new OrderStatusBoard(config.verbose() ? out : null);

        try (HikariDataSource ds = dataSource(url, "shop", 16);
                JdbcStateStore store = JdbcStateStore.builder().dataSource(ds).build();
                Shop shop = Shop.start(config);
                RabbitPayments payments = RabbitPayments.connect(config.rabbitUri(), tag)) {
            OrderDatabase db = new OrderDatabase(ds, clock);
            db.createSchema();
            OrderWorkflow.Agents agents = OrderWorkflow.Agents.connect(shop.inventory().uri(), shop.payment().uri(),
                    shop.shipping().uri());
            Workflow<Order> workflow = OrderWorkflow.create(agents, db, payments == null ? null : payments.agent());
            out.printf("order-processing example: %d orders (ids %s-00001..), seed %d, faults %s, crash %s%n",
                    orders.size(), tag, config.seed(), config.faults() ? "on" : "off", config.crash());
            out.println("  database:  " + database);
            out.println("  services:  " + shop.inventory() + "\n             " + shop.payment() + "\n             "
                    + shop.shipping());
            out.println("  logs:      " + logDestination() + "; operator log " + operator.file());
            if (payments != null) {
                out.println("  payments:  charged through " + payments.describe());
            }

            Reconciliation.Runs reconciliations = new Reconciliation.Runs();
            Workflow<String> reconcile = Reconciliation.workflow(db, reconciliations);
            SasRuntime sas = runtime(store, workflow, "shop-" + tag, board, operator, reconcile);
            sas.client().schedules().register(Reconciliation.nightly(reconcile, tag + "-"));
            Instant lastFireAtStart = sas.client().schedules().find(Reconciliation.SCHEDULE).orElseThrow().lastFireTime();
            Progress progress = new Progress(sas, workflow.name(), orders.size());
            ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "progress");
                t.setDaemon(true);
                return t;
            });
            ExecutorService customers = Executors.newFixedThreadPool(4, r -> {
                Thread t = new Thread(r, "customer");
                t.setDaemon(true);
                return t;
            });
            WorkerProcess process = null;
            Server h2Server = null;
            SasRuntime inProcessWorker = null;
            String crash = null;
            long[] workerMetrics = new long[5];
            try {
                RunConfig.Crash mode = config.crash();
                if (mode == RunConfig.Crash.PROCESS) {
                    String workerUrl = url;
                    if (config.postgresUrl() == null) {
                        // the embedded H2 file is open in this JVM; the worker JVM reaches it through a TCP server
                        h2Server = Server.createTcpServer("-tcpPort", "0").start();
                        workerUrl = "jdbc:h2:tcp://127.0.0.1:" + h2Server.getPort() + "/"
                                + dir.resolve("shop").toAbsolutePath() + ";LOCK_TIMEOUT=10000";
                    }
                    process = WorkerProcess.start(workerUrl, shop, "worker-" + tag, dir.resolve("worker.log"),
                            operator.file());
                    if (!process.awaitReady(Duration.ofSeconds(60))) {
                        out.println("  the worker JVM did not start (see " + dir.resolve("worker.log")
                                + "); crashing an in-process runtime instead");
                        process.close();
                        process = null;
                        mode = RunConfig.Crash.IN_PROCESS;
                    } else {
                        out.println("  worker:    JVM pid " + process.pid() + " runs the first runtime, worker-" + tag
                                + "; the shop's own runtime waits");
                    }
                }
                if (mode == RunConfig.Crash.IN_PROCESS) {
                    inProcessWorker = SasRuntime.builder()
                            .settings(settings(store)).workflow(workflow).instanceId("worker-" + tag)
                            .pollInterval(POLL_INTERVAL).supervisorInterval(SUPERVISOR_INTERVAL)
                            .shutdownGrace(Duration.ZERO)
                            .statusChannel(OrderStatusBoard.CHANNEL, new OrderStatusBoard(null))
                            .alertSink(operator)
                            .build().start();
                    out.println("  worker:    in-process runtime worker-" + tag + " runs first; the shop's own runtime waits");
                }
                if (payments != null) {
                    payments.start(sas.client(), shop, dir, out);
                }
                if (mode == RunConfig.Crash.NONE) {
                    sas.start();
                }
                ticker.scheduleWithFixedDelay(() -> tick(progress), 250, 250, TimeUnit.MILLISECONDS);
                ticker.scheduleWithFixedDelay(() -> watchBreaker(sas, progress), 100, 100, TimeUnit.MILLISECONDS);
                PaymentOutage outage = PaymentOutage.schedule(config.outage(), shop, orders.size(), ticker, out);

                long placing = System.nanoTime();
                Map<String, TaskId> ids = new ConcurrentHashMap<>();
                List<Future<?>> placed = new ArrayList<>();
                for (Order o : orders) {
                    placed.add(customers.submit(() -> {
                        ids.put(o.orderId(), db.place(sas, workflow, o, OrderStatusBoard.CHANNEL));
                        return null;
                    }));
                }

                if (mode != RunConfig.Crash.NONE) {
                    // the worker dies while customers are still placing orders
                    long crashAt = Math.max(1, orders.size() / 4);
                    await(() -> progress.refresh().terminal() >= crashAt, Duration.ofSeconds(60));
                    if (process != null) {
                        workerMetrics = process.metrics();
                        process.kill();
                        crash = "worker JVM pid " + process.pid() + " killed (SIGKILL)";
                    } else {
                        inProcessWorker.close();
                        workerMetrics = metricsOf(inProcessWorker.metrics());
                        crash = "in-process runtime worker-" + tag + " closed abruptly (no grace period)";
                    }
                    Progress.Snapshot at = progress.refresh();
                    crash += " with " + at.terminal() + " orders finished, " + (ids.size() - at.terminal())
                            + " placed and unfinished; shop-" + tag + " took over";
                    out.println("  CRASH: " + crash);
                    sas.start();
                }
                if (payments != null) {
                    // the payment worker dies while customers are still placing orders; a new one takes over
                    long killAt = Math.max(1, orders.size() / 4);
                    await(() -> progress.refresh().terminal() >= killAt, Duration.ofSeconds(60));
                    crash = payments.killAndRestartWorker(shop, dir, out) + " with " + progress.refresh().terminal()
                            + " orders finished";
                }
                for (Future<?> f : placed) {
                    try {
                        f.get();
                    } catch (ExecutionException e) {
                        throw e.getCause() instanceof Exception ex ? ex : e;
                    }
                }
                out.printf("  placed %d orders in %d ms, each order row and its task in one transaction%n",
                        orders.size(), (System.nanoTime() - placing) / 1_000_000);

                Duration limit = Duration.ofSeconds(Math.max(60, orders.size() / 4));
                await(() -> progress.refresh().terminal() == orders.size(), limit);
                Duration untilTerminal = Duration.ofNanos(System.nanoTime() - placing);
                ticker.shutdownNow();
                if (outage.started()) {
                    // the ticker's end of the outage is cancelled with it when every order finished
                    // first (a fast run): end it here, or the operator's resubmit meets a dead service
                    shop.payment().faults().down(false);
                }
                printProgress(progress.refresh());

                Map<String, TaskStatus> statuses = statuses(sas, ids);
                String resubmitted = statuses.entrySet().stream().filter(e -> e.getValue() == TaskStatus.ERROR)
                        .map(Map.Entry::getKey).sorted().findFirst().orElse(null);
                TaskStatus resubmittedStatus = null;
                if (resubmitted != null) {
                    shop.inventory().faults().liftPermanentFaults();
                    operator.action(clock.instant(), "the warehouse unblocked its SKUs; resubmitting order " + resubmitted);
                    out.println("  operator: the warehouse unblocked its SKUs; resubmitting order " + resubmitted);
                    TaskId id = ids.get(resubmitted);
                    sas.client().operations().resubmit(id);
                    await(() -> sas.client().find(id).map(i -> i.status().isTerminal() && i.status() != TaskStatus.ERROR)
                            .orElse(false), Duration.ofSeconds(30));
                    resubmittedStatus = sas.client().find(id).map(TaskInfo::status).orElse(null);
                    operator.action(clock.instant(), "order " + resubmitted + " is " + resubmittedStatus);
                    out.println("  operator: order " + resubmitted + " is now " + resubmittedStatus);
                    statuses = statuses(sas, ids);
                }
                String outageSummary = null;
                CircuitBreaker.State breakerAtEnd = paymentBreaker(sas);
                if (outage.started()) {
                    shop.payment().faults().down(false); // over by now, unless every order finished first
                    outageSummary = String.format(Locale.ROOT, "payment service down %.1f s (%d calls answered 503);"
                            + " its circuit breaker opened %d times and is %s at the end; %d calls held back instead"
                            + " of failing", config.outage().toMillis() / 1000.0, shop.payment().outage(),
                            sas.metrics().breakersOpened(), breakerAtEnd, sas.metrics().heldBack());
                }
                String nightly = runNightlyReconciliation(sas, orders.size(), reconciliations, lastFireAtStart);
                sas.close();
                SasMetrics m = sas.metrics();
                if (payments != null) {
                    out.println("  payments:  replies " + payments.replyCounts());
                }

                LedgerCheck.Result checks = LedgerCheck.verify(orders, statuses, db.statuses(tag + "-"), shop);
                if (resubmitted != null) {
                    List<String> passed = new ArrayList<>(checks.passed());
                    List<String> failures = new ArrayList<>(checks.failures());
                    if (resubmittedStatus == TaskStatus.PROCESSED) {
                        passed.add("the resubmitted order " + resubmitted + " was processed");
                    } else {
                        failures.add("resubmitted order " + resubmitted + " ended " + resubmittedStatus
                                + ", not PROCESSED");
                    }
                    checks = new LedgerCheck.Result(List.copyOf(passed), List.copyOf(failures));
                }
                if (outage.started() && (breakerOpened || m.breakersOpened() > 0)) {
                    List<String> passed = new ArrayList<>(checks.passed());
                    List<String> failures = new ArrayList<>(checks.failures());
                    if (breakerAtEnd == CircuitBreaker.State.CLOSED) {
                        passed.add("the payment breaker opened during the outage and closed once the service was back");
                    } else {
                        failures.add("the payment breaker is " + breakerAtEnd + " after the outage, not CLOSED");
                    }
                    checks = new LedgerCheck.Result(List.copyOf(passed), List.copyOf(failures));
                }
                List<String> passed = new ArrayList<>(checks.passed());
                List<String> failures = new ArrayList<>(checks.failures());
                (nightly == null ? passed : failures).add(nightly == null ? "the nightly reconciliation schedule is"
                        + " registered once, every fire time and the operator's triggered run ran once, and the"
                        + " run counted every order row" : nightly);
                checks = new LedgerCheck.Result(List.copyOf(passed), List.copyOf(failures));
                if (!failures.isEmpty()) {
                    TaskHistory.printFor(sas.client(), ids, tag, failures, 5, out);
                }
                long processed = count(statuses, TaskStatus.PROCESSED);
                long compensated = count(statuses, TaskStatus.COMPENSATED);
                long error = count(statuses, TaskStatus.ERROR);
                RunSummary summary = new RunSummary(orders.size(), processed, compensated, error,
                        orders.size() - processed - compensated - error,
                        m.retriesScheduled() + workerMetrics[0], m.timeoutsRecovered() + workerMetrics[1],
                        m.deadlinesMissed() + workerMetrics[2], m.staleRejected() + workerMetrics[3],
                        shop.inventory().replayed() + shop.payment().replayed() + shop.shipping().replayed(),
                        shop.inventory().unavailable() + shop.payment().unavailable() + shop.shipping().unavailable(),
                        shop.inventory().hung() + shop.payment().hung() + shop.shipping().hung(),
                        shop.inventory().rejected() + shop.payment().rejected() + shop.shipping().rejected(),
                        operator.alertsInFile(), crash, outageSummary, resubmitted, resubmittedStatus, untilTerminal,
                        Duration.ofNanos(System.nanoTime() - started), database, dir, checks);
                if (config.consolePort() != RunConfig.NO_CONSOLE) {
                    serveConsole(store, workflow, board, operator, tag, summary);
                }
                return summary;
            } finally {
                ticker.shutdownNow();
                customers.shutdownNow();
                if (process != null) {
                    process.close();
                }
                if (inProcessWorker != null) {
                    inProcessWorker.close();
                }
                sas.close();
                if (h2Server != null) {
                    h2Server.stop();
                }
            }
        }
    }

    /**
     * The operator runs the nightly reconciliation now (its schedule fires at 02:00 in the shop's
     * time zone) and waits for it.
     *
     * @return null if the schedule is registered once, due at 02:00 Berlin time, and the run counted
     *     every order row; else what went wrong
     */
    private String runNightlyReconciliation(SasRuntime sas, int orders, Reconciliation.Runs runs,
            Instant lastFireAtStart) {
        var schedules = sas.client().schedules();
        var info = schedules.find(Reconciliation.SCHEDULE).orElse(null);
        if (info == null || info.nextFireTime() == null
                || info.nextFireTime().atZone(Reconciliation.SHOP_ZONE).getHour() != 2) {
            return "the nightly reconciliation schedule is missing or not due at 02:00 Berlin time: " + info;
        }
        var run = schedules.trigger(Reconciliation.SCHEDULE);
        out.println("  operator: runs the nightly reconciliation now (next by itself at "
                + info.nextFireTime().atZone(Reconciliation.SHOP_ZONE).toLocalDateTime() + " Berlin time)");
        var result = run.await(Duration.ofSeconds(30));
        String counted = result.output("count-order-rows", dev.sas.core.Codec.string()).orElse("");
        out.println("  reconciliation: " + counted);
        if (result.status() != TaskStatus.PROCESSED || !counted.startsWith(orders + " order rows")) {
            return "the nightly reconciliation ended " + result.status() + " with '" + counted + "', expected "
                    + orders + " order rows";
        }
        Instant lastFireAtEnd = schedules.find(Reconciliation.SCHEDULE).orElseThrow().lastFireTime();
        return Reconciliation.everyFireTimeRunOnce(sas.client(), runs, lastFireAtStart, lastFireAtEnd,
                run.info().businessKey());
    }

    /**
     * Prints the summary, then serves the operator console on the run's database with a runtime of
     * this JVM behind it (so a resubmit from the console runs) until the thread is interrupted
     * (Ctrl-C ends the JVM); {@link #run(RunConfig, PrintStream)} then closes everything and returns
     * with the interrupt flag set again. The token for actions is made up here and printed.
     */
    private void serveConsole(JdbcStateStore store, Workflow<Order> workflow, OrderStatusBoard board,
            OperatorLog operator, String tag, RunSummary summary) {
        out.println();
        out.print(summary.table());
        byte[] random = new byte[18];
        new SecureRandom().nextBytes(random);
        String token = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
        try (SasRuntime live = runtime(store, workflow, "console-" + tag, board, operator).start();
                ConsoleServer server = SasConsole.builder().client(live.client()).title("Order example")
                        .actionToken(token).build().serve(config.consolePort())) {
            out.println();
            out.println("  console:   " + server.url());
            out.println("  token:     " + token + "  (enter it in the console to resubmit or cancel)");
            out.println("  The run's services and a runtime stay up in this JVM, so a resubmitted order runs."
                    + " Ctrl-C to stop.");
            new CountDownLatch(1).await();
        } catch (InterruptedException e) {
            interrupted = true;
        }
    }

    private volatile CircuitBreaker.State lastBreaker = CircuitBreaker.State.CLOSED;
    /** Whether the payment breaker was seen open in the store, whichever runtime opened it. */
    private volatile boolean breakerOpened;

    /** Prints the payment breaker's state (shared by every runtime, read from the store) when it changes. */
    private void watchBreaker(SasRuntime sas, Progress progress) {
        try {
            for (AgentStatus a : sas.client().operations().agents()) {
                if (a.agent().equals("payment") && a.breaker() != lastBreaker) {
                    lastBreaker = a.breaker();
                    breakerOpened |= a.breaker() == CircuitBreaker.State.OPEN;
                    long waiting = sas.client().countByStatus().get(TaskStatus.WAITING);
                    out.printf(Locale.ROOT, "  [%5.1fs] payment circuit breaker %s%s; %d orders waiting%n",
                            (System.nanoTime() - started) / 1e9, a.breaker(),
                            a.openUntil() != null ? " until " + a.openUntil() + " (" + a.consecutiveFailures()
                                    + " failures in a row)" : "", waiting);
                }
            }
        } catch (RuntimeException e) {
            // the runtime is closing; the progress line reports store problems
        }
    }

    private static CircuitBreaker.State paymentBreaker(SasRuntime sas) {
        return sas.client().operations().agents().stream().filter(a -> a.agent().equals("payment")).map(AgentStatus::breaker)
                .findFirst().orElse(CircuitBreaker.State.CLOSED);
    }

    private static Map<String, TaskStatus> statuses(SasRuntime sas, Map<String, TaskId> ids) {
        Map<String, TaskStatus> out = new TreeMap<>();
        ids.forEach((order, id) -> out.put(order, sas.client().find(id).map(TaskInfo::status).orElse(null)));
        return out;
    }

    private static String logDestination() {
        String factory = LoggerFactory.getILoggerFactory().getClass().getName();
        String file = System.getProperty("org.slf4j.simpleLogger.logFile");
        if (factory.startsWith("org.slf4j.simple") && file != null && !file.equals("System.err")) {
            return "library logs in " + file;
        }
        return "library logs via " + factory + (factory.startsWith("org.slf4j.simple") ? " (console)"
                : " (under exec:java that is Maven's logging, quiet with -q)");
    }

    private static long[] metricsOf(SasMetrics m) {
        return new long[] {m.retriesScheduled(), m.timeoutsRecovered(), m.deadlinesMissed(), m.staleRejected(),
            m.tasksProcessed()};
    }

    private static long count(Map<String, TaskStatus> statuses, TaskStatus s) {
        return statuses.values().stream().filter(x -> x == s).count();
    }

    private long lastPrinted;

    private void tick(Progress progress) {
        try {
            progress.refresh();
            if (System.nanoTime() - lastPrinted >= 950_000_000L) {
                printProgress(progress.last());
            }
        } catch (RuntimeException e) {
            out.println("  (progress not available: " + e.getMessage() + ")");
        }
    }

    private synchronized void printProgress(Progress.Snapshot p) {
        lastPrinted = System.nanoTime();
        out.printf(Locale.ROOT, "  [%5.1fs] processed %4d | compensated %3d | error %3d | in flight %4d"
                + " (waiting for an agent %3d)%n", (lastPrinted - started) / 1e9, p.processed(), p.compensated(),
                p.error(), config.orders() - p.terminal(), p.waiting());
    }

    private static void await(BooleanSupplier done, Duration limit) throws InterruptedException {
        long end = System.nanoTime() + limit.toNanos();
        while (!done.getAsBoolean() && System.nanoTime() < end) {
            Thread.sleep(50);
        }
    }

    /**
     * Counts of the run's tasks by state, from the store, so they include every runtime's work: the
     * store's counts minus those it held before the run (exact on a fresh database).
     */
    private static final class Progress {
        private final SasRuntime sas;
        private final String workflow;
        private final int orders;
        private final Map<TaskStatus, Long> before;
        private volatile Snapshot last;

        record Snapshot(long processed, long compensated, long error, long terminal, long waiting) {
        }

        Progress(SasRuntime sas, String workflow, int orders) {
            this.sas = sas;
            this.workflow = workflow;
            this.orders = orders;
            this.before = counts();
            this.last = new Snapshot(0, 0, 0, 0, 0);
        }

        /** The order tasks per state (a reconciliation's task is not an order). */
        private Map<TaskStatus, Long> counts() {
            Map<TaskStatus, Long> m = new java.util.EnumMap<>(TaskStatus.class);
            for (TaskStatus s : TaskStatus.values()) {
                m.put(s, 0L);
            }
            m.putAll(sas.client().countByWorkflow().getOrDefault(workflow, Map.of()));
            return m;
        }

        Snapshot refresh() {
            Map<TaskStatus, Long> now = counts();
            long terminal = 0;
            for (TaskStatus s : TaskStatus.values()) {
                if (s.isTerminal()) {
                    terminal += now.get(s) - before.get(s);
                }
            }
            last = new Snapshot(now.get(TaskStatus.PROCESSED) - before.get(TaskStatus.PROCESSED),
                    now.get(TaskStatus.COMPENSATED) - before.get(TaskStatus.COMPENSATED),
                    now.get(TaskStatus.ERROR) - before.get(TaskStatus.ERROR), Math.min(terminal, orders),
                    now.get(TaskStatus.WAITING));
            return last;
        }

        Snapshot last() {
            return last;
        }
    }
}
