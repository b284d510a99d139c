package dev.sas.reliability;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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

    /**
     * The default URL of the local HA cluster ({@code ha/start.sh}): three Patroni nodes, the
     * driver connects to whichever is the primary.
     */
    public static final String DEFAULT_HA_URL =
            "jdbc:postgresql://127.0.0.1:5441,127.0.0.1:5442,127.0.0.1:5443/test?user=postgres&targetServerType=primary";
    /** The default URL of the plain PostgreSQL outside the HA cluster ({@code ha/start.sh}), for the ledger. */
    public static final String DEFAULT_HA_OUTSIDE_URL = "jdbc:postgresql://127.0.0.1:5444/test?user=postgres";

    /** What moves the primary of an HA cluster: a SIGKILL of its node, or a planned switchover. */
    public enum Failover {
        /** {@code ha/kill-primary.sh}: SIGKILL the primary's Patroni and postmaster; Patroni promotes a standby. */
        KILL,
        /** {@code ha/switchover.sh}: a planned switchover with patronictl. */
        SWITCHOVER
    }

    String url = DEFAULT_POSTGRES_URL;
    /**
     * Where the harness keeps its own tables (ledger, operator actions, worker metrics); null = {@link #url}.
     * On an HA cluster the ledger stands for the remote services' state, which a failover of the
     * SAS store does not roll back, so it lives outside the cluster.
     */
    String ledgerUrl;
    /** Failovers of the HA cluster, in order, spread over the chaos; empty = none. */
    List<Failover> failovers = List.of();
    /** Where the HA cluster's scripts are ({@code ha/} of the repository). */
    Path haDir = Path.of("ha");
    /**
     * Before a {@link Failover#KILL}, freeze the standbys' WAL receivers (SIGSTOP) this long, so
     * the primary is killed with commits the standbys have not received (asynchronous replication
     * loses them; synchronous replication holds the commits back instead). 0 = no lag.
     */
    long replicationLagMs;
    /**
     * After a failover, how long a node may take to reconnect before the stall bound runs on:
     * HikariCP backs off between reconnection attempts up to the pool wait
     * ({@code JdbcStateStore.CONNECTION_TIMEOUT}, 2 s), so a pool may find the new primary up to
     * that long after it accepts writes.
     */
    Duration reconnect = Duration.ofSeconds(2);
    /** Environment for the HA scripts ({@code SAS_HA_DIR}, {@code SAS_HA_PORT} ...): a test's own cluster. */
    Map<String, String> haEnv = Map.of();
    int tasks = 5_000;
    int workers = 3;
    int kills = 10;
    /** Workers frozen (SIGSTOP) past their deadlines and then resumed (SIGCONT): zombie nodes. */
    int pauses = 2;
    /**
     * Offset of each worker slot's clock from the system clock ({@code Clock.offset}); slots past
     * the end run unskewed. {@code --skew 300s} sets {@code [+300 s, -300 s]}.
     */
    List<Duration> clockOffsets = List.of();
    /** Spread the submissions over this many ms (like live traffic); -1 = over the chaos window. */
    long submitOverMs = -1;
    Duration killEvery = Duration.ofSeconds(4);
    /** Every n-th task (index % n == n / 2) is declined for good at step 3 and compensated: 20 = 5 %. */
    int failEvery = 20;
    /** Every n-th task (index % n == n / 4, unless declined) has an input that cannot be decoded; 0 = none. */
    int poisonEvery = 100;
    /** Every n-th task (index % n == n / 8, unless declined or poison) is cancelled once; 0 = none. */
    int cancelEvery = 25;
    /** A cancel is sent at a random moment up to this long after the task's submission. */
    Duration cancelWithin = Duration.ofMillis(500);
    /** Added to the stall bound (CPU starvation on a loaded CI machine); 0 in full runs. */
    Duration stallSlack = Duration.ZERO;
    /** The database restart command; null = the default for the database (see {@link #restartCommand()}). */
    String restartCommand;
    /** Restart PostgreSQL once (pg_ctlcluster), half-way through the kills. Never in tests. */
    boolean restartDb;
    /** Terminate every backend of this run's application_name once (PostgreSQL only; safe in tests). */
    boolean terminateBackends;
    String pgCluster = "15 main";
    int ledgerLatencyMinMs = 5;
    int ledgerLatencyMaxMs = 25;
    /** Per mille of first attempts whose reply is held back past the step deadline (stale replies). */
    int slowPerMille = 5;
    /**
     * Per mille of forward calls whose effect the service applies after the call's deadline: it
     * ignores {@code remaining()}, as a service that does not cooperate would.
     */
    int lateApplyPerMille = 5;
    /**
     * True: the service refuses to apply an effect after the call's deadline (it cooperates). False
     * by default: SAS is measured against a service that does not look at the time it was given.
     */
    boolean serviceEnforcesDeadline;
    Duration completeWithin = Duration.ofSeconds(2);
    Duration supervisorInterval = Duration.ofMillis(300);
    Duration pollInterval = Duration.ofMillis(100);
    Duration timeout = Duration.ofMinutes(10);
    Path logDir = Path.of("target", "chaos");
    /**
     * Faults at chosen points of a step's life ({@link FaultPoints}), honoured by the first
     * {@link #faultWorkers} workers (the others keep the cluster running); empty = none.
     */
    List<FaultPoints.Spec> faultPoints = List.of();
    /** How many workers (slots 0, 1, ...) honour {@link #faultPoints}; fewer than the workers, so one keeps running. */
    int faultWorkers = 1;
    /** Workers killed at fault points after which restarted workers get no more faults. */
    int faultBudget = 3;
    /** How far worker 0's clock jumps ahead and worker 1's behind, back and forth; zero = no jumps. */
    Duration clockJump = Duration.ZERO;
    /** The time between two clock jumps of a worker. */
    Duration clockJumpEvery = Duration.ofSeconds(3);
    /** Network partitions between one worker and the store's database (a proxy per worker cut for a while). */
    int partitions;
    /** The directions of the partitions, in turn. */
    List<DbProxy.Cut> partitionCuts = List.of(DbProxy.Cut.BOTH, DbProxy.Cut.FROM_DB, DbProxy.Cut.TO_DB);
    /**
     * True: the workflow gets a fourth step, {@code confirm}, that awaits a reply; the ledger
     * service applies its effect and delivers the completion (see {@link ChaosWorkflow}).
     */
    boolean awaitReply;
    boolean keepTables;
    String classpath;

    public ChaosSettings url(String url) {
        this.url = Objects.requireNonNull(url);
        return this;
    }

    public ChaosSettings ledgerUrl(String ledgerUrl) {
        this.ledgerUrl = ledgerUrl;
        return this;
    }

    /** Where the harness's own tables are: {@link #ledgerUrl}, or else the store's URL. */
    String ledgerUrl() {
        return ledgerUrl != null ? ledgerUrl : url;
    }

    public ChaosSettings failovers(List<Failover> failovers) {
        this.failovers = List.copyOf(failovers);
        return this;
    }

    public ChaosSettings haDir(Path haDir) {
        this.haDir = Objects.requireNonNull(haDir);
        return this;
    }

    /** Environment variables for the HA scripts, e.g. {@code SAS_HA_DIR} and {@code SAS_HA_PORT} of a test's own cluster. */
    public ChaosSettings haEnv(Map<String, String> haEnv) {
        this.haEnv = Map.copyOf(haEnv);
        return this;
    }

    public ChaosSettings replicationLagMs(long replicationLagMs) {
        this.replicationLagMs = replicationLagMs;
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

    /** One worker's clock {@code skew} ahead of the system clock, one {@code skew} behind; the others unskewed. */
    public ChaosSettings skew(Duration skew) {
        this.clockOffsets = skew.isZero() ? List.of() : List.of(skew, skew.negated());
        return this;
    }

    /** Clock offset of each worker slot, from slot 0; slots past the end run unskewed. */
    public ChaosSettings clockOffsets(List<Duration> clockOffsets) {
        this.clockOffsets = List.copyOf(clockOffsets);
        return this;
    }

    /** The clock offset of worker {@code slot}. */
    Duration clockOffset(int slot) {
        return slot < clockOffsets.size() ? clockOffsets.get(slot) : Duration.ZERO;
    }

    /** Faults at chosen points, e.g. {@code after-effect:freeze:50,claim-start:kill:20} (see {@link FaultPoints}). */
    public ChaosSettings faultPoints(String spec) {
        this.faultPoints = List.copyOf(FaultPoints.parse(spec));
        return this;
    }

    public ChaosSettings faultWorkers(int faultWorkers) {
        this.faultWorkers = faultWorkers;
        return this;
    }

    public ChaosSettings faultBudget(int faultBudget) {
        this.faultBudget = faultBudget;
        return this;
    }

    /** Worker 0's clock jumps {@code jump} ahead and back, worker 1's behind and back, every {@code every}. */
    public ChaosSettings clockJumps(Duration jump, Duration every) {
        this.clockJump = jump.abs();
        this.clockJumpEvery = every;
        return this;
    }

    /** {@code n} partitions between a worker and the database, cutting in {@code cuts} in turn. */
    public ChaosSettings partitions(int n, List<DbProxy.Cut> cuts) {
        this.partitions = n;
        this.partitionCuts = List.copyOf(cuts);
        return this;
    }

    /** How long a fault-point freeze or a partition lasts: past a step's deadline. */
    long freezeMs() {
        return completeWithin.toMillis() + 2_000;
    }

    public ChaosSettings poisonEvery(int poisonEvery) {
        this.poisonEvery = poisonEvery;
        return this;
    }

    public ChaosSettings cancelEvery(int cancelEvery) {
        this.cancelEvery = cancelEvery;
        return this;
    }

    public ChaosSettings cancelWithin(Duration cancelWithin) {
        this.cancelWithin = cancelWithin;
        return this;
    }

    public ChaosSettings stallSlack(Duration stallSlack) {
        this.stallSlack = stallSlack;
        return this;
    }

    /**
     * The longest a step may wait past its due time: its deadline plus two supervisor intervals
     * (plus {@link #stallSlack}); a database outage overlapping the wait is added by the check.
     */
    /** The workers' supervisor lease: three intervals, at least {@code SasRuntime.MIN_SUPERVISOR_LEASE}. */
    long supervisorLeaseMs() {
        return Math.max(dev.sas.core.SasRuntime.MIN_SUPERVISOR_LEASE.toMillis(), 3 * supervisorInterval.toMillis());
    }

    long stallBoundMs() {
        return completeWithin.toMillis() + 2 * supervisorInterval.toMillis() + stallSlack.toMillis();
    }

    public ChaosSettings restartCommand(String restartCommand) {
        this.restartCommand = restartCommand;
        return this;
    }

    /**
     * The command that restarts the database: {@code --restart-cmd}, or on PostgreSQL
     * {@code pg_ctlcluster --skip-systemctl-redirect <pgCluster> restart}, on MariaDB
     * {@code service mariadb restart}.
     */
    List<String> restartCommand() {
        if (restartCommand != null) {
            return List.of(restartCommand.trim().split("\\s+"));
        }
        if (db() == ChaosDb.POSTGRES) {
            List<String> cmd = new ArrayList<>(List.of("pg_ctlcluster", "--skip-systemctl-redirect"));
            cmd.addAll(List.of(pgCluster.trim().split("\\s+")));
            cmd.add("restart");
            return cmd;
        }
        return List.of("service", "mariadb", "restart");
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
        // a failover takes about the leader key's time-to-live (10 s) and the node's return as long again
        return (kills + pauses + partitions) * killEvery.toMillis() + (pauses + partitions) * freezeMs()
                + failovers.size() * 15_000L;
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

    public ChaosSettings lateApplyPerMille(int lateApplyPerMille) {
        this.lateApplyPerMille = lateApplyPerMille;
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

    /** Adds the step that awaits a reply ({@code confirm}) after the three calls. */
    public ChaosSettings awaitReply(boolean awaitReply) {
        this.awaitReply = awaitReply;
        return this;
    }

    /** The workflow's forward steps, in order. */
    List<String> steps() {
        List<String> steps = new ArrayList<>(List.of(ChaosWorkflow.STEPS));
        if (awaitReply) {
            steps.add(ChaosWorkflow.AWAITING_STEP);
        }
        return List.copyOf(steps);
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

    /** The fault injected into task {@code index} (from 0); at most one per task. */
    Fault fault(int index) {
        if (failsForGood(index, failEvery)) {
            return Fault.DECLINED;
        }
        if (poisonEvery > 0 && index % poisonEvery == poisonEvery / 4) {
            return Fault.POISON;
        }
        if (cancelEvery > 0 && index % cancelEvery == cancelEvery / 8) {
            return Fault.CANCEL;
        }
        return Fault.NONE;
    }

    /** True for a poison task whose input overflows the stack (the others are not a number): half of them. */
    boolean deepPoison(int index) {
        return poisonEvery > 0 && (index / poisonEvery / 2) % 2 == 0;
    }

    /** True for a poison task that the operator resubmits once it is in ERROR (every other one). */
    boolean resubmitted(int index) {
        return fault(index) == Fault.POISON && (index / poisonEvery) % 2 == 0;
    }

    /** How many of the tasks get {@code fault}. */
    int count(Fault f) {
        int n = 0;
        for (int i = 0; i < tasks; i++) {
            if (fault(i) == f) {
                n++;
            }
        }
        return n;
    }

    /** How many of the tasks fail for good. */
    int expectedFailures() {
        return count(Fault.DECLINED);
    }

    /** Parses {@code --name value} options; see {@link ChaosMain} and {@link ChaosOptions}. */
    public static ChaosSettings parse(String[] args) {
        return ChaosOptions.parse(args);
    }

    @Override
    public String toString() {
        return ChaosOptions.describe(this);
    }
}
