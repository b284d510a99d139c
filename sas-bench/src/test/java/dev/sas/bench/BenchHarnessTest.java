package dev.sas.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Proves the harness works: quick mode (300 tasks, one run) on H2, plus PostgreSQL/MariaDB when
 * SAS_TEST_POSTGRES_URL / SAS_TEST_MARIADB_URL are set. No timing assertions: this machine is shared.
 */
class BenchHarnessTest {

    @TempDir
    Path dir;

    @Test
    @Timeout(120)
    void everySystemCompletesEveryTaskAndCountsAreSane() throws Exception {
        Bench.Options o = Bench.parse(new String[] {"--quick", "--no-docs"});
        o.targets = Bench.targets(null, true, dir.resolve("h2").toString());
        // keep the whole test under 30 s even with all three databases on a busy machine
        o.tasks = o.targets.size() > 1 ? 150 : 300;
        o.latencyTasks = 40;
        o.idleSamples = 2;

        Bench.Report r = Bench.run(o);

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
        }
        String md = Bench.markdown(o, r);
        assertThat(md).contains("| completed/s |").contains("Load average");

        Path docs = dir.resolve("benchmarks.md");
        Bench.writeDocs(docs, md);
        Bench.writeDocs(docs, md);
        String text = java.nio.file.Files.readString(docs);
        assertThat(text.indexOf(Bench.BEGIN)).isEqualTo(text.lastIndexOf(Bench.BEGIN));
    }
}
