package dev.sas.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.Codec;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasClient;
import dev.sas.core.SasMetrics;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 31 (c): does a node whose clock jumps by ±5 minutes mid-run do less of the work? Three
 * runtimes in one JVM on one PostgreSQL schema, alike but for their clocks: one steps +5 min and
 * back every second, one -5 min and back, one keeps the system clock. Each runs the same workflow
 * (three steps, calls of 20–60 ms) over the same backlog; the steps each completed are printed. A
 * node that paced its claims or admissions on its wall clock would claim less (or nothing) after
 * a jump; the database clock ({@code DatabaseClock}) re-measures its offset at every step of the
 * local clock and the claim loop paces on a monotonic timer, so the share should be the machine's
 * scheduling, not the clock. Asserts only what cannot depend on the machine's load: every task
 * completes and each node, jumped or not, ran steps in each round. Skips without
 * {@code SAS_TEST_POSTGRES_URL}.
 */
class ClockJumpShareTest {
    private static final int TASKS = 300;
    private static final Duration JUMP = Duration.ofMinutes(5);
    private static final Duration JUMP_EVERY = Duration.ofSeconds(1);
    private static final String[] STEPS = {"a", "b", "c"};
    /** {@code -Dsas.clockjump.rounds=8}: each pair of nodes each way and two controls (CI: 4). */
    private static final int ROUNDS = Integer.getInteger("sas.clockjump.rounds", 4);
    /**
     * {@code -Dsas.clockjump.trustLocal=true}: the jumping nodes trust their own clock (no database
     * clock), to show what the run measures when a node's times do come from a clock that jumps.
     */
    private static final boolean TRUST_LOCAL = Boolean.getBoolean("sas.clockjump.trustLocal");

    private static String postgres() {
        String url = System.getenv("SAS_TEST_POSTGRES_URL");
        assumeTrue(url != null && !url.isBlank(), "SAS_TEST_POSTGRES_URL not set: skipping the clock-jump share run");
        if (!url.contains("127.0.0.1") && !url.contains("localhost")) {
            throw new IllegalStateException("SAS_TEST_POSTGRES_URL must point at 127.0.0.1; the run creates tables");
        }
        return url;
    }

    @Test
    @Timeout(600)
    void nodes_whose_clocks_jump_five_minutes_each_way_keep_claiming_work() throws Exception {
        String url = postgres();
        // the jumping clocks on each pair of nodes in turn, each way, and control rounds with no jumps;
        // the shares summed over rounds, per role
        Map<String, long[]> byRole = new LinkedHashMap<>();
        int[][] rounds = {{0, 1}, {1, 2}, {2, 0}, {-1, -1}, {1, 0}, {2, 1}, {0, 2}, {-1, -1}};
        for (int[] round : java.util.Arrays.copyOf(rounds, Math.min(ROUNDS, rounds.length))) {
            Map<String, long[]> perNode = run(url, round[0], round[1]);
            System.out.println("[clock-jump share] + on n" + round[0] + ", - on n" + round[1]
                    + ": claimed / steps / stale / deadlines missed " + format(perNode));
            for (Map.Entry<String, long[]> e : perNode.entrySet()) {
                assertThat(e.getValue()[1]).as(e.getKey() + " ran steps").isPositive();
                String role = e.getKey().contains("+") ? "+5 min" : e.getKey().contains("-") ? "-5 min"
                        : round[0] < 0 ? "control (no jumps)" : "steady beside jumps";
                long[] sum = byRole.computeIfAbsent(role, k -> new long[5]);
                for (int i = 0; i < 4; i++) {
                    sum[i] += e.getValue()[i];
                }
                sum[4]++;
            }
        }
        System.out.println("[clock-jump share] per node and round, by role (claimed / steps / stale / missed): "
                + format(byRole));
    }

    private static String format(Map<String, long[]> m) {
        StringBuilder sb = new StringBuilder();
        m.forEach((k, v) -> {
            long n = v.length > 4 ? v[4] : 1;
            sb.append(k).append('=').append(v[0] / n).append('/').append(v[1] / n).append('/').append(v[2] / n)
                    .append('/').append(v[3] / n).append(' ');
        });
        return sb.toString().trim();
    }

