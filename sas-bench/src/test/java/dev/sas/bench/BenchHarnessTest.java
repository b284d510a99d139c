package dev.sas.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Proves the harness works: quick mode (300 tasks, one run: end to end from 1 and 16 threads and in
 * batches, drain-only, backlogs of 200 and 1,000 due, SAS in 1 and 2 child JVMs; takeover of 50
 * tasks held by a killed child JVM, supervisor scan over 1,000 and 5,000 terminal rows, memory with
 * 2,000 pending tasks) on H2, plus PostgreSQL/MariaDB when SAS_TEST_POSTGRES_URL /
 * SAS_TEST_MARIADB_URL are set. It asserts correctness only (every task completed once, the
 * database agrees, every figure measured): no rate, duration or time-out of its own, since the
 * machine is shared; the harness's own bound on a hang is quick mode's generous one.
 */
class BenchHarnessTest {

    @TempDir
    Path dir;

    @Test
    void everySystemCompletesEveryTaskAndCountsAreSane() throws Exception {
        Bench.Options o = Bench.parse(new String[] {"--quick", "--no-docs"});
        o.targets = Bench.targets(null, true, dir.resolve("h2").toString());
        // small, so the test stays short with all three databases on a busy machine
        o.tasks = o.targets.size() > 1 ? 150 : 300;
        o.scaleTasks = o.tasks;
        o.scaleDbs = o.targets.stream().map(Target::key).toList();
        o.latencyTasks = 40;
        o.idleSamples = 2;

        o.chart = dir.resolve("chart.png");

        Bench.Report r = Bench.run(o);
        Bench.writeChart(o, r);

        assertThat(r.problems).isEmpty();
        for (Target t : o.targets) {
            String db = t.key();
            assertThat(r.completion.get(db)).containsKeys(Bench.SAS, Bench.DBS_FETCH, Bench.RAW);
            r.completion.get(db).forEach((system, c) ->
                    assertThat(c[0]).as(db + " " + system + " completed").isEqualTo(c[1]).isPositive());
            for (String system : Bench.SYSTEMS) {
                if (!Bench.supported(system, t)) {
                    continue;
                }
                assertThat(r.get(db, "commits/task", system)).as(db + " " + system).singleElement()
                        .satisfies(v -> assertThat(v).isGreaterThan(0.0).isLessThan(20.0));
                assertThat(r.get(db, "statements/task", system)).as(db + " " + system).singleElement()
                        .satisfies(v -> assertThat(v).isGreaterThan(0.0).isLessThan(50.0));
                assertThat(r.get(db, Bench.DRAIN_COMPLETED, system)).singleElement()
                        .satisfies(v -> assertThat(v).isPositive());
            }
            for (String system : Bench.SYSTEMS) {
                if (!Bench.supported(system, t)) {
                    continue;
                }
                // end to end, every mode: measured (so every task was recorded complete, in the database too)
                for (EndToEnd.Mode m : EndToEnd.Mode.values()) {
                    assertThat(r.get(db, EndToEnd.tasksPerSecond(o, m), system)).as(db + " " + system + " " + m)
                            .singleElement().satisfies(v -> assertThat(v).isPositive());
                    assertThat(r.get(db, EndToEnd.commitsPerTask(o, m), system)).as(db + " " + system + " " + m)
                            .singleElement().satisfies(v -> assertThat(v).isPositive());
                }
                // due backlogs of each size, and the per-task growth between them
                for (int n : o.dueSizes) {
                    assertThat(r.get(db, EndToEnd.drainPerTask(n), system)).as(db + " " + system + " " + n + " due")
                            .singleElement().satisfies(v -> assertThat(v).isPositive());
                    assertThat(r.get(db, EndToEnd.batchEnqueue(n), system)).singleElement()
                            .satisfies(v -> assertThat(v).isPositive());
                }
                assertThat(r.get(db, EndToEnd.dueGrowth(o.dueSizes), system)).singleElement()
                        .satisfies(v -> assertThat(v).isPositive());
                if (!system.equals(Bench.RAW_MIN)) { // a throughput reference only: no latency phase
                    assertThat(r.get(db, Bench.IDLE_P50, system)).as(db + " " + system + " idle p50").hasSize(1);
                    assertThat(r.get(db, Bench.IDLE_P99, system)).as(db + " " + system + " idle p99").hasSize(1);
                }
            }
            // SAS in child JVMs: every instance count measured, every task PROCESSED (else a problem above)
            for (int k : o.scaleInstances) {
                assertThat(r.get(db, Scaling.tasksPerSecond(k), Bench.SAS)).as(db + " " + k + " instances")
                        .singleElement().satisfies(v -> assertThat(v).isPositive());
            }
            assertThat(r.get(db, Scaling.smallestShare(o.scaleInstances), Bench.SAS)).singleElement()
                    .satisfies(v -> assertThat(v).isBetween(0.0, 100.0));

            assertThat(r.get(db, "3-step commits/step", Bench.SAS)).singleElement()
                    .satisfies(v -> assertThat(v).isGreaterThan(0.0).isLessThanOrEqualTo(2.0));

            // takeover: every task held by the killed node completed on the survivor, exactly once
            Takeover.Result tk = r.takeover.get(db);
            assertThat(tk).as(db + " takeover").isNotNull();
            assertThat(tk.tasks()).isEqualTo(o.takeoverTasks);
            assertThat(tk.processed()).as(db + " PROCESSED tasks").isEqualTo(o.takeoverTasks);
            assertThat(tk.processedEvents()).as(db + " PROCESSED events").isEqualTo(o.takeoverTasks);
            assertThat(tk.distinctProcessed()).as(db + " tasks with a PROCESSED event").isEqualTo(o.takeoverTasks);
            assertThat(tk.duplicateDones()).isZero();
            assertThat(tk.recovered()).as(db + " recovered by the survivor's supervisor")
                    .isGreaterThanOrEqualTo(o.takeoverTasks);
            assertThat(tk.lastDoneMs()).isPositive();

            // supervisor scan: every size measured, each scan found exactly the expired claims
            assertThat(r.scan.get(db)).as(db + " scan").extracting(ScanCost.Result::terminalRows)
                    .containsExactlyElementsOf(o.scanSizes);
            assertThat(r.scan.get(db)).allSatisfy(x -> {
                assertThat(x.returned()).as(db + " expired rows found at " + x.terminalRows()).isEqualTo(o.scanExpired);
                assertThat(x.scansMs()).hasSize(o.scanRepeats);
            });

            // memory: the backlog is in the store, the runtime holds at most maxInFlight of it
            MemoryUse.Result mem = r.memory.get(db);
            assertThat(mem).as(db + " memory").isNotNull();
            assertThat(mem.tasks()).isEqualTo(o.memoryTasks);
            assertThat(mem.stored()).as(db + " tasks stored").isEqualTo(o.memoryTasks);
            assertThat(mem.inFlight()).as(db + " inFlight").isPositive().isLessThanOrEqualTo(mem.maxInFlight());
            assertThat(mem.pending() + mem.processing()).isEqualTo(o.memoryTasks);
            assertThat(mem.heapBefore()).isPositive();
            assertThat(mem.heapAfter()).isPositive();
        }
        assertThat(r.chart).isEqualTo(o.chart);
        byte[] png = java.nio.file.Files.readAllBytes(o.chart);
        assertThat(png).hasSizeGreaterThan(1000).startsWith(0x89, 'P', 'N', 'G');

        String md = Bench.markdown(o, r);
        assertThat(Bench.chartMetric(o, r)).isEqualTo(EndToEnd.tasksPerSecond(o, EndToEnd.Mode.BATCH));
        assertThat(md).contains("| " + Bench.DRAIN_COMPLETED + " |").contains("| e2e 16 threads single submit, tasks/s |")
                .contains("Targets (medians of this run)").contains("Load average")
                .contains("#### Takeover after a node is killed").contains("#### Supervisor scan cost")
                .contains("#### Memory with a backlog").contains("![End to end, tasks/s");

        Path docs = dir.resolve("benchmarks.md");
        Bench.writeDocs(docs, md);
        Bench.writeDocs(docs, md);
        String text = java.nio.file.Files.readString(docs);
        assertThat(text.indexOf(Bench.BEGIN)).isEqualTo(text.lastIndexOf(Bench.BEGIN));
    }

