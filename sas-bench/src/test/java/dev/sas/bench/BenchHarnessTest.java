package dev.sas.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Proves the harness works: quick mode (300 tasks, one run; takeover of 50 tasks held by a killed
 * child JVM, supervisor scan over 1,000 and 5,000 terminal rows, memory with 2,000 pending tasks)
 * on H2, plus PostgreSQL/MariaDB when SAS_TEST_POSTGRES_URL / SAS_TEST_MARIADB_URL are set. No
 * timing assertions: this machine is shared.
 */
class BenchHarnessTest {

    @TempDir
    Path dir;

    @Test
    @Timeout(240)
    void everySystemCompletesEveryTaskAndCountsAreSane() throws Exception {
        Bench.Options o = Bench.parse(new String[] {"--quick", "--no-docs"});
        o.targets = Bench.targets(null, true, dir.resolve("h2").toString());
        // keep the whole test under 30 s even with all three databases on a busy machine
        o.tasks = o.targets.size() > 1 ? 150 : 300;
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
                assertThat(r.get(db, "completed/s", system)).singleElement()
                        .satisfies(v -> assertThat(v).isPositive());
            }
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
        assertThat(md).contains("| completed/s |").contains("Load average")
                .contains("#### Takeover after a node is killed").contains("#### Supervisor scan cost")
                .contains("#### Memory with a backlog").contains("![One-step throughput");

        Path docs = dir.resolve("benchmarks.md");
        Bench.writeDocs(docs, md);
        Bench.writeDocs(docs, md);
        String text = java.nio.file.Files.readString(docs);
        assertThat(text.indexOf(Bench.BEGIN)).isEqualTo(text.lastIndexOf(Bench.BEGIN));
    }

    @Test
    void phases_and_sizes_are_selected_on_the_command_line() {
        Bench.Options all = Bench.parse(new String[] {"--db", "h2", "--no-docs"});
        assertThat(List.of(all.throughput, all.multiStep, all.latency, all.takeover, all.scan, all.memory))
                .containsOnly(true);
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