    /**
     * Runs {@link #TASKS} tasks, submitted by a client of their own, on three nodes, {@code plus}
     * jumping ahead and {@code minus} behind (-1: none); per node, claimed / steps / stale / missed.
     */
    private static Map<String, long[]> run(String url, int plus, int minus) throws Exception {
        String prefix = "cj" + Long.toString(System.nanoTime() % 1_000_000_000L, 36) + "_";
        ScheduledExecutorService timers = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "clock-jumps");
            t.setDaemon(true);
            return t;
        });
        List<JdbcStateStore> stores = new ArrayList<>();
        List<SasRuntime> nodes = new ArrayList<>();
        try {
            Workflow<String> workflow = workflow();
            for (int n = 0; n < 3; n++) {
                JdbcStateStore store = JdbcStateStore.builder().url(url).tablePrefix(prefix).maxPoolSize(6)
                        .poolName("cj-n" + n).build();
                stores.add(store);
                Clock clock = Clock.systemUTC();
                if (n == plus || n == minus) {
                    JumpingClock jumping = new JumpingClock(Duration.ZERO);
                    Duration to = n == plus ? JUMP : JUMP.negated();
                    timers.scheduleWithFixedDelay(() -> jumping.jumpTo(jumping.offset().isZero() ? to : Duration.ZERO),
                            JUMP_EVERY.toMillis(), JUMP_EVERY.toMillis(), TimeUnit.MILLISECONDS);
                    clock = jumping;
                }
                var b = SasRuntime.builder().stateStore(store).clock(clock).workflow(workflow).instanceId("n" + n)
                        .schedulerThreads(4).agentThreads(8).claimBatchSize(8).maxInFlight(24)
                        .pollInterval(Duration.ofMillis(100)).supervisorInterval(Duration.ofMillis(500));
                if (TRUST_LOCAL && (n == plus || n == minus)) {
                    b.trustLocalClock();
                }
                nodes.add(b.build());
            }
            nodes.forEach(SasRuntime::start);
            // the backlog in batches over about 3 s, from a client of its own: a node's own submits would
            // wake its claim loop at once and favour it
            JdbcStateStore clientStore = JdbcStateStore.builder().url(url).tablePrefix(prefix).maxPoolSize(2)
                    .poolName("cj-client").build();
            stores.add(clientStore);
            SasClient submitter = SasClient.builder().stateStore(clientStore).build();
            for (int b = 0; b < TASKS / 20; b++) {
                Map<String, String> batch = new LinkedHashMap<>();
                for (int i = 0; i < 20; i++) {
                    batch.put("t-" + (b * 20 + i), "x");
                }
                submitter.submitAll(workflow, batch);
                await().pollDelay(Duration.ofMillis(200)).until(() -> true);
            }
            await("every task processed").atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(250))
                    .until(() -> submitter.countByStatus().getOrDefault(TaskStatus.PROCESSED, 0L) == TASKS);
            Map<String, long[]> out = new LinkedHashMap<>();
            for (int n = 0; n < nodes.size(); n++) {
                String role = n == plus ? " (+5 min)" : n == minus ? " (-5 min)" : "";
                SasMetrics m = nodes.get(n).metrics();
                out.put("n" + n + role, new long[] {m.claimed(), m.stepsCompleted(), m.staleRejected(),
                    m.deadlinesMissed()});
            }
            return out;
        } finally {
            timers.shutdownNow();
            nodes.forEach(SasRuntime::close);
            stores.forEach(JdbcStateStore::close);
            dropTables(url, prefix);
        }
    }

    /** Drops this run's tables and trigger functions (as {@link ChaosRun} does), so the test database stays as it was. */
    private static void dropTables(String url, String prefix) throws java.sql.SQLException {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url);
                java.sql.Statement s = c.createStatement()) {
            for (String t : ChaosDb.tables(prefix)) {
                s.execute("DROP TABLE IF EXISTS " + t);
            }
            for (String f : ChaosDb.functions(prefix)) {
                s.execute("DROP FUNCTION IF EXISTS " + f + "() CASCADE");
            }
        }
    }

    private static Workflow<String> workflow() {
        RetryPolicy retry = RetryPolicy.builder().maxAttempts(10)
                .backoff(Duration.ofMillis(50), Duration.ofMillis(500), 2.0).build();
        Agent<String, String> agent = new Agent<>() {
            @Override
            public String name() {
                return "service";
            }

            @Override
            public RetryPolicy retryPolicy() {
                return retry;
            }

            @Override
            public CompletionStage<String> call(AgentRequest<String> r) {
                // the service's latency (a fault model), on a timer: no thread held
                return CompletableFuture.supplyAsync(() -> "ok", CompletableFuture.delayedExecutor(
                        ThreadLocalRandom.current().nextInt(20, 60), TimeUnit.MILLISECONDS));
            }
        };
        Workflow.Builder<String> b = Workflow.builder("clock-jump-share", Codec.string());
        for (String step : STEPS) {
            b.step(step, sb -> sb.call(agent, ctx -> ctx.input()).completeWithin(Duration.ofSeconds(5)).retry(retry));
        }
        return b.build();
    }
}
