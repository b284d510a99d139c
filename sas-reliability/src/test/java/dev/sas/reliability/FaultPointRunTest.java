package dev.sas.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Short chaos runs on PostgreSQL (150 to 200 tasks, 3 worker JVMs) with faults at chosen points
 * (honoured by worker 0, so two nodes keep running) instead of random kills: one run per kill point
 * (claim-start, start-record, compensation, and completion: while the service delivers the reply to
 * a step that awaits one), and one with network partitions between a worker and the database (both
 * ways, answers held, requests held) and workers 0 and 1 frozen after the service applied an effect and
 * again while it delivers a completion, while two workers' clocks jump by 5 minutes and back
 * (folded into one run to keep the module's time in CI). Each asserts the fault fired (counted in {@code chaos_fault}) and every
 * zero of the chaos checks and the history checker: nothing lost, no false failure, no effect
 * applied twice, no overlapping executions, no stall past the bound (with CI slack).
 */
class FaultPointRunTest {
    /** As in {@link ChaosReducedRunTest}: the worker JVMs share 2 busy cores with the database and other builds. */
    private static final Duration STALL_SLACK = Duration.ofSeconds(10);

    private static String postgresUrl() {
        String url = System.getenv("SAS_TEST_POSTGRES_URL");
        assumeTrue(url != null && !url.isBlank(), "SAS_TEST_POSTGRES_URL not set: skipping the fault-point runs");
        if (!url.contains("127.0.0.1") && !url.contains("localhost")) {
            throw new IllegalStateException("SAS_TEST_POSTGRES_URL must point at 127.0.0.1; the run creates tables");
        }
        return url;
    }

    private static ChaosSettings settings(int tasks) {
        // cancels every 10th task: half of them sent as soon as the task runs, to land on running steps
        return new ChaosSettings().url(postgresUrl()).tasks(tasks).kills(0).pauses(0).failEvery(10).poisonEvery(0)
                .cancelEvery(10).ledgerLatency(20, 60).stallSlack(STALL_SLACK).submitOverMs(3_000)
                .killEvery(Duration.ofMillis(1_500)).logDir(Path.of("target", "chaos"));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"claim-start:kill:60", "start-record:kill:60", "compensation:kill:500",
        "completion:kill:200"})
    @Timeout(330)
    void faultAtAChosenPoint(String fault) throws Exception {
        // a kill while delivering a completion needs the step that awaits one. Workers 0 and 1 honour the point
        // (worker 2 keeps the cluster running): on a busy machine worker 0 alone once reached no step start
        // within the run at 30 per mille, and the start-record fault never fired
        ChaosSettings s = settings(150).faultPoints(fault).faultWorkers(2).faultBudget(2)
                .awaitReply(fault.startsWith("completion"));
        ChaosReport r = run(s);
        String point = fault.substring(0, fault.indexOf(':'));
        int fired = r.faults.entrySet().stream().filter(e -> e.getKey().startsWith(point + ":"))
                .mapToInt(e -> e.getValue()).sum();
        assertThat(fired).as("the fault at " + point + " fired").isPositive();
        if (fault.contains(":kill:")) {
            assertThat(r.faultKills).as("workers killed at the point and restarted").isPositive();
        }
    }

    @Test
    @Timeout(330)
    void partitionsAndFreezesAfterAnEffectAndDuringACompletionWhileClocksJump() throws Exception {
        // a worker fires a point once: at its first effect, and at its first completion of the awaiting
        // step (frozen past the deadline, it delivers the completion late: it must change nothing).
        // Workers 0 and 1 honour the points: the clocks that jump are theirs, and on a loaded machine
        // worker 0 alone once applied no awaiting step (CI: no completion freeze); worker 2 keeps running
        ChaosSettings s = settings(200).awaitReply(true).faultWorkers(2).partitions(3, List.of(DbProxy.Cut.BOTH,
                DbProxy.Cut.FROM_DB, DbProxy.Cut.TO_DB)).clockJumps(Duration.ofMinutes(5), Duration.ofSeconds(2))
                .faultPoints("after-effect:freeze:1000,completion:freeze:1000");
        ChaosReport r = run(s);
        assertThat(r.faults).as("a worker froze after the service applied an effect").containsKey("after-effect:freeze");
        assertThat(r.faults).as("a worker froze while delivering a completion").containsKey("completion:freeze");
        assertThat(r.faults.keySet()).as("the completion delivered after the freeze was refused (late or stale)")
                .anyMatch(k -> k.startsWith("reply-refused:"));
        assertThat(r.partitionsDone).isEqualTo(3);
        assertThat(r.faults).containsKeys("partition:both", "partition:from-db", "partition:to-db");
        assertThat(r.faults.getOrDefault("clock-jump:ahead", 0) + r.faults.getOrDefault("clock-jump:behind", 0))
                .as("clocks jumped away").isPositive();
        assertThat(r.faults.getOrDefault("clock-jump:back", 0)).as("and back").isPositive();
    }

    private static ChaosReport run(ChaosSettings s) throws Exception {
        ChaosReport r;
        List<Process> workers;
        try (ChaosRun run = new ChaosRun(s)) {
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
                            System.out.println("[fault test] " + run.progress());
                        }
                    })
                    .until(run::finished);
            r = run.finish();
            workers = run.processes();
        }
        System.out.println(r.toMarkdown());
        r.overlapExamples.forEach(System.out::println);
        r.worstStalls.forEach(System.out::println);
        r.evidence.forEach(System.out::println);
        assertThat(workers).as("no worker JVM survives the run").noneMatch(Process::isAlive);
        assertThat(r.violations()).as("broken invariants; evidence:\n" + String.join("\n", r.evidence)).isEmpty();
        assertThat(r.history).isNotNull();
        assertThat(r.history.passed()).as("history checker: " + r.history.summary()).isTrue();
        assertThat(r.terminal).isEqualTo(s.tasks);
        assertThat(r.lost).isZero();
        assertThat(r.falseFailures).isZero();
        assertThat(r.keysAppliedTwice + r.stepsWithTwoKeys).isZero();
        assertThat(r.overlaps).isZero();
        assertThat(r.stallViolations).isZero();
        assertThat(r.cancelsSent).isEqualTo(r.cancelTasks);
        return r;
    }
}
