package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.SasClient;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskResult;
import dev.sas.core.TaskStatus;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The web-tier shape: a client with no threads submits, a runtime in another JVM runs the task,
 * and the client's handle sees the result through the shared database.
 */
class CrossProcessClientTest {

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"H2_FILE", "POSTGRES", "MARIADB"})
    void a_client_without_threads_gets_the_typed_result_of_a_task_run_by_another_jvm(TestDb db) throws Exception {
        String url = db == TestDb.H2_FILE
                ? "jdbc:h2:file:" + Path.of("target", "h2-xjvm", TestDb.randomLetters(8)).toAbsolutePath()
                        + ";AUTO_SERVER=TRUE"
                : db.url();
        String prefix = TestDb.randomPrefix();
        Process worker = null;
        try (JdbcStateStore store = TestDb.builder(url, prefix).build()) {
            Set<Thread> before = Thread.getAllStackTraces().keySet(); // the store's pool has threads of its own
            SasClient client = SasClient.builder().stateStore(store).build();
            TaskHandle handle = client.submit(RemoteWorker.WORKFLOW, "order-1", "  twelve chars  ");
            assertThat(Thread.getAllStackTraces().keySet()).as("the client side runs no SAS threads")
                    .filteredOn(t -> !before.contains(t) && t.getName().matches("sas-(scheduler|timer|events|supervisor|agent).*")).isEmpty();

            worker = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    System.getProperty("java.class.path"), RemoteWorker.class.getName(), url, prefix)
                    .redirectErrorStream(true).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(worker.getInputStream(),
                    StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null && !line.contains("worker started")) {
                // skip the worker's log lines until it has started
            }
            assertThat(line).as("the worker JVM started").isNotNull();

            TaskResult result = handle.await(Duration.ofSeconds(60));

            assertThat(result.status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(result.output(RemoteWorker.LENGTH)).contains(12);
            assertThat(result.output(RemoteWorker.TRIM)).contains("twelve chars");
            assertThat(result.info().lockedBy()).isNull();
            assertThat(client.events(handle.id())).extracting(e -> e.type().name()).contains("PROCESSED");
            assertThat(store.find(handle.id()).orElseThrow().lease()).as("claimed once, by the other JVM")
                    .isEqualTo(1);
        } finally {
            if (worker != null) {
                worker.getOutputStream().close();
                if (!worker.waitFor(30, TimeUnit.SECONDS)) {
                    worker.destroyForcibly();
                }
            }
            db.drop(url, prefix);
        }
    }
}
