package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every code sample in the docs that says it comes from a test is the test's tagged region, word
 * for word (after removing the common indentation), so the docs cannot drift from code that compiles
 * and runs.
 */
class DocsSnippetsTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final String TRACING_TEST =
            "sas-opentelemetry/src/test/java/dev/sas/opentelemetry/TracingAcrossNodesTest.java";
    private static final String STARTER_TESTS = "sas-spring-boot-starter/src/test/java/dev/sas/spring/boot/";
    private static final String RABBIT_TEST = "sas-rabbitmq/src/test/java/dev/sas/rabbitmq/AgentTransportTest.java";
    private static final String PAYMENT_WORKER =
            "sas-examples/src/main/java/dev/sas/examples/orders/PaymentWorker.java";

    static Stream<Arguments> snippets() {
        String jdbcDocs = "sas-jdbc/src/test/java/dev/sas/jdbc/docs/";
        return Stream.of(
                Arguments.of("README.md", jdbcDocs + "GettingStartedTest.java", "getting-started"),
                Arguments.of("docs/getting-started.md", jdbcDocs + "GettingStartedTest.java", "getting-started"),
                Arguments.of("docs/getting-started.md", jdbcDocs + "OrderDocsTest.java", "definitions"),
                Arguments.of("docs/getting-started.md", jdbcDocs + "OrderDocsTest.java", "web-tier"),
                Arguments.of("docs/getting-started.md", jdbcDocs + "OrderDocsTest.java", "worker-tier"),
                Arguments.of("docs/concepts.md", jdbcDocs + "OrderDocsTest.java", "definitions"),
                Arguments.of("docs/concepts.md", jdbcDocs + "OrderDocsTest.java", "run"),
                Arguments.of("docs/agents.md", jdbcDocs + "AgentsDocsTest.java", "agent"),
                Arguments.of("docs/agents.md", jdbcDocs + "AgentsDocsTest.java", "operator"),
                Arguments.of("docs/async-replies.md", jdbcDocs + "AsyncRepliesDocsTest.java", "workflow"),
                Arguments.of("docs/async-replies.md", jdbcDocs + "AsyncRepliesDocsTest.java", "webhook"),
                Arguments.of("docs/ha-postgresql.md", jdbcDocs + "HaDocsTest.java", "ha-store"),
                Arguments.of("docs/jdbc.md", "sas-jdbc/src/test/java/dev/sas/jdbc/SchemaToolsTest.java", "flyway"),
                Arguments.of("docs/json.md", "sas-jackson/src/test/java/dev/sas/jackson/docs/JsonCodecDocsTest.java",
                        "workflow"),
                Arguments.of("docs/spring-boot.md", STARTER_TESTS + "TransactionalSubmitContract.java", "workflow-bean"),
                Arguments.of("docs/spring-boot.md", STARTER_TESTS + "TransactionalSubmitContract.java",
                        "transactional-submit"),
                Arguments.of("docs/observability.md", "sas-micrometer/src/test/java/dev/sas/micrometer/SasMicrometerTest.java",
                        "bind"),
                Arguments.of("docs/observability.md", TRACING_TEST, "web-tier"),
                Arguments.of("docs/observability.md", TRACING_TEST, "worker"),
                Arguments.of("docs/status-updates.md", jdbcDocs + "StatusChannelDocsTest.java", "web-tier"),
                Arguments.of("docs/status-updates.md", jdbcDocs + "StatusChannelDocsTest.java", "runtime"),
                Arguments.of("docs/status-updates.md",
                        "sas-rabbitmq/src/test/java/dev/sas/rabbitmq/RabbitStatusChannelTest.java", "rabbit"),
                Arguments.of("docs/rabbitmq.md", RABBIT_TEST, "agent"),
                Arguments.of("docs/rabbitmq.md", RABBIT_TEST, "consumer"),
                Arguments.of("docs/rabbitmq.md", PAYMENT_WORKER, "worker"),
                Arguments.of("docs/example.md", PAYMENT_WORKER, "worker"),
                Arguments.of("docs/schedules.md", jdbcDocs + "SchedulesDocsTest.java", "schedule"),
                Arguments.of("docs/schedules.md", jdbcDocs + "SchedulesDocsTest.java", "operate"),
                Arguments.of("docs/schedules.md", jdbcDocs + "SchedulesDocsTest.java", "missed-after"),
                Arguments.of("docs/concepts.md", jdbcDocs + "StoreRolesDocsTest.java", "roles"),
                Arguments.of("docs/workflow-shapes.md", jdbcDocs + "WorkflowShapesDocsTest.java", "child-task"),
                Arguments.of("docs/concepts.md", jdbcDocs + "VersionsDocsTest.java", "moves-from"),
                Arguments.of("docs/operations.md", jdbcDocs + "VersionsDocsTest.java", "move"),
                Arguments.of("docs/workflow-shapes.md", jdbcDocs + "ConditionalAndTimerDocsTest.java", "conditional"),
                Arguments.of("docs/workflow-shapes.md", jdbcDocs + "ConditionalAndTimerDocsTest.java", "timer"),
                Arguments.of("docs/concepts.md", jdbcDocs + "ConditionalAndTimerDocsTest.java", "conditional"),
                Arguments.of("docs/concepts.md", jdbcDocs + "ConditionalAndTimerDocsTest.java", "timer"),
                Arguments.of("docs/concepts.md", jdbcDocs + "WorkflowShapesDocsTest.java", "child-task"),
                Arguments.of("docs/concepts.md", jdbcDocs + "SchedulesDocsTest.java", "schedule"),
                Arguments.of("docs/workflow-shapes.md", jdbcDocs + "ForEachDocsTest.java", "for-each"),
                Arguments.of("docs/concepts.md", jdbcDocs + "ForEachDocsTest.java", "for-each"),
                Arguments.of("docs/workflow-shapes.md", jdbcDocs + "ParallelDocsTest.java", "parallel"),
                Arguments.of("docs/concepts.md", jdbcDocs + "ParallelDocsTest.java", "parallel"));
    }

    @ParameterizedTest(name = "{0} shows {2} from {1}")
    @MethodSource("snippets")
    void doc_sample_is_the_tested_code(String doc, String source, String tag) throws IOException {
        String region = region(Files.readAllLines(ROOT.resolve(source)), tag);
        assertThat(region).as("tag %s in %s", tag, source).isNotBlank();
        assertThat(Files.readString(ROOT.resolve(doc))).as("%s contains the region %s of %s", doc, tag, source)
                .contains(region);
    }

    private static String region(List<String> lines, String tag) {
        Pattern start = Pattern.compile("//\\s*tag::" + Pattern.quote(tag) + "\\[]");
        Pattern end = Pattern.compile("//\\s*end::" + Pattern.quote(tag) + "\\[]");
        List<String> out = new ArrayList<>();
        boolean on = false;
        for (String l : lines) {
            if (end.matcher(l).find()) {
                on = false;
            } else if (start.matcher(l).find()) {
                on = true;
            } else if (on) {
                out.add(l);
            }
        }
        int indent = out.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length())
                .min().orElse(0);
        return String.join("\n", out.stream().map(l -> l.isBlank() ? "" : l.substring(indent)).toList());
    }
}
