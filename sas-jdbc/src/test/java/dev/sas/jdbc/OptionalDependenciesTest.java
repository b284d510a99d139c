package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.SasClient;
import dev.sas.core.TaskHandle;
import dev.sas.core.Workflow;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * HikariCP and H2 are optional dependencies: a store runs without them when the application hands
 * in its own data source, and a setting that needs one names it. Each case runs in a JVM whose
 * class path lacks the library, as an application's would.
 */
class OptionalDependenciesTest {

    @Test
    void without_hikaricp_a_handed_in_data_source_works_and_url_names_the_missing_dependency(@TempDir Path dir)
            throws Exception {
        String out = runWithout(List.of("HikariCP"), "no-hikari", dir.resolve("db").toString());
        assertThat(out).contains("handed-in data source: task submitted and found PENDING");
        assertThat(out).contains("url: IllegalStateException: url needs HikariCP on the class path")
                .contains("com.zaxxer:HikariCP");
    }

    @Test
    void without_h2_embedded_h2_and_an_h2_url_name_the_missing_driver(@TempDir Path dir) throws Exception {
        String out = runWithout(List.of(File.separator + "h2" + File.separator), "no-h2", dir.resolve("db").toString());
        assertThat(out).contains("embeddedH2: IllegalStateException: no JDBC driver on the class path accepts jdbc:h2:file:")
                .contains("com.h2database:h2");
        assertThat(out).contains("h2 url: IllegalStateException: no JDBC driver on the class path accepts jdbc:h2:mem:");
    }

    /** Runs {@link Child} with every class path entry containing one of {@code excluded} removed. */
    private static String runWithout(List<String> excluded, String... args) throws IOException, InterruptedException {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> entries = Arrays.stream(cp.split(File.pathSeparator))
                .filter(e -> excluded.stream().noneMatch(e::contains))
                .collect(Collectors.toList());
        assertThat(entries).hasSizeLessThan(cp.split(File.pathSeparator).length);
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", String.join(File.pathSeparator, entries), Child.class.getName()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] bytes = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
        String out = new String(bytes, StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    /** The application in the other JVM: prints what each setting did. */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            if (args[0].equals("no-hikari")) {
                org.h2.jdbcx.JdbcDataSource ds = new org.h2.jdbcx.JdbcDataSource();
                ds.setURL("jdbc:h2:file:" + args[1] + ";LOCK_TIMEOUT=10000");
                try (JdbcStateStore store = JdbcStateStore.builder().dataSource(ds).build()) {
                    Workflow<String> wf = Workflow.builder("optional-deps", Codec.string())
                            .step("only", s -> s.execute(ctx -> "done"))
                            .build();
                    SasClient client = SasClient.builder().stateStore(store).workflow(wf).build();
                    TaskHandle h = client.submit(wf, "k1", "in");
                    System.out.println("handed-in data source: task submitted and found "
                            + client.find(h.id()).orElseThrow().status());
                }
                attempt("url", () -> JdbcStateStore.builder().url("jdbc:h2:mem:x").build());
            } else {
                attempt("embeddedH2", () -> JdbcStateStore.builder().embeddedH2(Path.of(args[1])).build());
                attempt("h2 url", () -> JdbcStateStore.builder().url("jdbc:h2:mem:x").build());
            }
        }

        private static void attempt(String what, java.util.function.Supplier<JdbcStateStore> build) {
            try (JdbcStateStore store = build.get()) {
                System.out.println(what + ": built " + store);
            } catch (RuntimeException | LinkageError e) {
                System.out.println(what + ": " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
    }
}
