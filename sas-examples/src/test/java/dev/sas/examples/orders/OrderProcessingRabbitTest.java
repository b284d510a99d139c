package dev.sas.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --rabbitmq} mode: the payment agent is a worker process behind RabbitMQ, killed (SIGKILL) and
 * replaced mid-run, and the ledgers still agree.
 */
class OrderProcessingRabbitTest {

    @TempDir
    Path dir;

    @Test
    void forty_orders_charged_through_a_payment_worker_process_that_is_killed_mid_run_all_end_and_the_ledgers_agree()
            throws Exception {
        String uri = System.getenv("SAS_TEST_RABBITMQ_URI");
        assumeTrue(uri != null && !uri.isBlank(), "SAS_TEST_RABBITMQ_URI not set: skipping the RabbitMQ example run");
        ByteArrayOutputStream console = new ByteArrayOutputStream();

        RunSummary summary = OrderRun.run(RunConfig.parse("--orders", "40", "--seed", "7", "--rabbitmq", uri,
                "--dir", dir.toString()), new PrintStream(console, true, StandardCharsets.UTF_8));
        String output = console.toString(StandardCharsets.UTF_8);

        assertThat(summary.checks().failures()).as(output + summary.table()).isEmpty();
        assertThat(summary.ok()).isTrue();
        assertThat(summary.other()).as("orders not terminal").isZero();
        assertThat(summary.processed() + summary.compensated() + summary.error()).isEqualTo(40);
        assertThat(summary.crash()).contains("payment worker JVM pid").contains("killed (SIGKILL) and replaced");
        assertThat(output).contains("CRASH: payment worker JVM pid").contains("payments:  replies")
                .contains("COMPLETED");
        assertThat(summary.resubmittedStatus()).isIn(null, dev.sas.core.TaskStatus.PROCESSED);
    }

    @Test
    void rabbitmq_mode_refuses_a_crash_or_an_outage_of_its_own() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RunConfig.parse("--rabbitmq", "amqp://x", "--crash"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--rabbitmq and --crash");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> RunConfig.parse("--rabbitmq", "amqp://x",
                "--outage-ms", "100")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--rabbitmq and --outage-ms");
        assertThat(RunConfig.parse("--rabbitmq", "amqp://x").outage()).isZero();
    }
}
