package dev.sas.reliability;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Settings of one chaos run. Mutable, fluent; {@link #parse} reads the command line of
 * {@link ChaosMain}.
 */
public final class ChaosSettings {

    /** The default PostgreSQL URL (the machine's local server). */
    public static final String DEFAULT_POSTGRES_URL = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
    /** The default MariaDB URL (the machine's local server). */
    public static final String DEFAULT_MARIADB_URL = "jdbc:mariadb://127.0.0.1:3306/test?user=root";

    String url = DEFAULT_POSTGRES_URL;
    int tasks = 5_000;
    int workers = 3;
    int kills = 10;
    /** Workers frozen (SIGSTOP) past their deadlines and then resumed (SIGCONT): zombie nodes. */
    int pauses = 2;
    /** Worker 0's clock runs this many ms behind the others' (0 = no skew). */
    long skewMs = 1_000;
    /** Spread the submissions over this many ms (like live traffic); -1 = over the chaos window. */
    long submitOverMs = -1;
    Duration killEvery = Duration.ofSeconds(4);
    /** Every n-th task (index % n == n / 2) is declined for good at step 3 and compensated: 20 = 5 %. */
    int failEvery = 20;
    /** Restart PostgreSQL once (pg_ctlcluster), half-way through the kills. Never in tests. */
    boolean restartDb;
    /** Terminate every backend of this run's application_name once (PostgreSQL only; safe in tests). */
    boolean terminateBackends;
    String pgCluster = "15 main";
    int ledgerLatencyMinMs = 5;
    int ledgerLatencyMaxMs = 25;
    /** Per mille of first attempts whose reply is held back past the step deadline (stale replies). */
    int slowPerMille = 5;
    Duration completeWithin = Duration.ofSeconds(2);
    Duration supervisorInterval = Duration.ofMillis(300);
    Duration pollInterval = Duration.ofMillis(100);
    Duration timeout = Duration.ofMinutes(10);
    Path logDir = Path.of("target", "chaos");
    boolean keepTables;
    String classpath;

    public ChaosSettings url(String url) {
        this.url = Objects.requireNonNull(url);
        return this;
    }

    public ChaosSettings tasks(int tasks) {
        this.tasks = tasks;
        return this;
    }

    public ChaosSettings workers(int workers) {
        this.workers = workers;
        return this;
    }

    public ChaosSettings kills(int kills) {
        this.kills = kills;
        return this;
    }

    public ChaosSettings pauses(int pauses) {
        this.pauses = pauses;
        return this;
    }

    public ChaosSettings skewMs(long skewMs) {
        this.skewMs = skewMs;
        return this;
    }

    public ChaosSettings submitOverMs(long submitOverMs) {
        this.submitOverMs = submitOverMs;
        return this;
    }

    /** The submission window: {@link #submitOverMs}, or by default the expected length of the chaos. */
    long submitWindowMs() {
        if (submitOverMs >= 0) {
            return submitOverMs;
        }
        return (kills + pauses) * killEvery.toMillis() + pauses * (completeWithin.toMillis() + 2_000);
    }

    public ChaosSettings killEvery(Duration killEvery) {
        this.killEvery = killEvery;
        return this;
    }

    public ChaosSettings failEvery(int failEvery) {
        this.failEvery = failEvery;
        return this;
    }

    public ChaosSettings restartDb(boolean restartDb) {
        this.restartDb = restartDb;
        return this;
    }

    public ChaosSettings terminateBackends(boolean terminateBackends) {
        this.terminateBackends = terminateBackends;
        return this;
    }

    public ChaosSettings ledgerLatency(int minMs, int maxMs) {
        this.ledgerLatencyMinMs = minMs;
        this.ledgerLatencyMaxMs = maxMs;
        return this;
    }

    public ChaosSettings slowPerMille(int slowPerMille) {
        this.slowPerMille = slowPerMille;
        return this;
    }

    public ChaosSettings timeout(Duration timeout) {
        this.timeout = timeout;
        return this;
    }

    public ChaosSettings logDir(Path logDir) {
        this.logDir = logDir;
        return this;
    }

    public ChaosSettings keepTables(boolean keepTables) {
        this.keepTables = keepTables;
        return this;
    }

    /** The worker JVMs' class path; default: this JVM's (the surefire test class path in tests). */
    public ChaosSettings classpath(String classpath) {
        this.classpath = classpath;
        return this;
    }

    ChaosDb db() {
        return ChaosDb.of(url);
    }

    /** True for task {@code index} (from 0) when step 3 declines it for good. */
    static boolean failsForGood(int index, int failEvery) {
        return failEvery > 0 && index % failEvery == failEvery / 2;
    }

    /** How many of the tasks fail for good. */
    int expectedFailures() {
        int n = 0;
        for (int i = 0; i < tasks; i++) {
            if (failsForGood(i, failEvery)) {
                n++;
            }
        }
        return n;
    }

    /** Parses {@code --name value} options; see {@link ChaosMain} for the list. */
    public static ChaosSettings parse(String[] args) {
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
                        case "--db" -> s.url = switch (v.toLowerCase(Locale.ROOT)) {
                            case "postgres", "postgresql" -> env("SAS_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL);
                            case "mariadb", "mysql" -> env("SAS_TEST_MARIADB_URL", DEFAULT_MARIADB_URL);
                            default -> throw new IllegalArgumentException("--db must be postgres or mariadb, was " + v);
                        };
                        case "--url" -> s.url = v;
                        case "--tasks" -> s.tasks = Integer.parseInt(v);
                        case "--workers" -> s.workers = Integer.parseInt(v);
                        case "--kills" -> s.kills = Integer.parseInt(v);
                        case "--pauses" -> s.pauses = Integer.parseInt(v);
                        case "--skew-ms" -> s.skewMs = Long.parseLong(v);
                        case "--submit-over-ms" -> s.submitOverMs = Long.parseLong(v);
                        case "--kill-every-ms" -> s.killEvery = Duration.ofMillis(Long.parseLong(v));
                        case "--fail-every" -> s.failEvery = Integer.parseInt(v);
                        case "--pg-cluster" -> s.pgCluster = v;
                        case "--latency-ms" -> {
                            String[] mm = v.split("-");
                            s.ledgerLatencyMinMs = Integer.parseInt(mm[0]);
                            s.ledgerLatencyMaxMs = Integer.parseInt(mm[mm.length - 1]);
                        }
                        case "--slow-per-mille" -> s.slowPerMille = Integer.parseInt(v);
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
        if (s.tasks < 1 || s.workers < 1 || s.kills < 0 || s.pauses < 0) {
            throw new IllegalArgumentException("--tasks and --workers must be positive, --kills not negative");
        }
        return s;
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }

    @Override
    public String toString() {
        return "tasks=" + tasks + " (submitted over " + submitWindowMs() + " ms), workers=" + workers + ", kills="
                + kills + " (every ~" + killEvery.toMillis() + " ms +-50%), worker 0 clock skew=-" + skewMs
                + " ms, pauses=" + pauses + " (SIGSTOP for completeWithin + 2 s, then SIGCONT), failEvery=" + failEvery
                + " (" + expectedFailures() + " tasks fail for good at step 3)"
                + ", restartDb=" + restartDb + ", terminateBackends=" + terminateBackends + ", ledgerLatency="
                + ledgerLatencyMinMs + "-" + ledgerLatencyMaxMs + " ms x2 per call, slowReplies=" + slowPerMille
                + " per mille of first attempts, completeWithin=" + completeWithin.toMillis() + " ms, supervisorInterval="
                + supervisorInterval.toMillis() + " ms, pollInterval=" + pollInterval.toMillis() + " ms";
    }
}
