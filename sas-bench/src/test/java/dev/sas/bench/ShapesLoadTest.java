package dev.sas.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The workflow shapes phase works on H2 in quick mode: every shape's tasks are PROCESSED, every step
 * body ran, and the counts per step are measured. Correctness only: no rate is asserted.
 */
class ShapesLoadTest {

    @TempDir
    Path dir;

    @Test
    void every_shape_completes_every_task_and_its_costs_per_step_are_counted() throws Exception {
        Bench.Options o = Bench.parse(new String[] {"--quick", "--no-docs", "--phases", "shapes"});
        o.targets = Bench.targets("h2", true, dir.resolve("h2").toString());

        Bench.Report r = Bench.run(o);

        assertThat(r.problems).isEmpty();
        List<ShapesLoad.Result> rows = r.shapes.get("h2");
        assertThat(rows).extracting(ShapesLoad.Result::shape)
                .containsExactlyElementsOf(ShapesLoad.shapes().stream().map(ShapesLoad.Shape::name).toList());
        for (ShapesLoad.Result x : rows) {
            assertThat(x.processed()).as(x.shape()).isEqualTo(x.tasks()).isPositive();
            assertThat(x.stepsRun()).as(x.shape()).isGreaterThanOrEqualTo(x.expectedSteps());
            assertThat(x.commitsPerStep()).as(x.shape()).isPositive();
            assertThat(x.statementsPerStep()).as(x.shape()).isGreaterThanOrEqualTo(x.commitsPerStep());
        }
        assertThat(Bench.markdown(o, r)).contains("#### Workflow shapes (SAS)").contains("| h2 | 3-step chain |")
                .contains("| h2 | 3-branch parallel |").contains("| h2 | 100-element fan-out (concurrency 16) |");
    }
}
