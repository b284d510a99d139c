package dev.sas.bench;

import dev.sas.core.Codec;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Submit→start latency across two JVMs (issue 13): JVM A, a client only, submits tasks at a steady
 * rate; JVM B, a runtime with default settings, runs them. The latency of a task is the wall time
 * from just before A's {@code submit} call to the start of its step on B (both JVMs read the one
 * clock of this machine). On PostgreSQL B is woken by the {@code NOTIFY} of A's submit transaction;
 * on MariaDB by its adaptive poll (20 ms while recently busy). Tasks submitted during the warm-up
 * are not counted.
 *
 * <pre>
 * java -cp sas-bench/target/sas-bench.jar dev.sas.bench.CrossNodeLatency --db postgres,mariadb --rate 200 --seconds 30
 * </pre>
 *
 * Options: {@code --db} (postgres, mariadb, or both; default: those whose {@code SAS_TEST_*_URL} is
 * set, else both on the local defaults), {@code --rate N} per second (200), {@code --seconds S}
 * measured (30), {@code --warmup-seconds S} (5). {@code --idle-load} instead measures what an idle
 * runtime with default settings sends to the database: statements and commits per second, without
 * and with one status channel, over {@code --seconds}.
 */
public final class CrossNodeLatency {

    private static final String WORKFLOW = "latency";

    private CrossNodeLatency() {
    }