    @Test
    void phases_and_sizes_are_selected_on_the_command_line() {
        Bench.Options all = Bench.parse(new String[] {"--db", "h2", "--no-docs"});
        assertThat(List.of(all.endToEnd, all.throughput, all.due, all.multiStep, all.latency, all.scale, all.takeover,
                all.scan, all.memory)).containsOnly(true);
        // issue 12's method: 10,000 tasks, median of 5 runs after a warm-up, one pool size (6) for every system
        assertThat(all.tasks).isEqualTo(10_000);
        assertThat(all.runs).isEqualTo(5);
        assertThat(all.warmup).isTrue();
        assertThat(all.targets).extracting(Target::poolSize).containsOnly(6);
        assertThat(all.e2eModes).containsExactly(EndToEnd.Mode.values());
        assertThat(all.submitThreads).isEqualTo(16);
        assertThat(all.batch).isEqualTo(1_000);
        assertThat(all.dueSizes).containsExactly(5_000, 100_000);
        assertThat(all.scaleInstances).containsExactly(1, 2, 3);
        assertThat(all.scaleDbs).containsExactly("postgres");
        assertThat(Bench.scales(all, all.targets.get(0))).isFalse();

        Bench.Options e2e = Bench.parse(new String[] {"--db", "h2", "--no-docs", "--phases", "e2e,scale",
                "--e2e-modes", "batch,single1", "--due-sizes", "100000,5000", "--scale-instances", "3,1",
                "--scale-db", "h2", "--pool", "8", "--tasks", "2000"});
        assertThat(List.of(e2e.throughput, e2e.due, e2e.multiStep, e2e.latency, e2e.takeover)).containsOnly(false);
        assertThat(e2e.e2eModes).containsExactly(EndToEnd.Mode.BATCH, EndToEnd.Mode.SINGLE_ONE_THREAD);
        assertThat(e2e.dueSizes).containsExactly(5_000, 100_000);
        assertThat(e2e.scaleInstances).containsExactly(1, 3);
        assertThat(e2e.scaleTasks).isEqualTo(2_000);
        assertThat(e2e.targets).extracting(Target::poolSize).containsOnly(8);
        assertThat(Bench.scales(e2e, e2e.targets.get(0))).isTrue();
        assertThatThrownBy(() -> Bench.parse(new String[] {"--e2e-modes", "bulk"}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("single1,single16,batch");
        assertThatThrownBy(() -> Bench.parse(new String[] {"--due-sizes", "5000,0"}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--due-sizes must be at least 1");
        assertThat(all.scanSizes).containsExactly(10_000L, 100_000L, 1_000_000L);
        assertThat(all.takeoverTasks).isEqualTo(1_000);
        assertThat(all.memoryTasks).isEqualTo(100_000);

        Bench.Options some = Bench.parse(new String[] {"--db", "h2", "--no-docs", "--phases", "takeover,scan",
                "--scan-sizes", "5000,1000", "--takeover-tasks", "20", "--quick"});
        assertThat(List.of(some.throughput, some.multiStep, some.latency, some.memory)).containsOnly(false);
        assertThat(some.takeover).isTrue();
        assertThat(some.scan).isTrue();
        assertThat(some.scanSizes).containsExactly(1_000L, 5_000L);
        assertThat(some.takeoverTasks).isEqualTo(20);
        assertThat(some.takeoverDeadlineMs).isEqualTo(1_000); // quick default

        Bench.Options none = Bench.parse(new String[] {"--db", "h2", "--no-takeover", "--no-scan", "--no-memory",
                "--no-chart", "--no-docs"});
        assertThat(List.of(none.takeover, none.scan, none.memory)).containsOnly(false);
        assertThat(Bench.chartPath(none)).isNull();
        assertThat(Bench.chartPath(Bench.parse(new String[] {"--db", "h2", "--docs", "x/bench.md"})))
                .isEqualTo(Path.of("x/benchmarks-throughput.png").toAbsolutePath());
    }
}
