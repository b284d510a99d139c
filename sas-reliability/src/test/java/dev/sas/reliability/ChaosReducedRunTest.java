package dev.sas.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The reduced chaos run, on every CI run: 500 tasks over 3 worker JVMs on one database, 2 workers
 * SIGKILLed and restarted, one frozen (SIGSTOP) past its deadlines and resumed; on PostgreSQL
 * also every backend of the run's application_name terminated once. 25 tasks are declined at step
 * 3, 10 have poison inputs (5 of them resubmitted once in ERROR), 20 are cancelled at a random
 * moment. Every invariant of the full run is checked: none lost, every task in a state its fault
 * allows (no false failure), no effect applied twice, no two executions of a step at once, no
 * step waiting past the stall bound (with slack for a loaded CI machine).
 */
class ChaosReducedRunTest {
    /**
     * Added to the stall bound in CI: the worker JVMs share 2 cores with the database and other
     * builds (load averages of 10 and more), so under a backlog a step waits for a CPU, and after
     * the backends are terminated the claim loop backs off over the pool's dead connections (up
     * to ~3 s measured). A task that is stuck waits far longer. Full runs use no slack.
     */
    private static final Duration STALL_SLACK = Duration.ofSeconds(10);

    private static String url(String env) {
        String url = System.getenv(env);
        assumeTrue(url != null && !url.isBlank(), env + " not set: skipping the reduced chaos run on this database");
        if (!url.contains("127.0.0.1") && !url.contains("localhost")) {
            throw new IllegalStateException(env + " must point at 127.0.0.1; the chaos run creates and drops tables");
        }
        return url;
    }

    @Test
    @Timeout(330)
    void reducedRunOnPostgres() throws Exception {
        run(new ChaosSettings().url(url("SAS_TEST_POSTGRES_URL")).terminateBackends(true));
    }

    @Test
    @Timeout(330)
    void reducedRunOnMariaDb() throws Exception {
        run(new ChaosSettings().url(url("SAS_TEST_MARIADB_URL")));
    }

    private static void run(ChaosSettings settings) throws Exception {
        settings.tasks(500).kills(2).pauses(1).killEvery(Duration.ofMillis(1200)).failEvery(20).ledgerLatency(20, 60)
                .poisonEvery(50).cancelEvery(25).stallSlack(STALL_SLACK)
                .logDir(Path.of("target", "chaos"));
        long t0 = System.nanoTime();
        List<Process> workers;
        ChaosReport report;
        try (ChaosRun run = new ChaosRun(settings)) {
            run.start();
            // limits, not measurements: three JVMs starting at once took 20-31 s to report at load 40
            await("workers ready").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
                    .until(run::workersReady);
            run.startChaos();
            run.submitAll();
            await("every task terminal and the chaos over").atMost(Duration.ofSeconds(180))
                    .pollInterval(Duration.ofMillis(250))
                    .conditionEvaluationListener(c -> {
                        if (c.getElapsedTimeInMS() % 5_000 < 250) {
                            System.out.println("[chaos test] " + run.progress());
                        }
                    })
                    .until(run::finished);
            report = run.finish();
            workers = run.processes();
        }
        long seconds = Duration.ofNanos(System.nanoTime() - t0).toSeconds();
        System.out.println("[chaos test] reduced run took " + seconds + " s (not asserted: the machine's load decides it)");
        System.out.println(report.toMarkdown());
        report.overlapExamples.forEach(System.out::println);
        report.worstStalls.forEach(System.out::println);
        report.evidence.forEach(System.out::println);

        assertThat(workers).as("no worker JVM survives the run").noneMatch(Process::isAlive);
        assertThat(report.violations()).as("broken invariants; evidence:\n" + String.join("\n", report.evidence))
                .isEmpty();
        assertThat(report.terminal).isEqualTo(500);
        assertThat(report.lost).isZero();
        assertThat(report.falseFailures).isZero();
        assertThat(report.keysAppliedTwice + report.stepsWithTwoKeys).isZero();
        assertThat(report.overlaps).isZero();
        assertThat(report.stallViolations).isZero();
        assertThat(report.compensated).isEqualTo(settings.expectedFailures()).isEqualTo(25);
        assertThat(report.poisonParked).isEqualTo(report.poisonTasks).isEqualTo(10);
        assertThat(report.resubmitsSent).isEqualTo(5);
        assertThat(report.resubmitsNotRerun).isZero();
        assertThat(report.cancelsSent).isEqualTo(report.cancelTasks).isEqualTo(20);
        assertThat(report.executions).isGreaterThanOrEqualTo(report.effects);
        assertThat(report.maxWaitMs).as("the stall check measured the waits").isPositive();
        assertThat(report.killsDone).isEqualTo(2);
        assertThat(report.killsWithWorkInFlight).as("kills that hit work in flight").isPositive();
    }
}