    /** One no-op step whose start prints how long after its submit it began. */
    static Workflow<String> workflow(Clock wall) {
        return Workflow.builder(WORKFLOW, Codec.string()).step("start", s -> s.execute(ctx -> {
            Instant now = wall.instant();
            long submitted = Long.parseLong(ctx.input());
            long micros = now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000 - submitted;
            System.out.println("STARTED " + micros);
            return null;
        })).build();
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--node")) {
            node(args[1], args[2]);
            return;
        }
        int rate = 200;
        int seconds = 30;
        int warmup = 5;
        boolean idleLoad = false;
        List<String> dbs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rate" -> rate = Integer.parseInt(args[++i]);
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                case "--warmup-seconds" -> warmup = Integer.parseInt(args[++i]);
                case "--db" -> dbs.addAll(List.of(args[++i].toLowerCase(Locale.ROOT).split(",")));
                case "--idle-load" -> idleLoad = true;
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Map<String, String> env = System.getenv();
        if (dbs.isEmpty()) {
            if (env.containsKey("SAS_TEST_POSTGRES_URL")) {
                dbs.add("postgres");
            }
            if (env.containsKey("SAS_TEST_MARIADB_URL")) {
                dbs.add("mariadb");
            }
            if (dbs.isEmpty()) {
                dbs.addAll(List.of("postgres", "mariadb"));
            }
        }
        if (idleLoad) {
            System.out.printf("idle database load of one runtime (default settings), over %d s%n", seconds);
            System.out.println("| database | status channels | statements/s | commits/s |");
            System.out.println("|---|---:|---:|---:|");
            for (String db : dbs) {
                idleLoad(db.trim(), url(db.trim(), env), seconds);
            }
            return;
        }
        System.out.printf("cross-node submit->start latency: A submits %d tasks/s for %d s (after %d s warm-up), B runs"
                + " them with default settings%n", rate, seconds, warmup);
        System.out.println("| database | wake-up | tasks | p50 ms | p90 ms | p99 ms | max ms |");
        System.out.println("|---|---|---:|---:|---:|---:|---:|");
        for (String db : dbs) {
            run(db.trim(), url(db.trim(), env), rate, seconds, warmup);
        }
    }

    private static String url(String db, Map<String, String> env) {
        return switch (db) {
            case "postgres" -> env.getOrDefault("SAS_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
            case "mariadb" -> env.getOrDefault("SAS_TEST_MARIADB_URL", "jdbc:mariadb://127.0.0.1:3306/test?user=root");
            default -> throw new IllegalArgumentException("--db takes postgres and/or mariadb, was " + db);
        };
    }

    /** Statements and commits per second of an idle runtime, without and with a status channel. */
    private static void idleLoad(String db, String url, int seconds) throws Exception {
        for (int channels = 0; channels <= 1; channels++) {
            String prefix = "idle" + UUID.randomUUID().toString().replace("-", "").substring(0, 8) + "_";
            try (com.zaxxer.hikari.HikariDataSource pool = new Target(db, url).pool("idle-load")) {
                CountingDataSource counting = new CountingDataSource(pool);
                try (JdbcStateStore store = JdbcStateStore.builder().dataSource(counting.dataSource()).tablePrefix(prefix)
                        .build()) {
                    dev.sas.core.RuntimeBuilder b = SasRuntime.builder().stateStore(store).workflow(workflow(Clock.systemUTC()));
                    if (channels > 0) {
                        b.statusChannel("idle-replies", e -> { });
                    }
                    SasRuntime sas = b.build().start();
                    try {
                        LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(3));
                        CountingDataSource.Counts before = counting.counts();
                        LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(seconds));
                        CountingDataSource.Counts d = counting.counts().minus(before);
                        System.out.printf("| %s | %d | %s | %s |%n", db, channels, Stats.fmt((double) d.statements() / seconds),
                                Stats.fmt((double) d.commits() / seconds));
                    } finally {
                        sas.close();
                    }
                }
            } finally {
                drop(url, prefix);
            }
        }
    }

    private static void run(String db, String url, int rate, int seconds, int warmup) throws Exception {
        String prefix = "lat" + UUID.randomUUID().toString().replace("-", "").substring(0, 8) + "_";
        List<Long> latencies = new ArrayList<>();
        Map<String, Boolean> ready = new ConcurrentHashMap<>();
        CountDownLatch up = new CountDownLatch(1);
        int warmTasks = rate * warmup;
        int total = warmTasks + rate * seconds;
        CountDownLatch allStarted = new CountDownLatch(total);
        Process b = null;
        try (JdbcStateStore store = JdbcStateStore.builder().url(url).tablePrefix(prefix).poolName("latency-a").build()) {
            b = ChildJvm.start(CrossNodeLatency.class, List.of("--node", url, prefix));
            ChildJvm.follow(b, "B", 20, line -> {
                if (line.startsWith("READY")) {
                    ready.put("B", true);
                    up.countDown();
                    return true;
                }
                if (line.startsWith("STARTED ")) {
                    synchronized (latencies) {
                        latencies.add(Long.parseLong(line.substring(8).trim()));
                    }
                    allStarted.countDown();
                    return true;
                }
                return false;
            });
            if (!up.await(120, TimeUnit.SECONDS)) {
                throw new IllegalStateException("node B did not start");
            }
            SasClient client = SasClient.builder().stateStore(store).build();
            Workflow<String> wf = workflow(Clock.systemUTC());
            Clock wall = Clock.systemUTC();
            long period = TimeUnit.SECONDS.toNanos(1) / rate;
            long next = System.nanoTime();
            for (int i = 0; i < total; i++) {
                Instant now = wall.instant();
                client.submit(wf, "t-" + i, Long.toString(now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000));
                next += period;
                LockSupport.parkNanos(next - System.nanoTime());
            }
            if (!allStarted.await(120, TimeUnit.SECONDS)) {
                System.out.println("  " + db + ": only " + (total - allStarted.getCount()) + " of " + total + " started");
            }
        } finally {
            ChildJvm.kill(b);
            drop(url, prefix);
        }
        long[] measured;
        synchronized (latencies) {
            // tasks start roughly in submit order: the first ones started are the warm-up's
            List<Long> after = latencies.subList(Math.min(warmTasks, latencies.size()), latencies.size());
            measured = after.stream().mapToLong(Long::longValue).toArray();
        }
        System.out.printf("| %s | %s | %d | %s | %s | %s | %s |%n", db,
                db.equals("postgres") ? "LISTEN/NOTIFY" : "adaptive poll (20 ms busy, 500 ms idle)", measured.length,
                ms(Stats.percentile(measured, 50)), ms(Stats.percentile(measured, 90)),
                ms(Stats.percentile(measured, 99)), ms(Stats.percentile(measured, 100)));
    }

    private static String ms(double micros) {
        return Stats.fmt(micros / 1000.0);
    }

    /** Node B: a runtime with default settings on the tables A created. */
    private static void node(String url, String prefix) throws Exception {
        ProcessHandle.current().parent().ifPresent(h -> ChildJvm.dieWithParent(h.pid()));
        JdbcStateStore store = JdbcStateStore.builder().url(url).tablePrefix(prefix).poolName("latency-b")
                .createSchema(false).build();
        SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(workflow(Clock.systemUTC()))
                .instanceId("latency-b").build().start();
        System.out.println("READY " + sas.instanceId() + " " + sas.config().pollInterval() + " "
                + sas.config().busyPollInterval());
        System.out.flush();
        new CountDownLatch(1).await();
    }

    private static void drop(String url, String prefix) {
        try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
            for (String t : List.of("event", "step", "task", "supervisor_lease", "runtime_workflow", "reply_outbox",
                    "reply_channel", "schema_version")) {
                st.execute("DROP TABLE IF EXISTS " + prefix + t);
            }
            if (url.startsWith("jdbc:postgresql")) {
                for (String f : List.of("notify_submitted", "notify_due", "notify_done", "notify_replies")) {
                    st.execute("DROP FUNCTION IF EXISTS " + prefix + f + "() CASCADE");
                }
            }
        } catch (Exception e) {
            System.err.println("could not drop the tables of " + prefix + ": " + e);
        }
    }
}
