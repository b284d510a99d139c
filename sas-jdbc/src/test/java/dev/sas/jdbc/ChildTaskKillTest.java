package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A child task step's node dies (SIGKILL, a separate JVM, {@link ChildWorker}) while its child runs
 * there and its parent awaits the child: another node recovers the child, and the child's end
 * completes the parent's step exactly once, on PostgreSQL and MariaDB (skipped without their URLs).
 */
class ChildTaskKillTest {

    private final List<Process> workers = new ArrayList<>();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private TestDb db;
    private String url;
    private String prefix;

    @AfterEach
    void tearDown() throws Exception {
        for (Process p : workers) {
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        if (url != null) {
            db.drop(url, prefix);
        }
    }

    private Process worker(String instance) throws Exception {
        Path log = Path.of("target", "child-worker-" + prefix + instance + ".log");
        Files.createDirectories(log.getParent());
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), ChildWorker.class.getName(), url, prefix, instance)
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        workers.add(p);
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> !p.isAlive()
                || Files.readString(log).contains("child worker started"));
        assertThat(p.isAlive()).as("worker %s started (log %s)", instance, log).isTrue();
        return p;
    }

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"POSTGRES", "MARIADB"})
    void the_parents_node_killed_while_its_child_runs_and_the_parent_still_completes_once(TestDb which)
            throws Exception {
        db = which;
        url = which.url();
        prefix = TestDb.randomPrefix();
        JdbcStateStore store = TestDb.builder(url, prefix).build();
        closing.add(store);
        Process doomed = worker("doomed");
        List<String> packed = new CopyOnWriteArrayList<>();
        List<String> invoiced = new CopyOnWriteArrayList<>();
        Workflow<String> child = ChildWorker.child(ctx -> {
            packed.add(ctx.input());
            return "packed " + ctx.input();
        });
        Workflow<String> parent = ChildWorker.parent(child, ctx -> {
            invoiced.add(ctx.input());
            return "invoice, " + ctx.output("ship").orElseThrow();
        });
        SasClient client = SasClient.builder().stateStore(store).workflow(parent).build();
        TaskId id = client.submit(parent, "order-1", "car").id();

        // the doomed node started the child and runs its step; the parent awaits it there
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() ->
                client.find(id).orElseThrow().status() == TaskStatus.AWAITING_COMPLETION
                        && children(client, child).stream().anyMatch(c -> c.status() == TaskStatus.PROCESSING));
        doomed.destroyForcibly().waitFor(30, TimeUnit.SECONDS); // SIGKILL: nothing is given back
        assertThat(doomed.isAlive()).isFalse();

        SasRuntime survivor = SasRuntime.builder().stateStore(store).workflow(parent).workflow(child)
                .instanceId("survivor").pollInterval(Duration.ofMillis(50))
                .supervisorInterval(Duration.ofMillis(200)).build().start();
        closing.add(survivor);

        await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200))
                .until(() -> client.find(id).orElseThrow().status() == TaskStatus.PROCESSED);
        TaskInfo done = client.find(id).orElseThrow();
        assertThat(done.step("ship").output()).isEqualTo("packed car-parcel");
        assertThat(done.step("invoice").output()).isEqualTo("invoice, packed car-parcel");
        assertThat(children(client, child)).as("one child").hasSize(1)
                .allSatisfy(c -> assertThat(c.status()).isEqualTo(TaskStatus.PROCESSED));
        assertThat(packed).as("the child's step finished once, on the survivor").containsExactly("car-parcel");
        assertThat(invoiced).as("the parent went on once").containsExactly("car");
        List<TaskEvent.Type> types = client.events(id).stream().map(TaskEvent::type).toList();
        assertThat(Collections.frequency(types, TaskEvent.Type.STEP_COMPLETED)).as("each parent step completed once")
                .isEqualTo(3);
        assertThat(Collections.frequency(types, TaskEvent.Type.COMPLETION_RECEIVED)).as("the child's end delivered once")
                .isEqualTo(1);
        Files.deleteIfExists(Path.of("target", "child-worker-" + prefix + "doomed.log"));
    }

    private static List<TaskInfo> children(SasClient client, Workflow<?> child) {
        return client.list(TaskQuery.all().withWorkflow(child.name()));
    }

}
