package dev.sas.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The reduced failover run, on every CI run where Patroni and etcd are installed ({@code .ci/run}
 * installs them): a three-node Patroni cluster of its own ({@code ha/start.sh} on ports
 * 5451-5454, directory {@code /tmp/sas-ha-test-*}), 300 tasks over 3 worker JVMs through its
 * multi-host URL, one worker SIGKILLed, then the primary's node SIGKILLed (Patroni promotes the
 * synchronous standby) and later moved by a planned switchover. Every invariant of the chaos
 * harness is checked: none lost, none failed or parked because of the failovers, no effect applied
 * twice, no two executions of a step at once, every task terminal. The cluster is removed after
 * ({@code ha/stop.sh}).
 */
class HaFailoverRunTest {
    /** As in {@link ChaosReducedRunTest}: the worker JVMs share 2 loaded cores with three PostgreSQL servers. */
    private static final Duration STALL_SLACK = Duration.ofSeconds(10);
    private static final Path PG_BIN = Path.of("/usr/lib/postgresql/15/bin");
    private static final int TASKS = 300;

    private static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return false;
    }

    /** The repository's {@code ha/} directory, looked for from the working directory upwards. */
    private static Path haDir() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("ha").resolve("start.sh"))) {
                return p.resolve("ha");
            }
        }
        return null;
    }

    private static String script(Path ha, Map<String, String> env, String name, String... args)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", ha.resolve(name).toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int rc = p.waitFor();
        assertThat(rc).as(name + " exited " + rc + ":\n" + out).isZero();
        return out;
    }

    @Test
    @Timeout(480)
    void tasks_ride_through_a_primary_sigkill_and_a_switchover_on_a_synchronous_patroni_cluster() throws Exception {
        for (String tool : List.of("patroni", "patronictl", "etcd", "etcdctl", "curl")) {
            assumeTrue(onPath(tool), tool + " not installed: skipping the HA failover run"
                    + " (apt-get install -y patroni etcd-server etcd-client; .ci/run does it)");
        }
        assumeTrue(Files.isExecutable(PG_BIN.resolve("postgres")), PG_BIN + "/postgres not installed: skipping"
                + " the HA failover run (it needs PostgreSQL 15)");
        Path ha = haDir();
        assumeTrue(ha != null, "ha/start.sh not found above " + Path.of("").toAbsolutePath());

        Map<String, String> env = Map.of("SAS_HA_DIR", "/tmp/sas-ha-test-" + ChaosRun.randomLetters(8),
                "SAS_HA_PORT", "5451", "SAS_HA_ETCD_PORT", "2489", "SAS_HA_REST_PORT", "8021");
        ChaosSettings settings = new ChaosSettings()
                .url("jdbc:postgresql://127.0.0.1:5451,127.0.0.1:5452,127.0.0.1:5453/test?user=postgres"
                        + "&targetServerType=primary")
                .ledgerUrl("jdbc:postgresql://127.0.0.1:5454/test?user=postgres")
                .haDir(ha).haEnv(env)
                .failovers(List.of(ChaosSettings.Failover.KILL, ChaosSettings.Failover.SWITCHOVER))
                .tasks(TASKS).kills(1).pauses(0).killEvery(Duration.ofMillis(1500)).failEvery(20).ledgerLatency(20, 60)
                .poisonEvery(50).cancelEvery(25).stallSlack(STALL_SLACK).logDir(Path.of("target", "chaos"));
        ChaosReport report;
        try {
            System.out.println(script(ha, env, "start.sh"));
            try (ChaosRun run = new ChaosRun(settings)) {
                run.start();
                // limits, not measurements: three JVMs starting at once took 20-31 s to report at load 40
                await("workers ready").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
                        .until(run::workersReady);
                run.startChaos();
                run.submitAll();
                await("every task terminal and the failovers over").atMost(Duration.ofSeconds(240))
                        .pollInterval(Duration.ofMillis(250))
                        .conditionEvaluationListener(c -> {
                            if (c.getElapsedTimeInMS() % 5_000 < 250) {
                                System.out.println("[ha test] " + run.progress());
                            }
                        })
                        .until(run::finished);
                report = run.finish();
            }
        } finally {
            System.out.println(script(ha, env, "stop.sh"));
        }
        System.out.println(report.toMarkdown());
        report.worstStalls.forEach(System.out::println);
        report.evidence.forEach(System.out::println);

        assertThat(report.failovers).hasSize(2);
        assertThat(report.failovers.get(0)).startsWith("KILL").doesNotContain("NEVER").doesNotContain("NONE");
        assertThat(report.failovers.get(1)).startsWith("SWITCHOVER").doesNotContain("NEVER");
        assertThat(report.violations()).as("broken invariants; evidence:\n" + String.join("\n", report.evidence))
                .isEmpty();
        assertThat(report.terminal).isEqualTo(TASKS);
        assertThat(report.lost).isZero();
        assertThat(report.submitFailures).isZero();
        assertThat(report.falseFailures).isZero();
        assertThat(report.unexpectedOutcome).isZero();
        assertThat(report.keysAppliedTwice + report.stepsWithTwoKeys).isZero();
        assertThat(report.overlaps).isZero();
        assertThat(report.compensated).isEqualTo(settings.expectedFailures());
        assertThat(report.storeFailures).as("the workers saw the failovers").isPositive();
    }
}
